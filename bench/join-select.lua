#!/usr/bin/env sysbench
-- Point reads of a join: one row of sbtest1 by its id with its owner's name,
-- SELECT s.c, o.name FROM sbtest1 s JOIN owners o ON o.id = s.k % 16 WHERE s.id = n, n drawn by
-- --rand-type over the table. A reader for bench/insert-mix.sh (READER=bench/join-select.lua),
-- text protocol, once SETUP_SQL has made the owners:
--
--   SETUP_SQL="CREATE TABLE owners (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;
--     INSERT INTO owners SELECT seq, CONCAT('owner ', seq) FROM seq_0_to_15"

require("oltp_common")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   con:query(string.format(
      "SELECT s.c, o.name FROM sbtest1 s JOIN owners o ON o.id = s.k %% 16 WHERE s.id = %d", id))
end
