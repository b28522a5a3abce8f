#!/usr/bin/env sysbench
-- Upserts of rows by their primary keys, as an application keeps counters or settings: by turns
-- INSERT INTO sbtest1 (id, k, c, pad) VALUES (n, …) ON DUPLICATE KEY UPDATE k = k + 1 and
-- REPLACE INTO sbtest1 (id, k, c, pad) VALUES (n, …), n drawn by --rand-type over the table. A
-- writer for bench/insert-mix.sh (WRITER=bench/upsert.lua), text protocol. sbtest1's one unique
-- key is its primary key (k has a plain index), so each changes the row of its key only.

require("oltp_common")

local turn = 0

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   local k = sysbench.rand.default(1, sysbench.opt.table_size)
   local c = get_c_value()
   local pad = get_pad_value()
   turn = turn + 1
   if turn % 2 == 0 then
      con:query(string.format("INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, %d, '%s', '%s') " ..
         "ON DUPLICATE KEY UPDATE k = k + 1", id, k, c, pad))
   else
      con:query(string.format("REPLACE INTO sbtest1 (id, k, c, pad) VALUES (%d, %d, '%s', '%s')",
         id, k, c, pad))
   end
end
