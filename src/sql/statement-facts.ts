/**
 * Facts about a statement that decide how the proxy treats it beyond caching: whether it reads
 * the diagnostics the previous statement left, and whether it is one of the few statements the
 * proxy acts on itself (SHOW STATUS, RESET QUERY CACHE, SET query_cache_type...). They are read
 * from the tokens, so a leading comment, an executable comment (`SHOW /*!50002 GLOBAL *\/
 * STATUS`), odd spacing or letter case gives the answer the server's own parser gives.
 */
import { COMMA, EQUALS, LEFT_PARENTHESIS, RIGHT_PARENTHESIS, STAR } from './char-codes.ts';
import type { StatementControl, StatementKind } from './statement-info.ts';
import type { TableRef } from './table-ref.ts';
import { Op, TokenKind } from './tokenizer.ts';
import type { TokenList } from './tokenizer.ts';
import { WordTable } from './word-table.ts';

const WORDS = [
  'AND',
  'BEGIN',
  'CACHE',
  'CHAIN',
  'COMMIT',
  'CONSISTENT',
  'COUNT',
  'CURRENT',
  'DEALLOCATE',
  'DEFAULT',
  'DEMAND',
  'DIAGNOSTICS',
  'DROP',
  'ERRORS',
  'ERROR_COUNT',
  'EXECUTE',
  'FLUSH',
  'FOUND_ROWS',
  'FROM',
  'GET',
  'GLOBAL',
  'IMMEDIATE',
  'LIKE',
  'LOCAL',
  'NO',
  'NO_WRITE_TO_BINLOG',
  'OFF',
  'ON',
  'ONLY',
  'PREPARE',
  'QUERY',
  'QUERY_CACHE_TYPE',
  'READ',
  'RELEASE',
  'RESET',
  'ROLLBACK',
  'ROW_COUNT',
  'SESSION',
  'SET',
  'SHOW',
  'SNAPSHOT',
  'STACKED',
  'START',
  'STATUS',
  'TRANSACTION',
  'USING',
  'WARNINGS',
  'WARNING_COUNT',
  'WHERE',
  'WORK',
  'WRITE',
  'XA',
] as const;
type Word = (typeof WORDS)[number];
const table = new WordTable(WORDS);
const W = Object.fromEntries(WORDS.map((word, id) => [word, id])) as Record<Word, number>;
const FOUND_ROWS_LENGTH = 'FOUND_ROWS'.length;
const GLOBAL_STATUS_LENGTH = 'GLOBAL_STATUS'.length;
const SESSION_STATUS_LENGTH = 'SESSION_STATUS'.length;
const ROW_COUNT_LENGTH = 'ROW_COUNT'.length;

export interface StatementFacts {
  control: StatementControl | null;
  readsDiagnostics: boolean;
  readsFoundRows: boolean;
  readsWarnings: boolean;
}

