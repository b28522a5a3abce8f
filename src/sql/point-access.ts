/**
 * Which rows a statement reads or writes, when the text bounds them by columns' values: a point
 * read `SELECT … FROM t WHERE id = 5 …`, a point write `UPDATE t SET … WHERE id = 5`,
 * `DELETE FROM t WHERE id = 5`, `INSERT INTO t (id, …) VALUES (5, …)`. Such a read depends on
 * the rows whose `id` is 5 only, and such a write changes only those (an UPDATE that does not
 * assign `id` moves no row to another value). Each column bounded gives candidates; the proxy
 * invalidates by row where the metadata names the table's point key (its primary key) and the
 * candidates bound each of its columns (SchemaCatalog). This module only reads the text, and is
 * conservative: anything it does not fully understand is no point access.
 *
 * A comparison counts when it is a top-level conjunct of the WHERE clause: `col = <digits>` or
 * `table.col = <digits>` at parenthesis depth 0 (or `= '<string>'`, see key-text.ts, or `= ?`, a
 * prepared statement's parameter, whose value each execution binds), begun by WHERE or AND (`&&`)
 * and ended by AND, `&&` or the clause's end. A WHERE with OR, XOR, `||`, BETWEEN (whose AND is no
 * conjunction), CASE or `:=` at depth 0 has none. The statement names one table, or a SELECT a
 * plain join of tables (each conjunct then bounds the table its column is qualified by); no
 * subquery (no second SELECT anywhere), no partition list, no UNION.
 */
import {
  COMMA,
  DOT,
  DOUBLE_QUOTE,
  EQUALS,
  LEFT_PARENTHESIS,
  RIGHT_PARENTHESIS,
  SINGLE_QUOTE,
  isDigit,
} from './char-codes.ts';
import type { JoinedTable, PointAccess, PointCandidate, StatementKind } from './statement-info.ts';
import { bytesRowName, HEX_VALUE, hexLiteralValue } from './key-bytes.ts';
import { foldKeyText, isKeyText, isKeyTextBytes } from './key-text.ts';
import { Op, TokenKind } from './tokenizer.ts';
import type { TokenList } from './tokenizer.ts';
import { WordTable } from './word-table.ts';

const WORDS = [
  'AND',
  'AS',
  'BETWEEN',
  'CASE',
  'CROSS',
  'DELAYED',
  'DELETE',
  'DUPLICATE',
  'EXCEPT',
  'FOR',
  'FROM',
  'GROUP',
  'HAVING',
  'HIGH_PRIORITY',
  'IGNORE',
  'IN',
  'INNER',
  'INSERT',
  'INTERSECT',
  'INTO',
  'JOIN',
  'KEY',
  'LEFT',
  'LIMIT',
  'LOCK',
  'LOW_PRIORITY',
  'NATURAL',
  'ON',
  'OR',
  'ORDER',
  'OUTER',
  'PROCEDURE',
  'QUICK',
  'REPLACE',
  'RETURNING',
  'RIGHT',
  'SELECT',
  'SET',
  'STRAIGHT_JOIN',
  'UNION',
  'UPDATE',
  'USING',
  'VALUE',
  'VALUES',
  'WHERE',
  'WINDOW',
  'XOR',
] as const;
type Word = (typeof WORDS)[number];
const table = new WordTable(WORDS);
const W = Object.fromEntries(WORDS.map((word, id) => [word, id])) as Record<Word, number>;

/** Where a SELECT's WHERE clause ends. */
const SELECT_CLAUSE_ENDS = new Set([
  W.GROUP,
  W.HAVING,
  W.WINDOW,
  W.ORDER,
  W.LIMIT,
  W.FOR,
  W.LOCK,
  W.INTO,
  W.PROCEDURE,
]);
/** Where an UPDATE's or DELETE's WHERE clause ends. */
const WRITE_CLAUSE_ENDS = new Set([W.ORDER, W.LIMIT, W.RETURNING]);
/** Where the assignments of an UPDATE, of an `INSERT … SET` and of ON DUPLICATE KEY UPDATE end. */
const UPDATE_SET_ENDS = new Set([W.WHERE]);
const INSERT_SET_ENDS = new Set([W.ON, W.RETURNING]);
const DUPLICATE_UPDATE_ENDS = new Set([W.RETURNING]);

/**
 * More digits than this are not taken as a value: the column's type bounds it anyway (the
 * catalog checks the range), and a longer run would not fit a safe integer.
 */
const MAX_DIGITS = 15;

class Reader {
  readonly tokens: TokenList;
  readonly start: number;
  readonly end: number;

  constructor(tokens: TokenList, start: number, end: number) {
    this.tokens = tokens;
    this.start = start;
    this.end = end;
  }

