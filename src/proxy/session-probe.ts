/**
 * What the proxy asks a session's own backend connection to learn the state a cached result
 * depends on: current schema, user and role, and every session variable that changes result
 * bytes. Asking the server, rather than parsing SET statements, also catches state changed by
 * stored procedures, SET STATEMENT, COM_INIT_DB, COM_CHANGE_USER and anything else.
 *
 * The probe is a SELECT without tables: it leaves the server's warning list alone (the server
 * resets it only for statements that use tables), so SHOW WARNINGS after it still tells the
 * client's own statement. It is sent only when the state may have changed since the last one.
 */
import { NameEncoding, isAscii, nameEncodingOf, statementName } from '../sql/name-encoding.ts';
import type { LowerCaseTableNames } from '../sql/statement-classifier.ts';

/** The probe's columns, in order; their values together are the session's part of a cache key. */
const MARIADB_COLUMNS = [
  // In hex: its bytes in UTF-8 whatever character_set_results is (see schemaOf).
  'HEX(DATABASE())',
  'CURRENT_USER()',
  'CURRENT_ROLE()',
  '@@lower_case_table_names',
  '@@sql_mode',
  '@@tx_isolation',
  '@@character_set_client',
  '@@character_set_connection',
  '@@character_set_results',
  '@@collation_connection',
  '@@time_zone',
  '@@sql_select_limit',
  '@@max_sort_length',
  '@@group_concat_max_len',
  '@@div_precision_increment',
  '@@lc_time_names',
  '@@default_week_format',
  '@@sql_auto_is_null',
  '@@max_allowed_packet',
  // A SELECT over the join limit is an error, not a result.
  '@@max_join_size',
  '@@sql_big_selects',
  // Row order without ORDER BY follows the plan.
  '@@optimizer_switch',
  '@@default_regex_flags',
  '@@system_versioning_asof',
] as const;

/** MySQL names the isolation variable differently and lacks the last two (MariaDB-only). */
const MYSQL_COLUMNS = MARIADB_COLUMNS.slice(0, -2).map((column) =>
  column === '@@tx_isolation' ? '@@transaction_isolation' : column,
);

/**
 * Read after the digest's columns and not part of them (they change no result bytes):
 * - the session's query_cache_type, which nicecache follows once the session has set it (MySQL 8
 *   has no query cache and no such variable);
 * - FOUND_ROWS() as the client's last statement left it: the probe's own row sets it to 1, and
 *   the router puts it back when the client's next statement would not reset it (see
 *   StatementRouter). MySQL 8 warns that FOUND_ROWS() is deprecated, and a warning would replace
 *   the client's own, so it is read on MariaDB only.
 */
const MARIADB_TRAILING_COLUMNS = ['@@session.query_cache_type', 'FOUND_ROWS()'] as const;

/**
 * On MariaDB the proxy's own statements stay out of the session's slow query log, where a
 * client that logs every statement (long_query_time=0) would find them: SET STATEMENT changes
 * nothing else the session sees.
 */
export const UNLOGGED_SETTING = 'long_query_time = 31536000';
export const MARIADB_UNLOGGED = `SET STATEMENT ${UNLOGGED_SETTING} FOR `;

export function probeSql(serverVersion: string): string {
  if (/mariadb/i.test(serverVersion)) {
    return `${MARIADB_UNLOGGED}SELECT ${[...MARIADB_COLUMNS, ...MARIADB_TRAILING_COLUMNS].join(', ')}`;
  }
  return `SELECT ${MYSQL_COLUMNS.join(', ')}`;
}

export type Isolation = 'READ-UNCOMMITTED' | 'READ-COMMITTED' | 'REPEATABLE-READ' | 'SERIALIZABLE';

