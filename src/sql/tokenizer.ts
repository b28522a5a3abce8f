/**
 * A hand-written MariaDB SQL tokenizer working on char codes: no regular expression, no
 * per-token object. Tokens live in parallel typed arrays (kind, start, end, keyword id) that a
 * caller may reuse from statement to statement.
 *
 * Comments follow the server's lexer:
 * - `# ...` and `-- ...` run to the end of the line; `--` is a comment only when followed by a
 *   space, a control character or the end of the text (`1--1` is one minus minus one).
 * - `/* ... *\/` is skipped, and ends at the first `*\/`.
 * - Executable comments `/*! ... *\/`, `/*!NNNNN ... *\/`, `/*M! ... *\/`, `/*M!NNNNNN ... *\/` are
 *   SQL: their content is tokenized like the rest. A versioned one runs only when its version is
 *   at most the server's, and MariaDB never runs MySQL-style ones numbered 50700 to 99999 (they
 *   hide MySQL 5.7+ syntax); those that do not run are comments.
 * Anything that is not executed counts as a comment (`hasComments`).
 */
import {
  AMPERSAND,
  AT,
  BACKTICK,
  BANG,
  CARRIAGE_RETURN,
  COLON,
  DELETE_CHAR,
  DIGIT_0,
  DIGIT_1,
  DOLLAR,
  DOT,
  DOUBLE_QUOTE,
  EQUALS,
  FIRST_NON_ASCII,
  GREATER,
  HASH,
  LESS,
  LOWER_A,
  LOWER_B,
  LOWER_E,
  LOWER_N,
  LOWER_X,
  LOWER_Z,
  MINUS,
  PIPE,
  PLUS,
  QUESTION,
  SEMICOLON,
  SINGLE_QUOTE,
  SLASH,
  SPACE,
  STAR,
  TAB,
  UNDERSCORE,
  UPPER_A,
  UPPER_B,
  UPPER_E,
  UPPER_M,
  UPPER_N,
  UPPER_X,
  UPPER_Z,
  isDigit,
  isHexDigit,
} from './char-codes.ts';
import { isReserved, keywordTable } from './keywords.ts';

export const TokenKind = {
  /** A bare word: keyword or identifier. Its id is the keyword id, or -1. */
  Word: 1,
  /** `quoted` identifier, or "quoted" under ANSI_QUOTES. */
  QuotedIdentifier: 2,
  /** '...', "..." (without ANSI_QUOTES), N'...', _charset'...', X'...', B'...'. */
  String: 3,
  Number: 4,
  /** @name, @'name', @`name`. */
  UserVariable: 5,
  /** @@name, @@session.name, @@global.name. */
  SystemVariable: 6,
  /** `?` */
  Placeholder: 7,
  /** Punctuation and operators; the id is the char code, or an Op code for multi-char ones. */
  Operator: 8,
} as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

/** Ids of the operators longer than one character (single ones use their char code). */
export const Op = {
  LessOrEqual: 256,
  GreaterOrEqual: 257,
  NotEqual: 258,
  NullSafeEqual: 259,
  Assign: 260,
  ShiftLeft: 261,
  ShiftRight: 262,
  DoublePipe: 263,
  DoubleAmpersand: 264,
} as const;

export interface TokenizerOptions {
  /** sql_mode ANSI_QUOTES: "..." quotes an identifier, not a string. */
  ansiQuotes: boolean;
  /** sql_mode NO_BACKSLASH_ESCAPES: a backslash in a string is an ordinary character. */
  noBackslashEscapes?: boolean;
  /**
   * The server's version as a number (10.11.19 is 101119), to decide which versioned executable
   * comments run. Unknown: 5-digit versions follow MariaDB's fixed rule, 6-digit ones are assumed
   * to run and `uncertainVersionedComment` is set.
   */
  serverVersion?: number;
}

const INITIAL_CAPACITY = 64;