  word(index: number): number {
    if (index < this.start || index >= this.end) return -1;
    const tokens = this.tokens;
    if (tokens.kinds[index] !== TokenKind.Word) return -1;
    return table.lookup(tokens.sql, tokens.starts[index]!, tokens.ends[index]!);
  }

  isOperator(index: number, operator: number): boolean {
    return (
      index >= this.start &&
      index < this.end &&
      this.tokens.kinds[index] === TokenKind.Operator &&
      this.tokens.ids[index] === operator
    );
  }

  /** The name a bare word (not one of WORDS) or a quoted identifier stands for, lowercased. */
  name(index: number): string | null {
    if (index < this.start || index >= this.end) return null;
    const kind = this.tokens.kinds[index];
    if (kind === TokenKind.Word && this.word(index) === -1) {
      return this.tokens.identifier(index).toLowerCase();
    }
    if (kind === TokenKind.QuotedIdentifier) return this.tokens.identifier(index).toLowerCase();
    return null;
  }

  /** The value of a plain decimal integer literal at `index` (no sign, dot or exponent). */
  integer(index: number): string | null {
    if (index < this.start || index >= this.end) return null;
    const tokens = this.tokens;
    if (tokens.kinds[index] !== TokenKind.Number) return null;
    return integerValue(tokens.sql, tokens.starts[index]!, tokens.ends[index]!);
  }

  /**
   * Which parameter the placeholder at `index` is (the count of placeholders before it in the
   * text: a prepared text is one statement), or -1 when the token is no placeholder.
   */
  parameter(index: number): number {
    if (index < this.start || index >= this.end) return -1;
    const kinds = this.tokens.kinds;
    if (kinds[index] !== TokenKind.Placeholder) return -1;
    let ordinal = 0;
    for (let i = 0; i < index; i++) if (kinds[i] === TokenKind.Placeholder) ordinal++;
    return ordinal;
  }

  /**
   * A literal integer, a quoted string or a placeholder at `index`, as a candidate of `column`;
   * null if none. A quoted string's value is a quote and its characters (see keyValueOf): to an
   * integer column it is the number it spells when it is digits only (`id = '05'` is `id = 5`,
   * what PHP's PDO sends for a bound id, its prepares emulated), to a string column its row's
   * name (key-text.ts). A hex literal's value is `x` and its digits (key-bytes.ts): it names a
   * row of a column of bytes only (`X'35'` is 53 to an integer column). A string of other
   * characters (`'5 '`, `'a b'`, `'é'`) and a string with another prefix (`_latin1'5'`, `N'5'`)
   * is no candidate.
   */
  candidate(column: string, index: number, table = 0): PointCandidate | null {
    const at = this.tokens.starts[index]!;
    const value = this.integer(index) ?? this.quoted(index) ?? this.hex(index);
    if (value !== null) return { column, at, value, parameter: -1, table };
    const parameter = this.parameter(index);
    return parameter < 0 ? null : { column, at, value: null, parameter, table };
  }

  /** The value of a quoted string at `index` whose characters may name a row ('5', "ab-1"). */
  quoted(index: number): string | null {
    if (index < this.start || index >= this.end) return null;
    const tokens = this.tokens;
    if (tokens.kinds[index] !== TokenKind.String) return null;
    const sql = tokens.sql;
    const start = tokens.starts[index]!;
    const end = tokens.ends[index]!;
    const quote = sql.charCodeAt(start);
    if (
      end - start < 2 ||
      (quote !== SINGLE_QUOTE && quote !== DOUBLE_QUOTE) ||
      sql.charCodeAt(end - 1) !== quote ||
      !isKeyText(sql, start + 1, end - 1)
    ) {
      return null;
    }
    return "'" + sql.slice(start + 1, end - 1);
  }

  /** The value of a hex literal at `index` (`X'0aff'`, `0x0aff`), as hexLiteralValue gives it. */
  hex(index: number): string | null {
    if (index < this.start || index >= this.end) return null;
    const tokens = this.tokens;
    const kind = tokens.kinds[index];
    if (kind !== TokenKind.String && kind !== TokenKind.Number) return null;
    return hexLiteralValue(tokens.sql, tokens.starts[index]!, tokens.ends[index]!);
  }

  /**
   * A table reference `name` or `schema.name` at `index`: its names (lowercased) and the index
   * after.
   */
  tableAt(index: number): { schema: string | null; name: string; next: number } | null {
    const first = this.name(index);
    if (first === null) return null;
    if (!this.isOperator(index + 1, DOT)) return { schema: null, name: first, next: index + 1 };
    const second = this.name(index + 2);
    return second === null ? null : { schema: first, name: second, next: index + 3 };
  }
}

