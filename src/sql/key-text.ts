/**
 * String values of a point key's column (CHAR or VARCHAR): which values a statement, a prepared
 * execution or a binlog row may name a row by, and the name of that row (row-slots.ts).
 *
 * A column compares strings under its collation, which calls many spellings equal: `'abc'`,
 * `'ABC'`, `'abc  '` (PAD SPACE), and `'ábc'` under an accent-insensitive one. Every spelling
 * that names a row must give the row one name, or a write by one spelling would leave a read by
 * another stale. So only values of ASCII letters, digits and `-_.:` name a row, and a row's name
 * is the value folded: letters lowercased, `-_.:` dropped. Under every collation
 * keyTextCollation accepts, two such values the server calls equal fold alike (checked against
 * the server's own collations by test/integration/key-text-collations.test.ts): case is all its
 * collations tell apart among letters and digits, and dropping punctuation only ever makes more
 * values share a name, which costs extra misses, never a stale read. Any other value (a space
 * inside, a quote, a backslash, a byte past ASCII) names no row: a statement bounded by one is
 * no point access, and a binlog row holding one is a write of the whole table, since a folded
 * value's row may be among those its collation calls equal to it (`'ábc'` is `'abc'`).
 *
 * The characters allowed are the same byte in every character set a client may use (none of
 * the few 7-bit national sets remaps them), so a literal's or parameter's bytes are its
 * characters whatever the connection's character set.
 */
import {
  COLON,
  DIGIT_0,
  DIGIT_9,
  DOT,
  MINUS,
  SPACE,
  UNDERSCORE,
  UPPER_A,
  UPPER_Z,
} from './char-codes.ts';

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
/** ASCII's letters differ from their capitals by this bit. */
const CASE_BIT = 0x20;

/** Longer values are not taken: no key of a point table is that wide (see keyTextCollation). */
const MAX_KEY_TEXT = 255;

/**
 * What character `code` of a key value comes to in its row's name: itself for a lowercase letter
 * or a digit, the lowercase letter for a capital, 0 for punctuation that is dropped, -1 for a
 * character that names no row.
 */
export function keyTextCode(code: number): number {
  if ((code >= LOWER_A && code <= LOWER_Z) || (code >= DIGIT_0 && code <= DIGIT_9)) return code;
  if (code >= UPPER_A && code <= UPPER_Z) return code | CASE_BIT;
  return code === MINUS || code === UNDERSCORE || code === DOT || code === COLON ? 0 : -1;
}

/** Whether `text[start, end)` is a value that may name a row (see the module's comment). */
export function isKeyText(text: string, start: number, end: number): boolean {
  if (end - start > MAX_KEY_TEXT) return false;
  for (let i = start; i < end; i++) if (keyTextCode(text.charCodeAt(i)) < 0) return false;
  return true;
}

/** isKeyText of the bytes `bytes[start, end)` (a prepared statement's parameter). */
export function isKeyTextBytes(bytes: Buffer, start: number, end: number): boolean {
  if (end - start > MAX_KEY_TEXT) return false;
  for (let i = start; i < end; i++) if (keyTextCode(bytes[i]!) < 0) return false;
  return true;
}

/** The row name of the value `text[start, end)` (isKeyText): folded, see the module's comment. */
export function foldKeyText(text: string, start: number, end: number): string {
  let folded = '';
  for (let i = start; i < end; i++) {
    const code = keyTextCode(text.charCodeAt(i));
    if (code > 0) folded += String.fromCharCode(code);
  }
  return folded;
}

/**
 * foldKeyText of a value stored in a row (a binlog row image's bytes `bytes[start, end)`, in a
 * character set keyTextCollation accepts): its trailing spaces dropped first, as a PAD SPACE
 * collation drops them (a NO PAD one tells them apart, which sharing a name only costs a miss).
 * Null when it names no row.
 */
export function foldStoredKeyText(bytes: Buffer, start: number, end: number): string | null {
  while (end > start && bytes[end - 1] === SPACE) end--;
  if (!isKeyTextBytes(bytes, start, end)) return null;
  return foldKeyText(bytes.toString('latin1', start, end), 0, end - start);
}

/**
 * The character sets whose bytes below 0x80 are ASCII's, and how many bytes a character takes
 * at most.
 */
const KEY_TEXT_CHARSETS = new Map<string, number>([
  ['latin1', 1],
  ['ascii', 1],
  ['utf8', 3],
  ['utf8mb3', 3],
  ['utf8mb4', 4],
]);

/**
 * The collations of those character sets (the name after the character set's) under which the
 * folding is exact enough: case is all they tell apart among ASCII letters and digits. Not the
 * language-specific ones in general: `roman` takes `i` for `j` and `u` for `v`, `lithuanian`
 * `i` for `y`.
 */
const KEY_TEXT_COLLATIONS = new RegExp(
  '^(?:bin|nopad_bin|general_ci|general_nopad_ci|general_mysql500_ci|general_cs|' +
    'swedish_ci|swedish_nopad_ci|unicode_ci|unicode_nopad_ci|unicode_520_ci|' +
    'unicode_520_nopad_ci|uca1400_(?:nopad_)?a[is]_c[is])$',
);

/**
 * For a CHAR or VARCHAR key column of `collation` (its full name, `utf8mb4_general_ci`) holding
 * `bytes` bytes at most: how many characters it holds, or -1 when its values name no row here
 * (a character set or collation not known to fold as keyTextCode does).
 */
export function keyTextCollation(collation: string, bytes: number): number {
  const separator = collation.indexOf('_');
  if (separator < 0) return -1;
  const perCharacter = KEY_TEXT_CHARSETS.get(collation.slice(0, separator));
  if (perCharacter === undefined || !KEY_TEXT_COLLATIONS.test(collation.slice(separator + 1))) {
    return -1;
  }
  return Math.floor(bytes / perCharacter);
}