export class TokenList {
  sql = '';
  count = 0;
  kinds = new Uint8Array(INITIAL_CAPACITY);
  starts = new Int32Array(INITIAL_CAPACITY);
  ends = new Int32Array(INITIAL_CAPACITY);
  /** Keyword id of a Word (-1 when not a keyword), operator id of an Operator, else -1. */
  ids = new Int16Array(INITIAL_CAPACITY);
  /**
   * Where the token's text begins and ends once the markers of an executable comment around it
   * are included: `/*!40101 SET x=1 *\/` spans the marker before SET and the `*\/` after 1.
   */
  spanStarts = new Int32Array(INITIAL_CAPACITY);
  spanEnds = new Int32Array(INITIAL_CAPACITY);
  /** The text had a comment that is not executed. */
  hasComments = false;
  /** The text had an executable comment. */
  hasExecutableComments = false;
  /** A 6-digit versioned comment was taken as executed without knowing the server's version. */
  uncertainVersionedComment = false;
  /** Why the text cannot be lexed (unterminated string, identifier or comment), or null. */
  error: string | null = null;

  reset(sql: string): void {
    this.sql = sql;
    this.count = 0;
    this.hasComments = false;
    this.hasExecutableComments = false;
    this.uncertainVersionedComment = false;
    this.error = null;
  }

  push(kind: TokenKind, start: number, end: number, id: number, spanStart: number): void {
    if (this.count === this.kinds.length) this.#grow();
    const index = this.count++;
    this.kinds[index] = kind;
    this.starts[index] = start;
    this.ends[index] = end;
    this.ids[index] = id;
    this.spanStarts[index] = spanStart;
    this.spanEnds[index] = end;
  }

  /** The token's raw text, quotes included. */
  text(index: number): string {
    return this.sql.slice(this.starts[index], this.ends[index]);
  }

  /** The name a Word or QuotedIdentifier stands for: quotes removed, doubled quotes undone. */
  identifier(index: number): string {
    const start = this.starts[index]!;
    const end = this.ends[index]!;
    if (this.kinds[index] !== TokenKind.QuotedIdentifier) return this.sql.slice(start, end);
    const quote = this.sql[start]!;
    const inner = this.sql.slice(start + 1, end - 1);
    return inner.includes(quote) ? inner.split(quote + quote).join(quote) : inner;
  }

  /** The text of the tokens first..last with the executable-comment markers around them. */
  spanText(first: number, last: number): string {
    if (first > last) return '';
    return this.sql.slice(this.spanStarts[first], this.spanEnds[last]);
  }

  #grow(): void {
    const size = this.kinds.length * 2;
    this.kinds = copyInto(new Uint8Array(size), this.kinds);
    this.starts = copyInto(new Int32Array(size), this.starts);
    this.ends = copyInto(new Int32Array(size), this.ends);
    this.ids = copyInto(new Int16Array(size), this.ids);
    this.spanStarts = copyInto(new Int32Array(size), this.spanStarts);
    this.spanEnds = copyInto(new Int32Array(size), this.spanEnds);
  }
}

function copyInto<T extends Uint8Array | Int16Array | Int32Array>(target: T, source: T): T {
  target.set(source);
  return target;
}

// Char codes.

/** MySQL-style versioned comments MariaDB never executes (MySQL 5.7 and later syntax). */
const MYSQL_ONLY_VERSION_LOW = 50700;
const MYSQL_ONLY_VERSION_HIGH = 99999;

/** Letters, digits, _ and $, and every non-ASCII character, as in the server's utf8 lexer. */
function isIdentifierChar(code: number): boolean {
  return (
    (code >= LOWER_A && code <= LOWER_Z) ||
    (code >= UPPER_A && code <= UPPER_Z) ||
    isDigit(code) ||
    code === UNDERSCORE ||
    code === DOLLAR ||
    code >= FIRST_NON_ASCII
  );
}

function isWhitespace(code: number): boolean {
  return code === SPACE || (code >= TAB && code <= CARRIAGE_RETURN);
}

function isQuoteChar(code: number): boolean {
  return code === SINGLE_QUOTE || code === DOUBLE_QUOTE || code === BACKTICK;
}

/** Reused by tokenize() when no list is passed; the classifier runs one statement at a time. */
const scratch = new TokenList();

/**
 * Splits `sql` into tokens. Never throws: a text that cannot be lexed gets `error` set and the
 * tokens read up to that point.
 */
export function tokenize(
  sql: string,
  options: TokenizerOptions,
  into: TokenList = new TokenList(),
): TokenList {
  into.reset(sql);
  new Lexer(sql, options, into).run();
  return into;
}

/** tokenize() into a shared list: valid only until the next call. For the classifier. */
export function tokenizeShared(sql: string, options: TokenizerOptions): TokenList {
  return tokenize(sql, options, scratch);
}

