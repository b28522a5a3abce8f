/**
 * A statement's shape: its text with every plain number and plain string literal replaced by a
 * marker. Statements that differ only in such literals (a point select by a new id, an insert
 * of new values) read and write the same tables, call the same functions and are cacheable
 * alike: what the classifier says of one is true of the others, but for the text the cache
 * keys them by. That lets a text seen for the first time skip the classifier when its shape was
 * classified before (see StatementMemo).
 *
 * The shape is only given where it cannot be wrong, and null elsewhere (the text is then
 * classified as usual):
 * - a text that starts with SELECT, INSERT, UPDATE, DELETE or REPLACE;
 * - no comment (`#`, `--`, `/*`), no byte that tokenizes differently under some sql_mode or
 *   character set (a backslash, a double quote, a non-ASCII byte; see mode-independence.ts),
 *   no control byte but tab, line feed and carriage return;
 * - a literal is a maximal run of decimal digits that does not follow a name, a dot or an `@`
 *   and is not followed by a letter, a digit, `_`, `$` or a dot (else `1e5`, `0b1`, `1.5`,
 *   `1abc` or `t.1` would be taken apart: such a text has no shape), a single-quoted string
 *   with no doubled quote and no name right before it (not `_utf8'a'`), or a hex literal:
 *   `X'…'` or `x'…'` of an even number of hex digits, or `0x` and hex digits, not followed by
 *   a letter, a digit, `_`, `$`, a dot or a quote (the two spellings mean the same: one mark);
 * - everything else, quoted identifiers included, stays in the shape byte for byte.
 */
import {
  AT,
  BACKSLASH,
  BACKTICK,
  CARRIAGE_RETURN,
  DIGIT_0,
  DOLLAR,
  DOT,
  DOUBLE_QUOTE,
  HASH,
  LOWER_A,
  LOWER_X,
  LOWER_Z,
  MINUS,
  SEMICOLON,
  SINGLE_QUOTE,
  SLASH,
  SPACE,
  STAR,
  TAB,
  UNDERSCORE,
  UPPER_A,
  UPPER_X,
  UPPER_Z,
  isDigit,
  isHexDigit,
} from './char-codes.ts';

/** Stands for a number literal in a shape (a byte no shaped text holds). */
export const NUMBER_MARK = 1;
/** Stands for a string literal in a shape. */
export const STRING_MARK = 2;
/** Stands for a hex literal in a shape. */
export const HEX_MARK = 3;

/** Does `code` stand for a literal in a shape? */
export function isLiteralMark(code: number): boolean {
  return code === NUMBER_MARK || code === STRING_MARK || code === HEX_MARK;
}

const LINE_FEED = 10;

/** The statement kinds whose facts a shape carries from one text to another, as bytes. */
const SHAPED_VERBS = ['select', 'insert', 'update', 'delete', 'replace'].map((verb) =>
  Buffer.from(verb, 'latin1'),
);

function isLetter(code: number): boolean {
  return (code >= LOWER_A && code <= LOWER_Z) || (code >= UPPER_A && code <= UPPER_Z);
}

/** A byte of an unquoted name: letters, digits, `_` and `$`. */
function isNameByte(code: number): boolean {
  return isLetter(code) || isDigit(code) || code === UNDERSCORE || code === DOLLAR;
}

/**
 * Space, tab, line feed, carriage return. The tokenizer takes vertical tab and form feed for
 * spaces too; a text with either is rare, and is left without a shape (they count as control
 * bytes here).
 */
function isSpace(code: number): boolean {
  return code === SPACE || code === TAB || code === LINE_FEED || code === CARRIAGE_RETURN;
}

/** Would `code` right after a literal make one token with it, or another literal? */
function extendsLiteral(code: number): boolean {
  return isNameByte(code) || code === DOT || code === SINGLE_QUOTE;
}

/** Are `bytes[from, to)` one of SHAPED_VERBS, in any case? */
function isShapedVerb(bytes: Uint8Array, from: number, to: number): boolean {
  for (const verb of SHAPED_VERBS) {
    if (verb.length !== to - from) continue;
    let at = 0;
    // Letters only here: setting 0x20 lowers them.
    while (at < verb.length && (bytes[from + at]! | 0x20) === verb[at]) at++;
    if (at === verb.length) return true;
  }
  return false;
}

/**
 * Where a shaped statement's literals are, found by findShape. One is kept per memo and reused:
 * finding a shape allocates nothing (it grows only for a text with more literals than before).
 */
