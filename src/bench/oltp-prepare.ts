/**
 * The data set sysbench 1.0.20's oltp_* scripts run against, as SQL: what `sysbench oltp_* prepare`
 * sends to create and fill the sbtestN tables, and what `cleanup` sends to drop them. Reproduced
 * byte for byte, so a benchmark that prepares its own tables starts from the same data shape as
 * one prepared by sysbench, and the two can be compared.
 */
import type { OltpOptions } from './oltp-workload.ts';
import type { SysbenchRandom } from './random.ts';

/** `c` values: ten groups of 11 random digits joined by '-', 119 characters in a CHAR(120). */
export const C_VALUE_TEMPLATE = digitGroups(10);

/** `pad` values: five groups of 11 random digits joined by '-', 59 characters in a CHAR(60). */
export const PAD_VALUE_TEMPLATE = digitGroups(5);

function digitGroups(count: number): string {
  return Array.from({ length: count }, () => '#'.repeat(11)).join('-');
}

/**
 * sysbench builds each multi-row INSERT in a 512 KiB buffer and sends it when the next row (plus
 * its separating comma and the buffer's terminating NUL) would not fit. Reproducing the rule, not
 * just the row count, keeps the statement sizes the server parses the same as sysbench's.
 */
const BULK_INSERT_BUFFER_BYTES = 512 * 1024;

export function tableName(table: number): string {
  return `sbtest${table}`;
}

/**
 * The CREATE TABLE exactly as sysbench formats it, including the trailing space its format
 * string leaves for table options nobody sets (the server's general log trims it away).
 */
export function createTableStatement(options: OltpOptions, table: number): string {
  const idDefinition = options.autoInc ? 'INTEGER NOT NULL AUTO_INCREMENT' : 'INTEGER NOT NULL';
  const idIndex = options.secondary ? 'KEY xid' : 'PRIMARY KEY';
  return (
    `CREATE TABLE ${tableName(table)}(\n` +
    `  id ${idDefinition},\n` +
    `  k INTEGER DEFAULT '0' NOT NULL,\n` +
    `  c CHAR(120) DEFAULT '' NOT NULL,\n` +
    `  pad CHAR(60) DEFAULT '' NOT NULL,\n` +
    `  ${idIndex} (id)\n` +
    `) /*! ENGINE = ${options.engine} */ `
  );
}

export function createIndexStatement(table: number): string {
  return `CREATE INDEX k_${table} ON ${tableName(table)}(k)`;
}

/**
 * Everything `prepare` sends, table after table: CREATE TABLE, the INSERT batches, then the
 * secondary index (created after the load, as sysbench does, so the load does not maintain it).
 * A generator, because a large table's rows must never be in memory all at once: only the batch
 * being built is.
 */
export function* prepareStatements(options: OltpOptions, random: SysbenchRandom): Iterable<string> {
  for (let table = 1; table <= options.tables; table++) {
    yield createTableStatement(options, table);
    yield* insertBatches(options, random, table);
    if (options.createSecondary) yield createIndexStatement(table);
  }
}

function* insertBatches(
  options: OltpOptions,
  random: SysbenchRandom,
  table: number,
): Generator<string, void, undefined> {
  // With AUTO_INCREMENT the server numbers the rows; otherwise sysbench sends ids 1..table_size.
  const header = options.autoInc
    ? `INSERT INTO ${tableName(table)}(k, c, pad) VALUES`
    : `INSERT INTO ${tableName(table)}(id, k, c, pad) VALUES`;
  let parts: string[] = [header];
  let length = header.length;
  let rows = 0;
  for (let id = 1; id <= options.tableSize; id++) {
    // sysbench draws c, then pad, then k: keep that order so a faithful random source yields
    // the same rows.
    const c = random.string(C_VALUE_TEMPLATE);
    const pad = random.string(PAD_VALUE_TEMPLATE);
    const k = random.default(1, options.tableSize);
    const row = options.autoInc ? `(${k}, '${c}', '${pad}')` : `(${id}, ${k}, '${c}', '${pad}')`;
    // Rows are ASCII (digits, dashes, quotes), so string length is byte length.
    if (length + row.length + 1 + (rows > 0 ? 1 : 0) > BULK_INSERT_BUFFER_BYTES) {
      if (rows === 0) throw new Error(`a single row of ${tableName(table)} exceeds the batch size`);
      yield parts.join('');
      parts = [header];
      length = header.length;
      rows = 0;
    }
    if (rows > 0) {
      parts.push(',');
      length += 1;
    }
    parts.push(row);
    length += row.length;
    rows++;
  }
  if (rows > 0) yield parts.join('');
}

/** What `cleanup` sends: one DROP per table, tolerant of tables that are already gone. */
export function cleanupStatements(options: OltpOptions): string[] {
  return Array.from(
    { length: options.tables },
    (_, i) => `DROP TABLE IF EXISTS ${tableName(i + 1)}`,
  );
}
