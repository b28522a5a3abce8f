#!/usr/bin/env sysbench
-- Point reads with the id quoted, as PHP's PDO sends a bound value with its prepares emulated:
-- SELECT c FROM sbtest1 WHERE id = 'n', n drawn by --rand-type over the table. A reader for
-- bench/insert-mix.sh (READER=bench/quoted-select.lua), text protocol.

require("oltp_common")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   con:query(string.format("SELECT c FROM sbtest1 WHERE id = '%d'", id))
end