/** The facts of the statement in tokens [start, end), whose kind and reads the parser found. */
export function statementFacts(
  tokens: TokenList,
  start: number,
  end: number,
  kind: StatementKind,
  reads: readonly TableRef[],
  backslashEscapes: boolean,
): StatementFacts {
  const cursor = scratch.reset(tokens, start, end);
  let readsDiagnostics = false;
  let readsFoundRows = false;
  let readsWarnings = false;
  // Every statement the proxy has not seen before passes here: most tokens are rejected by
  // their kind, their length and what follows them, before any lookup.
  const { kinds, starts, ends } = tokens;
  for (let i = start; i < end; i++) {
    const tokenKind = kinds[i];
    if (tokenKind === TokenKind.Word) {
      const length = ends[i]! - starts[i]!;
      if (length !== FOUND_ROWS_LENGTH && length !== ROW_COUNT_LENGTH) continue;
      if (!cursor.isOperatorAt(i + 1, LEFT_PARENTHESIS)) continue;
      const word = cursor.wordAt(i);
      if (word === W.FOUND_ROWS || word === W.ROW_COUNT) {
        readsDiagnostics = true;
        if (word === W.FOUND_ROWS) readsFoundRows = true;
      }
    } else if (tokenKind === TokenKind.SystemVariable) {
      const variable = systemVariableName(tokens, i);
      if (variable === W.WARNING_COUNT || variable === W.ERROR_COUNT) {
        readsDiagnostics = true;
        readsWarnings = true;
      }
    }
  }
  const first = cursor.wordAt(start);
  if (first === W.SHOW) {
    // SHOW WARNINGS | ERRORS [LIMIT ...], SHOW COUNT(*) WARNINGS | ERRORS
    let at = start + 1;
    if (
      cursor.wordAt(at) === W.COUNT &&
      cursor.isOperatorAt(at + 1, LEFT_PARENTHESIS) &&
      cursor.isOperatorAt(at + 2, STAR) &&
      cursor.isOperatorAt(at + 3, RIGHT_PARENTHESIS)
    ) {
      at += 4;
    }
    const what = cursor.wordAt(at);
    if (what === W.WARNINGS || what === W.ERRORS) readsDiagnostics = readsWarnings = true;
  } else if (first === W.GET) {
    let at = start + 1;
    const area = cursor.wordAt(at);
    if (area === W.CURRENT || area === W.STACKED) at++;
    if (cursor.wordAt(at) === W.DIAGNOSTICS) readsDiagnostics = readsWarnings = true;
  }
  return {
    control: controlOf(cursor, first, kind, reads, backslashEscapes),
    readsDiagnostics,
    readsFoundRows,
    readsWarnings,
  };
}

function controlOf(
  cursor: Cursor,
  first: number,
  kind: StatementKind,
  reads: readonly TableRef[],
  backslashEscapes: boolean,
): StatementControl | null {
  const start = cursor.start;
  switch (first) {
    case W.SHOW:
      return showStatus(cursor, backslashEscapes);
    case W.SET:
      if (kind !== 'set') return null;
      return setStatement(cursor);
    case W.RESET:
      // RESET QUERY CACHE [, other options]
      return cursor.findSequence(start + 1, W.QUERY, W.CACHE)
        ? { kind: 'reset-query-cache' }
        : null;
    case W.FLUSH:
      return flushStatement(cursor);
    case W.XA:
      return cursor.wordAt(start + 1) === W.COMMIT ? { kind: 'xa-commit' } : null;
    case W.START:
      if (kind !== 'begin') return null;
      return cursor.findSequence(start + 1, W.CONSISTENT, W.SNAPSHOT)
        ? { kind: 'consistent-snapshot' }
        : startTransaction(cursor);
    case W.BEGIN:
      // BEGIN [WORK], nothing after it (the parser calls anything else a block).
      if (kind !== 'begin') return null;
      return { kind: 'begin', access: null };
    case W.COMMIT:
    case W.ROLLBACK:
      return kind === 'commit' || kind === 'rollback' ? plainEnd(cursor) : null;
    case W.DROP:
      if (kind === 'prepare')
        return { kind: 'sql-deallocate', name: preparedName(cursor, start + 2) };
      return kind === 'ddl' ? { kind: 'drop' } : null;
    case W.DEALLOCATE:
      return { kind: 'sql-deallocate', name: preparedName(cursor, start + 2) };
    case W.PREPARE:
      return sqlPrepare(cursor, backslashEscapes);
    case W.EXECUTE:
      if (cursor.wordAt(start + 1) === W.IMMEDIATE) return null;
      return {
        kind: 'sql-execute',
        name: preparedName(cursor, start + 1),
        using: cursor.wordAt(start + 2) === W.USING,
      };
  }
  if (kind === 'select' && reads.some(isStatusTable)) return { kind: 'status-table' };
  if (kind === 'select') {
    const own = reads.find(isNicecacheTable);
    if (own !== undefined) {
      // SELECT * FROM nicecache.<name>: six tokens, the table's three last.
      const plain =
        reads.length === 1 &&
        cursor.end - start === 6 &&
        cursor.isOperatorAt(start + 1, STAR) &&
        cursor.wordAt(start + 2) === W.FROM;
      return { kind: 'nicecache-table', name: own.name.toLowerCase(), plain };
    }
  }
  return null;
}

/** The schema whose tables the proxy answers itself (see StatementControl 'nicecache-table'). */
const NICECACHE_SCHEMA = 'nicecache';

