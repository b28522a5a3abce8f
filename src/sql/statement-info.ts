/**
 * What the classifier tells the cache about one statement.
 */
import type { TableRef } from './table-ref.ts';

export type StatementKind =
  | 'select'
  | 'insert'
  | 'replace'
  | 'update'
  | 'delete'
  | 'truncate'
  | 'load'
  | 'ddl'
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'savepoint'
  | 'set'
  | 'use'
  | 'show'
  | 'call'
  | 'lock'
  | 'unlock'
  | 'xa'
  | 'grant'
  | 'flush'
  | 'prepare'
  | 'execute'
  | 'other';

/** The objects of DDL whose text names what it defines (see StatementInfo.ddlObject). */
export type DdlObject = 'table' | 'index' | 'sequence' | 'view' | 'trigger';

/**
 * A top-level `column = <integer>` or `column = ?` a statement's rows are bounded by (see
 * point-access.ts).
 */
export interface PointCandidate {
  /** The column, lowercased. */
  column: string;
  /** Where the literal (an integer, a quoted string) or the placeholder starts in the text. */
  at: number;
  /**
   * Its value: a number's digits, leading zeros dropped, or a quoted string's characters after a
   * quote (`'abc`); null for a placeholder. keyValueOf tells the row it names in a key column.
   */
  value: string | null;
  /**
   * For a placeholder, which of the statement's parameters it is (0 for the first `?`): each
   * execution of the prepared statement binds its own value. -1 for a literal.
   */
  parameter: number;
  /** Which of a join's tables (PointAccess.joined) the column is qualified by; 0 without a join. */
  table: number;
}

/** A table a join reads, as its FROM clause names it (PointAccess.joined). */
export interface JoinedTable {
  /** The schema written before it, lowercased; null when none is. */
  schema: string | null;
  /** Its name, lowercased. */
  name: string;
}

/** The rows a single-table SELECT, UPDATE, DELETE or INSERT is bounded to (point-access.ts). */
export interface PointAccess {
  candidates: PointCandidate[];
  /**
   * A SELECT of several tables joined (no subquery): its FROM clause's tables in order, which
   * each candidate's `table` is one of (a column of a join counts only qualified by its table's
   * name or alias). Null for a statement of one table.
   */
  joined: JoinedTable[] | null;
  /** The columns an UPDATE assigns, lowercased: a point key's column among them moves rows. */
  assigned: string[];
  /**
   * An INSERT: a value of 0 bounds nothing, as an AUTO_INCREMENT column takes 0 for "the next
   * value" (unless sql_mode says NO_AUTO_VALUE_ON_ZERO, which the proxy does not follow here).
   */
  insert: boolean;
  /**
   * REPLACE, or INSERT … ON DUPLICATE KEY UPDATE: besides the row of its point key's value it
   * may change a row that collides with the new one on another unique key, so it is bounded to
   * that row only where the table has no other (SchemaCatalog.pointWrite).
   */
  upsert: boolean;
  /**
   * A SELECT whose result has one row per row of the table it matches (nothing in parentheses
   * in its select list, so no aggregate or window function; no GROUP BY, HAVING, WINDOW or
   * PROCEDURE): a result with a row shows the bounded row exists, and no INSERT can change it,
   * as the point key is the table's primary key. False for every other statement.
   */
  rowPerMatch: boolean;
  /**
   * A conjunct `col IN (<integer>, …)` gave some of the candidates: the rows are among the union
   * of a one-column point key's candidates' values, several rows of a read among them.
   */
  inList: boolean;
}

