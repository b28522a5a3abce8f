/**
 * One parser per kind of statement: each records on the ParseState what the statement reads and
 * writes and returns its kind. Queries, table references and expressions are query-parser.ts's.
 *
 * What cannot be known from the text is said so: writesEverything for CALL, EXECUTE, account and
 * privilege statements, FLUSH, LOCK TABLES ... WRITE, databases, views, triggers, routines,
 * events, and every statement not recognised here as read-only.
 */
import { isNotAlias, Kw } from './keywords.ts';
import { COMMA, DOT, EQUALS, LEFT_PARENTHESIS, STAR } from './char-codes.ts';
import { ParseState, type TableEntry } from './parse-state.ts';
import {
  parsePortionOf,
  parseQueryBody,
  parseQueryExpression,
  parseSelectClauses,
  parseTableReferences,
  parseWith,
  scanExpression,
  ScanFlags,
  scanTemporalBound,
  sweepFunctionCalls,
} from './query-parser.ts';
import type { StatementKind } from './statement-info.ts';
import { normalizeName } from './table-ref.ts';
import { Op, TokenKind } from './tokenizer.ts';

export function parseStatement(s: ParseState): StatementKind {
  const id = s.keyword();
  switch (id) {
    case Kw.SELECT:
    case Kw.VALUES:
      parseQueryExpression(s);
      return 'select';
    case Kw.WITH:
      return parseWithStatement(s);
    case Kw.INSERT:
      return parseInsert(s, 'insert');
    case Kw.REPLACE:
      return parseInsert(s, 'replace');
    case Kw.UPDATE:
      return parseUpdate(s);
    case Kw.DELETE:
      return parseDelete(s);
    case Kw.TRUNCATE:
      return parseTruncate(s);
    case Kw.LOAD:
      return parseLoad(s);
    case Kw.CREATE:
      return parseCreate(s);
    case Kw.ALTER:
      return parseAlter(s);
    case Kw.DROP:
      return parseDrop(s);
    case Kw.RENAME:
      return parseRename(s);
    case Kw.BEGIN:
      return parseBegin(s);
    case Kw.START:
      return parseStart(s);
    case Kw.COMMIT:
      s.skipRest();
      return 'commit';
    case Kw.ROLLBACK:
      return parseRollback(s);
    case Kw.SAVEPOINT:
      s.skipRest();
      return 'savepoint';
    case Kw.RELEASE:
      s.pos++;
      s.expect(Kw.SAVEPOINT);
      s.skipRest();
      return 'savepoint';
    case Kw.XA:
      s.skipRest();
      return 'xa';
    case Kw.SET:
      return parseSet(s);
    case Kw.USE:
      s.skipRest();
      return 'use';
    case Kw.SHOW:
    case Kw.HELP:
      // Metadata, not data; but SHOW ... WHERE f(x) evaluates f.
      sweepFunctionCalls(s, s.pos, s.end);
      s.skipRest();
      return 'show';
    case Kw.DESCRIBE:
    case Kw.DESC:
    case Kw.EXPLAIN:
      return parseExplain(s);
    case Kw.ANALYZE:
      return parseAnalyze(s);
    case Kw.CHECK:
    case Kw.CHECKSUM:
      // CHECK TABLE, CHECKSUM TABLE: read-only maintenance; CHECK commits.
      s.implicitCommit = id === Kw.CHECK;
      s.skipRest();
      return 'other';
    case Kw.OPTIMIZE:
    case Kw.REPAIR:
      return parseMaintenance(s);
    case Kw.CALL:
      s.pos++;
      s.called = s.tableName();
      // A stored function among the arguments may write, or create a temporary table; so may
      // one in a view a subquery there reads, which no name tells: such a CALL is not read.
      sweepFunctionCalls(s, s.pos, s.end);
      for (let i = s.pos; i < s.end; i++) if (s.keywordAt(i) === Kw.SELECT) s.called = null;
      return s.writesUnknown('call');
    case Kw.LOCK:
      return parseLockTables(s);
    case Kw.UNLOCK:
      s.implicitCommit = true;
      s.skipRest();
      return 'unlock';
    case Kw.GRANT:
    case Kw.REVOKE:
      return accountStatement(s, true);
    case Kw.FLUSH:
    case Kw.RESET:
      s.writesEverything = true;
      s.implicitCommit = true;
      s.skipRest();
      return 'flush';
    case Kw.PREPARE:
    case Kw.DEALLOCATE:
      // Preparing runs nothing; EXECUTE does.
      s.skipRest();
      return 'prepare';
    case Kw.EXECUTE:
      return s.writesUnknown('execute');
    case Kw.DO:
      s.pos++;
      scanExpression(s, 0);
      return 'other';
    case Kw.HANDLER:
      return parseHandler(s);
    case Kw.KILL:
    case Kw.SIGNAL:
    case Kw.RESIGNAL:
    case Kw.GET:
      s.skipRest();
      return 'other';
    case Kw.CACHE:
      // CACHE INDEX: assigns key caches, changes no data.
      s.implicitCommit = true;
      s.skipRest();
      return 'other';
    case Kw.CHANGE:
    case Kw.STOP:
    case Kw.SHUTDOWN:
      s.implicitCommit = true;
      return s.writesUnknown('other');
  }
  if (s.isOperator(LEFT_PARENTHESIS)) {
    parseQueryExpression(s);
    return 'select';
  }
  return s.writesUnknown('other');
}

