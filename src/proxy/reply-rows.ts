/**
 * What a cached reply left behind on the server had it run there: its row count, for
 * FOUND_ROWS(), and a statement that leaves the same diagnostics (FOUND_ROWS() = that count,
 * ROW_COUNT() = -1, no warnings) without reading any user table.
 */
import { readLenencInt } from '../protocol/lenenc.ts';

/** Rows in a stored result set: its packets less the header, columns and terminators. */
export function countRows(reply: Buffer, deprecateEof: boolean): number {
  let packets = 0;
  for (let pos = 0; pos + 4 <= reply.length; pos += 4 + reply.readUIntLE(pos, 3)) packets++;
  const columns = readLenencInt(reply, 4)?.value ?? 0;
  return Math.max(0, packets - 1 - columns - (deprecateEof ? 0 : 1) - 1);
}

/**
 * A COM_QUERY payload after which the server's diagnostics are those of a SELECT that returned
 * `rows` rows without warnings. A derived table counts as a table, so the warning list is reset,
 * as a statement reading tables resets it.
 */
export function diagnosticsOf(rows: number): Buffer {
  const sql =
    rows === 0
      ? 'SELECT 1 FROM (VALUES (1)) AS nicecache_found_rows WHERE 0'
      : `SELECT 1 FROM (VALUES ${'(1),'.repeat(rows - 1)}(1)) AS nicecache_found_rows`;
  return Buffer.from(`\u0003${sql}`, 'latin1');
}
