/**
 * Walks query expressions (SELECT ... UNION ..., WITH, VALUES), table references (joins, derived
 * tables, JSON_TABLE) and expressions, recording on the ParseState the tables read and every fact
 * the cache cares about.
 *
 * Expressions are not parsed into trees: the walker only needs to find subqueries (a "(" directly
 * followed by SELECT or WITH), function calls (a name directly followed by "("), variables, and
 * where an expression ends. It ends at a clause keyword (FROM, WHERE, JOIN, ORDER, FOR, ...) at
 * parenthesis depth zero: inside parentheses those words belong to function syntax
 * (EXTRACT(YEAR FROM d), GROUP_CONCAT(x ORDER BY y), OVER (ORDER BY z)).
 *
 * Whatever the walker cannot follow sets `failed`; the classifier then treats the statement
 * conservatively.
 */
import {
  AMPERSAND,
  BANG,
  CARET,
  COMMA,
  DOT,
  LEFT_PARENTHESIS,
  MINUS,
  PERCENT,
  PIPE,
  PLUS,
  RIGHT_PARENTHESIS,
  SEMICOLON,
  SLASH,
  STAR,
  TILDE,
} from './char-codes.ts';
import { categoryOf, FunctionCategory, functionIdOf, functionName } from './functions.ts';
import {
  isNiladicNonDeterministic,
  isNotAlias,
  isSyntaxBeforeParenthesis,
  keywordTable,
  Kw,
} from './keywords.ts';
import { type ParseState, type TableEntry } from './parse-state.ts';
import { Op, TokenKind } from './tokenizer.ts';

export const ScanFlags = {
  /** A comma at depth zero ends the expression (assignment lists, ON conditions). */
  StopAtComma: 1,
  /** Inside parentheses: only the closing parenthesis ends it, clause words do not. */
  InsideParentheses: 2,
} as const;

const CLAUSE_WORDS = [
  Kw.CROSS,
  Kw.EXCEPT,
  Kw.FETCH,
  Kw.FOR,
  Kw.FROM,
  Kw.GROUP,
  Kw.HAVING,
  Kw.INNER,
  Kw.INTERSECT,
  Kw.INTO,
  Kw.JOIN,
  Kw.LEFT,
  Kw.LIMIT,
  Kw.LOCK,
  Kw.NATURAL,
  Kw.OFFSET,
  Kw.ON,
  Kw.ORDER,
  Kw.PROCEDURE,
  Kw.RETURNING,
  Kw.RIGHT,
  Kw.SET,
  Kw.STRAIGHT_JOIN,
  Kw.UNION,
  Kw.USING,
  Kw.WHERE,
  Kw.WINDOW,
  Kw.WITH,
];
const clauseWord = new Uint8Array(keywordTable.words.length);
for (const id of CLAUSE_WORDS) clauseWord[id] = 1;

/** Words that end an INTO target list (INTO OUTFILE's own options use none of them). */
const AFTER_INTO = new Set([
  Kw.EXCEPT,
  Kw.FOR,
  Kw.FROM,
  Kw.GROUP,
  Kw.HAVING,
  Kw.INTERSECT,
  Kw.INTO,
  Kw.LIMIT,
  Kw.LOCK,
  Kw.ORDER,
  Kw.PROCEDURE,
  Kw.UNION,
  Kw.WHERE,
  Kw.WINDOW,
]);

/** A "(" at `index - 1` opens a subquery when SELECT or WITH follows it. */
function startsQuery(s: ParseState, index: number): boolean {
  const id = s.keywordAt(index);
  return id === Kw.SELECT || id === Kw.WITH;
}

/**
 * [WITH ...] term [UNION|INTERSECT|EXCEPT [ALL|DISTINCT] term]... [ORDER BY] [LIMIT] [INTO]
 * [FOR UPDATE | LOCK IN SHARE MODE]. A term is a SELECT, a VALUES list or a parenthesized query.
 */