export interface StatementInfo {
  /**
   * The statement's kind. Notes: SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT are all
   * 'savepoint' (none ends the transaction); START TRANSACTION is 'begin'; DESCRIBE and EXPLAIN
   * are 'show'; account statements (CREATE/DROP/ALTER/RENAME USER, roles, SET PASSWORD, SET ROLE)
   * are 'grant'; RESET is 'flush'; ANALYZE <statement> and SET STATEMENT ... FOR <statement> take
   * the kind of the statement they run; a text of several statements is 'other'.
   */
  kind: StatementKind;
  /**
   * Tables the statement reads, as written (views by their own name), schema null for the current
   * database. CTE names are not tables; derived tables' and subqueries' tables are included.
   */
  reads: TableRef[];
  /** Tables it writes, where the text tells. */
  writes: TableRef[];
  /** Its writes cannot be known from the text: invalidate everything. */
  writesEverything: boolean;
  /** May its result be cached, by the server query cache's rules (see cacheability.ts). */
  cacheable: boolean;
  notCacheableReason: string | null;
  sqlCache: 'default' | 'SQL_CACHE' | 'SQL_NO_CACHE';
  /** FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE, anywhere in the statement. */
  lockingRead: boolean;
  /**
   * The statement commits an open transaction before it runs (DDL, LOCK TABLES, BEGIN...). For
   * `SET autocommit=1` and UNLOCK TABLES the server commits only if autocommit was 0, or tables
   * were locked: true here means "may commit"; the reply's status flags tell what happened.
   */
  implicitCommit: boolean;
  /**
   * CREATE TEMPORARY TABLE, DROP TEMPORARY TABLE: a session-private table, no implicit commit.
   * A text of several statements: every one of them is.
   */
  temporary: boolean;
  /**
   * Functions that are no built-in, as written: stored functions or UDFs. They may write
   * anything, so they set writesEverything; a caller that knows them read-only may relax that.
   */
  unknownFunctions: string[];
  /**
   * The same by name, as the server looks them up: schema null when unqualified (the current
   * database's, unless a UDF or a native function has the name), names normalized as tables'
   * (routineNameOf lowers them); null when one of them could not be read (a.b.f()).
   */
  routineCalls: TableRef[] | null;
  /**
   * writesEverything as it would be if every unknown function wrote nothing: false when calls
   * of them are its only writes the text does not tell (whoever knows what they write may add
   * that to `writes`).
   */
  writesEverythingWithoutFunctions: boolean;
  /** The text held several statements; see classifyAll() for each. */
  multiStatement: boolean;
  /**
   * Every statement of the text is a SELECT, INSERT, REPLACE, UPDATE or DELETE that tells what
   * it writes and calls no stored function: the text creates no table (but through triggers),
   * prepares nothing, locks no table and changes no session state a trigger could not. A text
   * of several such statements may be followed as one of them is.
   */
  dataOnly: boolean;
  /**
   * Every statement of the text is a data statement as for dataOnly, or a SET whose effects the
   * session probe reads back (not SET TRANSACTION, which is for the next transaction only, nor
   * one of query_cache_type, which the proxy follows from the statement; no stored function): the
   * text creates no table (but through triggers), prepares nothing and locks no table, though it
   * may change the session's state. A connection's init command (`SET NAMES utf8mb4; SET
   * time_zone = '+00:00'`) is such a text. True of every dataOnly text.
   */
  followable: boolean;
  /** The text the cache keys the statement by (see cacheKeyText in tokenizer.ts). */
  keyText: string;
  /**
   * What a DDL statement defines, when the text names it: CREATE, ALTER, DROP or RENAME of
   * tables, indexes, sequences, views and triggers. Null for any other statement, DDL whose
   * effects the text does not show (databases, procedures, functions, packages, events,
   * servers...) and a text that did not parse: such DDL may change any stored routine or event.
   */
  ddlObject: DdlObject | null;
  /** One of the statements the proxy acts on itself (see StatementControl), or null. */
  control: StatementControl | null;
  /**
   * It reads what the previous statement left in the diagnostics area: SHOW WARNINGS / ERRORS /
   * COUNT(*) ..., GET DIAGNOSTICS, FOUND_ROWS(), ROW_COUNT(), @@warning_count, @@error_count.
   */
  readsDiagnostics: boolean;
  /** It calls FOUND_ROWS(). */
  readsFoundRows: boolean;
  /**
   * It reads the warning list: SHOW WARNINGS / ERRORS / COUNT(*) ..., @@warning_count,
   * @@error_count, GET DIAGNOSTICS. The server keeps that list through statements that read no
   * table (SET, DO, BEGIN, COMMIT, a SELECT of no table): only one that uses a table resets it.
   */
  readsWarnings: boolean;
  /**
   * The columns whose value bounds the rows a single statement reads or writes, or null (see
   * point-access.ts). The values are this text's: a text of the same shape has its own.
   */
  point: PointAccess | null;
  /**
   * An INSERT that can only add rows (not REPLACE, no ON DUPLICATE KEY UPDATE), naming one table
   * and nothing it cannot tell it writes: it changes no row that was there before
   * (point-access.ts, addsRowsOnly).
   */
  addsRowsOnly: boolean;
  /**
   * A SELECT of one table whose every result row is made of a row it read from that table
   * (point-access.ts, rowsReadFromTable): a result with a row shows the server read one.
   */
  rowsReadFromTable: boolean;
}

