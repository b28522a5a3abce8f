/**
 * The registry names of a point table's rows (see SchemaCatalog): one per value of its point
 * key (the values of a key of several columns in the key's order, a comma between), hashed into the registry's slots with every other name, as tables are (two sharing a
 * slot only cost an extra miss), and one for "some row", which every write of a row marks and
 * every read that is not bounded to one row depends on, and one for "new rows", which an INSERT
 * that only adds rows marks (with "some row") and a point read that found no row depends on.
 * A NUL byte is in no table's name.
 */
import { NAME_HASH_START, nameHash, nameHashOf } from './invalidation-registry.ts';

/**
 * The name of the row of `table` whose point key is `value`: its digits, or for a key of several
 * columns each column's digits in the key's order with a comma between (rowKeyValue).
 */
export function rowSlotName(table: string, value: string): string {
  return `${table}\u0000=${value}`;
}

/** The value rowSlotName takes for a key of several columns: their digits, in the key's order. */
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
 * The hash of rowSlotName(table, rowKeyValue(the digits of `values[from, from + width)`)) from
 * `rowHash` (rowNameHash(table)): a key of several columns, its values in the key's order, a
 * comma between; without making a string.
 */
export function rowKeyHashOf(
  rowHash: number,
  values: ArrayLike<number>,
  from: number,
  width: number,
): number {
  let hash = rowHashOf(rowHash, values[from]!);
  for (let part = 1; part < width; part++) {
    hash = rowHashOf(nameHashOf(hash, 0x2c), values[from + part]!);
  }
  return hash;
}
