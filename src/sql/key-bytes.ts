/**
 * Values of a point key's column of bytes (BINARY or VARBINARY: binary UUIDs, hashes, tokens),
 * and the name of the row such a value names (row-slots.ts).
 *
 * A binary column compares bytes, nothing else: no letter case, no pad space. So every value
 * whose bytes are known names exactly one row, and its name is its bytes in lowercase hex. A
 * BINARY(n) column stores a shorter value padded with zero bytes to n, and compares what it
 * holds with the value as given (`id = 'ab'` finds no row of a BINARY(4) column, `id =
 * X'61620000'` finds the row stored by `'ab'`): a value's row is named by its bytes padded to n.
 * For a read shorter than n that names a row it can never find, which costs an extra miss at
 * most; for a write it names the row the server stores.
 *
 * The values whose bytes the text gives alike in every connection character set are a hex
 * literal (`X'0aff'`, `0x0aff`) and a quoted string of the characters key-text.ts allows (ASCII
 * letters, digits and `-_.:`, one byte each in every character set a client may use). A prepared
 * statement's parameter bound as a string type gives its bytes as sent. A number (`id = 5`
 * compares as numbers) and any other value names no row: a statement bounded by one is no point
 * access.
 */
import {
  DIGIT_0,
  DIGIT_9,
  LOWER_A,
  LOWER_F,
  LOWER_X,
  SINGLE_QUOTE,
  UPPER_A,
  UPPER_F,
  UPPER_X,
} from './char-codes.ts';

/** Longer values are not taken: the widest binary key column the metadata takes is this long. */
export const MAX_KEY_BYTES = 255;

/** The prefix of a hex literal's candidate value (Reader.candidate): `x` and its hex digits. */
export const HEX_VALUE = LOWER_X;

/** ASCII's letters differ from their capitals by this bit. */
const CASE_BIT = 0x20;

/** A hex digit's lowercase character code, or -1. */
function hexDigit(code: number): number {
  if ((code >= DIGIT_0 && code <= DIGIT_9) || (code >= LOWER_A && code <= LOWER_F)) return code;
  if (code >= UPPER_A && code <= UPPER_F) return code | CASE_BIT;
  return -1;
}

/**
 * The candidate value of the hex literal `text[start, end)`: `X'…'` or `x'…'` (an even number of
 * digits, as the server requires) or `0x…` (an odd number gets a leading zero, as the server
 * reads it), given as `x` followed by its digits in lowercase; null for any other token, or one
 * of more than MAX_KEY_BYTES bytes.
 */
export function hexLiteralValue(text: string, start: number, end: number): string | null {
  const first = text.charCodeAt(start);
  let from: number;
  let to = end;
  if ((first === UPPER_X || first === HEX_VALUE) && text.charCodeAt(start + 1) === SINGLE_QUOTE) {
    if (end - start < 3 || text.charCodeAt(end - 1) !== SINGLE_QUOTE) return null;
    from = start + 2;
    to = end - 1;
    if ((to - from) % 2 !== 0) return null;
  } else if (first === DIGIT_0 && text.charCodeAt(start + 1) === HEX_VALUE) {
    from = start + 2;
    if (to === from) return null;
  } else {
    return null;
  }
  if (to - from > 2 * MAX_KEY_BYTES) return null;
  let digits = (to - from) % 2 === 0 ? 'x' : 'x0';
  for (let i = from; i < to; i++) {
    const digit = hexDigit(text.charCodeAt(i));
    if (digit < 0) return null;
    digits += String.fromCharCode(digit);
  }
  return digits;
}

/**
 * The row name a candidate value (a quoted key text `'…`, or a hex literal `x…`, see
 * Reader.candidate) names in a column of at most `max` bytes, padded with zero bytes to `max`
 * when `fixed` (BINARY); null when it names none (a number, or a value longer than the column:
 * an INSERT of it fails, or stores it cut short).
 */
export function bytesRowName(value: string, max: number, fixed: boolean): string | null {
  const kind = value.charCodeAt(0);
  let hex: string;
  if (kind === HEX_VALUE) {
    hex = value.slice(1);
  } else if (kind === SINGLE_QUOTE) {
    hex = '';
    for (let i = 1; i < value.length; i++) hex += value.charCodeAt(i).toString(16).padStart(2, '0');
  } else {
    return null;
  }
  if (hex.length > 2 * max) return null;
  return fixed ? hex.padEnd(2 * max, '0') : hex;
}

/** The character codes of the hex digits, by value. */
export const HEX_CODES = Uint8Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));
