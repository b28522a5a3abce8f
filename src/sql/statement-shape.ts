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
 *   and is not followed by a letter, a digit, `_`, `$` or a dot (else `1e5`, `0x1F`, `1.5`,
 *   `1abc` or `t.1` would be taken apart: such a text has no shape), or a single-quoted string
 *   with no doubled quote and no name right before it (not `X'0F'`, `_utf8'a'`);
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
  UPPER_Z,
  isDigit,
} from './char-codes.ts';

/** Stands for a number literal in a shape (a byte no shaped text holds). */
const NUMBER_MARK = '\u0001';
/** Stands for a string literal in a shape. */
const STRING_MARK = '\u0002';

const LINE_FEED = 10;

/** The statement kinds whose facts a shape carries from one text to another. */
const SHAPED_VERBS = new Set(['select', 'insert', 'update', 'delete', 'replace']);

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

/** The shape of `sql` (Latin-1: one character a byte), or null when it has none. */
export function shapeOf(sql: string): string | null {
  const length = sql.length;
  let i = 0;
  while (i < length && isSpace(sql.charCodeAt(i))) i++;
  const verbStart = i;
  while (i < length && isLetter(sql.charCodeAt(i))) i++;
  if (!SHAPED_VERBS.has(sql.slice(verbStart, i).toLowerCase())) return null;
  let shape = '';
  /** Where the text not yet put in the shape starts. */
  let copied = 0;
  /** The last byte before `i` that is not a space. */
  let significant = -1;
  while (i < length) {
    const code = sql.charCodeAt(i);
    if (code >= 0x80 || code === BACKSLASH || code === DOUBLE_QUOTE || code === HASH) return null;
    if (code < SPACE && !isSpace(code)) return null;
    if (isSpace(code)) {
      i++;
      continue;
    }
    const next = i + 1 < length ? sql.charCodeAt(i + 1) : -1;
    if ((code === MINUS && next === MINUS) || (code === SLASH && next === STAR)) return null;
    if (isLetter(code) || code === UNDERSCORE || code === DOLLAR) {
      // A name or a keyword, digits in it included.
      i++;
      while (i < length && isNameByte(sql.charCodeAt(i))) i++;
      if (i < length && sql.charCodeAt(i) === SINGLE_QUOTE) return null;
      significant = sql.charCodeAt(i - 1);
      continue;
    }
    if (isDigit(code)) {
      if (significant === DOT || significant === AT) return null;
      let end = i + 1;
      while (end < length && isDigit(sql.charCodeAt(end))) end++;
      if (end < length) {
        const after = sql.charCodeAt(end);
        if (isNameByte(after) || after === DOT || after === SINGLE_QUOTE) return null;
      }
      shape += sql.slice(copied, i) + NUMBER_MARK;
      copied = i = end;
      significant = DIGIT_0;
      continue;
    }
    if (code === SINGLE_QUOTE) {
      const close = sql.indexOf("'", i + 1);
      if (close === -1 || sql.charCodeAt(close + 1) === SINGLE_QUOTE) return null;
      // Its content is not looked at, but must hold no byte that has no shape.
      for (let at = i + 1; at < close; at++) {
        const inside = sql.charCodeAt(at);
        if (inside >= 0x80 || inside === BACKSLASH || (inside < SPACE && !isSpace(inside)))
          return null;
      }
      shape += sql.slice(copied, i) + STRING_MARK;
      copied = i = close + 1;
      significant = SINGLE_QUOTE;
      continue;
    }
    if (code === BACKTICK) {
      // A quoted name, kept as it is; a doubled backtick continues it.
      let close = sql.indexOf('`', i + 1);
      while (close !== -1 && sql.charCodeAt(close + 1) === BACKTICK)
        close = sql.indexOf('`', close + 2);
      if (close === -1) return null;
      for (let at = i + 1; at < close; at++) {
        const inside = sql.charCodeAt(at);
        if (inside >= 0x80 || (inside < SPACE && !isSpace(inside))) return null;
      }
      i = close + 1;
      significant = BACKTICK;
      continue;
    }
    significant = code;
    i++;
  }
  return shape + sql.slice(copied);
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
