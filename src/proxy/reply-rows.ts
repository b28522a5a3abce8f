/**
 * What a cached reply left behind on the server had it run there: its row count, for
 * FOUND_ROWS(), and a statement that leaves the same diagnostics (FOUND_ROWS() = that count,
 * ROW_COUNT() = -1, no warnings) without reading any user table.
 */
import { lenencIntAt } from '../protocol/lenenc.ts';
import { MARIADB_UNLOGGED, UNLOGGED_SETTING } from './session-probe.ts';

/** Rows in a stored result set: its packets less the header, columns and terminators. */
export function countRows(reply: Buffer, deprecateEof: boolean): number {
  let packets = 0;
  for (let pos = 0; pos + 4 <= reply.length; pos += 4 + reply.readUIntLE(pos, 3)) packets++;
  const columns = Math.max(0, lenencIntAt(reply, 4));
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

/** Up to this many rows, the statement that puts FOUND_ROWS() back leaves the warning list alone. */
const WARNING_SAFE_FOUND_ROWS = 1000;

/**
 * A COM_QUERY payload after which FOUND_ROWS() says `rows`, with the warning list left as it was
 * (the server keeps it for a SELECT that reads no table, UNION included). More rows than
 * WARNING_SAFE_FOUND_ROWS take a recursive CTE, which counts as a table: the warning list is
 * reset then. MariaDB only (SET STATEMENT), as is the probe column this restores.
 */
export function foundRowsRestorer(rows: number): Buffer {
  const sql =
    rows === 0
      ? `${MARIADB_UNLOGGED}SELECT 1 FROM DUAL WHERE 0`
      : rows <= WARNING_SAFE_FOUND_ROWS
        ? `${MARIADB_UNLOGGED}SELECT 1${' UNION ALL SELECT 1'.repeat(rows - 1)}`
        : `SET STATEMENT ${UNLOGGED_SETTING}, max_recursive_iterations = ${rows} FOR WITH RECURSIVE nicecache_found_rows(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM nicecache_found_rows WHERE n < ${rows}) SELECT SQL_CALC_FOUND_ROWS n FROM nicecache_found_rows LIMIT 1`;
  return Buffer.from(`\u0003${sql}`, 'latin1');
}

/** The rows foundRowsRestorer(rows) sends (what it adds to the session's Rows_sent). */
export function restorerRowsSent(rows: number): number {
  return rows <= WARNING_SAFE_FOUND_ROWS ? rows : 1;
}