/**
 * The text the query cache keys a statement by.
 *
 * Removed: comments that are not executed *before the first token and after the last one*, the
 * whitespace around them, and trailing semicolons. So `/* trace-id *\/ SELECT 1` and
 * `SELECT 1 -- from app X` both key as `SELECT 1`.
 *
 * Kept byte for byte: everything between the first and the last token, comments included, and
 * the letter case. The server names a result column after the text of its expression, so
 * `SELECT 1  +  1`, `SELECT 1+1` and `SELECT 1 /* c *\/ + 1` return columns named `1  +  1`, `1+1`
 * and `1 /* c *\/ + 1`: their replies differ, and so must their keys. A comment before the first
 * token or after the last cannot fall inside an expression, so dropping those is safe. Executable
 * comments are SQL and always kept, markers included.
 */
export function cacheKeyText(sql: string, options: TokenizerOptions): string {
  const tokens = tokenizeShared(sql, options);
  let last = tokens.count - 1;
  while (last >= 0 && tokens.kinds[last] === TokenKind.Operator && tokens.ids[last] === SEMICOLON)
    last--;
  return tokens.spanText(0, last);
}

class Lexer {
  readonly #sql: string;
  readonly #length: number;
  readonly #tokens: TokenList;
  readonly #ansiQuotes: boolean;
  readonly #backslashEscapes: boolean;
  readonly #serverVersion: number | undefined;
  /** Position of the executable-comment marker the next token's span starts at, or -1. */
  #pendingSpanStart = -1;
  /** Index of the first token inside the open executable comment, or -1 when none is open. */
  #executableFrom = -1;
  #inExecutable = false;

  constructor(sql: string, options: TokenizerOptions, tokens: TokenList) {
    this.#sql = sql;
    this.#length = sql.length;
    this.#tokens = tokens;
    this.#ansiQuotes = options.ansiQuotes;
    this.#backslashEscapes = options.noBackslashEscapes !== true;
    this.#serverVersion = options.serverVersion;
  }

  run(): void {
    const sql = this.#sql;
    const length = this.#length;
    const tokens = this.#tokens;
    let i = 0;
    while (i < length && tokens.error === null) {
      const code = sql.charCodeAt(i);
      if (isWhitespace(code)) {
        i++;
        continue;
      }
      if (
        (code >= LOWER_A && code <= LOWER_Z) ||
        (code >= UPPER_A && code <= UPPER_Z) ||
        code === UNDERSCORE ||
        code === DOLLAR ||
        code >= FIRST_NON_ASCII
      ) {
        i = this.#word(i, code);
        continue;
      }
      if (isDigit(code)) {
        i = this.#afterDot() ? this.#plainWord(i, -1) : this.#number(i);
        continue;
      }
      switch (code) {
        case SINGLE_QUOTE:
          i = this.#quoted(i, i, code, this.#backslashEscapes, TokenKind.String);
          continue;
        case DOUBLE_QUOTE:
          i = this.#ansiQuotes
            ? this.#quoted(i, i, code, false, TokenKind.QuotedIdentifier)
            : this.#quoted(i, i, code, this.#backslashEscapes, TokenKind.String);
          continue;
        case BACKTICK:
          i = this.#quoted(i, i, code, false, TokenKind.QuotedIdentifier);
          continue;
        case AT:
          i = this.#variable(i);
          continue;
        case QUESTION:
          this.#emit(TokenKind.Placeholder, i, i + 1, -1);
          i++;
          continue;
        case HASH:
          i = this.#lineComment(i);
          continue;
        case MINUS: {
          const next = sql.charCodeAt(i + 1);
          if (next === MINUS) {
            const after = i + 2 < length ? sql.charCodeAt(i + 2) : 0;
            if (after <= SPACE || after === DELETE_CHAR) {
              i = this.#lineComment(i);
              continue;
            }
          }
          break;
        }
        case SLASH:
          if (sql.charCodeAt(i + 1) === STAR) {
            i = this.#blockComment(i);
            continue;
          }
          break;
        case STAR:
          if (this.#inExecutable && sql.charCodeAt(i + 1) === SLASH) {
            this.#closeExecutable(i + 2);
            i += 2;
            continue;
          }
          break;
        case DOT:
          if (isDigit(sql.charCodeAt(i + 1)) && !this.#followsName()) {
            i = this.#fraction(i, i + 1);
            continue;
          }
          break;
        case LESS:
          i = this.#lessThan(i);
          continue;
        case GREATER: {
          const next = sql.charCodeAt(i + 1);
          const op = next === EQUALS ? Op.GreaterOrEqual : next === GREATER ? Op.ShiftRight : -1;
          i = op === -1 ? this.#single(i, code) : this.#double(i, op);
          continue;
        }
        case BANG:
          i =
            sql.charCodeAt(i + 1) === EQUALS ? this.#double(i, Op.NotEqual) : this.#single(i, code);
          continue;
        case COLON:
          i = sql.charCodeAt(i + 1) === EQUALS ? this.#double(i, Op.Assign) : this.#single(i, code);
          continue;
        case PIPE:
          i =
            sql.charCodeAt(i + 1) === PIPE ? this.#double(i, Op.DoublePipe) : this.#single(i, code);
          continue;
        case AMPERSAND:
          i =
            sql.charCodeAt(i + 1) === AMPERSAND
              ? this.#double(i, Op.DoubleAmpersand)
              : this.#single(i, code);
          continue;
      }
      i = this.#single(i, code);
    }
    if (this.#inExecutable && tokens.error === null) tokens.error = 'unterminated comment';
  }

  #emit(kind: TokenKind, start: number, end: number, id: number): void {
    const spanStart = this.#pendingSpanStart === -1 ? start : this.#pendingSpanStart;
    this.#pendingSpanStart = -1;
    this.#tokens.push(kind, start, end, id, spanStart);
  }