/**
 * EXPLAIN [EXTENDED|PARTITIONS|FORMAT=x] <statement>, DESCRIBE t: a plan or a table's columns,
 * nothing is run or written. The optimiser may still evaluate a function of the statement, so its
 * unknown functions count.
 */
function parseExplain(s: ParseState): StatementKind {
  s.pos++;
  if (s.accept(Kw.FORMAT)) {
    s.expectOperator(EQUALS);
    s.pos++;
  } else if (!s.accept(Kw.EXTENDED)) {
    s.accept(Kw.PARTITIONS);
  }
  const id = s.keyword();
  if (
    id === Kw.SELECT ||
    id === Kw.WITH ||
    id === Kw.VALUES ||
    id === Kw.INSERT ||
    id === Kw.REPLACE ||
    id === Kw.UPDATE ||
    id === Kw.DELETE ||
    s.isOperator(LEFT_PARENTHESIS)
  ) {
    const explained = new ParseState(s.tokens, s.pos, s.end, s.lowerCaseTableNames);
    parseStatement(explained);
    if (explained.failed || explained.pos < explained.end) sweepFunctionCalls(s, s.pos, s.end);
    else s.noteUnknownFunctionsOf(explained);
  }
  s.skipRest();
  return 'show';
}

/** Statements that are read-only even when they cannot be parsed. */
export function startsReadOnly(s: ParseState, start: number): boolean {
  const id = s.keywordAt(start);
  return (
    id === Kw.SELECT ||
    id === Kw.VALUES ||
    id === Kw.SHOW ||
    id === Kw.DESCRIBE ||
    id === Kw.DESC ||
    id === Kw.EXPLAIN ||
    id === Kw.HELP ||
    s.isOperatorAt(start, LEFT_PARENTHESIS)
  );
}

/** WITH ... SELECT, and WITH before UPDATE / DELETE / INSERT where a server allows it. */
function parseWithStatement(s: ParseState): StatementKind {
  parseWith(s);
  const id = s.keyword();
  let kind: StatementKind;
  if (id === Kw.UPDATE) kind = parseUpdate(s);
  else if (id === Kw.DELETE) kind = parseDelete(s);
  else if (id === Kw.INSERT) kind = parseInsert(s, 'insert');
  else if (id === Kw.REPLACE) kind = parseInsert(s, 'replace');
  else {
    parseQueryBody(s);
    kind = 'select';
  }
  s.cteScopes.pop();
  return kind;
}

/**
 * INSERT|REPLACE [LOW_PRIORITY|DELAYED|HIGH_PRIORITY] [IGNORE] [INTO] t [PARTITION (p)] [(cols)]
 * {VALUES (...) | SET c=v, ... | SELECT ... | (SELECT ...)} [ON DUPLICATE KEY UPDATE ...]
 * [RETURNING ...]. Writes the target, reads what the source and the expressions read.
 */