/**
 * The digits of `text[start, end)` as the number they spell, leading zeros dropped; null unless
 * they are all decimal digits, at most MAX_DIGITS of them once the zeros are gone.
 */
export function integerValue(text: string, start: number, end: number): string | null {
  if (start >= end) return null;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return null;
  }
  let first = start;
  while (first < end - 1 && text.charCodeAt(first) === 0x30) first++;
  return end - first > MAX_DIGITS ? null : text.slice(first, end);
}

/**
 * The value of a shaped text's literal `bytes[start, end)` (a number, a single-quoted string or
 * a hex literal, see statement-shape.ts), as Reader.candidate gives it: the same value, read from
 * another text of the statement's shape. Null when it is none.
 */
export function pointValueOfBytes(bytes: Buffer, start: number, end: number): string | null {
  if (bytes[start] !== SINGLE_QUOTE && end - start >= 2 && !isDigit(bytes[start + 1]!)) {
    // Neither a string nor decimal digits: a hex literal, X'…' or 0x… (findShape).
    return hexLiteralValue(bytes.toString('latin1', start, end), 0, end - start);
  }
  if (end - start >= 2 && bytes[start] === SINGLE_QUOTE && bytes[end - 1] === SINGLE_QUOTE) {
    if (!isKeyTextBytes(bytes, start + 1, end - 1)) return null;
    return "'" + bytes.toString('latin1', start + 1, end - 1);
  }
  if (start >= end) return null;
  for (let i = start; i < end; i++) if (bytes[i]! < 0x30 || bytes[i]! > 0x39) return null;
  let first = start;
  while (first < end - 1 && bytes[first] === 0x30) first++;
  return end - first > MAX_DIGITS ? null : bytes.toString('latin1', first, end);
}

/**
 * What a point key's column holds, which decides the values that name its rows and their names
 * (keyValueOf): integers; strings of a character set (CHAR, VARCHAR: key-text.ts); bytes
 * (VARBINARY), or bytes padded to the column's width (BINARY: key-bytes.ts).
 */
export const KeyKind = { INTEGER: 0, TEXT: 1, BYTES: 2, FIXED_BYTES: 3 } as const;
export type KeyKind = (typeof KeyKind)[keyof typeof KeyKind];

/**
 * The name of the row a candidate's `value` (as Reader.candidate gives it) names in a key column
 * of `kind`, whose values are at most `max` (an integer column's), or at most `max` characters
 * (a string column's) or bytes (a column of bytes): for an integer column the number's digits
 * (a quoted value when it is digits only), for a string column a quoted value folded
 * (key-text.ts; a number is compared with the column's strings as numbers, `'05'` and `'5.0'`
 * equal to 5, so it names none), for a column of bytes a quoted value's or hex literal's bytes
 * (key-bytes.ts). Null when it names no row: a value out of the column's range (an INSERT of it
 * would store another, clipped or cut short), or a hex literal to a column not of bytes.
 */
export function keyValueOf(value: string, kind: KeyKind, max: number): string | null {
  const first = value.charCodeAt(0);
  if (kind === KeyKind.BYTES || kind === KeyKind.FIXED_BYTES) {
    return bytesRowName(value, max, kind === KeyKind.FIXED_BYTES);
  }
  if (first === HEX_VALUE) return null;
  const quoted = first === SINGLE_QUOTE;
  if (kind === KeyKind.TEXT) {
    return quoted && value.length - 1 <= max ? foldKeyText(value, 1, value.length) : null;
  }
  const digits = quoted ? integerValue(value, 1, value.length) : value;
  return digits === null || Number(digits) > max ? null : digits;
}

/** The point access of the statement in tokens [start, end), or null. */
export function pointAccessOf(
  tokens: TokenList,
  start: number,
  end: number,
  kind: StatementKind,
): PointAccess | null {
  if (tokens.uncertainVersionedComment || tokens.error !== null) return null;
  const reader = new Reader(tokens, start, end);
  // No subquery, no UNION: one SELECT at most, and only as a SELECT's first word.
  for (let i = start; i < end; i++) {
    if (reader.word(i) === W.SELECT && !(kind === 'select' && i === start)) return null;
  }
  switch (kind) {
    case 'select':
      return pointSelect(reader);
    case 'update':
      return pointUpdate(reader);
    case 'delete':
      return pointDelete(reader);
    case 'insert':
    case 'replace':
      return pointInsert(reader);
    default:
      return null;
  }
}

/**
 * `SELECT … FROM t [[AS] alias] WHERE …`, or a join of tables, each with its alias or not, by
 * commas or `[NATURAL] [INNER | CROSS | LEFT [OUTER] | RIGHT [OUTER]] JOIN` and `STRAIGHT_JOIN`,
 * with `ON …` or `USING (…)`. A top-level conjunct of the WHERE bounds the rows of the table its
 * column is qualified by, whatever the join: a row of the result is made of a row of each table
 * that the whole WHERE holds for (an outer join's missing row has NULLs, which `= 5` is not).
 */