  #single(i: number, code: number): number {
    this.#emit(TokenKind.Operator, i, i + 1, code);
    return i + 1;
  }

  #double(i: number, op: number): number {
    this.#emit(TokenKind.Operator, i, i + 2, op);
    return i + 2;
  }

  #lessThan(i: number): number {
    const sql = this.#sql;
    const next = sql.charCodeAt(i + 1);
    if (next === EQUALS) {
      if (sql.charCodeAt(i + 2) === GREATER) {
        this.#emit(TokenKind.Operator, i, i + 3, Op.NullSafeEqual);
        return i + 3;
      }
      return this.#double(i, Op.LessOrEqual);
    }
    if (next === GREATER) return this.#double(i, Op.NotEqual);
    if (next === LESS) return this.#double(i, Op.ShiftLeft);
    return this.#single(i, LESS);
  }

  /**
   * The previous token is a name, so a following "." separates qualified parts (`t.5` is column
   * 5 of t) rather than starting a number (`SELECT .5`).
   */
  #followsName(): boolean {
    const tokens = this.#tokens;
    const last = tokens.count - 1;
    if (last < 0) return false;
    const kind = tokens.kinds[last];
    return (
      kind === TokenKind.QuotedIdentifier ||
      (kind === TokenKind.Word && !isReserved(tokens.ids[last]!))
    );
  }

  /** The previous token is the "." of a qualified name: what follows is a name, even `1col`. */
  #afterDot(): boolean {
    const tokens = this.#tokens;
    const last = tokens.count - 1;
    if (last < 1 || tokens.kinds[last] !== TokenKind.Operator || tokens.ids[last] !== DOT) {
      return false;
    }
    const before = tokens.kinds[last - 1];
    return (
      before === TokenKind.QuotedIdentifier ||
      (before === TokenKind.Word && !isReserved(tokens.ids[last - 1]!))
    );
  }

  #word(i: number, code: number): number {
    const sql = this.#sql;
    const next = sql.charCodeAt(i + 1);
    // X'..' hex, B'..' bit and N'..' national strings.
    if (
      next === SINGLE_QUOTE &&
      (code === UPPER_X ||
        code === LOWER_X ||
        code === UPPER_B ||
        code === LOWER_B ||
        code === UPPER_N ||
        code === LOWER_N)
    ) {
      const backslash = (code === UPPER_N || code === LOWER_N) && this.#backslashEscapes;
      return this.#quoted(i, i + 1, SINGLE_QUOTE, backslash, TokenKind.String);
    }
    if (this.#afterDot()) return this.#plainWord(i, -1);
    let end = i + 1;
    while (end < this.#length && isIdentifierChar(sql.charCodeAt(end))) end++;
    // A character set introducer glued to its string: _utf8mb4'text', _binary"text".
    if (code === UNDERSCORE) {
      const quote = sql.charCodeAt(end);
      if (quote === SINGLE_QUOTE || (quote === DOUBLE_QUOTE && !this.#ansiQuotes)) {
        return this.#quoted(i, end, quote, this.#backslashEscapes, TokenKind.String);
      }
    }
    this.#emit(TokenKind.Word, i, end, keywordTable.lookup(sql, i, end));
    return end;
  }

  #plainWord(i: number, id: number): number {
    let end = i + 1;
    while (end < this.#length && isIdentifierChar(this.#sql.charCodeAt(end))) end++;
    this.#emit(TokenKind.Word, i, end, id);
    return end;
  }

  /** A token from `start` whose quoted part opens at `open`; returns the position after it. */
  #quoted(start: number, open: number, quote: number, backslash: boolean, kind: TokenKind): number {
    const end = this.#scanQuoted(open, quote, backslash);
    if (end < 0) {
      this.#tokens.error =
        kind === TokenKind.QuotedIdentifier ? 'unterminated identifier' : 'unterminated string';
      return this.#length;
    }
    this.#emit(kind, start, end, -1);
    return end;
  }

  /**
   * The position after the closing quote, or -1 when there is none. Jumps from quote to quote
   * with indexOf (long string literals are most of an INSERT's text).
   */
  #scanQuoted(open: number, quote: number, backslash: boolean): number {
    const sql = this.#sql;
    const quoteChar = quote === SINGLE_QUOTE ? "'" : quote === DOUBLE_QUOTE ? '"' : '`';
    let nextBackslash = backslash ? sql.indexOf('\\', open + 1) : -1;
    let j = open + 1;
    for (;;) {
      const close = sql.indexOf(quoteChar, j);
      if (close < 0) return -1;
      if (nextBackslash >= 0 && nextBackslash < close) {
        // An escaped character, possibly the quote itself.
        j = nextBackslash + 2;
        nextBackslash = sql.indexOf('\\', j);
        continue;
      }
      if (sql.charCodeAt(close + 1) !== quote) return close + 1;
      j = close + 2;
    }
  }

  #number(i: number): number {
    const sql = this.#sql;
    const length = this.#length;
    if (sql.charCodeAt(i) === DIGIT_0) {
      // 0x1F and 0b101; the marker is lower case only (0X1F is an identifier).
      const marker = sql.charCodeAt(i + 1);
      if (marker === LOWER_X || marker === LOWER_B) {
        let j = i + 2;
        const hex = marker === LOWER_X;
        while (j < length) {
          const code = sql.charCodeAt(j);
          if (hex ? !isHexDigit(code) : code !== DIGIT_0 && code !== DIGIT_1) break;
          j++;
        }
        if (j > i + 2 && !isIdentifierChar(sql.charCodeAt(j))) {
          this.#emit(TokenKind.Number, i, j, -1);
          return j;
        }
      }
    }
    let j = i;
    while (j < length && isDigit(sql.charCodeAt(j))) j++;
    if (sql.charCodeAt(j) === DOT) return this.#fraction(i, j + 1);
    // With an exponent it is a number even when letters follow: 2e5x is 2e5 aliased x.
    const afterExponent = this.#exponent(j);
    if (afterExponent > j) {
      this.#emit(TokenKind.Number, i, afterExponent, -1);
      return afterExponent;
    }
    // Digits followed by letters make an identifier: 1abc, 2023_orders.
    if (j < length && isIdentifierChar(sql.charCodeAt(j))) return this.#plainWord(i, -1);
    this.#emit(TokenKind.Number, i, j, -1);
    return j;
  }

  /** A number from `start` whose fractional digits begin at `from` (just after the dot). */
  #fraction(start: number, from: number): number {
    let j = from;
    while (j < this.#length && isDigit(this.#sql.charCodeAt(j))) j++;
    j = this.#exponent(j);
    this.#emit(TokenKind.Number, start, j, -1);
    return j;
  }

  /** The position after an exponent (e5, E-3) starting at `j`, or `j` when there is none. */
  #exponent(j: number): number {
    const sql = this.#sql;
    const code = sql.charCodeAt(j);
    if (code !== LOWER_E && code !== UPPER_E) return j;
    let k = j + 1;
    const sign = sql.charCodeAt(k);
    if (sign === PLUS || sign === MINUS) k++;
    if (!isDigit(sql.charCodeAt(k))) return j;
    while (k < this.#length && isDigit(sql.charCodeAt(k))) k++;
    return k;
  }

  #variable(i: number): number {
    const sql = this.#sql;
    const length = this.#length;
    const next = sql.charCodeAt(i + 1);
    if (next === AT) {
      let j = i + 2;
      for (;;) {
        const code = sql.charCodeAt(j);
        if (code === BACKTICK) {
          j = this.#scanQuoted(j, code, false);
          if (j < 0) {
            this.#tokens.error = 'unterminated identifier';
            return length;
          }
        } else if (j < length && (isIdentifierChar(code) || code === DOT)) {
          j++;
        } else {
          break;
        }
      }
      this.#emit(TokenKind.SystemVariable, i, j, -1);
      return j;
    }
    if (isQuoteChar(next)) {
      const end = this.#scanQuoted(i + 1, next, next !== BACKTICK && this.#backslashEscapes);
      if (end < 0) {
        this.#tokens.error = 'unterminated string';
        return length;
      }
      this.#emit(TokenKind.UserVariable, i, end, -1);
      return end;
    }
    if (isIdentifierChar(next) || next === DOT) {
      let j = i + 2;
      while (j < length && (isIdentifierChar(sql.charCodeAt(j)) || sql.charCodeAt(j) === DOT)) j++;
      this.#emit(TokenKind.UserVariable, i, j, -1);
      return j;
    }
    return this.#single(i, AT);
  }

  #lineComment(i: number): number {
    this.#tokens.hasComments = true;
    const end = this.#sql.indexOf('\n', i);
    return end < 0 ? this.#length : end + 1;
  }

  #blockComment(i: number): number {
    const sql = this.#sql;
    const third = sql.charCodeAt(i + 2);
    let markerEnd = -1;
    let mariadbOnly = false;
    if (third === BANG) {
      markerEnd = i + 3;
    } else if (third === UPPER_M && sql.charCodeAt(i + 3) === BANG) {
      markerEnd = i + 4;
      mariadbOnly = true;
    }
    if (markerEnd < 0) return this.#skipComment(i + 2, 0);
    if (this.#inExecutable) {
      this.#tokens.error = 'nested executable comment';
      return this.#length;
    }
    let digits = 0;
    while (digits < 6 && isDigit(sql.charCodeAt(markerEnd + digits))) digits++;
    let contentStart = markerEnd;
    if (digits >= 5) {
      contentStart = markerEnd + digits;
      const version = Number(sql.slice(markerEnd, contentStart));
      if (!this.#versionRuns(version, mariadbOnly)) return this.#skipComment(contentStart, 1);
    }
    this.#tokens.hasExecutableComments = true;
    this.#inExecutable = true;
    this.#executableFrom = this.#tokens.count;
    this.#pendingSpanStart = i;
    return contentStart;
  }

  #versionRuns(version: number, mariadbOnly: boolean): boolean {
    if (!mariadbOnly && version >= MYSQL_ONLY_VERSION_LOW && version <= MYSQL_ONLY_VERSION_HIGH) {
      return false;
    }
    if (this.#serverVersion !== undefined) return version <= this.#serverVersion;
    // Every MariaDB is at least 10.0 (100000): a 5-digit version always runs.
    if (version > MYSQL_ONLY_VERSION_HIGH) this.#tokens.uncertainVersionedComment = true;
    return true;
  }

  /**
   * Skips a comment whose body starts at `from`, returning the position after its `*\/`. A
   * comment that does not run may itself hold one plain comment (`nested` levels allowed).
   */
  #skipComment(from: number, nested: number): number {
    const sql = this.#sql;
    this.#tokens.hasComments = true;
    if (nested === 0) {
      const close = sql.indexOf('*/', from);
      if (close >= 0) return close + 2;
      this.#tokens.error = 'unterminated comment';
      return this.#length;
    }
    let depth = 0;
    let j = from;
    while (j < this.#length) {
      const code = sql.charCodeAt(j);
      if (code === STAR && sql.charCodeAt(j + 1) === SLASH) {
        if (depth === 0) return j + 2;
        depth--;
        j += 2;
      } else if (code === SLASH && sql.charCodeAt(j + 1) === STAR && depth < nested) {
        depth++;
        j += 2;
      } else {
        j++;
      }
    }
    this.#tokens.error = 'unterminated comment';
    return this.#length;
  }

  #closeExecutable(end: number): void {
    const tokens = this.#tokens;
    if (tokens.count > this.#executableFrom) tokens.spanEnds[tokens.count - 1] = end;
    this.#pendingSpanStart = -1;
    this.#inExecutable = false;
    this.#executableFrom = -1;
  }
}