/**
 * Statements whose meaning the proxy needs beyond caching, as the server parses them (comments,
 * executable comments, spacing and letter case included).
 */
export type StatementControl =
  /** SET [GLOBAL | SESSION] query_cache_type = value (null: an expression the proxy cannot read). */
  | {
      kind: 'set-query-cache-type';
      scope: 'global' | 'session';
      value: 0 | 1 | 2 | 'default' | null;
    }
  /** RESET QUERY CACHE. */
  | { kind: 'reset-query-cache' }
  /**
   * FLUSH ...; `status` when FLUSH STATUS is among its options; `dataUnchanged` when every option
   * leaves data and privileges alone (STATUS, QUERY CACHE), so nothing is invalidated.
   */
  | { kind: 'flush'; status: boolean; dataUnchanged: boolean }
  /** SHOW [GLOBAL | SESSION] STATUS [LIKE 'pattern' | WHERE ...]; `like` is the pattern's value. */
  | { kind: 'show-status'; scope: 'global' | 'session'; like: string | null; where: boolean }
  /** A SELECT reading information_schema.GLOBAL_STATUS or SESSION_STATUS. */
  | { kind: 'status-table' }
  /**
   * A SELECT reading a table of the schema `nicecache`, which the proxy answers itself (not the
   * server); `plain` when the statement is SELECT * FROM nicecache.<name>, all it answers.
   */
  | { kind: 'nicecache-table'; name: string; plain: boolean }
  /** SET TRANSACTION without a scope: it sets the next transaction only. */
  | { kind: 'set-transaction' }
  /** XA COMMIT: publishes writes made before it, possibly by another session. */
  | { kind: 'xa-commit' }
  /** START TRANSACTION WITH CONSISTENT SNAPSHOT: InnoDB takes the snapshot at once. */
  | { kind: 'consistent-snapshot' }
  /**
   * BEGIN [WORK], START TRANSACTION [READ ONLY | READ WRITE]: a transaction whose snapshot
   * InnoDB takes at its first read; `access` as the statement says it (null: the session's).
   */
  | { kind: 'begin'; access: 'read-only' | 'read-write' | null }
  /** COMMIT or ROLLBACK [WORK] [AND NO CHAIN] [NO RELEASE]: ends the transaction, starts none. */
  | { kind: 'end-transaction' }
  /** DROP TABLE / VIEW / SEQUENCE / INDEX ...: names it writes stop existing. */
  | { kind: 'drop' }
  /**
   * PREPARE name FROM ...: `text` is the value of a plain string literal, null for anything else
   * (FROM @var: only the server knows it). `name` is lowered (the server compares these names
   * without regard to case), null when it is not ASCII: it cannot be lowered as the server does.
   */
  | { kind: 'sql-prepare'; name: string | null; text: string | null }
  /** DEALLOCATE PREPARE name, DROP PREPARE name; `name` as for sql-prepare. */
  | { kind: 'sql-deallocate'; name: string | null }
  /** EXECUTE name [USING ...] (not EXECUTE IMMEDIATE); `name` as for sql-prepare. */
  | { kind: 'sql-execute'; name: string | null; using: boolean }
  /**
   * CALL procedure[(...)]: `procedure` as a table name is read (schema null for the current
   * database), null when the text names none the proxy can read, or when a subquery among the
   * arguments reads tables (views among them may call stored functions).
   */
  | { kind: 'call'; procedure: TableRef | null };