function pointSelect(reader: Reader): PointAccess | null {
  const { start } = reader;
  if (reader.word(start) !== W.SELECT) return null;
  const from = fromOf(reader);
  if (from < 0) return null;
  const target = tableAndAlias(reader, from + 1);
  if (target === null) return null;
  if (reader.word(target.next) !== W.WHERE) return pointJoin(reader, from);
  const where = whereCandidates(
    reader,
    target.next + 1,
    SELECT_CLAUSE_ENDS,
    oneTable(target.names),
    true,
  );
  return where === null || where.candidates.length === 0
    ? null
    : {
        candidates: where.candidates,
        joined: null,
        assigned: [],
        insert: false,
        upsert: false,
        rowPerMatch: rowPerMatch(reader, from),
        inList: where.inList,
      };
}

/** The SELECT's own FROM (not a subquery's in its select list), or -1. */
function fromOf(reader: Reader): number {
  let depth = 0;
  for (let i = reader.start + 1; i < reader.end; i++) {
    if (reader.isOperator(i, LEFT_PARENTHESIS)) depth++;
    else if (reader.isOperator(i, RIGHT_PARENTHESIS)) depth--;
    else if (depth === 0 && reader.word(i) === W.FROM) return i;
  }
  return -1;
}

/** The words a join may begin with, besides a comma. */
const JOIN_STARTS = new Set([
  W.JOIN,
  W.INNER,
  W.CROSS,
  W.LEFT,
  W.RIGHT,
  W.NATURAL,
  W.STRAIGHT_JOIN,
]);

/**
 * A point SELECT of several tables joined (`from`: its FROM), its candidates each of the table
 * its column is qualified by; null when the FROM clause is not a plain join of named tables.
 * A table named twice (a self-join) bounds nothing by either name: its two rows differ. A row
 * of its result shows each bounded row exists when each is bounded by `=` alone (rowPerMatch);
 * not with an IN list, whose rows a join may repeat or leave out.
 */
function pointJoin(reader: Reader, from: number): PointAccess | null {
  const joined: JoinedTable[] = [];
  /** Each table's name and alias, by its index in `joined`. */
  const names: string[][] = [];
  let at = from + 1;
  for (;;) {
    const target = tableAndAlias(reader, at);
    if (target === null) return null;
    joined.push({ schema: target.schema, name: target.name });
    names.push(target.names);
    at = target.next;
    // Its join condition.
    if (reader.word(at) === W.USING) {
      if (!reader.isOperator(at + 1, LEFT_PARENTHESIS)) return null;
      at += 2;
      while (at < reader.end && !reader.isOperator(at, RIGHT_PARENTHESIS)) at++;
      at++;
    } else if (reader.word(at) === W.ON) {
      let depth = 0;
      for (at++; at < reader.end; at++) {
        if (reader.isOperator(at, LEFT_PARENTHESIS)) depth++;
        else if (reader.isOperator(at, RIGHT_PARENTHESIS)) depth--;
        else if (
          depth === 0 &&
          (reader.isOperator(at, COMMA) ||
            reader.word(at) === W.WHERE ||
            JOIN_STARTS.has(reader.word(at)))
        ) {
          break;
        }
      }
    }
    if (reader.word(at) === W.WHERE) break;
    // The next table: after a comma, or a join's words.
    if (reader.isOperator(at, COMMA)) {
      at++;
      continue;
    }
    if (reader.word(at) === W.NATURAL) at++;
    const word = reader.word(at);
    if (word === W.LEFT || word === W.RIGHT) {
      at++;
      if (reader.word(at) === W.OUTER) at++;
    } else if (word === W.INNER || word === W.CROSS) {
      at++;
    }
    if (reader.word(at) !== W.JOIN && reader.word(at) !== W.STRAIGHT_JOIN) return null;
    at++;
  }
  if (joined.length < 2) return null;
  const tableOf = (qualifier: string | null): number => {
    if (qualifier === null) return -1;
    let found = -1;
    for (let i = 0; i < names.length; i++) {
      if (!names[i]!.includes(qualifier)) continue;
      if (found >= 0) return -1;
      found = i;
    }
    if (found < 0) return -1;
    // A table named twice: neither reference bounds it.
    const { schema, name } = joined[found]!;
    for (let i = 0; i < joined.length; i++) {
      if (i !== found && joined[i]!.name === name && joined[i]!.schema === schema) return -1;
    }
    return found;
  };
  const where = whereCandidates(reader, at + 1, SELECT_CLAUSE_ENDS, tableOf, true);
  return where === null || where.candidates.length === 0
    ? null
    : {
        candidates: where.candidates,
        joined,
        assigned: [],
        insert: false,
        upsert: false,
        rowPerMatch: !where.inList && rowPerMatch(reader, from),
        inList: where.inList,
      };
}