function parseInsert(s: ParseState, kind: StatementKind): StatementKind {
  s.pos++;
  while (
    s.accept(Kw.LOW_PRIORITY) ||
    s.accept(Kw.DELAYED) ||
    s.accept(Kw.HIGH_PRIORITY) ||
    s.accept(Kw.IGNORE)
  );
  s.accept(Kw.INTO);
  const target = s.tableName();
  if (target === null) {
    s.failed = true;
    return kind;
  }
  s.addWrite(target);
  if (s.isKeyword(Kw.PARTITION)) {
    s.pos++;
    s.skipParenthesized();
  }
  if (s.isOperator(LEFT_PARENTHESIS)) {
    const id = s.keywordAt(s.pos + 1);
    if (id !== Kw.SELECT && id !== Kw.WITH) s.skipParenthesized();
  }
  const id = s.keyword();
  if (id === Kw.VALUES || id === Kw.VALUE || id === Kw.SET) {
    s.pos++;
    scanExpression(s, 0);
  } else if (id === Kw.SELECT || id === Kw.WITH || s.isOperator(LEFT_PARENTHESIS)) {
    parseQueryExpression(s);
  } else {
    s.failed = true;
    return kind;
  }
  if (
    s.isKeyword(Kw.ON) &&
    s.isKeyword(Kw.DUPLICATE, 1) &&
    s.isKeyword(Kw.KEY, 2) &&
    s.isKeyword(Kw.UPDATE, 3)
  ) {
    s.pos += 4;
    scanExpression(s, 0);
  }
  if (s.accept(Kw.RETURNING)) scanExpression(s, 0);
  return kind;
}

/**
 * UPDATE [LOW_PRIORITY] [IGNORE] table_references SET assignments [WHERE] [ORDER BY] [LIMIT].
 * One table: it is written. Several: the tables whose columns are assigned, by qualifier; an
 * unqualified column could belong to any of them, so then all are.
 */
function parseUpdate(s: ParseState): StatementKind {
  s.pos++;
  while (s.accept(Kw.LOW_PRIORITY) || s.accept(Kw.IGNORE));
  const entries: TableEntry[] = [];
  parseTableReferences(s, entries);
  s.expect(Kw.SET);
  if (s.failed) return 'update';
  const qualifiers: string[] = [];
  let unqualified = false;
  for (;;) {
    const qualifier = assignmentTarget(s);
    if (qualifier === null) unqualified = true;
    else qualifiers.push(qualifier);
    if (!s.acceptOperator(EQUALS) && !s.acceptOperator(Op.Assign)) {
      s.failed = true;
      return 'update';
    }
    scanExpression(s, ScanFlags.StopAtComma);
    if (s.failed || !s.acceptOperator(COMMA)) break;
  }
  parseSelectClauses(s);
  // Nothing updatable was named (a derived table, a CTE): let the worst be assumed.
  if (entries.length === 0) s.writesEverything = true;
  if (entries.length === 1 || unqualified) {
    for (const entry of entries) s.addWrite(entry.table);
  } else {
    for (const qualifier of qualifiers) writeResolved(s, entries, qualifier);
  }
  return 'update';
}

/** `[[db.]t.]column` before "=": returns the qualifier (`t` or `db.t`), or null. */
function assignmentTarget(s: ParseState): string | null {
  const start = s.pos;
  let last = start;
  if (!s.isNameAt(last)) {
    s.failed = true;
    return null;
  }
  while (s.isOperatorAt(last + 1, DOT) && s.isNameAt(last + 2)) last += 2;
  s.pos = last + 1;
  if (last === start) return null;
  const parts: string[] = [];
  for (let i = start; i < last; i += 2) parts.push(s.tokens.identifier(i));
  return parts.join('.');
}

/**
 * Writes the tables a multi-table UPDATE or DELETE names by `target` (an alias, a table name, or
 * db.table). Letter case is ignored: matching too much only invalidates more. A target matching
 * nothing is taken as a table name itself.
 */
function writeResolved(s: ParseState, entries: readonly TableEntry[], target: string): void {
  const dot = target.indexOf('.');
  const schema = dot < 0 ? null : target.slice(0, dot);
  const name = dot < 0 ? target : target.slice(dot + 1);
  const lowerSchema = schema?.toLowerCase() ?? null;
  const lowerName = name.toLowerCase();
  let found = false;
  for (const { table, alias } of entries) {
    const byAlias = schema === null && alias !== null && alias.toLowerCase() === lowerName;
    const byName =
      table.name.toLowerCase() === lowerName &&
      (lowerSchema === null || table.schema?.toLowerCase() === lowerSchema);
    if (byAlias || byName) {
      s.addWrite(table);
      found = true;
    }
  }
  if (!found) {
    const lctn = s.lowerCaseTableNames;
    s.addWrite({
      schema: schema === null ? null : normalizeName(schema, lctn),
      name: normalizeName(name, lctn),
    });
  }
}