export class LiteralSpans {
  count = 0;
  starts = new Int32Array(32);
  ends = new Int32Array(32);
  marks = new Uint8Array(32);

  add(start: number, end: number, mark: number): void {
    if (this.count === this.starts.length) {
      const grown = this.count * 2;
      const starts = new Int32Array(grown);
      const ends = new Int32Array(grown);
      const marks = new Uint8Array(grown);
      starts.set(this.starts);
      ends.set(this.ends);
      marks.set(this.marks);
      this.starts = starts;
      this.ends = ends;
      this.marks = marks;
    }
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.marks[this.count] = mark;
    this.count++;
  }
}

/**
 * Whether the statement in `bytes[from, to)` has a shape; when it does, `spans` holds its
 * literals, in order. The shape is the text with each literal replaced by its mark (shapeText).
 */
export function findShape(
  bytes: Uint8Array,
  from: number,
  to: number,
  spans: LiteralSpans,
): boolean {
  spans.count = 0;
  let i = from;
  while (i < to && isSpace(bytes[i]!)) i++;
  const verbStart = i;
  while (i < to && isLetter(bytes[i]!)) i++;
  if (!isShapedVerb(bytes, verbStart, i)) return false;
  /** The last byte before `i` that is not a space. */
  let significant = -1;
  while (i < to) {
    const code = bytes[i]!;
    if (code >= 0x80 || code === BACKSLASH || code === DOUBLE_QUOTE || code === HASH) return false;
    if (code < SPACE && !isSpace(code)) return false;
    if (isSpace(code)) {
      i++;
      continue;
    }
    const next = i + 1 < to ? bytes[i + 1]! : -1;
    if ((code === MINUS && next === MINUS) || (code === SLASH && next === STAR)) return false;
    if ((code === UPPER_X || code === LOWER_X) && next === SINGLE_QUOTE) {
      // X'0aff': an even number of hex digits (the server refuses an odd one); not a quoted
      // name's part (`@X'…'`, `t.X'…'`).
      if (significant === DOT || significant === AT) return false;
      let close = i + 2;
      while (close < to && isHexDigit(bytes[close]!)) close++;
      if (close === to || bytes[close] !== SINGLE_QUOTE || (close - i) % 2 !== 0) return false;
      if (close + 1 < to && extendsLiteral(bytes[close + 1]!)) return false;
      spans.add(i, close + 1, HEX_MARK);
      i = close + 1;
      significant = SINGLE_QUOTE;
      continue;
    }
    if (isLetter(code) || code === UNDERSCORE || code === DOLLAR) {
      // A name or a keyword, digits in it included.
      i++;
      while (i < to && isNameByte(bytes[i]!)) i++;
      if (i < to && bytes[i] === SINGLE_QUOTE) return false;
      significant = bytes[i - 1]!;
      continue;
    }
    if (isDigit(code)) {
      if (significant === DOT || significant === AT) return false;
      if (code === DIGIT_0 && next === LOWER_X) {
        // 0x0aff: hex digits, at least one, then no more of a name.
        let end = i + 2;
        while (end < to && isHexDigit(bytes[end]!)) end++;
        if (end === i + 2 || (end < to && extendsLiteral(bytes[end]!))) return false;
        spans.add(i, end, HEX_MARK);
        i = end;
        significant = DIGIT_0;
        continue;
      }
      let end = i + 1;
      while (end < to && isDigit(bytes[end]!)) end++;
      if (end < to) {
        const after = bytes[end]!;
        if (isNameByte(after) || after === DOT || after === SINGLE_QUOTE) return false;
      }
      spans.add(i, end, NUMBER_MARK);
      i = end;
      significant = DIGIT_0;
      continue;
    }
    if (code === SINGLE_QUOTE) {
      let close = i + 1;
      while (close < to && bytes[close] !== SINGLE_QUOTE) {
        // Its content is not looked at, but must hold no byte that has no shape.
        const inside = bytes[close]!;
        if (inside >= 0x80 || inside === BACKSLASH || (inside < SPACE && !isSpace(inside)))
          return false;
        close++;
      }
      if (close === to || (close + 1 < to && bytes[close + 1] === SINGLE_QUOTE)) return false;
      spans.add(i, close + 1, STRING_MARK);
      i = close + 1;
      significant = SINGLE_QUOTE;
      continue;
    }
    if (code === BACKTICK) {
      // A quoted name, kept as it is; a doubled backtick continues it.
      let close = i + 1;
      for (;;) {
        while (close < to && bytes[close] !== BACKTICK) {
          const inside = bytes[close]!;
          if (inside >= 0x80 || (inside < SPACE && !isSpace(inside))) return false;
          close++;
        }
        if (close + 1 < to && bytes[close + 1] === BACKTICK) close += 2;
        else break;
      }
      if (close >= to) return false;
      i = close + 1;
      significant = BACKTICK;
      continue;
    }
    significant = code;
    i++;
  }
  return true;
}