/** The table of a column of a statement of one table called `names` (its name and alias). */
function oneTable(names: readonly string[]): (qualifier: string | null) => number {
  return (qualifier) => (qualifier === null || names.includes(qualifier) ? 0 : -1);
}

/**
 * Does a point SELECT (`from`: its FROM) return one row per matching row? Not when its select
 * list calls anything (an aggregate answers a row over no rows: `COUNT(*)` says 0, and HAVING
 * can turn that around), nor with GROUP BY, HAVING, a WINDOW clause or PROCEDURE. Conservative:
 * a function of the row's own columns counts as a call too.
 */
function rowPerMatch(reader: Reader, from: number): boolean {
  for (let i = reader.start + 1; i < from; i++) {
    if (reader.isOperator(i, LEFT_PARENTHESIS)) return false;
  }
  for (let i = from + 1; i < reader.end; i++) {
    const word = reader.word(i);
    if (word === W.GROUP || word === W.HAVING || word === W.WINDOW || word === W.PROCEDURE) {
      return false;
    }
  }
  return true;
}

/**
 * Is the statement in tokens [start, end) a SELECT whose every result row is made of a row it
 * read from the table named first in its FROM: a table there (not a derived table, DUAL or a
 * table function such as JSON_TABLE), no RIGHT JOIN (whose rows may come from the right side
 * alone), one SELECT (no UNION, EXCEPT or INTERSECT), and nothing in parentheses in its select
 * list, no GROUP BY, HAVING, WINDOW or PROCEDURE (as rowPerMatch). A result with a row then
 * shows the server read a row of that table; the caller checks it reads no other table (no
 * join of one, no subquery reading one).
 */
export function rowsReadFromTable(tokens: TokenList, start: number, end: number): boolean {
  if (tokens.uncertainVersionedComment || tokens.error !== null) return false;
  const reader = new Reader(tokens, start, end);
  if (reader.word(start) !== W.SELECT) return false;
  for (let i = start + 1; i < end; i++) {
    const word = reader.word(i);
    if (word === W.UNION || word === W.EXCEPT || word === W.INTERSECT || word === W.RIGHT) {
      return false;
    }
  }
  const from = fromOf(reader);
  if (from < 0) return false;
  const first = reader.tableAt(from + 1);
  return (
    first !== null &&
    !(first.schema === null && first.name === 'dual') &&
    !reader.isOperator(first.next, LEFT_PARENTHESIS) &&
    rowPerMatch(reader, from)
  );
}

/**
 * Is the statement in tokens [start, end) an INSERT that can only add rows? `INSERT … VALUES`,
 * `INSERT … SET`, `INSERT … SELECT`, with IGNORE or RETURNING or not, but no ON DUPLICATE KEY
 * UPDATE (which changes the row a new one collides with; any DUPLICATE word says no). REPLACE
 * is another kind. Such a statement changes no row that was there before: whatever it adds, a
 * read that found its row finds it unchanged (the caller checks the table has no trigger).
 */
export function addsRowsOnly(tokens: TokenList, start: number, end: number): boolean {
  if (tokens.uncertainVersionedComment || tokens.error !== null) return false;
  const reader = new Reader(tokens, start, end);
  if (reader.word(start) !== W.INSERT) return false;
  for (let i = start + 1; i < end; i++) if (reader.word(i) === W.DUPLICATE) return false;
  return true;
}

/** `UPDATE [LOW_PRIORITY] [IGNORE] t [[AS] alias] SET col = …, … WHERE …` */
function pointUpdate(reader: Reader): PointAccess | null {
  let i = reader.start + 1;
  if (reader.word(i) === W.LOW_PRIORITY) i++;
  if (reader.word(i) === W.IGNORE) i++;
  const target = tableAndAlias(reader, i);
  if (target === null || reader.word(target.next) !== W.SET) return null;
  // The assignments: `[t.]col = expression`, separated by commas at depth 0.
  const update = assignments(reader, target.next + 1, target.names, UPDATE_SET_ENDS);
  if (update === null || reader.word(update.end) !== W.WHERE) return null;
  const { assigned, end: where } = update;
  const bound = whereCandidates(reader, where + 1, WRITE_CLAUSE_ENDS, oneTable(target.names), true);
  return bound === null || bound.candidates.length === 0
    ? null
    : {
        candidates: bound.candidates,
        joined: null,
        assigned,
        insert: false,
        upsert: false,
        rowPerMatch: false,
        inList: bound.inList,
      };
}

