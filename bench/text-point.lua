#!/usr/bin/env sysbench
-- One text statement an event, about a row drawn by --rand-type over the table: POINT_SQL with
-- {id} replaced by the row's id, {tenant} by the id modulo 16, and {hex16} ({HEX16}) by the id
-- as 16 bytes in lowercase (uppercase) hex, a binary UUID's spelling. A reader or a writer for
-- bench/insert-mix.sh (READER_SQL, WRITER_SQL), text protocol. For example:
--
--   SELECT c FROM sbtest1 WHERE id = '{id}'                      (an id quoted, as PDO sends it)
--   UPDATE sbtest1 SET k = k + 1 WHERE tenant = {tenant} AND id = {id}   (a key of two columns)
--   SELECT s.c, o.name FROM sbtest1 s JOIN owners o ON o.id = s.k % 16 WHERE s.id = {id}
--   SELECT c FROM uuids WHERE id = X'{hex16}'       (a BINARY(16) key, UNHEX(LPAD(HEX(id), 32, '0')))

require("oltp_common")

local template = os.getenv("POINT_SQL") or error("POINT_SQL is not set")

function prepare_statements()
   -- Text statements only: nothing to prepare.
end

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   local sql = template:gsub("{id}", tostring(id))
   sql = sql:gsub("{tenant}", tostring(id % 16))
   sql = sql:gsub("{hex16}", string.format("%032x", id))
   sql = sql:gsub("{HEX16}", string.format("%032X", id))
   con:query(sql)
end