/** The index among `spans` of the literal (a number, or a string with its quotes) at `at`, or -1. */
export function literalSpanAt(spans: LiteralSpans, at: number): number {
  for (let span = 0; span < spans.count; span++) if (spans.starts[span] === at) return span;
  return -1;
}

/** FNV-1a step. */
function mix(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193);
}

/** The hash of the shape findShape found (hashText of its text, with no text built). */
export function shapeHash(
  bytes: Uint8Array,
  from: number,
  to: number,
  spans: LiteralSpans,
): number {
  let hash = 0x811c9dc5;
  let at = from;
  for (let span = 0; span < spans.count; span++) {
    for (const start = spans.starts[span]!; at < start; at++) hash = mix(hash, bytes[at]!);
    hash = mix(hash, spans.marks[span]!);
    at = spans.ends[span]!;
  }
  for (; at < to; at++) hash = mix(hash, bytes[at]!);
  return hash >>> 0;
}

/**
 * FNV-1a over a Latin-1 text's characters, which are its bytes: a shape's hash, and the hash the
 * statement memo takes of a text's bytes.
 */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < text.length; at++) hash = mix(hash, text.charCodeAt(at));
  return hash >>> 0;
}

/** Is `shape` the shape findShape found (compared with no text built)? */
export function matchesShape(
  bytes: Uint8Array,
  from: number,
  to: number,
  spans: LiteralSpans,
  shape: string,
): boolean {
  let at = from;
  let position = 0;
  for (let span = 0; span < spans.count; span++) {
    for (const start = spans.starts[span]!; at < start; at++, position++) {
      if (shape.charCodeAt(position) !== bytes[at]) return false;
    }
    if (shape.charCodeAt(position++) !== spans.marks[span]) return false;
    at = spans.ends[span]!;
  }
  if (shape.length - position !== to - at) return false;
  for (; at < to; at++, position++) if (shape.charCodeAt(position) !== bytes[at]) return false;
  return true;
}

/** The text of the shape findShape found. */
export function shapeText(
  bytes: Uint8Array,
  from: number,
  to: number,
  spans: LiteralSpans,
): string {
  let shape = '';
  let at = from;
  for (let span = 0; span < spans.count; span++) {
    shape += latin1(bytes, at, spans.starts[span]!) + String.fromCharCode(spans.marks[span]!);
    at = spans.ends[span]!;
  }
  return shape + latin1(bytes, at, to);
}

function latin1(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1');
}

/** shapeOf's spans, reused: it runs to its end before it is called again. */
const scratchSpans = new LiteralSpans();

/** The shape of `sql` (Latin-1: one character a byte), or null when it has none. */
export function shapeOf(sql: string): string | null {
  // A character beyond Latin-1 would lose its high byte in the copy below: it has no shape.
  for (let at = 0; at < sql.length; at++) if (sql.charCodeAt(at) >= 0x80) return null;
  const bytes = Buffer.from(sql, 'latin1');
  const spans = scratchSpans;
  return findShape(bytes, 0, bytes.length, spans) ? shapeText(bytes, 0, bytes.length, spans) : null;
}

/**
 * The text the cache keys a shaped statement by: the statement without the spaces around it and
 * its trailing semicolons, as the classifier gives it for a text with no comment.
 */
export function shapedKeyText(sql: string): string {
  let start = 0;
  while (start < sql.length && isSpace(sql.charCodeAt(start))) start++;
  let end = sql.length;
  for (;;) {
    const code = sql.charCodeAt(end - 1);
    if (end > start && (isSpace(code) || code === SEMICOLON)) end--;
    else break;
  }
  return sql.slice(start, end);
}

/** shapedKeyText of the statement in `bytes[from, to)`: the one string a shaped text needs. */
export function shapedKeyTextOf(bytes: Buffer, from: number, to: number): string {
  let start = from;
  while (start < to && isSpace(bytes[start]!)) start++;
  let end = to;
  while (end > start && (isSpace(bytes[end - 1]!) || bytes[end - 1] === SEMICOLON)) end--;
  return bytes.toString('latin1', start, end);
}