/** `DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM t WHERE …` */
function pointDelete(reader: Reader): PointAccess | null {
  let i = reader.start + 1;
  if (reader.word(i) === W.LOW_PRIORITY) i++;
  if (reader.word(i) === W.QUICK) i++;
  if (reader.word(i) === W.IGNORE) i++;
  if (reader.word(i) !== W.FROM) return null;
  const target = reader.tableAt(i + 1);
  if (target === null || reader.word(target.next) !== W.WHERE) return null;
  const where = whereCandidates(
    reader,
    target.next + 1,
    WRITE_CLAUSE_ENDS,
    oneTable([target.name]),
    true,
  );
  return where === null || where.candidates.length === 0
    ? null
    : {
        candidates: where.candidates,
        joined: null,
        assigned: [],
        insert: false,
        upsert: false,
        rowPerMatch: false,
        inList: where.inList,
      };
}

/**
 * `INSERT [LOW_PRIORITY | DELAYED | HIGH_PRIORITY] [IGNORE] [INTO] t (col, …) VALUES (v, …)`, or
 * `… t SET col = v, …`: one row, ended by the text, RETURNING, or `ON DUPLICATE KEY UPDATE
 * col = …, …`. Each column whose value is a plain integer or a placeholder is a candidate.
 * `REPLACE` the same. Several rows of VALUES bound an upsert only (see below). REPLACE and ON
 * DUPLICATE KEY UPDATE are upserts (`upsert`): they change the row that the new one collides
 * with, which is the row of its point key's value only when that key is the table's one
 * unique key (the catalog checks: SchemaCatalog.pointWrite). The columns ON DUPLICATE KEY
 * UPDATE assigns are `assigned`: assigning a point key's column moves the row.
 */
function pointInsert(reader: Reader): PointAccess | null {
  const replace = reader.word(reader.start) === W.REPLACE;
  let i = reader.start + 1;
  const priority = reader.word(i);
  if (priority === W.LOW_PRIORITY || priority === W.DELAYED || priority === W.HIGH_PRIORITY) i++;
  if (reader.word(i) === W.IGNORE) i++;
  if (reader.word(i) === W.INTO) i++;
  const target = reader.tableAt(i);
  if (target === null) return null;
  const inserted =
    reader.word(target.next) === W.SET
      ? setRow(reader, target.next + 1, target.name)
      : valueRows(reader, target.next);
  if (inserted === null) return null;
  const { rows, columns } = inserted;
  // Nothing after the rows but ON DUPLICATE KEY UPDATE, RETURNING, or both.
  let after = inserted.end;
  let assigned: string[] = [];
  let upsert = replace;
  if (!replace && reader.word(after) === W.ON) {
    if (
      reader.word(after + 1) !== W.DUPLICATE ||
      reader.word(after + 2) !== W.KEY ||
      reader.word(after + 3) !== W.UPDATE
    )
      return null;
    const update = assignments(reader, after + 4, [target.name], DUPLICATE_UPDATE_ENDS);
    if (update === null) return null;
    assigned = update.assigned;
    after = update.end;
    upsert = true;
  }
  if (after < reader.end && reader.word(after) !== W.RETURNING) return null;
  let candidates: PointCandidate[];
  if (rows.length === 1) {
    candidates = rows[0]!;
  } else {
    // Several rows: an INSERT of them only adds rows (StatementInfo.addsRowsOnly). An upsert
    // writes the union of its rows' keys, as an IN list bounds a write: a column is a candidate
    // only where every row gives it a value, so no row's key goes unread.
    if (!upsert || rows.length > MAX_IN_LIST) return null;
    candidates = [];
    for (const column of columns) {
      const values = rows.map((each) => each.find((candidate) => candidate.column === column));
      if (values.every((value) => value !== undefined)) candidates.push(...values);
    }
  }
  return candidates.length === 0
    ? null
    : {
        candidates,
        joined: null,
        assigned,
        insert: true,
        upsert,
        rowPerMatch: false,
        inList: rows.length > 1,
      };
}

/**
 * `(col, …) VALUES (v, …), …` at `open`: each row's candidates, the columns, and the index
 * after the last row; null when it is not that.
 */
function valueRows(
  reader: Reader,
  open: number,
): { rows: PointCandidate[][]; columns: string[]; end: number } | null {
  if (!reader.isOperator(open, LEFT_PARENTHESIS)) return null;
  const columns: string[] = [];
  let i = open + 1;
  for (; ; i += 2) {
    const column = reader.name(i);
    if (column === null) return null;
    columns.push(column);
    if (reader.isOperator(i + 1, RIGHT_PARENTHESIS)) break;
    if (!reader.isOperator(i + 1, COMMA)) return null;
  }
  i += 2;
  const values = reader.word(i);
  if (values !== W.VALUES && values !== W.VALUE) return null;
  const rows: PointCandidate[][] = [];
  let row = rowCandidates(reader, columns, i + 1);
  for (;;) {
    if (row === null) return null;
    rows.push(row.candidates);
    if (!reader.isOperator(row.close + 1, COMMA)) break;
    row = rowCandidates(reader, columns, row.close + 2);
  }
  return { rows, columns, end: row.close + 1 };
}

