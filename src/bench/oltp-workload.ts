/**
 * The transactions of sysbench 1.0.20's oltp_read_only, oltp_read_write and oltp_point_select:
 * the same statements, in the same order, on the same tables, with values drawn from the same
 * ranges. A benchmark built on them sends the server (or the proxy) exactly the SQL sysbench
 * would, so results from either can be set side by side.
 */
import { C_VALUE_TEMPLATE, PAD_VALUE_TEMPLATE, tableName } from './oltp-prepare.ts';
import type { SysbenchRandom } from './random.ts';

export { cleanupStatements, prepareStatements } from './oltp-prepare.ts';

export const WORKLOADS = ['oltp_read_only', 'oltp_read_write', 'oltp_point_select'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

/** sysbench's command-line options of the oltp_* scripts, by their camel-cased names. */
export interface OltpOptions {
  tables: number;
  tableSize: number;
  rangeSize: number;
  pointSelects: number;
  simpleRanges: number;
  sumRanges: number;
  orderRanges: number;
  distinctRanges: number;
  indexUpdates: number;
  nonIndexUpdates: number;
  deleteInserts: number;
  rangeSelects: boolean;
  skipTrx: boolean;
  autoInc: boolean;
  secondary: boolean;
  createSecondary: boolean;
  /** --mysql-storage-engine */
  engine: string;
}

/** The defaults oltp_common.lua declares for those options. */
export const DEFAULT_OLTP_OPTIONS: OltpOptions = Object.freeze({
  tables: 1,
  tableSize: 10_000,
  rangeSize: 100,
  pointSelects: 10,
  simpleRanges: 1,
  sumRanges: 1,
  orderRanges: 1,
  distinctRanges: 1,
  indexUpdates: 1,
  nonIndexUpdates: 1,
  deleteInserts: 1,
  rangeSelects: true,
  skipTrx: false,
  autoInc: true,
  secondary: false,
  createSecondary: true,
  engine: 'innodb',
});

/**
 * One statement: SQL with ? placeholders (what sysbench prepares server-side with
 * --db-ps-mode=auto) and the values it binds. `kind` is sysbench's own name for the statement:
 * begin, commit, point_selects, simple_ranges, sum_ranges, order_ranges, distinct_ranges,
 * index_updates, non_index_updates, deletes, inserts. Statements may be shared between calls:
 * treat them as read-only.
 */
export interface OltpStatement {
  kind: string;
  sql: string;
  params: Array<number | string>;
}

type TableStatementKind =
  | 'point_selects'
  | 'simple_ranges'
  | 'sum_ranges'
  | 'order_ranges'
  | 'distinct_ranges'
  | 'index_updates'
  | 'non_index_updates'
  | 'deletes'
  | 'inserts';

function tableStatements(table: number): Record<TableStatementKind, string> {
  const t = tableName(table);
  return {
    point_selects: `SELECT c FROM ${t} WHERE id=?`,
    simple_ranges: `SELECT c FROM ${t} WHERE id BETWEEN ? AND ?`,
    sum_ranges: `SELECT SUM(k) FROM ${t} WHERE id BETWEEN ? AND ?`,
    order_ranges: `SELECT c FROM ${t} WHERE id BETWEEN ? AND ? ORDER BY c`,
    distinct_ranges: `SELECT DISTINCT c FROM ${t} WHERE id BETWEEN ? AND ? ORDER BY c`,
    index_updates: `UPDATE ${t} SET k=k+1 WHERE id=?`,
    non_index_updates: `UPDATE ${t} SET c=? WHERE id=?`,
    deletes: `DELETE FROM ${t} WHERE id=?`,
    inserts: `INSERT INTO ${t} (id, k, c, pad) VALUES (?, ?, ?, ?)`,
  };
}

/** SQL texts per table number, built once: a benchmark asks for them millions of times. */
const sqlByTable: Array<Record<TableStatementKind, string>> = [];

function sqlFor(table: number): Record<TableStatementKind, string> {
  return (sqlByTable[table] ??= tableStatements(table));
}

// With --db-ps-mode=auto sysbench prepares BEGIN and COMMIT server-side too; they carry no values,
// so one object each serves every transaction.
const BEGIN: OltpStatement = { kind: 'begin', sql: 'BEGIN', params: [] };
const COMMIT: OltpStatement = { kind: 'commit', sql: 'COMMIT', params: [] };

type RangeKind = 'simple_ranges' | 'sum_ranges' | 'order_ranges' | 'distinct_ranges';

/**
 * One event of `workload`, in sysbench's order. The random draws happen in sysbench's order too
 * (a table per group of statements, then each statement's values), so a random source that
 * reproduces sysbench's reproduces its statements.
 */
export function oltpTransaction(
  workload: WorkloadName,
  options: OltpOptions,
  random: SysbenchRandom,
): OltpStatement[] {
  const out: OltpStatement[] = [];
  // oltp_point_select overrides --point-selects to 1 and never opens a transaction.
  if (workload === 'oltp_point_select') {
    pointSelects(out, 1, options, random);
    return out;
  }
  if (!options.skipTrx) out.push(BEGIN);
  pointSelects(out, options.pointSelects, options, random);
  if (options.rangeSelects) {
    ranges(out, 'simple_ranges', options.simpleRanges, options, random);
    ranges(out, 'sum_ranges', options.sumRanges, options, random);
    ranges(out, 'order_ranges', options.orderRanges, options, random);
    ranges(out, 'distinct_ranges', options.distinctRanges, options, random);
  }
  if (workload === 'oltp_read_write') {
    indexUpdates(out, options, random);
    nonIndexUpdates(out, options, random);
    deleteInserts(out, options, random);
  }
  if (!options.skipTrx) out.push(COMMIT);
  return out;
}

// sysbench picks the table once per group of statements (all ten point selects of an event hit
// the same table), and picks it even when the group has no statements, which keeps the random
// sequence aligned whatever the counts.
function pickTable(options: OltpOptions, random: SysbenchRandom): number {
  return random.uniform(1, options.tables);
}

function rowId(options: OltpOptions, random: SysbenchRandom): number {
  return random.default(1, options.tableSize);
}

function pointSelects(
  out: OltpStatement[],
  count: number,
  options: OltpOptions,
  random: SysbenchRandom,
): void {
  const sql = sqlFor(pickTable(options, random)).point_selects;
  for (let i = 0; i < count; i++) {
    out.push({ kind: 'point_selects', sql, params: [rowId(options, random)] });
  }
}

function ranges(
  out: OltpStatement[],
  kind: RangeKind,
  count: number,
  options: OltpOptions,
  random: SysbenchRandom,
): void {
  const sql = sqlFor(pickTable(options, random))[kind];
  for (let i = 0; i < count; i++) {
    // The start is drawn from the whole table and the end is not clamped: ranges near the end
    // run past the last row, as sysbench's do.
    const start = rowId(options, random);
    out.push({ kind, sql, params: [start, start + options.rangeSize - 1] });
  }
}

function indexUpdates(out: OltpStatement[], options: OltpOptions, random: SysbenchRandom): void {
  const sql = sqlFor(pickTable(options, random)).index_updates;
  for (let i = 0; i < options.indexUpdates; i++) {
    out.push({ kind: 'index_updates', sql, params: [rowId(options, random)] });
  }
}

function nonIndexUpdates(out: OltpStatement[], options: OltpOptions, random: SysbenchRandom): void {
  const sql = sqlFor(pickTable(options, random)).non_index_updates;
  for (let i = 0; i < options.nonIndexUpdates; i++) {
    const c = random.string(C_VALUE_TEMPLATE);
    out.push({ kind: 'non_index_updates', sql, params: [c, rowId(options, random)] });
  }
}

function deleteInserts(out: OltpStatement[], options: OltpOptions, random: SysbenchRandom): void {
  const statements = sqlFor(pickTable(options, random));
  for (let i = 0; i < options.deleteInserts; i++) {
    // The row deleted is put back under the same id, so the table keeps its size.
    const id = rowId(options, random);
    const k = rowId(options, random);
    const c = random.string(C_VALUE_TEMPLATE);
    const pad = random.string(PAD_VALUE_TEMPLATE);
    out.push({ kind: 'deletes', sql: statements.deletes, params: [id] });
    out.push({ kind: 'inserts', sql: statements.inserts, params: [id, k, c, pad] });
  }
}

/**
 * The statement as sysbench sends it with --db-ps-mode=disable, where it fills the placeholders
 * itself: integers in decimal, strings between single quotes. sysbench copies strings verbatim;
 * here quotes and backslashes are escaped so any string stays one literal. The strings sysbench
 * generates are digits and dashes, for which the two are the same text.
 */
export function inlineParams(statement: OltpStatement): string {
  const { sql, params } = statement;
  if (params.length === 0) return sql;
  let text = '';
  let from = 0;
  for (const value of params) {
    const at = sql.indexOf('?', from);
    if (at < 0) throw new Error(`more values than placeholders in: ${sql}`);
    text += sql.slice(from, at) + literal(value);
    from = at + 1;
  }
  if (sql.includes('?', from)) throw new Error(`fewer values than placeholders in: ${sql}`);
  return text + sql.slice(from);
}

function literal(value: number | string): string {
  if (typeof value === 'string') return `'${value.replace(/[\\']/g, '\\$&')}'`;
  if (!Number.isInteger(value)) throw new Error(`sysbench binds integers only, got ${value}`);
  return String(value);
}
