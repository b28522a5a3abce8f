/**
 * The registry names of a point table's rows (see SchemaCatalog): one per value of its point
 * key (the values of a key of several columns in the key's order, a comma between), hashed into the registry's slots with every other name, as tables are (two sharing a
 * slot only cost an extra miss), and one for "some row", which every write of a row marks and
 * every read that is not bounded to one row depends on, and one for "new rows", which an INSERT
 * that only adds rows marks (with "some row") and a point read that found no row depends on.
 * A NUL byte is in no table's name.
 */
import { HEX_CODES } from '../sql/key-bytes.ts';
import { keyTextCode } from '../sql/key-text.ts';
import type { KeyKind } from '../sql/point-access.ts';
import { NAME_HASH_START, nameHash, nameHashOf } from './invalidation-registry.ts';

/**
 * The name of the row of `table` whose point key is `value`: its digits (an integer key's) or
 * its characters folded (a string key's, foldKeyText), or for a key of several columns each
 * column's in the key's order with a comma between (rowKeyValue).
 */
export function rowSlotName(table: string, value: string): string {
  return `${table}\u0000=${value}`;
}

/**
 * The value rowSlotName takes for a key of several columns: their digits (an integer column's)
 * or row names (a string column's, foldKeyText), in the key's order.
 */
export function rowKeyValue(values: readonly string[]): string {
  return values.join(',');
}

/** The name of "some row" of `table`. */
export function someRowName(table: string): string {
  return `${table}\u0000*`;
}

/** The name of "new rows" of `table`: rows added where there was none with their key. */
export function newRowsName(table: string): string {
  return `${table}\u0000+`;
}

/** The hash of `table`'s row names up to the value: rowHashOf continues it. */
export function rowNameHash(table: string): number {
  return nameHash(NAME_HASH_START, rowSlotName(table, ''));
}

/** The digits of a value, least significant first (one thread per worker). */
const digits = new Uint8Array(16);

/**
 * The hash of rowSlotName(table, the digits of `value`) from `rowHash` (rowNameHash(table)),
 * without making a string: `value` a whole number of at most 15 digits.
 */
export function rowHashOf(rowHash: number, value: number): number {
  let count = 0;
  do {
    const digit = value % 10;
    digits[count++] = digit;
    value = (value - digit) / 10;
  } while (value > 0);
  let hash = rowHash;
  while (count > 0) hash = nameHashOf(hash, 0x30 + digits[--count]!);
  return hash;
}

/**
 * The hash of rowSlotName(table, the row name of the string value `bytes[start, end)`) from
 * `rowHash` (rowNameHash(table)), without making a string: its characters folded
 * (key-text.ts). The value must be one that names a row (isKeyTextBytes).
 */
export function rowTextHashOf(rowHash: number, bytes: Buffer, start: number, end: number): number {
  let hash = rowHash;
  for (let i = start; i < end; i++) {
    const code = keyTextCode(bytes[i]!);
    if (code > 0) hash = nameHashOf(hash, code);
  }
  return hash;
}

/**
 * The hash of rowSlotName(table, the row name of the bytes `bytes[start, end)` in a column of
 * bytes, padded with zero bytes to `padTo` bytes) from `rowHash` (rowNameHash(table)), without
 * making a string: its bytes in lowercase hex (key-bytes.ts). At most `padTo` bytes, or any
 * number when `padTo` is 0.
 */
export function rowBytesHashOf(
  rowHash: number,
  bytes: Buffer,
  start: number,
  end: number,
  padTo: number,
): number {
  let hash = rowHash;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    hash = nameHashOf(nameHashOf(hash, HEX_CODES[byte >>> 4]!), HEX_CODES[byte & 15]!);
  }
  for (let i = end - start; i < padTo; i++) {
    hash = nameHashOf(nameHashOf(hash, HEX_CODES[0]!), HEX_CODES[0]!);
  }
  return hash;
}

/** The separator of a key of several columns' values in a row's name (rowKeyValue). */
export const KEY_PART_SEPARATOR = 0x2c;

/**
 * The hash of rowSlotName(table, rowKeyValue(`values[from, from + width)`)) from `rowHash`
 * (rowNameHash(table)): a key of one column or several, its values in the key's order, a comma
 * between; an integer column's value as its digits, without making a string, a string
 * column's as its row name (foldKeyText).
 */
export function rowKeyHashOf(
  rowHash: number,
  values: ArrayLike<number | string>,
  from: number,
  width: number,
): number {
  let hash = rowHash;
  for (let part = 0; part < width; part++) {
    if (part > 0) hash = nameHashOf(hash, KEY_PART_SEPARATOR);
    hash = rowValueHashOf(hash, values[from + part]!);
  }
  return hash;
}

/**
 * rowHashOf of an integer column's value, or of a string column's row name (foldKeyText, a
 * string): the hash of the value's part of a row's name, continuing `hash`.
 */
export function rowValueHashOf(hash: number, value: number | string): number {
  return typeof value === 'number' ? rowHashOf(hash, value) : nameHash(hash, value);
}

/** What follows a column's name in a key's signature, by what it holds (KeyKind's order). */
const KIND_MARKS = ['', "'", '#', '#'];

/**
 * What tells a point key apart from another of the same table (SchemaCatalog.rowWrite): its
 * columns in order, each string column's name followed by a quote, each column of bytes' by `#`.
 */
export function keySignature(columns: readonly string[], kinds: readonly KeyKind[]): string {
  return columns.map((column, index) => column + KIND_MARKS[kinds[index]!]!).join(',');
}