/**
 * DELETE [LOW_PRIORITY] [QUICK] [IGNORE] [HISTORY]
 *   FROM t [PARTITION] [FOR PORTION OF ...] [[AS] a] [WHERE] [ORDER BY] [LIMIT] [RETURNING]
 * | t1[.*], t2[.*] FROM table_references [WHERE]
 * | FROM t1[.*], t2[.*] USING table_references [WHERE]
 */
function parseDelete(s: ParseState): StatementKind {
  s.pos++;
  while (
    s.accept(Kw.LOW_PRIORITY) ||
    s.accept(Kw.QUICK) ||
    s.accept(Kw.IGNORE) ||
    s.accept(Kw.HISTORY)
  );
  const entries: TableEntry[] = [];
  if (s.accept(Kw.FROM)) {
    const listStart = s.pos;
    const targets = deleteTargets(s);
    if (s.accept(Kw.USING)) {
      parseTableReferences(s, entries);
      for (const target of targets) writeResolved(s, entries, target);
    } else {
      s.pos = listStart;
      s.failed = false;
      parseSingleTableDelete(s);
    }
  } else {
    const targets = deleteTargets(s);
    s.expect(Kw.FROM);
    if (s.failed) return 'delete';
    parseTableReferences(s, entries);
    for (const target of targets) writeResolved(s, entries, target);
  }
  parseSelectClauses(s);
  if (s.accept(Kw.RETURNING)) scanExpression(s, 0);
  return 'delete';
}

function parseSingleTableDelete(s: ParseState): void {
  const table = s.tableName();
  if (table === null) {
    s.failed = true;
    return;
  }
  s.addRead(table);
  s.addWrite(table);
  if (s.isKeyword(Kw.PARTITION)) {
    s.pos++;
    s.skipParenthesized();
  }
  if (s.isKeyword(Kw.FOR) && s.isKeyword(Kw.PORTION, 1)) parsePortionOf(s);
  if (s.accept(Kw.AS)) s.pos++;
  else if (s.isNameAt(s.pos) && !isNotAlias(s.keyword())) s.pos++;
  // DELETE HISTORY FROM t BEFORE SYSTEM_TIME [TIMESTAMP|TRANSACTION] x
  if (s.isKeyword(Kw.BEFORE) && s.isKeyword(Kw.SYSTEM_TIME, 1)) {
    s.pos += 2;
    scanTemporalBound(s);
  }
}

/** t1[.*], db.t2[.*], ...: the names as written (db.t joined with a dot). */
function deleteTargets(s: ParseState): string[] {
  const targets: string[] = [];
  for (;;) {
    if (!s.isNameAt(s.pos)) {
      s.failed = true;
      return targets;
    }
    let target = s.tokens.identifier(s.pos);
    s.pos++;
    if (s.isOperator(DOT) && s.isNameAt(s.pos + 1)) {
      target += '.' + s.tokens.identifier(s.pos + 1);
      s.pos += 2;
    }
    if (s.isOperator(DOT) && s.isOperator(STAR, 1)) s.pos += 2;
    targets.push(target);
    if (!s.acceptOperator(COMMA)) return targets;
  }
}

function parseTruncate(s: ParseState): StatementKind {
  s.pos++;
  s.accept(Kw.TABLE);
  writeTableList(s);
  s.implicitCommit = true;
  s.skipRest();
  return 'truncate';
}

/** LOAD DATA|XML ... INTO TABLE t ...: writes t. LOAD INDEX INTO CACHE changes no data. */
function parseLoad(s: ParseState): StatementKind {
  s.pos++;
  if (!s.isKeyword(Kw.DATA) && !s.isKeyword(Kw.XML)) {
    s.implicitCommit = true;
    s.skipRest();
    return 'other';
  }
  while (s.pos < s.end && !(s.isKeyword(Kw.INTO) && s.isKeyword(Kw.TABLE, 1))) s.pos++;
  s.pos += 2;
  const table = s.tableName();
  if (table === null) s.failed = true;
  else s.addWrite(table);
  // Column expressions (SET c = f(@x)) run once per row.
  sweepFunctionCalls(s, s.pos, s.end);
  s.skipRest();
  return 'load';
}