function isNicecacheTable(table: TableRef): boolean {
  return (
    table.schema !== null &&
    table.schema.length === NICECACHE_SCHEMA.length &&
    table.schema.toLowerCase() === NICECACHE_SCHEMA
  );
}

/**
 * START TRANSACTION [READ ONLY | READ WRITE [, ...]] (WITH CONSISTENT SNAPSHOT is told apart
 * before): a transaction whose snapshot InnoDB takes at its first read.
 */
function startTransaction(cursor: Cursor): StatementControl | null {
  let at = cursor.start + 2;
  let access: 'read-only' | 'read-write' | null = null;
  while (at < cursor.end) {
    if (cursor.wordAt(at) !== W.READ) return null;
    const word = cursor.wordAt(at + 1);
    // The server refuses both at once.
    const mode = word === W.ONLY ? 'read-only' : word === W.WRITE ? 'read-write' : null;
    if (mode === null || (access !== null && access !== mode)) return null;
    access = mode;
    at += 2;
    if (at < cursor.end && !cursor.isOperatorAt(at++, COMMA)) return null;
    if (at === cursor.end && cursor.isOperatorAt(at - 1, COMMA)) return null;
  }
  return { kind: 'begin', access };
}

/**
 * COMMIT or ROLLBACK [WORK] [AND NO CHAIN] [NO RELEASE]: ends the transaction and starts none
 * (AND CHAIN starts the next one, RELEASE ends the connection).
 */
function plainEnd(cursor: Cursor): StatementControl | null {
  let at = cursor.start + 1;
  if (cursor.wordAt(at) === W.WORK) at++;
  if (cursor.wordAt(at) === W.AND) {
    if (cursor.wordAt(at + 1) !== W.NO || cursor.wordAt(at + 2) !== W.CHAIN) return null;
    at += 3;
  }
  if (cursor.wordAt(at) === W.NO) {
    if (cursor.wordAt(at + 1) !== W.RELEASE) return null;
    at += 2;
  }
  return at === cursor.end ? { kind: 'end-transaction' } : null;
}

/** PREPARE name FROM 'text' (or FROM anything else: text null). */
function sqlPrepare(cursor: Cursor, backslashEscapes: boolean): StatementControl {
  const start = cursor.start;
  const name = preparedName(cursor, start + 1);
  const literal = cursor.wordAt(start + 2) === W.FROM && start + 4 === cursor.end;
  const text = literal ? cursor.stringValue(start + 3, backslashEscapes) : null;
  return { kind: 'sql-prepare', name, text };
}

/** The prepared statement's name at `index`, lowered; null when not a plain ASCII name. */
function preparedName(cursor: Cursor, index: number): string | null {
  const kind = cursor.kindAt(index);
  if (kind !== TokenKind.Word && kind !== TokenKind.QuotedIdentifier) return null;
  const name = cursor.tokens.identifier(index);
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) >= 0x80) return null;
  return name.toLowerCase();
}

/** information_schema.GLOBAL_STATUS or SESSION_STATUS (or either name with no schema). */
function isStatusTable(table: TableRef): boolean {
  const length = table.name.length;
  if (length !== GLOBAL_STATUS_LENGTH && length !== SESSION_STATUS_LENGTH) return false;
  const name = table.name.toUpperCase();
  if (name !== 'GLOBAL_STATUS' && name !== 'SESSION_STATUS') return false;
  return table.schema === null || table.schema.toLowerCase() === 'information_schema';
}

/** SHOW [GLOBAL | SESSION | LOCAL] STATUS [LIKE 'pattern' | WHERE expr] */
function showStatus(cursor: Cursor, backslashEscapes: boolean): StatementControl | null {
  let at = cursor.start + 1;
  const scopeWord = cursor.wordAt(at);
  let scope: 'global' | 'session' = 'session';
  if (scopeWord === W.GLOBAL) scope = 'global';
  if (scopeWord === W.GLOBAL || scopeWord === W.SESSION || scopeWord === W.LOCAL) at++;
  if (cursor.wordAt(at) !== W.STATUS) return null;
  at++;
  if (at >= cursor.end) return { kind: 'show-status', scope, like: null, where: false };
  const filter = cursor.wordAt(at);
  if (filter === W.LIKE && at + 2 === cursor.end) {
    const like = cursor.stringValue(at + 1, backslashEscapes);
    if (like !== null) return { kind: 'show-status', scope, like, where: false };
  }
  // WHERE, or a LIKE whose pattern is not a plain literal: only the server's rows are answered.
  return { kind: 'show-status', scope, like: null, where: true };
}

