/**
 * The cursor over one statement's tokens and the facts gathered while walking them: tables read
 * and written, and everything that bears on cacheability. The parsers only record facts; turning
 * them into a verdict is cacheability.ts's job.
 */
import { DOT, LEFT_PARENTHESIS, RIGHT_PARENTHESIS } from './char-codes.ts';
import { isReserved, Kw } from './keywords.ts';
import { normalizeName, addTable } from './table-ref.ts';
import type { LowerCaseTableNames, TableRef } from './table-ref.ts';
import { TokenKind } from './tokenizer.ts';
import type { TokenList } from './tokenizer.ts';
import type { DdlObject } from './statement-info.ts';

/** A table of a FROM clause (or an UPDATE/DELETE list) with the alias it goes by. */
export interface TableEntry {
  table: TableRef;
  alias: string | null;
}

export class ParseState {
  readonly tokens: TokenList;
  readonly lowerCaseTableNames: LowerCaseTableNames;
  /** The current token; `end` is one past the statement's last token. */
  pos: number;
  readonly end: number;

  readonly reads: TableRef[] = [];
  readonly writes: TableRef[] = [];
  writesEverything = false;
  implicitCommit = false;
  temporary = false;
  /** The first non-deterministic built-in met, by name. */
  nonDeterministic: string | null = null;
  /** Functions that are no built-in: stored functions or UDFs, as written. */
  readonly unknownFunctions: string[] = [];
  /** The same by name (see StatementInfo.routineCalls); null once one could not be read. */
  routineCalls: TableRef[] | null = [];
  userVariable = false;
  systemVariable = false;
  into = false;
  lockingRead = false;
  procedure = false;
  sqlCache = false;
  sqlNoCache = false;
  calcFoundRows = false;
  /** CALL's procedure, as written (null: not a CALL, or a name it could not read). */
  called: TableRef | null = null;
  /** What a DDL statement defines, when its text names it (see StatementInfo.ddlObject). */
  ddlObject: DdlObject | null = null;
  /** Why a statement that runs another one is not cacheable (ANALYZE, SET STATEMENT). */
  wrapper: string | null = null;
  /** The statement did not parse; what was gathered is partial. */
  failed = false;
  /** Names of the common table expressions in scope, innermost WITH last. */
  readonly cteScopes: string[][] = [];

  constructor(
    tokens: TokenList,
    start: number,
    end: number,
    lowerCaseTableNames: LowerCaseTableNames,
  ) {
    this.tokens = tokens;
    this.pos = start;
    this.end = end;
    this.lowerCaseTableNames = lowerCaseTableNames;
  }

  atEnd(): boolean {
    return this.pos >= this.end;
  }

  /** Keyword id of the token at `index`, or -1 when it is not a keyword (or past the end). */
  keywordAt(index: number): number {
    if (index >= this.end || this.tokens.kinds[index] !== TokenKind.Word) return -1;
    return this.tokens.ids[index]!;
  }

  keyword(): number {
    return this.keywordAt(this.pos);
  }

  isKeyword(keyword: number, offset = 0): boolean {
    return this.keywordAt(this.pos + offset) === keyword;
  }

  isOperatorAt(index: number, operator: number): boolean {
    return (
      index < this.end &&
      this.tokens.kinds[index] === TokenKind.Operator &&
      this.tokens.ids[index] === operator
    );
  }

  isOperator(operator: number, offset = 0): boolean {
    return this.isOperatorAt(this.pos + offset, operator);
  }

  /** A Word or quoted identifier: something that can be a name. */
  isNameAt(index: number): boolean {
    if (index >= this.end) return false;
    const kind = this.tokens.kinds[index];
    return kind === TokenKind.Word || kind === TokenKind.QuotedIdentifier;
  }

  accept(keyword: number): boolean {
    if (this.keyword() !== keyword) return false;
    this.pos++;
    return true;
  }

  acceptOperator(operator: number): boolean {
    if (!this.isOperator(operator)) return false;
    this.pos++;
    return true;
  }