/**
 * `SET col = v, …` from `from` (after SET), one row: a candidate for each value that is a plain
 * integer or a placeholder alone, and the index after the assignments; null when it is not that.
 */
function setRow(
  reader: Reader,
  from: number,
  table: string,
): { rows: PointCandidate[][]; columns: string[]; end: number } | null {
  const set = assignments(reader, from, [table], INSERT_SET_ENDS);
  if (set === null) return null;
  const candidates: PointCandidate[] = [];
  set.values.forEach(([start, end], index) => {
    const candidate = end === start + 1 ? reader.candidate(set.assigned[index]!, start) : null;
    if (candidate !== null) candidates.push(candidate);
  });
  return { rows: [candidates], columns: set.assigned, end: set.end };
}

/**
 * One row of values `(v, …)` opening at `open`, one value per column of `columns`: a candidate
 * for each that is a plain integer or a placeholder, and the index of the row's closing
 * parenthesis; null when the row is not that.
 */
function rowCandidates(
  reader: Reader,
  columns: readonly string[],
  open: number,
): { candidates: PointCandidate[]; close: number } | null {
  if (!reader.isOperator(open, LEFT_PARENTHESIS)) return null;
  const candidates: PointCandidate[] = [];
  let column = 0;
  let valueStart = open + 1;
  let depth = 0;
  for (let i = valueStart; i < reader.end; i++) {
    if (reader.isOperator(i, LEFT_PARENTHESIS)) {
      depth++;
      continue;
    }
    const closing = reader.isOperator(i, RIGHT_PARENTHESIS);
    if (closing && depth > 0) {
      depth--;
      continue;
    }
    if (depth > 0 || !(closing || reader.isOperator(i, COMMA))) continue;
    // One value: tokens [valueStart, i).
    if (column >= columns.length) return null;
    const candidate = i === valueStart + 1 ? reader.candidate(columns[column]!, valueStart) : null;
    if (candidate !== null) candidates.push(candidate);
    column++;
    valueStart = i + 1;
    if (closing) return column === columns.length ? { candidates, close: i } : null;
  }
  return null;
}

/**
 * The assignments `[t.]col = expression, …` from `from` (each expression ends at a comma at
 * depth 0), up to the statement's end or a word of `ends` at depth 0: the columns assigned, each
 * one's value as the tokens [start, end) (`values`, in their order), and where they end; null
 * when one is not an assignment of a column.
 */
function assignments(
  reader: Reader,
  from: number,
  names: readonly string[],
  ends: ReadonlySet<number>,
): { assigned: string[]; values: Array<[start: number, end: number]>; end: number } | null {
  const assigned: string[] = [];
  const values: Array<[number, number]> = [];
  let at = from;
  for (;;) {
    const column = columnAt(reader, at, names);
    if (column === null || !reader.isOperator(column.next, EQUALS)) return null;
    assigned.push(column.name);
    let depth = 0;
    let i = column.next + 1;
    for (; i < reader.end; i++) {
      if (reader.isOperator(i, LEFT_PARENTHESIS)) depth++;
      else if (reader.isOperator(i, RIGHT_PARENTHESIS)) depth--;
      else if (depth === 0 && (reader.isOperator(i, COMMA) || ends.has(reader.word(i)))) break;
    }
    if (i === column.next + 1 || depth !== 0) return null;
    values.push([column.next + 1, i]);
    if (i >= reader.end || ends.has(reader.word(i))) return { assigned, values, end: i };
    at = i + 1;
  }
}

/**
 * `t [[AS] alias]` at `index`: the table (as Reader.tableAt reads it), the names a column may be
 * qualified with, and the index after.
 */
function tableAndAlias(
  reader: Reader,
  index: number,
): { schema: string | null; name: string; names: string[]; next: number } | null {
  const target = reader.tableAt(index);
  if (target === null) return null;
  const { schema, name } = target;
  let next = target.next;
  const names = [target.name];
  if (reader.word(next) === W.AS) {
    const alias = reader.name(next + 1);
    if (alias === null) return null;
    names.push(alias);
    next += 2;
  } else {
    const alias = reader.name(next);
    if (alias !== null) {
      names.push(alias);
      next++;
    }
  }
  return { schema, name, names, next };
}

