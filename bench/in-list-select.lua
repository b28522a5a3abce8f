#!/usr/bin/env sysbench
-- Reads of several rows by their primary keys in one IN list, as an ORM loads a batch:
-- SELECT id, c FROM sbtest1 WHERE id IN (n, n + 7, n + 14, ...), n drawn by --rand-type. A
-- sysbench script for bench/insert-mix.sh (READER=bench/in-list-select.lua): the text protocol,
-- or with --prepared=on one prepared statement of --list-size placeholders per thread, each
-- execution binding its keys (with --db-ps-mode=auto, the binary protocol).

require("oltp_common")

sysbench.cmdline.options.list_size = { "Keys in each IN list", 10 }
sysbench.cmdline.options.prepared = { "Read the lists by a prepared statement", false }

local list_statement, list_keys

function prepare_statements()
   if not sysbench.opt.prepared then
      return
   end
   local marks = {}
   for i = 1, sysbench.opt.list_size do
      marks[i] = "?"
   end
   list_statement = con:prepare("SELECT id, c FROM sbtest1 WHERE id IN (" ..
      table.concat(marks, ", ") .. ")")
   list_keys = {}
   for i = 1, sysbench.opt.list_size do
      list_keys[i] = list_statement:bind_create(sysbench.sql.type.INT)
   end
   list_statement:bind_param(unpack(list_keys))
end

function event()
   local size = sysbench.opt.list_size
   local first = sysbench.rand.default(1, sysbench.opt.table_size - 7 * (size - 1))
   if list_statement then
      for i = 1, size do
         list_keys[i]:set(first + 7 * (i - 1))
      end
      list_statement:execute()
      return
   end
   local keys = {}
   for i = 0, size - 1 do
      keys[#keys + 1] = first + 7 * i
   end
   con:query("SELECT id, c FROM sbtest1 WHERE id IN (" .. table.concat(keys, ", ") .. ")")
end
