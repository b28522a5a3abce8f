#!/usr/bin/env sysbench
-- Point reads by a primary key of two columns, as a multi-tenant table is read:
-- SELECT c FROM sbtest1 WHERE tenant = t AND id = n, n drawn by --rand-type over the table and
-- t = n % 16. A reader for bench/insert-mix.sh (READER=bench/pair-select.lua), text protocol,
-- once SETUP_SQL has given sbtest1 the key (tenant, id): see bench/pair-update.lua.

require("oltp_common")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   con:query(string.format("SELECT c FROM sbtest1 WHERE tenant = %d AND id = %d", id % 16, id))
end