/**
 * SET assignments that name query_cache_type (SET query_cache_type = 2, SET GLOBAL ..., SET
 * @@session.query_cache_type := DEMAND, SET a = 1, LOCAL query_cache_type = OFF ...), and SET
 * TRANSACTION without a scope (the next transaction only).
 */
function setStatement(cursor: Cursor): StatementControl | null {
  const start = cursor.start;
  const second = cursor.wordAt(start + 1);
  if (second === W.TRANSACTION) return { kind: 'set-transaction' };
  // A scope word carries over to the assignments after it until another one is given.
  let global = false;
  let depth = 0;
  let found: StatementControl | null = null;
  let assignmentStart = start + 1;
  for (let i = start + 1; i <= cursor.end; i++) {
    if (i < cursor.end) {
      if (cursor.isOperatorAt(i, LEFT_PARENTHESIS)) depth++;
      else if (cursor.isOperatorAt(i, RIGHT_PARENTHESIS)) depth--;
      if (depth > 0 || !cursor.isOperatorAt(i, COMMA)) continue;
    }
    // One assignment: tokens [assignmentStart, i).
    let at = assignmentStart;
    const scopeWord = cursor.wordAt(at);
    if (scopeWord === W.GLOBAL || scopeWord === W.SESSION || scopeWord === W.LOCAL) {
      global = scopeWord === W.GLOBAL;
      at++;
    }
    let isTarget = false;
    let assignmentGlobal = global;
    if (cursor.wordAt(at) === W.QUERY_CACHE_TYPE) {
      isTarget = true;
    } else if (cursor.kindAt(at) === TokenKind.SystemVariable) {
      const tokens = cursor.tokens;
      isTarget = systemVariableName(tokens, at) === W.QUERY_CACHE_TYPE;
      const scope = systemVariableScope(tokens, at);
      if (scope !== null) assignmentGlobal = scope === W.GLOBAL;
    }
    if (
      isTarget &&
      (cursor.isOperatorAt(at + 1, EQUALS) || cursor.isOperatorAt(at + 1, Op.Assign))
    ) {
      found = {
        kind: 'set-query-cache-type',
        scope: assignmentGlobal ? 'global' : 'session',
        value: at + 3 === i ? cacheTypeValue(cursor, at + 2) : null,
      };
    }
    assignmentStart = i + 1;
  }
  return found;
}

/** 0, 1, 2, OFF, ON, DEMAND (bare or quoted), DEFAULT; null for anything else. */
function cacheTypeValue(cursor: Cursor, index: number): 0 | 1 | 2 | 'default' | null {
  const tokens = cursor.tokens;
  const kind = tokens.kinds[index];
  let text: string;
  if (kind === TokenKind.Number) text = tokens.text(index);
  else if (kind === TokenKind.String) {
    const value = cursor.stringValue(index, true);
    if (value === null) return null;
    text = value;
  } else if (kind === TokenKind.Word) {
    if (cursor.wordAt(index) === W.DEFAULT) return 'default';
    text = tokens.text(index);
  } else return null;
  switch (text.toUpperCase()) {
    case '0':
    case 'OFF':
      return 0;
    case '1':
    case 'ON':
      return 1;
    case '2':
    case 'DEMAND':
      return 2;
  }
  return null;
}

/**
 * FLUSH [NO_WRITE_TO_BINLOG | LOCAL] option [, option]...: is STATUS among the options, and are
 * they all ones that change no data (STATUS, QUERY CACHE: the server's FLUSH QUERY CACHE only
 * defragments)?
 */