  expect(keyword: number): void {
    if (!this.accept(keyword)) this.failed = true;
  }

  expectOperator(operator: number): void {
    if (!this.acceptOperator(operator)) this.failed = true;
  }

  /** Accepts IF EXISTS or IF NOT EXISTS. */
  acceptIfExists(): void {
    if (!this.isKeyword(Kw.IF)) return;
    this.pos++;
    this.accept(Kw.NOT);
    this.expect(Kw.EXISTS);
  }

  /** Moves past a parenthesized group starting at the current "(", without looking inside. */
  skipParenthesized(): void {
    if (!this.isOperator(LEFT_PARENTHESIS)) {
      this.failed = true;
      return;
    }
    const { kinds, ids } = this.tokens;
    let depth = 0;
    for (let i = this.pos; i < this.end; i++) {
      if (kinds[i] !== TokenKind.Operator) continue;
      if (ids[i] === LEFT_PARENTHESIS) depth++;
      else if (ids[i] === RIGHT_PARENTHESIS && --depth === 0) {
        this.pos = i + 1;
        return;
      }
    }
    this.pos = this.end;
    this.failed = true;
  }

  /**
   * The statement's effects cannot be known from its text: it may write anything. Skips the rest
   * and returns `kind`, so a parser can end with `return s.writesUnknown('ddl')`.
   */
  writesUnknown<Kind extends string>(kind: Kind): Kind {
    this.writesEverything = true;
    this.skipRest();
    return kind;
  }

  skipRest(): void {
    this.pos = this.end;
  }

  /** The name a Word or quoted identifier stands for, as the server compares it. */
  nameAt(index: number): string {
    return normalizeName(this.tokens.identifier(index), this.lowerCaseTableNames);
  }

  /**
   * Reads `name` or `schema.name` at the cursor and moves past it; null (cursor unmoved) when
   * the cursor is not on a name. A reserved word is no table name unless quoted.
   */
  tableName(): TableRef | null {
    const index = this.pos;
    if (!this.isNameAt(index)) return null;
    if (this.tokens.kinds[index] === TokenKind.Word && isReserved(this.tokens.ids[index]!)) {
      return null;
    }
    if (this.isOperatorAt(index + 1, DOT) && this.isNameAt(index + 2)) {
      this.pos = index + 3;
      return { schema: this.nameAt(index), name: this.nameAt(index + 2) };
    }
    this.pos = index + 1;
    return { schema: null, name: this.nameAt(index) };
  }

  isCte(table: TableRef): boolean {
    if (table.schema !== null) return false;
    for (const scope of this.cteScopes) if (scope.includes(table.name)) return true;
    return false;
  }

  addRead(table: TableRef): void {
    addTable(this.reads, table);
  }

  addWrite(table: TableRef): void {
    addTable(this.writes, table);
  }

  noteNonDeterministic(name: string): void {
    this.nonDeterministic ??= name;
  }

  /**
   * A call of a function that is no built-in, spelt `text`, named by the name at token `name`
   * (-1: a name that cannot be read, as a.b.c()) in the schema at token `schema` (-1: none).
   */
  noteUnknownFunction(text: string, schema: number, name: number): void {
    if (!this.unknownFunctions.includes(text)) this.unknownFunctions.push(text);
    if (this.routineCalls === null) return;
    if (name < 0) {
      this.routineCalls = null;
      return;
    }
    addTable(this.routineCalls, {
      schema: schema < 0 ? null : this.nameAt(schema),
      name: this.nameAt(name),
    });
  }

  /** The unknown functions another parse of (part of) this statement met. */
  noteUnknownFunctionsOf(other: ParseState): void {
    for (const text of other.unknownFunctions) {
      if (!this.unknownFunctions.includes(text)) this.unknownFunctions.push(text);
    }
    if (other.routineCalls === null) this.routineCalls = null;
    else if (this.routineCalls !== null) {
      for (const call of other.routineCalls) addTable(this.routineCalls, call);
    }
  }
}