/** `col` or `t.col` at `index`, `t` one of `names`: the column, and the index after. */
function columnAt(
  reader: Reader,
  index: number,
  names: readonly string[],
): { name: string; next: number } | null {
  const column = qualifiedColumnAt(reader, index);
  if (column === null || (column.qualifier !== null && !names.includes(column.qualifier))) {
    return null;
  }
  return column;
}

/** `col` or `qualifier.col` at `index`: the column, its qualifier (null: none), the index after. */
function qualifiedColumnAt(
  reader: Reader,
  index: number,
): { name: string; qualifier: string | null; next: number } | null {
  const first = reader.name(index);
  if (first === null) return null;
  if (!reader.isOperator(index + 1, DOT)) return { name: first, qualifier: null, next: index + 1 };
  const second = reader.name(index + 2);
  return second === null ? null : { name: second, qualifier: first, next: index + 3 };
}

/**
 * The `col = <integer>` conjuncts of the WHERE clause from `from` to its end (a word of `ends` at
 * depth 0, or the statement's end); null when the clause is not a plain conjunction. A conjunct
 * `col IN (<integer>, …)` of literals only gives each of its values as a candidate (`inList`):
 * the rows are then among the union of a one-column key's candidates' values (a superset of
 * what a conjunction of `=` bounds them to as well), which is what a write marks and a read
 * depends on (SchemaCatalog.pointWriteSlots, readSlots).
 */
function whereCandidates(
  reader: Reader,
  from: number,
  ends: ReadonlySet<number>,
  tableOf: (qualifier: string | null) => number,
  inLists: boolean,
): { candidates: PointCandidate[]; inList: boolean } | null {
  let to = reader.end;
  let depth = 0;
  for (let i = from; i < reader.end; i++) {
    if (reader.isOperator(i, LEFT_PARENTHESIS)) depth++;
    else if (reader.isOperator(i, RIGHT_PARENTHESIS)) depth--;
    else if (depth === 0) {
      const word = reader.word(i);
      if (ends.has(word)) {
        to = i;
        break;
      }
      if (
        word === W.OR ||
        word === W.XOR ||
        word === W.BETWEEN ||
        word === W.CASE ||
        reader.isOperator(i, Op.DoublePipe) ||
        reader.isOperator(i, Op.Assign)
      ) {
        return null;
      }
    }
    if (depth < 0) return null;
  }
  if (depth !== 0) return null;
  const candidates: PointCandidate[] = [];
  let inList = false;
  let conjunct = from;
  depth = 0;
  for (let i = from; i <= to; i++) {
    if (i < to) {
      if (reader.isOperator(i, LEFT_PARENTHESIS)) depth++;
      else if (reader.isOperator(i, RIGHT_PARENTHESIS)) depth--;
      if (depth > 0 || !(reader.word(i) === W.AND || reader.isOperator(i, Op.DoubleAmpersand))) {
        continue;
      }
    }
    // One conjunct: tokens [conjunct, i); an empty one is no SQL.
    if (conjunct === i) return null;
    const column = qualifiedColumnAt(reader, conjunct);
    const table = column === null ? -1 : tableOf(column.qualifier);
    if (column === null || table < 0) {
      // Not a column of a table this bounds (or of no one table): no candidate.
    } else if (reader.isOperator(column.next, EQUALS) && column.next + 2 === i) {
      const candidate = reader.candidate(column.name, column.next + 1, table);
      if (candidate !== null) candidates.push(candidate);
    } else if (inLists && reader.word(column.next) === W.IN) {
      const list = inListCandidates(reader, column.name, column.next + 1, i, table);
      if (list !== null) {
        candidates.push(...list);
        inList = true;
      }
    }
    conjunct = i + 1;
  }
  return { candidates, inList };
}

/** Values an IN list bounds a write to at most: more are taken as a write of the table. */
const MAX_IN_LIST = 256;

/**
 * `(<value>, …)` from `open` to just before `end`, every value a plain integer literal or a
 * placeholder (each execution binds its own), as candidates of `column`; null otherwise.
 */
function inListCandidates(
  reader: Reader,
  column: string,
  open: number,
  end: number,
  table: number,
): PointCandidate[] | null {
  if (!reader.isOperator(open, LEFT_PARENTHESIS) || !reader.isOperator(end - 1, RIGHT_PARENTHESIS))
    return null;
  const candidates: PointCandidate[] = [];
  for (let i = open + 1; i < end - 1; i += 2) {
    const candidate = reader.candidate(column, i, table);
    if (candidate === null) return null;
    candidates.push(candidate);
    if (candidates.length > MAX_IN_LIST) return null;
    if (i + 1 === end - 1) return candidates;
    if (!reader.isOperator(i + 1, COMMA)) return null;
  }
  return null;
}
