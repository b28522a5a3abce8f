/**
 * The query cache's statement classifier: what a statement is, which tables it reads and writes,
 * whether its result may be cached, and the text to key it by. It runs on every COM_QUERY, so
 * the work is one pass of the tokenizer and one walk over the tokens, with no regular expression.
 *
 * A text may hold several statements separated by ";" (multi-statements). classify() describes
 * the text as a whole, which is never cacheable; classifyAll() describes each statement.
 */
import { COLON, SEMICOLON } from './char-codes.ts';
import { cacheVerdict } from './cacheability.ts';
import { Kw } from './keywords.ts';
import { ParseState } from './parse-state.ts';
import { sweepFunctionCalls } from './query-parser.ts';
import type { StatementInfo, StatementKind } from './statement-info.ts';
import { addsRowsOnly, pointAccessOf, rowsReadFromTable } from './point-access.ts';
import { statementFacts } from './statement-facts.ts';
import { parseStatement, startsReadOnly } from './statement-parser.ts';
import { addTable } from './table-ref.ts';
import type { LowerCaseTableNames, TableRef } from './table-ref.ts';
import { TokenKind, tokenizeShared } from './tokenizer.ts';
import type { TokenList } from './tokenizer.ts';

export type { StatementControl, StatementInfo, StatementKind } from './statement-info.ts';
export type { LowerCaseTableNames, TableRef } from './table-ref.ts';
export { isSystemSchema } from './table-ref.ts';
export { serverVersionNumber } from './server-version.ts';

export interface ClassifyOptions {
  /** sql_mode ANSI_QUOTES. */
  ansiQuotes: boolean;
  /** The server's lower_case_table_names. */
  lowerCaseTableNames: LowerCaseTableNames;
  /** sql_mode NO_BACKSLASH_ESCAPES. */
  noBackslashEscapes?: boolean;
  /** See TokenizerOptions.serverVersion; serverVersionNumber() reads it from the handshake. */
  serverVersion?: number;
}

/** Describes the whole text (several statements are combined, and never cacheable). */
export function classify(sql: string, options: ClassifyOptions): StatementInfo {
  const tokens = tokenizeShared(sql, options);
  const start = skipSemicolons(tokens, 0);
  const end = statementEnd(tokens, start);
  if (skipSemicolons(tokens, end) >= tokens.count) {
    return classifyStatement(tokens, start, end, options, holdsSeveral(tokens, start, end));
  }
  return combine(classifyEach(tokens, options), tokens, sql);
}

/**
 * Does the statement from `start` to `end` hold a semicolon with more after it? Only a stored
 * program or a compound statement may (see statementEnd): it runs several statements itself (a
 * block), or its body ends somewhere the tokens do not tell and the server runs what follows
 * as statements of their own. Either way the text is taken as several statements.
 */
function holdsSeveral(tokens: TokenList, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    if (isSemicolon(tokens, i) && skipSemicolons(tokens, i) < end) return true;
  }
  return false;
}

/** Describes each statement of the text, as if each were sent alone. */
export function classifyAll(sql: string, options: ClassifyOptions): StatementInfo[] {
  return classifyEach(tokenizeShared(sql, options), options);
}

function classifyEach(tokens: TokenList, options: ClassifyOptions): StatementInfo[] {
  const statements: StatementInfo[] = [];
  let start = skipSemicolons(tokens, 0);
  while (start < tokens.count) {
    const end = statementEnd(tokens, start);
    statements.push(classifyStatement(tokens, start, end, options));
    start = skipSemicolons(tokens, end);
  }
  if (statements.length === 0) {
    statements.push(classifyStatement(tokens, 0, 0, options));
  }
  return statements;
}

function isSemicolon(tokens: TokenList, index: number): boolean {
  return tokens.kinds[index] === TokenKind.Operator && tokens.ids[index] === SEMICOLON;
}

function skipSemicolons(tokens: TokenList, index: number): number {
  while (index < tokens.count && isSemicolon(tokens, index)) index++;
  return index;
}

/**
 * One past the statement's last token. A stored program (CREATE PROCEDURE ... BEGIN ...; ...;
 * END) or a compound statement holds semicolons of its own: it runs to the end of the text. Such
 * statements invalidate everything anyway; what follows may still create a temporary table, so
 * such a text, semicolons inside, is taken as several statements (holdsSeveral).
 */
