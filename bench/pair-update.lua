#!/usr/bin/env sysbench
-- Updates of one row by a primary key of two columns: UPDATE sbtest1 SET k = k + 1 WHERE
-- tenant = t AND id = n, n drawn by --rand-type over the table and t = n % 16. A writer for
-- bench/insert-mix.sh (WRITER=bench/pair-update.lua), text protocol, beside
-- bench/pair-select.lua, once sbtest1 has the key (tenant, id):
--
--   SETUP_SQL="ALTER TABLE sbtest1 ADD COLUMN tenant INT NOT NULL DEFAULT 0;
--     UPDATE sbtest1 SET tenant = id % 16;
--     ALTER TABLE sbtest1 DROP PRIMARY KEY, ADD PRIMARY KEY (tenant, id), ADD KEY (id)"

require("oltp_common")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   con:query(string.format("UPDATE sbtest1 SET k = k + 1 WHERE tenant = %d AND id = %d",
      id % 16, id))
end
