#!/usr/bin/env sysbench
-- Updates of one row by its id quoted, as PHP's PDO sends a bound value with its prepares
-- emulated: UPDATE sbtest1 SET k = k + 1 WHERE id = 'n'. A writer for bench/insert-mix.sh
-- (WRITER=bench/quoted-update.lua), text protocol, beside bench/quoted-select.lua.

require("oltp_common")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   con:query(string.format("UPDATE sbtest1 SET k = k + 1 WHERE id = '%d'", id))
end