export function parseQueryExpression(s: ParseState): void {
  const scoped = s.isKeyword(Kw.WITH);
  if (scoped) parseWith(s);
  if (!s.failed) parseQueryBody(s);
  if (scoped) s.cteScopes.pop();
}

/** A query expression after its WITH clause. */
export function parseQueryBody(s: ParseState): void {
  parseQueryTerm(s);
  while (!s.failed) {
    const id = s.keyword();
    if (id !== Kw.UNION && id !== Kw.INTERSECT && id !== Kw.EXCEPT) break;
    s.pos++;
    if (!s.accept(Kw.ALL)) s.accept(Kw.DISTINCT);
    parseQueryTerm(s);
  }
  if (!s.failed) parseSelectClauses(s);
}

function parseQueryTerm(s: ParseState): void {
  const id = s.keyword();
  if (id === Kw.SELECT) {
    s.pos++;
    parseSelectBody(s);
  } else if (id === Kw.VALUES) {
    s.pos++;
    scanExpression(s, 0);
  } else if (s.acceptOperator(LEFT_PARENTHESIS)) {
    parseQueryExpression(s);
    s.expectOperator(RIGHT_PARENTHESIS);
  } else {
    s.failed = true;
  }
}

function parseSelectBody(s: ParseState): void {
  for (;;) {
    const id = s.keyword();
    if (
      id === Kw.ALL ||
      id === Kw.DISTINCT ||
      id === Kw.DISTINCTROW ||
      id === Kw.HIGH_PRIORITY ||
      id === Kw.STRAIGHT_JOIN ||
      id === Kw.SQL_SMALL_RESULT ||
      id === Kw.SQL_BIG_RESULT ||
      id === Kw.SQL_BUFFER_RESULT
    ) {
      s.pos++;
    } else if (id === Kw.SQL_CACHE) {
      s.sqlCache = true;
      s.pos++;
    } else if (id === Kw.SQL_NO_CACHE) {
      s.sqlNoCache = true;
      s.pos++;
    } else if (id === Kw.SQL_CALC_FOUND_ROWS) {
      s.calcFoundRows = true;
      s.pos++;
    } else {
      break;
    }
  }
  scanExpression(s, 0);
  parseSelectClauses(s);
}

/**
 * The clauses after a select list, in any order (the server is stricter; being lenient only
 * accepts statements the server would refuse anyway). Stops at the first word that is none.
 */
