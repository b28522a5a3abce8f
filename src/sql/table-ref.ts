/**
 * A table named by a statement, and how the server compares such names.
 *
 * lower_case_table_names decides letter case, as on the server:
 * - 0: names are stored and compared as given (case-sensitive on Linux), so they are kept as is;
 * - 1: names are stored in lower case and compared in lower case;
 * - 2: names are stored as given but compared in lower case.
 * With 1 and 2 both schema and table names are lowered here, so equal names compare equal.
 */

export interface TableRef {
  /** null: the session's current database, which the caller knows and the text does not. */
  schema: string | null;
  name: string;
}

export type LowerCaseTableNames = 0 | 1 | 2;

export function normalizeName(name: string, lowerCaseTableNames: LowerCaseTableNames): string {
  return lowerCaseTableNames === 0 ? name : name.toLowerCase();
}

export function sameTable(a: TableRef, b: TableRef): boolean {
  return a.name === b.name && a.schema === b.schema;
}

/** Adds `table` unless an equal one is there already (lists are short: a linear scan wins). */
export function addTable(tables: TableRef[], table: TableRef): void {
  for (const existing of tables) if (sameTable(existing, table)) return;
  tables.push(table);
}

/**
 * Schemas whose tables the server's query cache never caches: their content changes without
 * statements the cache sees (grants, status, the server's own bookkeeping). Compared without
 * regard to case: information_schema is case-insensitive on every server, and treating a user
 * schema spelt `MySQL` as a system one only costs a cache miss.
 */
const SYSTEM_SCHEMAS = new Set(['mysql', 'information_schema', 'performance_schema', 'sys']);

export function isSystemSchema(schema: string): boolean {
  return SYSTEM_SCHEMAS.has(schema.toLowerCase());
}

/**
 * The tables stored programs live in, which the proxy's metadata reads (mysql.proc: routines,
 * mysql.event: events, mysql.func: loadable functions). Compared without regard to case, like
 * system schemas: a user table that merely looks like one only costs a pause in metadata reads.
 */
const PROGRAM_TABLES = new Set(['proc', 'event', 'func']);

/** Does a statement writing `tables` (unqualified ones in `schema`) write a program table? */
export function writesProgramTables(tables: readonly TableRef[], schema: string | null): boolean {
  for (const table of tables) {
    const owner = table.schema ?? schema;
    // Lengths first: every write asks, and lowering its names would build strings each time.
    if (owner === null || owner.length !== 5 || table.name.length < 4 || table.name.length > 5) {
      continue;
    }
    if (owner.toLowerCase() === 'mysql' && PROGRAM_TABLES.has(table.name.toLowerCase())) {
      return true;
    }
  }
  return false;
}