function statementEnd(tokens: TokenList, start: number): number {
  if (start < tokens.count && isCompoundStart(tokens, start)) return tokens.count;
  for (let i = start; i < tokens.count; i++) if (isSemicolon(tokens, i)) return i;
  return tokens.count;
}

const COMPOUND_OBJECTS = new Set([Kw.PROCEDURE, Kw.FUNCTION, Kw.TRIGGER, Kw.EVENT, Kw.PACKAGE]);
const OTHER_OBJECTS = new Set([
  Kw.TABLE,
  Kw.VIEW,
  Kw.INDEX,
  Kw.DATABASE,
  Kw.SCHEMA,
  Kw.SEQUENCE,
  Kw.USER,
  Kw.ROLE,
  Kw.SERVER,
]);

function isCompoundStart(tokens: TokenList, start: number): boolean {
  const word = (index: number): number =>
    index < tokens.count && tokens.kinds[index] === TokenKind.Word ? tokens.ids[index]! : -1;
  const first = word(start);
  if (first === Kw.CREATE) {
    for (let i = start + 1; i < tokens.count && !isSemicolon(tokens, i); i++) {
      const id = word(i);
      if (COMPOUND_OBJECTS.has(id)) return true;
      if (OTHER_OBJECTS.has(id)) return false;
    }
    return false;
  }
  if (first === Kw.BEGIN) {
    // BEGIN and BEGIN WORK end at the next ";"; any other BEGIN opens a block.
    const next = start + 1 < tokens.count ? start + 1 : -1;
    if (next < 0 || isSemicolon(tokens, next)) return false;
    const after = word(next) === Kw.WORK ? next + 1 : next;
    return after < tokens.count && !isSemicolon(tokens, after);
  }
  if (
    first === Kw.IF ||
    first === Kw.WHILE ||
    first === Kw.LOOP ||
    first === Kw.REPEAT ||
    first === Kw.CASE ||
    first === Kw.FOR ||
    first === Kw.DECLARE
  ) {
    return true;
  }
  // label: BEGIN ... END label
  return (
    start + 1 < tokens.count &&
    tokens.kinds[start + 1] === TokenKind.Operator &&
    tokens.ids[start + 1] === COLON
  );
}

const EMPTY_REASON = 'empty statement';

/** The statements a text of several may hold and still be followed (StatementInfo.dataOnly). */
const DATA_KINDS: ReadonlySet<StatementKind> = new Set([
  'select',
  'insert',
  'replace',
  'update',
  'delete',
]);

function classifyStatement(
  tokens: TokenList,
  start: number,
  end: number,
  options: ClassifyOptions,
  several = false,
): StatementInfo {
  const s = new ParseState(tokens, start, end, options.lowerCaseTableNames);
  const lexFailed = tokens.error !== null && end === tokens.count;
  let kind: StatementKind = 'other';
  if (start < end) {
    kind = parseStatement(s);
    if (s.pos < s.end) s.failed = true;
  }
  if (lexFailed) s.failed = true;
  if (s.failed) {
    // What was gathered is partial: look at every call, and assume the worst about writes
    // unless the statement cannot write at all.
    sweepFunctionCalls(s, start, end);
    if (start >= end || !startsReadOnly(s, start)) s.writesEverything = true;
  }
  // A 6-digit versioned comment that may or may not run could hide part of a write.
  if (tokens.uncertainVersionedComment && kind !== 'select') s.writesEverything = true;
  const writesEverythingWithoutFunctions = s.writesEverything;
  if (s.unknownFunctions.length > 0) s.writesEverything = true;
  const verdict =
    start >= end && !s.failed
      ? { cacheable: false, reason: EMPTY_REASON }
      : cacheVerdict(kind, s, tokens.uncertainVersionedComment);
  const facts = statementFacts(
    tokens,
    start,
    end,
    kind,
    s.reads,
    options.noBackslashEscapes !== true,
  );
  return {
    kind,
    reads: s.reads,
    writes: s.writes,
    writesEverything:
      s.writesEverything && !(facts.control?.kind === 'flush' && facts.control.dataUnchanged),
    writesEverythingWithoutFunctions:
      writesEverythingWithoutFunctions &&
      !(facts.control?.kind === 'flush' && facts.control.dataUnchanged),
    cacheable: verdict.cacheable,
    notCacheableReason: verdict.reason,
    sqlCache: s.sqlNoCache ? 'SQL_NO_CACHE' : s.sqlCache ? 'SQL_CACHE' : 'default',
    lockingRead: s.lockingRead,
    implicitCommit: s.implicitCommit,
    temporary: s.temporary,
    unknownFunctions: s.unknownFunctions,
    routineCalls: s.routineCalls,
    multiStatement: several,
    dataOnly: !several && !s.failed && DATA_KINDS.has(kind) && !s.writesEverything,
    followable:
      !several &&
      !s.failed &&
      (DATA_KINDS.has(kind) || (kind === 'set' && facts.control === null)) &&
      !s.writesEverything,
    keyText: tokens.spanText(start, end - 1),
    ddlObject: kind === 'ddl' && !s.failed ? s.ddlObject : null,
    control: kind === 'call' ? { kind: 'call', procedure: s.called } : facts.control,
    readsDiagnostics: facts.readsDiagnostics,
    readsFoundRows: facts.readsFoundRows,
    readsWarnings: facts.readsWarnings,
    point:
      several ||
      s.failed ||
      s.writesEverything ||
      (s.writes.length > 0 && s.reads.length > 1) ||
      s.writes.length > 1
        ? null
        : pointAccessOf(tokens, start, end, kind),
    addsRowsOnly:
      kind === 'insert' &&
      !several &&
      !s.failed &&
      !s.writesEverything &&
      s.writes.length === 1 &&
      addsRowsOnly(tokens, start, end),
    rowsReadFromTable:
      kind === 'select' &&
      !several &&
      !s.failed &&
      s.reads.length === 1 &&
      s.writes.length === 0 &&
      rowsReadFromTable(tokens, start, end),
  };
}