/** CREATE [OR REPLACE] [DEFINER=..] [ALGORITHM=..] [SQL SECURITY ..] [TEMPORARY] <object> ... */
function parseCreate(s: ParseState): StatementKind {
  s.pos++;
  if (s.accept(Kw.OR)) s.expect(Kw.REPLACE);
  skipDefinitionOptions(s);
  s.temporary = s.accept(Kw.TEMPORARY);
  const id = s.keyword();
  if (id === Kw.TABLE) return parseCreateTable(s);
  s.implicitCommit = !s.temporary;
  switch (id) {
    case Kw.UNIQUE:
    case Kw.FULLTEXT:
    case Kw.SPATIAL:
    case Kw.INDEX:
      return parseIndexStatement(s);
    case Kw.SEQUENCE:
      s.ddlObject = 'sequence';
      s.pos++;
      s.acceptIfExists();
      writeTableList(s);
      s.skipRest();
      return 'ddl';
    case Kw.USER:
    case Kw.ROLE:
      return accountStatement(s, true);
    case Kw.VIEW:
      return parseView(s);
    case Kw.TRIGGER:
      return parseTrigger(s);
  }
  // DATABASE, PROCEDURE, FUNCTION, EVENT, PACKAGE, SERVER...: effects the text does not show.
  return s.writesUnknown('ddl');
}