export function parseSelectClauses(s: ParseState): void {
  while (!s.failed && s.pos < s.end) {
    const id = s.keyword();
    const next = s.keywordAt(s.pos + 1);
    if (id === Kw.FROM) {
      s.pos++;
      parseTableReferences(s, null);
    } else if (
      id === Kw.WHERE ||
      id === Kw.HAVING ||
      id === Kw.LIMIT ||
      id === Kw.OFFSET ||
      id === Kw.FETCH ||
      id === Kw.WINDOW
    ) {
      s.pos++;
      scanExpression(s, 0);
    } else if (id === Kw.GROUP || id === Kw.ORDER) {
      s.pos++;
      s.expect(Kw.BY);
      scanExpression(s, 0);
    } else if (id === Kw.WITH && (next === Kw.ROLLUP || next === Kw.TIES)) {
      s.pos += 2;
    } else if (id === Kw.INTO) {
      s.into = true;
      s.pos++;
      skipIntoTargets(s);
    } else if (id === Kw.PROCEDURE) {
      // PROCEDURE ANALYSE(...): a built-in result filter, not a stored procedure call.
      s.procedure = true;
      s.pos += 2;
      if (s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
    } else if (id === Kw.FOR && (next === Kw.UPDATE || next === Kw.SHARE)) {
      s.lockingRead = true;
      s.pos += 2;
      skipLockWaitOption(s);
    } else if (
      id === Kw.LOCK &&
      next === Kw.IN &&
      s.keywordAt(s.pos + 2) === Kw.SHARE &&
      s.keywordAt(s.pos + 3) === Kw.MODE
    ) {
      s.lockingRead = true;
      s.pos += 4;
      skipLockWaitOption(s);
    } else {
      return;
    }
  }
}

function skipLockWaitOption(s: ParseState): void {
  if (s.accept(Kw.WAIT)) s.pos++;
  else if (!s.accept(Kw.NOWAIT) && s.accept(Kw.SKIP)) s.expect(Kw.LOCKED);
}

/** INTO @a, @b / INTO OUTFILE 'f' [options] / INTO DUMPFILE 'f': nothing in it reads a table. */
function skipIntoTargets(s: ParseState): void {
  const { kinds, ids } = s.tokens;
  while (s.pos < s.end) {
    const kind = kinds[s.pos];
    if (kind === TokenKind.Word && AFTER_INTO.has(ids[s.pos]!)) return;
    if (kind === TokenKind.Operator && ids[s.pos] === RIGHT_PARENTHESIS) return;
    s.pos++;
  }
}

/**
 * WITH [RECURSIVE] name [(columns)] AS (query) [CYCLE ... RESTRICT], ... Pushes the CTE scope
 * (popped by the caller). A CTE name hides a table of that name only inside this statement; a
 * non-recursive one is visible only after its own definition, so inside it the name is a table.
 */
export function parseWith(s: ParseState): void {
  s.pos++;
  const recursive = s.accept(Kw.RECURSIVE);
  const scope: string[] = [];
  s.cteScopes.push(scope);
  if (recursive) collectCteNames(s, scope);
  for (;;) {
    if (!s.isNameAt(s.pos)) {
      s.failed = true;
      return;
    }
    const name = s.nameAt(s.pos);
    s.pos++;
    if (s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
    s.expect(Kw.AS);
    s.expectOperator(LEFT_PARENTHESIS);
    if (s.failed) return;
    parseQueryExpression(s);
    s.expectOperator(RIGHT_PARENTHESIS);
    if (!recursive) scope.push(name);
    if (s.accept(Kw.CYCLE)) {
      while (s.pos < s.end && !s.accept(Kw.RESTRICT)) s.pos++;
    }
    if (s.failed || !s.acceptOperator(COMMA)) return;
  }
}

/** With RECURSIVE every name of the list is visible in every definition: gather them first. */
function collectCteNames(s: ParseState, scope: string[]): void {
  const start = s.pos;
  while (s.isNameAt(s.pos)) {
    scope.push(s.nameAt(s.pos));
    s.pos++;
    if (s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
    if (!s.accept(Kw.AS) || !s.isOperator(LEFT_PARENTHESIS)) break;
    s.skipParenthesized();
    if (s.accept(Kw.CYCLE)) {
      while (s.pos < s.end && !s.accept(Kw.RESTRICT)) s.pos++;
    }
    if (!s.acceptOperator(COMMA)) break;
  }
  s.pos = start;
  s.failed = false;
}

/**
 * table_reference [, table_reference]...; each a table factor joined to others. `entries`, when
 * given, receives the tables with their aliases (for multi-table UPDATE and DELETE).
 */
export function parseTableReferences(s: ParseState, entries: TableEntry[] | null): void {
  parseJoinedTable(s, entries);
  while (!s.failed && s.acceptOperator(COMMA)) parseJoinedTable(s, entries);
}

function parseJoinedTable(s: ParseState, entries: TableEntry[] | null): void {
  parseTableFactor(s, entries);
  while (!s.failed) {
    const id = s.keyword();
    if (id === Kw.ON && s.keywordAt(s.pos + 1) !== Kw.DUPLICATE) {
      s.pos++;
      scanExpression(s, ScanFlags.StopAtComma);
    } else if (id === Kw.USING && s.isOperator(LEFT_PARENTHESIS, 1)) {
      s.pos++;
      s.skipParenthesized();
    } else if (acceptJoin(s)) {
      parseTableFactor(s, entries);
    } else {
      return;
    }
  }
}

/** [NATURAL] [LEFT|RIGHT [OUTER] | INNER | CROSS] JOIN, or STRAIGHT_JOIN. */
function acceptJoin(s: ParseState): boolean {
  let p = s.pos;
  let id = s.keywordAt(p);
  if (id === Kw.JOIN || id === Kw.STRAIGHT_JOIN) {
    s.pos = p + 1;
    return true;
  }
  if (id === Kw.NATURAL) id = s.keywordAt(++p);
  if (id === Kw.LEFT || id === Kw.RIGHT) {
    if (s.keywordAt(++p) === Kw.OUTER) p++;
  } else if (id === Kw.INNER || id === Kw.CROSS) {
    p++;
  }
  if (s.keywordAt(p) !== Kw.JOIN) return false;
  s.pos = p + 1;
  return true;
}

function parseTableFactor(s: ParseState, entries: TableEntry[] | null): void {
  const { kinds } = s.tokens;
  if (s.isOperator(LEFT_PARENTHESIS)) {
    let first = s.pos + 1;
    while (s.isOperatorAt(first, LEFT_PARENTHESIS)) first++;
    const id = s.keywordAt(first);
    if (id === Kw.SELECT || id === Kw.WITH || id === Kw.VALUES) {
      // A derived table: its tables are read; it is never a write target.
      parseQueryExpression(s);
      parseAlias(s, true);
    } else {
      s.pos++;
      parseTableReferences(s, entries);
      s.expectOperator(RIGHT_PARENTHESIS);
    }
    return;
  }
  if (s.isKeyword(Kw.DUAL)) {
    s.pos++;
    return;
  }
  const start = s.pos;
  if (
    kinds[start] === TokenKind.Word &&
    s.isOperatorAt(start + 1, LEFT_PARENTHESIS) &&
    categoryOf(functionIdOf(s.tokens.sql, s.tokens.starts[start]!, s.tokens.ends[start]!)) ===
      FunctionCategory.TableFunction
  ) {
    // JSON_TABLE(expr, path COLUMNS (...)) alias: rows made from a value, no table.
    s.pos++;
    scanParenthesized(s);
    parseAlias(s, false);
    return;
  }
  const table = s.tableName();
  if (table === null) {
    s.failed = true;
    return;
  }
  const cte = s.isCte(table);
  if (!cte) s.addRead(table);
  if (s.isKeyword(Kw.PARTITION) && s.isOperator(LEFT_PARENTHESIS, 1)) {
    s.pos++;
    s.skipParenthesized();
  }
  if (s.isKeyword(Kw.FOR)) {
    const next = s.keywordAt(s.pos + 1);
    if (next === Kw.SYSTEM_TIME) parseSystemTime(s);
    else if (next === Kw.PORTION) parsePortionOf(s);
  }
  const alias = parseAlias(s, false);
  parseIndexHints(s);
  if (entries !== null && !cte) {
    entries.push({ table, alias: alias < 0 ? null : s.tokens.identifier(alias) });
  }
}

/** [AS] alias [(columns)]: returns the alias token's index, or -1. */
function parseAlias(s: ParseState, withColumns: boolean): number {
  const { kinds, ids } = s.tokens;
  let alias = -1;
  if (s.accept(Kw.AS)) {
    const kind = kinds[s.pos];
    if (s.pos < s.end && (s.isNameAt(s.pos) || kind === TokenKind.String)) alias = s.pos++;
    else s.failed = true;
  } else if (s.pos < s.end) {
    const kind = kinds[s.pos];
    if (
      kind === TokenKind.QuotedIdentifier ||
      (kind === TokenKind.Word && !isNotAlias(ids[s.pos]!))
    ) {
      alias = s.pos++;
    }
  }
  if (withColumns && alias >= 0 && s.isOperator(LEFT_PARENTHESIS)) s.skipParenthesized();
  return alias;
}

/** USE|IGNORE|FORCE INDEX|KEY [FOR JOIN|ORDER BY|GROUP BY] (names), repeated. */
function parseIndexHints(s: ParseState): void {
  for (;;) {
    const id = s.keyword();
    if (id !== Kw.USE && id !== Kw.IGNORE && id !== Kw.FORCE) return;
    const kind = s.keywordAt(s.pos + 1);
    if (kind !== Kw.INDEX && kind !== Kw.KEY) return;
    s.pos += 2;
    if (s.accept(Kw.FOR) && !s.accept(Kw.JOIN)) {
      s.pos++;
      s.expect(Kw.BY);
    }
    s.skipParenthesized();
    if (s.failed) return;
    if (s.isOperator(COMMA)) {
      const after = s.keywordAt(s.pos + 1);
      if (after === Kw.USE || after === Kw.IGNORE || after === Kw.FORCE) s.pos++;
    }
  }
}

/**
 * FOR SYSTEM_TIME ALL | AS OF x | BETWEEN x AND y | FROM x TO y. History cannot change without a
 * write to the table, so a constant point in time is as cacheable as the present; a bound that
 * uses NOW() is refused through the function, as the server does.
 */
function parseSystemTime(s: ParseState): void {
  s.pos += 2;
  if (s.accept(Kw.ALL)) return;
  if (s.accept(Kw.AS)) {
    s.expect(Kw.OF);
    scanTemporalBound(s);
  } else if (s.accept(Kw.BETWEEN)) {
    scanTemporalBound(s);
    s.expect(Kw.AND);
    scanTemporalBound(s);
  } else if (s.accept(Kw.FROM)) {
    scanTemporalBound(s);
    s.expect(Kw.TO);
    scanTemporalBound(s);
  } else {
    s.failed = true;
  }
}

/** FOR PORTION OF period FROM x TO y (application-time periods in UPDATE and DELETE). */
export function parsePortionOf(s: ParseState): void {
  s.pos += 3;
  s.pos++;
  s.expect(Kw.FROM);
  scanOperand(s);
  s.expect(Kw.TO);
  scanOperand(s);
}

export function scanTemporalBound(s: ParseState): void {
  const id = s.keyword();
  if (id === Kw.TIMESTAMP || id === Kw.TRANSACTION) s.pos++;
  scanOperand(s);
}

/**
 * One operand with arithmetic around it: enough for time bounds (`NOW() - INTERVAL 1 DAY`,
 * `TIMESTAMP '2024-01-01'`, `@t`), where a bare word after the expression is an alias.
 */
function scanOperand(s: ParseState): void {
  const { kinds, ids } = s.tokens;
  for (;;) {
    while (s.pos < s.end && kinds[s.pos] === TokenKind.Operator && isUnary(ids[s.pos]!)) s.pos++;
    if (s.pos >= s.end) {
      s.failed = true;
      return;
    }
    const kind = kinds[s.pos];
    if (kind === TokenKind.Operator && ids[s.pos] === LEFT_PARENTHESIS) {
      scanParenthesized(s);
    } else if (kind === TokenKind.Word && ids[s.pos] === Kw.INTERVAL) {
      s.pos++;
      scanOperand(s);
      s.pos++;
    } else if (kind === TokenKind.Word && kinds[s.pos + 1] === TokenKind.String) {
      // A typed literal (DATE '...', TIMESTAMP '...') or a spaced introducer (_utf8 '...').
      s.pos += 2;
    } else if (kind === TokenKind.Word || kind === TokenKind.QuotedIdentifier) {
      scanName(s);
      if (s.isOperator(LEFT_PARENTHESIS)) scanParenthesized(s);
    } else if (kind === TokenKind.UserVariable) {
      s.userVariable = true;
      s.pos++;
    } else if (kind === TokenKind.SystemVariable) {
      s.systemVariable = true;
      s.pos++;
    } else if (
      kind === TokenKind.Number ||
      kind === TokenKind.String ||
      kind === TokenKind.Placeholder
    ) {
      s.pos++;
    } else {
      s.failed = true;
      return;
    }
    if (s.failed || !atBinaryOperator(s)) return;
    s.pos++;
  }
}

// Operator char codes met around temporal bounds.

function isUnary(op: number): boolean {
  return op === MINUS || op === PLUS || op === TILDE || op === BANG;
}

function atBinaryOperator(s: ParseState): boolean {
  if (s.pos >= s.end) return false;
  const id = s.tokens.ids[s.pos]!;
  if (s.tokens.kinds[s.pos] === TokenKind.Word) return id === Kw.DIV || id === Kw.MOD;
  if (s.tokens.kinds[s.pos] !== TokenKind.Operator) return false;
  return (
    id === PLUS ||
    id === MINUS ||
    id === STAR ||
    id === SLASH ||
    id === PERCENT ||
    id === PIPE ||
    id === AMPERSAND ||
    id === CARET ||
    id === Op.ShiftLeft ||
    id === Op.ShiftRight ||
    id === Op.DoublePipe
  );
}

/** At "(": a subquery, or an expression up to the matching ")". */
export function scanParenthesized(s: ParseState): void {
  s.pos++;
  if (startsQuery(s, s.pos)) parseQueryExpression(s);
  else scanExpression(s, ScanFlags.InsideParentheses);
  s.expectOperator(RIGHT_PARENTHESIS);
}

/**
 * Walks an expression (or a comma-separated list of them) until it ends: see the module comment.
 * Leaves the cursor on the token that ended it.
 */
export function scanExpression(s: ParseState, flags: number): void {
  const { kinds, ids } = s.tokens;
  const clauseLevel = (flags & ScanFlags.InsideParentheses) === 0;
  const stopAtComma = (flags & ScanFlags.StopAtComma) !== 0;
  let depth = 0;
  while (s.pos < s.end && !s.failed) {
    const i = s.pos;
    const kind = kinds[i];
    if (kind === TokenKind.Operator) {
      const op = ids[i];
      if (op === LEFT_PARENTHESIS) {
        if (startsQuery(s, i + 1)) {
          s.pos = i + 1;
          parseQueryExpression(s);
          s.expectOperator(RIGHT_PARENTHESIS);
          continue;
        }
        depth++;
      } else if (op === RIGHT_PARENTHESIS) {
        if (depth === 0) return;
        depth--;
      } else if (op === SEMICOLON || (op === COMMA && depth === 0 && stopAtComma)) {
        return;
      }
      s.pos++;
    } else if (kind === TokenKind.Word) {
      const id = ids[i]!;
      if (depth === 0 && clauseLevel && id >= 0 && clauseWord[id] === 1) {
        // LEFT(s, 2) and RIGHT(s, 2) are functions, not joins.
        const isCall =
          (id === Kw.LEFT || id === Kw.RIGHT) && s.isOperatorAt(i + 1, LEFT_PARENTHESIS);
        if (!isCall) return;
      }
      scanName(s);
    } else if (kind === TokenKind.QuotedIdentifier) {
      scanName(s);
    } else {
      if (kind === TokenKind.UserVariable) s.userVariable = true;
      else if (kind === TokenKind.SystemVariable) s.systemVariable = true;
      s.pos++;
    }
  }
  // The statement ended inside parentheses.
  if (depth > 0) s.failed = true;
}

/**
 * A name in an expression: a column (t.c, db.t.c), a function call (f(...), db.f(...)), a
 * niladic function (CURRENT_DATE), NEXT VALUE FOR seq. Leaves the cursor after the name, on the
 * "(" of a call so that its arguments are walked as an expression.
 */
function scanName(s: ParseState): void {
  const tokens = s.tokens;
  const i = s.pos;
  let last = i;
  while (s.isOperatorAt(last + 1, DOT)) {
    if (s.isNameAt(last + 2)) last += 2;
    else if (s.isOperatorAt(last + 2, STAR)) {
      s.pos = last + 3;
      return;
    } else break;
  }
  if (s.isOperatorAt(last + 1, LEFT_PARENTHESIS)) {
    if (last > i || tokens.kinds[i] === TokenKind.QuotedIdentifier) {
      // Built-ins are never qualified nor quoted: this is a stored function.
      s.noteUnknownFunction(
        tokens.sql.slice(tokens.starts[i], tokens.ends[last]),
        last === i + 2 ? i : -1,
        last <= i + 2 ? last : -1,
      );
    } else {
      callFunction(s, i);
    }
    s.pos = last + 1;
    return;
  }
  if (last > i) {
    // seq.NEXTVAL / seq.CURRVAL, the sequence syntax of sql_mode=ORACLE.
    const id = functionIdOf(tokens.sql, tokens.starts[last]!, tokens.ends[last]!);
    if (id >= 0 && categoryOf(id) === FunctionCategory.SequenceWrite) {
      s.noteNonDeterministic(functionName(id));
      s.writesEverything = true;
    } else if (id >= 0 && categoryOf(id) === FunctionCategory.SequenceRead) {
      s.noteNonDeterministic(functionName(id));
    }
    s.pos = last + 1;
    return;
  }
  if (tokens.kinds[i] === TokenKind.Word) {
    const id = tokens.ids[i]!;
    if (id >= 0) {
      if (isNiladicNonDeterministic(id)) {
        s.noteNonDeterministic(keywordTable.words[id]!);
      } else if (
        (id === Kw.NEXT || id === Kw.PREVIOUS) &&
        s.keywordAt(i + 1) === Kw.VALUE &&
        s.keywordAt(i + 2) === Kw.FOR
      ) {
        s.pos = i + 3;
        const sequence = s.tableName();
        if (sequence === null) s.failed = true;
        else if (id === Kw.NEXT) s.addWrite(sequence);
        else s.addRead(sequence);
        s.noteNonDeterministic(id === Kw.NEXT ? 'NEXT VALUE FOR' : 'PREVIOUS VALUE FOR');
        return;
      } else if (id === Kw.WITHIN && s.keywordAt(i + 1) === Kw.GROUP) {
        // PERCENTILE_CONT(x) WITHIN GROUP (ORDER BY y): not a GROUP BY clause.
        s.pos = i + 2;
        return;
      }
    }
  }
  s.pos = i + 1;
}

/** The bare word at `i` is followed by "(": a built-in, syntax, or an unknown function. */
function callFunction(s: ParseState, i: number): void {
  const tokens = s.tokens;
  const id = functionIdOf(tokens.sql, tokens.starts[i]!, tokens.ends[i]!);
  switch (categoryOf(id)) {
    case FunctionCategory.Deterministic:
      if (TAKES_TODAY.has(functionName(id)) && takesToday(s, i, functionName(id))) {
        s.noteNonDeterministic(`${functionName(id)} to a date`);
      }
      return;
    case FunctionCategory.TableFunction:
      return;
    case FunctionCategory.NonDeterministic:
      s.noteNonDeterministic(functionName(id));
      return;
    case FunctionCategory.UnixTimestamp:
      if (s.isOperatorAt(i + 2, RIGHT_PARENTHESIS)) s.noteNonDeterministic(functionName(id));
      return;
    case FunctionCategory.SequenceWrite:
    case FunctionCategory.SequenceRead: {
      s.noteNonDeterministic(functionName(id));
      const saved = s.pos;
      s.pos = i + 2;
      const sequence = s.tableName();
      if (sequence === null) s.writesEverything = true;
      else if (categoryOf(id) === FunctionCategory.SequenceWrite) s.addWrite(sequence);
      else s.addRead(sequence);
      s.pos = saved;
      return;
    }
    case FunctionCategory.Unknown:
      if (!isSyntaxBeforeParenthesis(tokens.ids[i]!)) s.noteUnknownFunction(tokens.text(i), -1, i);
  }
}

/** Conversions that give a TIME value today's date. */
const TAKES_TODAY = new Set(['CAST', 'CONVERT', 'TIMESTAMP']);
const DATE_TYPES = new Set(['DATE', 'DATETIME', 'TIMESTAMP']);

/**
 * CAST(x AS DATE|DATETIME|TIMESTAMP), CONVERT(x, DATETIME...) and TIMESTAMP(x): when x is a TIME
 * value the result carries the current date, so it changes at midnight though the server's own
 * query cache would keep it. Column types are unknown here, so only a literal x is trusted.
 * `i` is the function's name, `i + 1` its "(".
 */
function takesToday(s: ParseState, i: number, name: string): boolean {
  const tokens = s.tokens;
  const literal =
    (tokens.kinds[i + 2] === TokenKind.String || tokens.kinds[i + 2] === TokenKind.Number) &&
    (s.isOperatorAt(i + 3, COMMA) ||
      s.isOperatorAt(i + 3, RIGHT_PARENTHESIS) ||
      s.keywordAt(i + 3) === Kw.AS);
  let depth = 0;
  let commas = 0;
  for (let j = i + 1; j < s.end; j++) {
    if (s.isOperatorAt(j, LEFT_PARENTHESIS)) depth++;
    else if (s.isOperatorAt(j, RIGHT_PARENTHESIS)) {
      if (--depth === 0) break;
    } else if (depth === 1) {
      const target = j + 1 < s.end ? tokens.text(j + 1).toUpperCase() : '';
      if (s.isOperatorAt(j, COMMA)) {
        commas++;
        if (name === 'CONVERT' && DATE_TYPES.has(target)) return !literal;
      } else if (name === 'CAST' && s.keywordAt(j) === Kw.AS && DATE_TYPES.has(target)) {
        return !literal;
      }
    }
  }
  return name === 'TIMESTAMP' && commas === 0 && !literal;
}

/**
 * For statements not walked clause by clause (unparsable ones, SHOW, EXPLAIN, LOAD DATA): finds
 * every function call and variable in tokens [from, to), so that a stored function hidden in them
 * still counts as a possible write.
 */
export function sweepFunctionCalls(s: ParseState, from: number, to: number): void {
  const tokens = s.tokens;
  const { kinds, ids } = tokens;
  for (let i = from; i < to; i++) {
    const kind = kinds[i];
    if (kind === TokenKind.UserVariable) s.userVariable = true;
    else if (kind === TokenKind.SystemVariable) s.systemVariable = true;
    if (kind !== TokenKind.Word && kind !== TokenKind.QuotedIdentifier) continue;
    if (
      kind === TokenKind.Word &&
      (ids[i] === Kw.NEXT || ids[i] === Kw.PREVIOUS) &&
      s.keywordAt(i + 1) === Kw.VALUE &&
      s.keywordAt(i + 2) === Kw.FOR
    ) {
      s.noteNonDeterministic(ids[i] === Kw.NEXT ? 'NEXT VALUE FOR' : 'PREVIOUS VALUE FOR');
      if (ids[i] === Kw.NEXT) s.writesEverything = true;
      continue;
    }
    if (kind === TokenKind.Word && isNiladicNonDeterministic(ids[i]!)) {
      s.noteNonDeterministic(keywordTable.words[ids[i]!]!);
      continue;
    }
    if (!s.isOperatorAt(i + 1, LEFT_PARENTHESIS)) continue;
    if (kind === TokenKind.QuotedIdentifier || s.isOperatorAt(i - 1, DOT)) {
      // db.f( or `f`(; a.b.f( names no function.
      const qualified = s.isOperatorAt(i - 1, DOT);
      const readable = !qualified || (s.isNameAt(i - 2) && !s.isOperatorAt(i - 3, DOT));
      s.noteUnknownFunction(tokens.text(i), qualified ? i - 2 : -1, readable ? i : -1);
      continue;
    }
    const id = functionIdOf(tokens.sql, tokens.starts[i]!, tokens.ends[i]!);
    const category = categoryOf(id);
    if (category === FunctionCategory.Unknown) {
      if (!isSyntaxBeforeParenthesis(ids[i]!)) s.noteUnknownFunction(tokens.text(i), -1, i);
    } else if (category === FunctionCategory.SequenceWrite) {
      s.noteNonDeterministic(functionName(id));
      s.writesEverything = true;
    } else if (
      category === FunctionCategory.NonDeterministic ||
      category === FunctionCategory.SequenceRead ||
      (category === FunctionCategory.UnixTimestamp && s.isOperatorAt(i + 2, RIGHT_PARENTHESIS))
    ) {
      s.noteNonDeterministic(functionName(id));
    }
  }
}