/**
 * Could a statement of a multi-statement text change how the statements after it are read? A
 * USE moves their unqualified names to another database; a SET may change the sql_mode (what a
 * double quote or a backslash means) or the character set (bytes above 0x7F) they are read
 * under, which the classifier reads the whole text with.
 */
function changesTheRest(statements: readonly StatementInfo[], sql: string): boolean {
  let sets = false;
  for (let i = 0; i < statements.length - 1; i++) {
    const kind = statements[i]!.kind;
    if (kind === 'use') return true;
    if (kind === 'set') sets = true;
  }
  if (!sets) return false;
  for (let i = 0; i < sql.length; i++) {
    const code = sql.charCodeAt(i);
    if (code === 0x22 || code === 0x5c || code > 0x7f) return true;
  }
  return false;
}

function combine(statements: StatementInfo[], tokens: TokenList, sql: string): StatementInfo {
  // What the statements after such a one write cannot be told from this reading.
  const untold = changesTheRest(statements, sql);
  const reads: TableRef[] = [];
  const writes: TableRef[] = [];
  const unknownFunctions: string[] = [];
  for (const statement of statements) {
    for (const table of statement.reads) addTable(reads, table);
    for (const table of statement.writes) addTable(writes, table);
    for (const name of statement.unknownFunctions) {
      if (!unknownFunctions.includes(name)) unknownFunctions.push(name);
    }
  }
  let last = tokens.count - 1;
  while (last >= 0 && isSemicolon(tokens, last)) last--;
  return {
    kind: 'other',
    reads,
    writes,
    writesEverything: untold || statements.some((statement) => statement.writesEverything),
    // A text of several statements is not followed through its functions.
    writesEverythingWithoutFunctions:
      untold || statements.some((statement) => statement.writesEverything),
    cacheable: false,
    notCacheableReason: 'multi-statement',
    sqlCache: 'default',
    lockingRead: statements.some((statement) => statement.lockingRead),
    implicitCommit: statements.some((statement) => statement.implicitCommit),
    // Of the session's own tables only when every statement is.
    temporary: statements.every((statement) => statement.temporary),
    unknownFunctions,
    routineCalls: null,
    multiStatement: true,
    dataOnly: !untold && statements.every((statement) => statement.dataOnly),
    followable: !untold && statements.every((statement) => statement.followable),
    keyText: tokens.spanText(skipSemicolons(tokens, 0), last),
    ddlObject: null,
    // The proxy acts on a control statement only when it is sent alone.
    control: null,
    readsDiagnostics: statements.some((statement) => statement.readsDiagnostics),
    readsFoundRows: statements.some((statement) => statement.readsFoundRows),
    readsWarnings: statements.some((statement) => statement.readsWarnings),
    point: null,
    addsRowsOnly: false,
    rowsReadFromTable: false,
  };
}
