/**
 * What a statement's writes come to under the metadata loaded now: the registry slots they
 * invalidate, and whether the tables it reads may write. One derivation for both writers the
 * proxy knows of, so they mark alike: a write sent through the proxy (statement-router.ts) and a
 * statement read from the server's binary log (binlog-follower.ts).
 */
import type { SchemaCatalog } from './schema-catalog.ts';
import type { MemoEntry } from './statement-memo.ts';

/**
 * `entry` with its write facts for `schema`, computed once per schema and load of the metadata
 * as the read slots are: a text of the same shape shares them (statement-memo.ts). While the
 * metadata is not trusted they are computed every time and kept for no one.
 *
 * - `writeSlots`: a point write (one value, or a few, of the table's point key) marks those
 *   rows and the table's "some row"; an INSERT that only adds rows its "some row" and "new rows"
 *   (SchemaCatalog.rowsAddedTo), and `writeOwnSlots` then holds the table, which the writing
 *   session's own reads must take as written; anything else its tables whole, or everything.
 * - `writeReadsMayWrite`: a view it reads calls a stored function that may write.
 */
export function writeFactsOf(
  catalog: SchemaCatalog,
  entry: MemoEntry,
  schema: string | null,
): MemoEntry {
  const generation = catalog.generation;
  if (entry.writeGeneration === generation && entry.writeSchema === schema && generation >= 0)
    return entry;
  const info = entry.info;
  entry.writeSlots = catalog.writeSlots(info.writes, schema, info.point, entry.pointValues);
  entry.writeOwnSlots = null;
  // Rows added to a point table: unless the write is bounded to its one row already.
  if (
    info.addsRowsOnly &&
    catalog.pointWriteSlots(info.writes, schema, info.point, entry.pointValues) === null
  ) {
    const added = catalog.rowsAddedTo(info.writes, schema);
    if (added !== null) {
      entry.writeSlots = added.slots;
      entry.writeOwnSlots = Int32Array.of(added.tableSlot);
    }
  }
  entry.writeReadsMayWrite = catalog.readsMayWrite(info.reads, schema);
  entry.writeGeneration = generation;
  entry.writeSchema = schema;
  return entry;
}
