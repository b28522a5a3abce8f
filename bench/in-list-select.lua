#!/usr/bin/env sysbench
-- Reads of several rows by their primary keys in one IN list, as an ORM loads a batch:
-- SELECT id, c FROM sbtest1 WHERE id IN (n, n + 7, n + 14, ...), n drawn by --rand-type. A
-- sysbench script for bench/insert-mix.sh (READER=bench/in-list-select.lua); text protocol.

require("oltp_common")

sysbench.cmdline.options.list_size = { "Keys in each IN list", 10 }

function prepare_statements()
end

function event()
   local size = sysbench.opt.list_size
   local first = sysbench.rand.default(1, sysbench.opt.table_size - 7 * (size - 1))
   local keys = {}
   for i = 0, size - 1 do
      keys[#keys + 1] = first + 7 * i
   end
   con:query("SELECT id, c FROM sbtest1 WHERE id IN (" .. table.concat(keys, ", ") .. ")")
end