function flushStatement(cursor: Cursor): StatementControl {
  let at = cursor.start + 1;
  const modifier = cursor.wordAt(at);
  if (modifier === W.NO_WRITE_TO_BINLOG || modifier === W.LOCAL) at++;
  let status = false;
  let dataUnchanged = at < cursor.end;
  for (;;) {
    const option = cursor.wordAt(at);
    if (option === W.STATUS) {
      status = true;
      at++;
    } else if (option === W.QUERY && cursor.wordAt(at + 1) === W.CACHE) {
      at += 2;
    } else {
      // Any other option: skip it, up to the next comma.
      dataUnchanged = false;
      while (at < cursor.end && !cursor.isOperatorAt(at, COMMA)) at++;
    }
    if (!cursor.isOperatorAt(at, COMMA)) break;
    at++;
  }
  if (at < cursor.end) dataUnchanged = false;
  return { kind: 'flush', status, dataUnchanged };
}

/** The word id of a system variable's name (after @@ and an optional scope), or -1. */
function systemVariableName(tokens: TokenList, index: number): number {
  const sql = tokens.sql;
  const end = tokens.ends[index]!;
  let nameStart = tokens.starts[index]! + 2;
  const dot = sql.indexOf('.', nameStart);
  if (dot >= 0 && dot < end) nameStart = dot + 1;
  return table.lookup(sql, nameStart, end);
}

/** The scope word of `@@global.x` / `@@session.x` / `@@local.x`, or null when none is given. */
function systemVariableScope(tokens: TokenList, index: number): number | null {
  const sql = tokens.sql;
  const start = tokens.starts[index]! + 2;
  const end = tokens.ends[index]!;
  const dot = sql.indexOf('.', start);
  if (dot < 0 || dot >= end) return null;
  return table.lookup(sql, start, dot);
}

/** Reads words and literals of one statement. */
class Cursor {
  tokens!: TokenList;
  start = 0;
  end = 0;

  reset(tokens: TokenList, start: number, end: number): this {
    this.tokens = tokens;
    this.start = start;
    this.end = end;
    return this;
  }

  kindAt(index: number): number {
    return index < this.end ? this.tokens.kinds[index]! : -1;
  }

  /** The id in WORDS of the bare word at `index`, or -1. */
  wordAt(index: number): number {
    if (index < this.start || index >= this.end) return -1;
    const tokens = this.tokens;
    if (tokens.kinds[index] !== TokenKind.Word) return -1;
    return table.lookup(tokens.sql, tokens.starts[index]!, tokens.ends[index]!);
  }

  isOperatorAt(index: number, operator: number): boolean {
    return (
      index >= this.start &&
      index < this.end &&
      this.tokens.kinds[index] === TokenKind.Operator &&
      this.tokens.ids[index] === operator
    );
  }

  /** Two words in a row anywhere from `from` on. */
  findSequence(from: number, first: number, second: number): boolean {
    for (let i = from; i + 1 < this.end; i++) {
      if (this.wordAt(i) === first && this.wordAt(i + 1) === second) return true;
    }
    return false;
  }

  /**
   * The value of a plain '...' or "..." string literal (no introducer, no hex or bit literal),
   * escapes undone as the server's lexer undoes them; null for any other token.
   */
  stringValue(index: number, backslashEscapes: boolean): string | null {
    const tokens = this.tokens;
    if (index >= this.end || tokens.kinds[index] !== TokenKind.String) return null;
    const text = tokens.text(index);
    const quote = text[0];
    if ((quote !== "'" && quote !== '"') || text.length < 2 || text[text.length - 1] !== quote)
      return null;
    let value = '';
    for (let i = 1; i < text.length - 1; i++) {
      const c = text[i]!;
      if (c === quote) {
        // A doubled quote stands for one.
        value += c;
        i++;
      } else if (c === '\\' && backslashEscapes && i + 1 < text.length - 1) {
        const next = text[++i]!;
        value += unescape(next);
      } else {
        value += c;
      }
    }
    return value;
  }
}

/** The server's string escapes; `\%` and `\_` keep their backslash, for LIKE. */
function unescape(c: string): string {
  switch (c) {
    case '0':
      return '\0';
    case 'b':
      return '\b';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'Z':
      return '\x1a';
    case '%':
    case '_':
      return `\\${c}`;
  }
  return c;
}

/** One statement is looked at at a time: one cursor serves them all. */
const scratch = new Cursor();