export interface SessionSnapshot {
  /**
   * The current schema, or null when none is selected, in the form the router reads names in
   * (its UTF-8 bytes as Latin-1, see name-encoding.ts) and lowered per lower_case_table_names;
   * marked unresolvable when that lowering cannot be done as the server does it.
   */
  schema: string | null;
  isolation: Isolation;
  lowerCaseTableNames: LowerCaseTableNames;
  ansiQuotes: boolean;
  noBackslashEscapes: boolean;
  /**
   * The client character set lets a multi-byte character end in a backslash or quote byte (big5,
   * gbk, sjis...): the tokenizer, which reads bytes, could misjudge where a string ends, so such
   * sessions are never cached and their writes invalidate everything.
   */
  unsafeCharset: boolean;
  /** How the client's character set spells non-ASCII table names. */
  names: NameEncoding;
  /** Every value of the probe, joined: equal digests mean equal result bytes for equal queries. */
  digest: string;
  /** The session's @@query_cache_type on the server, or null when the server has none. */
  queryCacheType: 0 | 1 | 2 | null;
  /** FOUND_ROWS() before the probe ran, or null when the probe did not read it (MySQL). */
  foundRowsBefore: number | null;
}

const QUERY_CACHE_TYPES: Record<string, 0 | 1 | 2> = { OFF: 0, ON: 1, DEMAND: 2 };

const UNSAFE_CLIENT_CHARSETS = new Set(['big5', 'cp932', 'gbk', 'gb18030', 'sjis']);
const ISOLATIONS = new Set<string>([
  'READ-UNCOMMITTED',
  'READ-COMMITTED',
  'REPEATABLE-READ',
  'SERIALIZABLE',
]);

/** Reads the probe's single row; null when it is not what was asked for. */
export function readProbe(row: ReadonlyArray<string | null> | undefined): SessionSnapshot | null {
  if (row === undefined || row.length < MYSQL_COLUMNS.length) return null;
  const lctn = Number(row[3]);
  const sqlMode = row[4] ?? '';
  const isolation = row[5] ?? '';
  if ((lctn !== 0 && lctn !== 1 && lctn !== 2) || !ISOLATIONS.has(isolation)) return null;
  const modes = new Set(sqlMode.split(','));
  const schema = schemaOf(row[0] ?? null, lctn);
  if (schema === undefined) return null;
  return {
    schema,
    isolation: isolation as Isolation,
    lowerCaseTableNames: lctn,
    ansiQuotes: modes.has('ANSI_QUOTES') || modes.has('ANSI'),
    noBackslashEscapes: modes.has('NO_BACKSLASH_ESCAPES'),
    unsafeCharset: UNSAFE_CLIENT_CHARSETS.has((row[6] ?? '').toLowerCase()),
    names: nameEncodingOf(row[6] ?? ''),
    digest: row
      .slice(0, row.length > MARIADB_COLUMNS.length ? MARIADB_COLUMNS.length : row.length)
      .map((value) => value ?? '\u0000')
      .join('\u0001'),
    queryCacheType:
      row.length > MARIADB_COLUMNS.length
        ? (QUERY_CACHE_TYPES[(row[MARIADB_COLUMNS.length] ?? '').toUpperCase()] ?? null)
        : null,
    foundRowsBefore: foundRowsOf(row[MARIADB_COLUMNS.length + 1]),
  };
}

/**
 * The current schema from HEX(DATABASE()): undefined when that is not hex. Under
 * lower_case_table_names 1 and 2 the server compares names in lower case: an ASCII name is
 * lowered here, a non-ASCII one is marked unresolvable.
 */
function schemaOf(hex: string | null, lctn: LowerCaseTableNames): string | null | undefined {
  if (hex === null) return null;
  const bytes = Buffer.from(hex, 'hex');
  // Decoding stops at the first pair that is not hex.
  if (bytes.length * 2 !== hex.length) return undefined;
  const schema = bytes.toString('latin1');
  if (lctn === 0) return schema;
  return isAscii(schema) ? schema.toLowerCase() : statementName(schema, NameEncoding.UTF8MB4, lctn);
}

function foundRowsOf(value: string | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  const rows = Number(value);
  return Number.isSafeInteger(rows) && rows >= 0 ? rows : null;
}