/** DEFINER = user, ALGORITHM = x, SQL SECURITY x, AGGREGATE: before a view or routine. */
function skipDefinitionOptions(s: ParseState): void {
  for (;;) {
    const id = s.keyword();
    if (id === Kw.DEFINER || id === Kw.ALGORITHM) {
      s.pos++;
      s.acceptOperator(EQUALS);
      s.pos++;
      // user@host arrives as a name and a user variable token; CURRENT_USER may have ().
      if (s.pos < s.end && s.tokens.kinds[s.pos] === TokenKind.UserVariable) s.pos++;
      if (s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
    } else if (id === Kw.SQL) {
      // SQL SECURITY DEFINER|INVOKER
      s.pos += 3;
    } else if (id === Kw.AGGREGATE) {
      s.pos++;
    } else {
      return;
    }
  }
}

/**
 * CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t {(definitions) [options] [[AS] SELECT ...] | LIKE u
 * | [AS] SELECT ...}: writes t, reads what its SELECT reads.
 */
function parseCreateTable(s: ParseState): StatementKind {
  s.implicitCommit = !s.temporary;
  s.ddlObject = 'table';
  s.pos++;
  s.acceptIfExists();
  const table = s.tableName();
  if (table === null) {
    s.failed = true;
    return 'ddl';
  }
  s.addWrite(table);
  const { kinds, ids } = s.tokens;
  while (s.pos < s.end && !s.failed) {
    const id = s.keyword();
    if (id === Kw.SELECT || id === Kw.WITH) {
      parseQueryExpression(s);
      return 'ddl';
    }
    if (kinds[s.pos] === TokenKind.Operator && ids[s.pos] === LEFT_PARENTHESIS) {
      const next = s.keywordAt(s.pos + 1);
      if (next === Kw.SELECT || next === Kw.WITH) {
        parseQueryExpression(s);
        return 'ddl';
      }
      s.skipParenthesized();
    } else {
      s.pos++;
    }
  }
  return 'ddl';
}

/** CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX i ON t (...) / DROP INDEX i ON t: writes t. */
function parseIndexStatement(s: ParseState): StatementKind {
  s.implicitCommit = true;
  s.ddlObject = 'index';
  while (s.pos < s.end && !s.isKeyword(Kw.ON)) s.pos++;
  s.pos++;
  const table = s.tableName();
  if (table === null) s.failed = true;
  else s.addWrite(table);
  s.skipRest();
  return 'ddl';
}

/**
 * Views change what reading their name returns, and the caller's map of view to base tables:
 * invalidate everything. The named view is listed too, and what its query reads.
 */
function parseView(s: ParseState): StatementKind {
  s.writesEverything = true;
  s.ddlObject = 'view';
  s.pos++;
  s.acceptIfExists();
  const view = s.tableName();
  if (view !== null) s.addWrite(view);
  if (s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
  if (s.accept(Kw.AS)) parseQueryExpression(s);
  s.failed = false;
  s.skipRest();
  return 'ddl';
}

/** Triggers change what writes to their table write: invalidate everything; list the table. */
function parseTrigger(s: ParseState): StatementKind {
  s.writesEverything = true;
  s.ddlObject = 'trigger';
  while (s.pos < s.end && !s.isKeyword(Kw.ON)) s.pos++;
  s.pos++;
  const table = s.tableName();
  if (table !== null) s.addWrite(table);
  s.skipRest();
  return 'ddl';
}

/** ALTER [ONLINE] [IGNORE] TABLE t ... [RENAME TO u] [EXCHANGE PARTITION p WITH TABLE v] */
function parseAlter(s: ParseState): StatementKind {
  s.pos++;
  s.implicitCommit = true;
  while (s.accept(Kw.ONLINE) || s.accept(Kw.IGNORE));
  skipDefinitionOptions(s);
  const id = s.keyword();
  if (id === Kw.TABLE) {
    s.ddlObject = 'table';
    s.pos++;
    s.acceptIfExists();
    const table = s.tableName();
    if (table === null) {
      s.failed = true;
      return 'ddl';
    }
    s.addWrite(table);
    while (s.pos < s.end) {
      const word = s.keyword();
      if (word === Kw.RENAME) {
        s.pos++;
        if (!s.accept(Kw.TO)) s.accept(Kw.AS);
        const next = s.keyword();
        if (next !== Kw.COLUMN && next !== Kw.INDEX && next !== Kw.KEY && next !== Kw.CONSTRAINT) {
          const renamed = s.tableName();
          if (renamed !== null) s.addWrite(renamed);
        }
      } else if (word === Kw.WITH && s.isKeyword(Kw.TABLE, 1)) {
        s.pos += 2;
        const exchanged = s.tableName();
        if (exchanged !== null) s.addWrite(exchanged);
      } else {
        s.pos++;
      }
    }
    return 'ddl';
  }
  if (id === Kw.SEQUENCE) {
    s.ddlObject = 'sequence';
    s.pos++;
    s.acceptIfExists();
    writeTableList(s);
    s.skipRest();
    return 'ddl';
  }
  if (id === Kw.USER) return accountStatement(s, true);
  return s.writesUnknown('ddl');
}

/** DROP [TEMPORARY] TABLE|VIEW|INDEX|SEQUENCE|DATABASE|USER|PREPARE|... */
function parseDrop(s: ParseState): StatementKind {
  s.pos++;
  s.temporary = s.accept(Kw.TEMPORARY);
  const id = s.keyword();
  s.implicitCommit = !s.temporary;
  switch (id) {
    case Kw.TABLE:
    case Kw.TABLES:
    case Kw.SEQUENCE:
      s.ddlObject = id === Kw.SEQUENCE ? 'sequence' : 'table';
      s.pos++;
      s.acceptIfExists();
      writeTableList(s);
      s.skipRest();
      return 'ddl';
    case Kw.VIEW:
      s.writesEverything = true;
      s.ddlObject = 'view';
      s.pos++;
      s.acceptIfExists();
      writeTableList(s);
      s.failed = false;
      s.skipRest();
      return 'ddl';
    case Kw.INDEX:
      return parseIndexStatement(s);
    case Kw.USER:
    case Kw.ROLE:
      return accountStatement(s, true);
    case Kw.PREPARE:
      s.implicitCommit = false;
      s.skipRest();
      return 'prepare';
  }
  return s.writesUnknown('ddl');
}

/** RENAME TABLE a TO b, c TO d: all four change. RENAME USER: an account statement. */
function parseRename(s: ParseState): StatementKind {
  s.pos++;
  if (s.isKeyword(Kw.USER)) return accountStatement(s, true);
  s.implicitCommit = true;
  if (!s.accept(Kw.TABLE) && !s.accept(Kw.TABLES)) {
    return s.writesUnknown('ddl');
  }
  s.ddlObject = 'table';
  s.acceptIfExists();
  for (;;) {
    const from = s.tableName();
    if (from !== null) s.addWrite(from);
    if (s.accept(Kw.WAIT)) s.pos++;
    else s.accept(Kw.NOWAIT);
    s.expect(Kw.TO);
    const to = s.tableName();
    if (from === null || to === null) {
      s.failed = true;
      return 'ddl';
    }
    s.addWrite(to);
    if (!s.acceptOperator(COMMA)) return 'ddl';
  }
}

/** A comma-separated list of table names, each written. */
function writeTableList(s: ParseState): void {
  for (;;) {
    const table = s.tableName();
    if (table === null) {
      s.failed = true;
      return;
    }
    s.addWrite(table);
    if (!s.acceptOperator(COMMA)) return;
  }
}

/**
 * GRANT, REVOKE, users, roles, passwords: privileges change, so any cached result may now be
 * refused to someone. The cache cannot tell which: invalidate everything.
 */
function accountStatement(s: ParseState, commits: boolean): StatementKind {
  s.writesEverything = true;
  s.implicitCommit = commits;
  s.skipRest();
  return 'grant';
}

/**
 * BEGIN [WORK] starts a transaction. Anything else after BEGIN is a block of statements:
 * BEGIN NOT ATOMIC ... END, or under sql_mode=ORACLE a plain BEGIN ... END.
 */
function parseBegin(s: ParseState): StatementKind {
  s.pos++;
  s.accept(Kw.WORK);
  if (!s.atEnd()) {
    return s.writesUnknown('other');
  }
  s.implicitCommit = true;
  return 'begin';
}

function parseStart(s: ParseState): StatementKind {
  if (s.isKeyword(Kw.TRANSACTION, 1)) {
    s.implicitCommit = true;
    s.skipRest();
    return 'begin';
  }
  // START SLAVE / REPLICA / ALL SLAVES: replication writes behind the proxy's back.
  s.implicitCommit = true;
  return s.writesUnknown('other');
}

/** ROLLBACK [WORK] TO [SAVEPOINT] x keeps the transaction open: 'savepoint'. */
function parseRollback(s: ParseState): StatementKind {
  s.pos++;
  s.accept(Kw.WORK);
  const kind = s.isKeyword(Kw.TO) ? 'savepoint' : 'rollback';
  s.skipRest();
  return kind;
}

/**
 * SET STATEMENT v=x FOR <statement> | SET PASSWORD | SET [DEFAULT] ROLE | SET [scope]
 * TRANSACTION ... | SET NAMES / CHARACTER SET | SET assignments.
 */
function parseSet(s: ParseState): StatementKind {
  s.pos++;
  const id = s.keyword();
  if (id === Kw.STATEMENT) {
    s.pos++;
    scanExpression(s, 0);
    s.expect(Kw.FOR);
    if (s.failed) return 'set';
    const kind = parseStatement(s);
    s.wrapper ??= 'SET STATEMENT';
    return kind;
  }
  if (id === Kw.PASSWORD) return accountStatement(s, true);
  if (id === Kw.ROLE || (id === Kw.DEFAULT && s.isKeyword(Kw.ROLE, 1))) {
    return accountStatement(s, false);
  }
  if (
    id === Kw.TRANSACTION ||
    ((id === Kw.GLOBAL || id === Kw.SESSION || id === Kw.LOCAL) && s.isKeyword(Kw.TRANSACTION, 1))
  ) {
    s.skipRest();
    return 'set';
  }
  if (id === Kw.NAMES || id === Kw.CHARSET || (id === Kw.CHARACTER && s.isKeyword(Kw.SET, 1))) {
    s.skipRest();
    return 'set';
  }
  for (;;) {
    parseAssignment(s);
    if (s.failed || !s.acceptOperator(COMMA)) return 'set';
  }
}

/**
 * [GLOBAL|SESSION|LOCAL] name = expr, or @@[scope.]name = expr, or @user = expr. Turning
 * autocommit on commits an open transaction; a global setting writes everything.
 */
function parseAssignment(s: ParseState): void {
  const tokens = s.tokens;
  let global = false;
  const scope = s.keyword();
  if (scope === Kw.GLOBAL || scope === Kw.SESSION || scope === Kw.LOCAL) {
    global = scope === Kw.GLOBAL;
    s.pos++;
  }
  if (s.pos >= s.end) {
    s.failed = true;
    return;
  }
  const kind = tokens.kinds[s.pos];
  let autocommit = false;
  if (kind === TokenKind.SystemVariable) {
    let name = tokens.text(s.pos).slice(2).toLowerCase();
    const dot = name.indexOf('.');
    if (dot >= 0) {
      global ||= name.slice(0, dot) === 'global';
      name = name.slice(dot + 1);
    }
    autocommit = name === 'autocommit';
    s.pos++;
  } else if (kind === TokenKind.Word || kind === TokenKind.QuotedIdentifier) {
    autocommit = tokens.ids[s.pos] === Kw.AUTOCOMMIT && kind === TokenKind.Word;
    s.pos++;
    while (s.isOperator(DOT) && s.isNameAt(s.pos + 1)) s.pos += 2;
  } else if (kind === TokenKind.UserVariable) {
    s.pos++;
  } else {
    s.failed = true;
    return;
  }
  if (!s.acceptOperator(EQUALS) && !s.acceptOperator(Op.Assign)) {
    s.failed = true;
    return;
  }
  const valueStart = s.pos;
  // ON is a reserved word, but as a whole value it is a setting (SET x = ON), not an expression.
  if (s.isKeyword(Kw.ON) && (s.pos + 1 >= s.end || s.isOperator(COMMA, 1))) s.pos++;
  else scanExpression(s, ScanFlags.StopAtComma);
  if (autocommit && !global && !turnsOff(s, valueStart, s.pos)) s.implicitCommit = true;
  // A global setting may change what every session's reads return at once (ft_boolean_syntax
  // changes MATCH ... AGAINST), and results stored before it must not be served after it.
  if (global) s.writesEverything = true;
}

/** The value is clearly 0 / OFF / FALSE. */
function turnsOff(s: ParseState, start: number, end: number): boolean {
  if (end !== start + 1) return false;
  const text = s.tokens.text(start).toLowerCase();
  return text === '0' || text === 'off' || text === 'false' || text === "'off'" || text === "'0'";
}

/** ANALYZE TABLE t (statistics) or ANALYZE <statement> (runs it, returns its plan). */
function parseAnalyze(s: ParseState): StatementKind {
  const next = s.keywordAt(s.pos + 1);
  if (next === Kw.TABLE || next === Kw.NO_WRITE_TO_BINLOG || next === Kw.LOCAL) {
    s.implicitCommit = true;
    s.skipRest();
    return 'other';
  }
  s.pos++;
  if (s.accept(Kw.FORMAT)) {
    s.expectOperator(EQUALS);
    s.pos++;
  }
  const kind = parseStatement(s);
  s.wrapper ??= 'ANALYZE';
  return kind;
}

/** OPTIMIZE|REPAIR [NO_WRITE_TO_BINLOG|LOCAL] TABLE t, ...: rebuild, may change rows. */
function parseMaintenance(s: ParseState): StatementKind {
  s.pos++;
  s.implicitCommit = true;
  if (!s.accept(Kw.NO_WRITE_TO_BINLOG)) s.accept(Kw.LOCAL);
  if (!s.accept(Kw.TABLE)) s.expect(Kw.TABLES);
  writeTableList(s);
  s.skipRest();
  return 'other';
}

/**
 * LOCK TABLE[S] t [[AS] a] READ [LOCAL] | [LOW_PRIORITY] WRITE [CONCURRENT], ... A write lock
 * lets the session write those tables later by means the cache may not see in time, so it
 * invalidates everything, as the server's query_cache_wlock_invalidate does.
 */
function parseLockTables(s: ParseState): StatementKind {
  s.pos++;
  s.implicitCommit = true;
  if (!s.accept(Kw.TABLE) && !s.accept(Kw.TABLES)) {
    s.failed = true;
    return 'lock';
  }
  for (;;) {
    const table = s.tableName();
    if (table === null) {
      s.failed = true;
      return 'lock';
    }
    s.addRead(table);
    if (s.accept(Kw.AS) || (s.isNameAt(s.pos) && !isLockType(s.keyword()))) s.pos++;
    if (s.accept(Kw.READ)) {
      s.accept(Kw.LOCAL);
    } else {
      s.accept(Kw.LOW_PRIORITY);
      s.expect(Kw.WRITE);
      s.accept(Kw.CONCURRENT);
      s.addWrite(table);
      s.writesEverything = true;
    }
    if (s.failed || !s.acceptOperator(COMMA)) break;
  }
  if (s.accept(Kw.WAIT)) s.pos++;
  else s.accept(Kw.NOWAIT);
  return 'lock';
}

function isLockType(id: number): boolean {
  return id === Kw.READ || id === Kw.WRITE || id === Kw.LOW_PRIORITY;
}

/** HANDLER t OPEN [[AS] a] reads t; HANDLER a READ / CLOSE name a handler, not a table. */
function parseHandler(s: ParseState): StatementKind {
  s.pos++;
  const start = s.pos;
  const table = s.tableName();
  if (table !== null && s.isKeyword(Kw.OPEN)) s.addRead(table);
  sweepFunctionCalls(s, start, s.end);
  s.skipRest();
  return 'other';
}
