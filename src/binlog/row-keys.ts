/**
 * The primary key of each row a row event changed, read from the event itself, so that a write
 * made elsewhere (or through the proxy, seen again in the log) invalidates the rows it changed
 * rather than its whole table. What a table's rows look like comes from its table map: the
 * columns' types and metadata, and, when the server logs them (`binlog_row_metadata=FULL`), the
 * columns' names and the primary key. Without those the key cannot be told: the follower then
 * invalidates the table, as before.
 *
 * Every reader is bounds-checked and must account for every byte: a table map whose metadata or
 * a row event whose rows do not come out exactly at the end of the body is not trusted (null or
 * false), and its table is invalidated whole. Only keys of integers, of strings (CHAR,
 * VARCHAR: their row names, key-text.ts) and of bytes (BINARY, VARBINARY: their bytes in hex,
 * key-bytes.ts; told from strings by the collation the map gives each column) are read; any
 * other value is skipped by its length alone.
 * @see https://mariadb.com/kb/en/table_map_event/
 * @see https://mariadb.com/kb/en/rows_event_v1v2-rows_compressed_event_v1/
 */
import { keySignature } from '../cache/row-slots.ts';
import { KeyKind } from '../sql/point-access.ts';
import { ColumnType } from '../protocol/constants.ts';
import { foldStoredKeyText } from '../sql/key-text.ts';
import { EVENT_HEADER_LENGTH, EventType, inflateCompressed } from './binlog-events.ts';

/** The server's type codes (MYSQL_TYPE_*), as table maps give them. */
const T = ColumnType;

/** The byte width of the integer types a primary key of a point table can have. */
const INTEGER_WIDTH = new Map<number, number>([
  [T.TINY, 1],
  [T.SHORT, 2],
  [T.INT24, 3],
  [T.LONG, 4],
  [T.LONGLONG, 8],
]);

/** Optional metadata field types (binlog_row_metadata) this reader uses. */
const DEFAULT_CHARSET = 2;
const COLUMN_CHARSET = 3;
const COLUMN_NAME = 4;
const SIMPLE_PRIMARY_KEY = 8;
/** The collation of binary strings: a CHAR or VARCHAR of it is a BINARY or VARBINARY. */
const BINARY_COLLATION = 63;

/**
 * A key this large or larger is no point read's value (point-access.ts takes at most 15
 * digits): writing its row changes no point read but through "some row".
 */
export const UNREACHABLE_KEY = 1e15;

/** The shape of a table's rows, as its table map gives it. */
export interface TableColumns {
  types: Uint8Array;
  /** Each column's metadata as one number (see columnMetadata). */
  meta: Uint16Array;
  /**
   * The primary key when its columns are all integers, strings or bytes, one or several: their
   * indexes in the key's order, their names as the log spells them (lowercased, their
   * keySignature, as SchemaCatalog.rowWrite takes them), what each holds, and their byte widths
   * (an integer's; a BINARY's, which the log gives without its trailing zero bytes; 0 for any
   * other). Null without `binlog_row_metadata=FULL`, or for any other key.
   */
  key: { indexes: number[]; name: string; kinds: KeyKind[]; widths: number[] } | null;
  /** The map names its columns: the server logs `binlog_row_metadata=FULL`. */
  named: boolean;
}

/** A packed (length-encoded) integer at `at` within `end`, or null. */
function packedInt(bytes: Buffer, at: number, end: number): { value: number; end: number } | null {
  if (at >= end) return null;
  const first = bytes[at]!;
  if (first < 0xfb) return { value: first, end: at + 1 };
  const size = first === 0xfc ? 2 : first === 0xfd ? 3 : first === 0xfe ? 8 : 0;
  if (size === 0 || at + 1 + size > end) return null;
  const value = size === 8 ? Number(bytes.readBigUInt64LE(at + 1)) : bytes.readUIntLE(at + 1, size);
  return { value, end: at + 1 + size };
}

/**
 * One column's metadata from the table map's metadata block at `at`: its value and how many
 * bytes it took, or null for a type this reader does not know (the table is then not read).
 * The layouts are the server's (table_def): big-endian pairs for strings and decimals,
 * little-endian for VARCHAR and BIT.
 */
function columnMetadata(type: number, bytes: Buffer, at: number): [number, number] | null {
  switch (type) {
    case T.TINY:
    case T.SHORT:
    case T.LONG:
    case T.NULL:
    case T.TIMESTAMP:
    case T.LONGLONG:
    case T.INT24:
    case T.DATE:
    case T.TIME:
    case T.DATETIME:
    case T.YEAR:
    case T.NEWDATE:
      return [0, 0];
    case T.FLOAT:
    case T.DOUBLE:
    case T.TIMESTAMP2:
    case T.DATETIME2:
    case T.TIME2:
    case T.JSON:
    case T.TINY_BLOB:
    case T.MEDIUM_BLOB:
    case T.LONG_BLOB:
    case T.BLOB:
    case T.GEOMETRY:
      return [bytes[at]!, 1];
    case T.VARCHAR:
    case T.BIT:
      return [bytes[at]! | (bytes[at + 1]! << 8), 2];
    case T.NEWDECIMAL:
    case T.ENUM:
    case T.SET:
    case T.STRING:
      return [(bytes[at]! << 8) | bytes[at + 1]!, 2];
    default:
      return null;
  }
}

/**
 * The columns of a table map event (bytes up to `bodyEnd`), or null when the event does not
 * come out exactly or names a type this reader does not know.
 */
export function readTableColumns(event: Buffer, bodyEnd: number): TableColumns | null {
  const body = event.subarray(0, bodyEnd);
  // Post-header: table id (6) and flags (2); the schema and table names, each with a length
  // byte before and a NUL after.
  let at = EVENT_HEADER_LENGTH + 8;
  if (at >= bodyEnd) return null;
  at += body[at]! + 2;
  if (at >= bodyEnd) return null;
  at += body[at]! + 2;
  const count = packedInt(body, at, bodyEnd);
  if (count === null || count.end + count.value > bodyEnd) return null;
  const types = Uint8Array.from(body.subarray(count.end, count.end + count.value));
  at = count.end + count.value;
  const metaLength = packedInt(body, at, bodyEnd);
  if (metaLength === null || metaLength.end + metaLength.value > bodyEnd) return null;
  const meta = new Uint16Array(types.length);
  let metaAt = metaLength.end;
  const metaEnd = metaAt + metaLength.value;
  for (let i = 0; i < types.length; i++) {
    const read = columnMetadata(types[i]!, body, metaAt);
    if (read === null) return null;
    meta[i] = read[0];
    metaAt += read[1];
    if (metaAt > metaEnd) return null;
  }
  if (metaAt !== metaEnd) return null;
  // The columns' NULL-ability bitmap, then the optional metadata to the end.
  at = metaEnd + ((types.length + 7) >> 3);
  if (at > bodyEnd) return null;
  let names: string[] | null = null;
  let primaryKey: number[] | null = null;
  let collations: Int32Array | null = null;
  while (at < bodyEnd) {
    const fieldType = body[at]!;
    const length = packedInt(body, at + 1, bodyEnd);
    if (length === null || length.end + length.value > bodyEnd) return null;
    const fieldEnd = length.end + length.value;
    if (fieldType === COLUMN_NAME) names = readNames(body, length.end, fieldEnd);
    else if (fieldType === SIMPLE_PRIMARY_KEY) primaryKey = readIndexes(body, length.end, fieldEnd);
    else if (fieldType === DEFAULT_CHARSET || fieldType === COLUMN_CHARSET) {
      collations = readCollations(types, meta, body, length.end, fieldEnd, fieldType);
    }
    at = fieldEnd;
  }
  return {
    types,
    meta,
    key: pointKey(types, meta, names, primaryKey, collations),
    named: names !== null,
  };
}

/**
 * Does a column of `type` and `meta` have a collation in DEFAULT_CHARSET or COLUMN_CHARSET? The
 * server's character columns: CHAR, VARCHAR and the BLOB and TEXT types, binary ones included;
 * not ENUM and SET (logged as CHAR, with their own fields).
 */
function isCharacterColumn(type: number, meta: number): boolean {
  switch (type) {
    case T.VARCHAR:
    case T.VAR_STRING:
    case T.TINY_BLOB:
    case T.MEDIUM_BLOB:
    case T.LONG_BLOB:
    case T.BLOB:
      return true;
    case T.STRING:
      return stringRealType(meta) === T.STRING;
    default:
      return false;
  }
}

/**
 * The real type of a STRING column (CHAR, ENUM or SET) from its metadata: the first byte, where
 * a CHAR of more than 255 bytes keeps the two high bits of its length inverted (0x30).
 */
function stringRealType(meta: number): number {
  return (meta >> 8) | 0x30;
}

/**
 * Each column's collation id from a DEFAULT_CHARSET field (the default, then the character
 * columns that differ from it, each its index among them and its collation) or a COLUMN_CHARSET
 * one (every character column's, in order), -1 for a column with none; null when the field does
 * not come out exactly, or names more character columns than the map has.
 */
function readCollations(
  types: Uint8Array,
  meta: Uint16Array,
  body: Buffer,
  from: number,
  end: number,
  fieldType: number,
): Int32Array | null {
  const characterColumns: number[] = [];
  for (let i = 0; i < types.length; i++) {
    if (isCharacterColumn(types[i]!, meta[i]!)) characterColumns.push(i);
  }
  const collations = new Int32Array(types.length).fill(-1);
  let at = from;
  if (fieldType === DEFAULT_CHARSET) {
    const fallback = packedInt(body, at, end);
    if (fallback === null) return null;
    for (const column of characterColumns) collations[column] = fallback.value;
    at = fallback.end;
    while (at < end) {
      const index = packedInt(body, at, end);
      if (index === null || index.value >= characterColumns.length) return null;
      const collation = packedInt(body, index.end, end);
      if (collation === null) return null;
      collations[characterColumns[index.value]!] = collation.value;
      at = collation.end;
    }
    return at === end ? collations : null;
  }
  for (const column of characterColumns) {
    const collation = packedInt(body, at, end);
    if (collation === null) return null;
    collations[column] = collation.value;
    at = collation.end;
  }
  return at === end ? collations : null;
}

/**
 * The primary key of TableColumns, when the map names the columns and the key's are integers,
 * strings or bytes (VARCHAR, or CHAR: a STRING whose real type is no ENUM or SET; of the binary
 * collation, VARBINARY and BINARY). A string column's character set is not known but for being
 * binary or not: SchemaCatalog.rowWrite takes the key only when the metadata's is the same,
 * whose string columns are of character sets key-text.ts reads. Without the columns' collations
 * a BINARY or VARBINARY column is taken for a string, and its key never matches the
 * metadata's of bytes: its writes are then the whole table's.
 */
function pointKey(
  types: Uint8Array,
  meta: Uint16Array,
  names: string[] | null,
  primaryKey: number[] | null,
  collations: Int32Array | null,
): TableColumns['key'] {
  if (names === null || names.length !== types.length || primaryKey === null) return null;
  if (primaryKey.length === 0) return null;
  const kinds: KeyKind[] = [];
  const widths: number[] = [];
  for (const index of primaryKey) {
    if (primaryKey.indexOf(index) !== widths.length) return null;
    const type = types[index] ?? -1;
    const columnMeta = meta[index]!;
    if (type === T.VARCHAR || (type === T.STRING && stringRealType(columnMeta) === T.STRING)) {
      const binary = collations?.[index] === BINARY_COLLATION;
      const fixed = binary && type === T.STRING;
      kinds.push(binary ? (fixed ? KeyKind.FIXED_BYTES : KeyKind.BYTES) : KeyKind.TEXT);
      widths.push(fixed ? stringMaxLength(type, columnMeta) : 0);
      continue;
    }
    const width = INTEGER_WIDTH.get(type);
    if (width === undefined) return null;
    kinds.push(KeyKind.INTEGER);
    widths.push(width);
  }
  const name = keySignature(
    primaryKey.map((index) => names[index]!.toLowerCase()),
    kinds,
  );
  return { indexes: primaryKey, name, kinds, widths };
}

/** COLUMN_NAME: each name a packed length and its bytes (UTF-8, read as the metadata's form). */
function readNames(body: Buffer, from: number, end: number): string[] | null {
  const names: string[] = [];
  let at = from;
  while (at < end) {
    const length = packedInt(body, at, end);
    if (length === null || length.end + length.value > end) return null;
    names.push(body.toString('latin1', length.end, length.end + length.value));
    at = length.end + length.value;
  }
  return names;
}

/** SIMPLE_PRIMARY_KEY: the key's column indexes, each a packed integer. */
function readIndexes(body: Buffer, from: number, end: number): number[] | null {
  const indexes: number[] = [];
  let at = from;
  while (at < end) {
    const index = packedInt(body, at, end);
    if (index === null) return null;
    indexes.push(index.value);
    at = index.end;
  }
  return indexes;
}

/** DECIMAL's bytes for 0–9 leftover digits (the server's dig2bytes). */
const DECIMAL_DIGIT_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

function decimalLength(precision: number, scale: number): number {
  const whole = precision - scale;
  return (
    ((whole / 9) | 0) * 4 +
    DECIMAL_DIGIT_BYTES[whole % 9]! +
    ((scale / 9) | 0) * 4 +
    DECIMAL_DIGIT_BYTES[scale % 9]!
  );
}

/** A little-endian length of `size` bytes at `at`, or -1 past `end`. */
function lengthPrefix(body: Buffer, at: number, size: number, end: number): number {
  if (size < 1 || size > 4 || at + size > end) return -1;
  return size + body.readUIntLE(at, size);
}

/**
 * How many bytes the value of a column of `type` and `meta` at `at` takes in a row image (the
 * server's calc_field_size); -1 when it cannot be told.
 */
function valueLength(type: number, meta: number, body: Buffer, at: number, end: number): number {
  switch (type) {
    case T.TINY:
    case T.YEAR:
      return 1;
    case T.SHORT:
      return 2;
    case T.INT24:
    case T.DATE:
    case T.NEWDATE:
    case T.TIME:
      return 3;
    case T.LONG:
    case T.TIMESTAMP:
      return 4;
    case T.LONGLONG:
    case T.DATETIME:
      return 8;
    case T.NULL:
      return 0;
    case T.FLOAT:
    case T.DOUBLE:
      return meta;
    case T.TIMESTAMP2:
      return 4 + ((meta + 1) >> 1);
    case T.DATETIME2:
      return 5 + ((meta + 1) >> 1);
    case T.TIME2:
      return 3 + ((meta + 1) >> 1);
    case T.NEWDECIMAL:
      return decimalLength(meta >> 8, meta & 0xff);
    case T.BIT:
      return (meta >> 8) + ((meta & 0xff) > 0 ? 1 : 0);
    case T.VARCHAR:
      return lengthPrefix(body, at, stringPrefix(type, meta), end);
    case T.JSON:
    case T.TINY_BLOB:
    case T.MEDIUM_BLOB:
    case T.LONG_BLOB:
    case T.BLOB:
    case T.GEOMETRY:
      return lengthPrefix(body, at, meta, end);
    case T.ENUM:
    case T.SET:
      return meta & 0xff;
    case T.STRING: {
      const real = stringRealType(meta);
      if (real === T.ENUM || real === T.SET) return meta & 0xff;
      return lengthPrefix(body, at, stringPrefix(type, meta), end);
    }
    default:
      return -1;
  }
}

/**
 * How many bytes the length of a VARCHAR's or a CHAR's (a STRING's) value takes: two when the
 * column's most bytes are more than 255.
 */
function stringPrefix(type: number, meta: number): number {
  return stringMaxLength(type, meta) > 255 ? 2 : 1;
}

/** The most bytes a VARCHAR's or a CHAR's (a STRING's) value holds. */
function stringMaxLength(type: number, meta: number): number {
  // A CHAR's byte length keeps its two high bits in the real type's byte, inverted.
  return type === T.VARCHAR ? meta : (((meta >> 4) & 0x300) ^ 0x300) + (meta & 0xff);
}

/** The number of set bits of the bitmap of `columns` bits at `at`. */
function countBits(body: Buffer, at: number, columns: number): number {
  let count = 0;
  for (let i = 0; i < columns; i++) if ((body[at + (i >> 3)]! & (1 << (i & 7))) !== 0) count++;
  return count;
}

function isSet(body: Buffer, at: number, bit: number): boolean {
  return (body[at + (bit >> 3)]! & (1 << (bit & 7))) !== 0;
}

/**
 * Where a row image read by readImage ended, and the key found in it: each key column's value
 * in the key's order (`keys`: an integer, or a string column's row name), how many of them the
 * image holds (`found`; a MINIMAL after image holds only the columns it changed), and whether
 * a string among them names no row (`unnamed`, key-text.ts).
 */
const image = { end: 0, keys: [] as Array<number | string>, found: 0, unnamed: false };

/**
 * One row image from `at`: the NULL bitmap of its present columns, then their values. Sets
 * `image` (its `keys` keep the values the image does not hold); false when it runs past `end`
 * or a value's length cannot be told.
 */
function readImage(
  body: Buffer,
  at: number,
  end: number,
  columns: TableColumns,
  present: number,
): boolean {
  const { types, meta } = columns;
  const count = types.length;
  const keyIndexes = columns.key!.indexes;
  const keyKinds = columns.key!.kinds;
  const keyWidths = columns.key!.widths;
  const nulls = at;
  let nullBit = 0;
  at += (countBits(body, present, count) + 7) >> 3;
  if (at > end) return false;
  image.found = 0;
  image.unnamed = false;
  for (let i = 0; i < count; i++) {
    if (!isSet(body, present, i)) continue;
    if (isSet(body, nulls, nullBit++)) continue;
    const length = valueLength(types[i]!, meta[i]!, body, at, end);
    if (length < 0 || at + length > end) return false;
    const part = keyIndexes.length === 1 ? (i === keyIndexes[0] ? 0 : -1) : keyIndexes.indexOf(i);
    if (part >= 0) {
      const kind = keyKinds[part]!;
      if (kind === KeyKind.INTEGER) {
        image.keys[part] = keyValue(body, at, length);
      } else {
        // A string's length prefix, then its bytes (valueLength counted both).
        const from = at + stringPrefix(types[i]!, meta[i]!);
        if (kind === KeyKind.TEXT) {
          const name = foldStoredKeyText(body, from, at + length);
          if (name === null) image.unnamed = true;
          else image.keys[part] = name;
        } else {
          image.keys[part] = storedBytesName(body, from, at + length, keyWidths[part]!);
        }
      }
      image.found++;
    }
    at += length;
  }
  image.end = at;
  return true;
}

/**
 * The row name of a key of bytes stored as `body[from, to)`: its bytes in hex (key-bytes.ts),
 * padded with zero bytes to `padTo` (a BINARY's width: the log leaves its trailing zeros out).
 */
function storedBytesName(body: Buffer, from: number, to: number, padTo: number): string {
  const hex = body.toString('hex', from, to);
  return padTo > to - from ? hex.padEnd(2 * padTo, '0') : hex;
}

/** An integer key of `width` bytes, read unsigned: UNREACHABLE_KEY when at least that large. */
function keyValue(body: Buffer, at: number, width: number): number {
  // Signed or not, the unsigned reading is the value or a number no point read can hold (a
  // negative key reads as 2^(8·width) plus it, beyond the column's signed range): marking its
  // row is harmless, and the signedness need not be known.
  if (width < 8) return body.readUIntLE(at, width);
  const high = body.readUInt32LE(at + 4);
  const value = high * 2 ** 32 + body.readUInt32LE(at);
  return high >= 2 ** 21 || value >= UNREACHABLE_KEY ? UNREACHABLE_KEY : value;
}

/**
 * The keys of the rows a row event (`type`, bytes up to `bodyEnd`) changed, pushed onto `keys`:
 * an inserted row's, a deleted row's, an updated row's before and (when it changed) after; a
 * key of several columns as its values in the key's order, one after the other. A key with a
 * value of UNREACHABLE_KEY or more is left out. False when the event cannot be read to its end,
 * or a row's key is missing: the table must then be invalidated whole.
 */
export function readRowKeys(
  event: Buffer,
  type: number,
  bodyEnd: number,
  columns: TableColumns,
  keys: Array<number | string>,
): boolean {
  if (columns.key === null) return false;
  let body = event.subarray(0, bodyEnd);
  // MariaDB's compressed row events (log_bin_compress) are laid out as the others, their rows
  // compressed after the column bitmaps.
  const compressed =
    type >= EventType.WRITE_ROWS_COMPRESSED_V1 && type <= EventType.DELETE_ROWS_COMPRESSED;
  const v2 =
    (type >= EventType.WRITE_ROWS_V2 && type <= EventType.DELETE_ROWS_V2) ||
    (type >= EventType.WRITE_ROWS_COMPRESSED && type <= EventType.DELETE_ROWS_COMPRESSED);
  const update =
    type === EventType.UPDATE_ROWS_V1 ||
    type === EventType.UPDATE_ROWS_V2 ||
    type === EventType.UPDATE_ROWS_COMPRESSED_V1 ||
    type === EventType.UPDATE_ROWS_COMPRESSED;
  if (!v2 && !compressed && !(type >= EventType.WRITE_ROWS_V1 && type <= EventType.DELETE_ROWS_V1))
    return false;
  // Post-header: table id (6), flags (2); a v2 event then has extra data, its length first
  // (counting itself).
  let at = EVENT_HEADER_LENGTH + 8;
  if (v2) {
    if (at + 2 > bodyEnd) return false;
    const extra = body.readUInt16LE(at);
    if (extra < 2) return false;
    at += extra;
  }
  const count = packedInt(body, at, bodyEnd);
  if (count === null || count.value !== columns.types.length) return false;
  const bitmapLength = (count.value + 7) >> 3;
  const before = count.end;
  const after = update ? before + bitmapLength : before;
  at = after + bitmapLength;
  if (at > bodyEnd) return false;
  if (compressed) {
    // The rows inflated, after the event's own bytes up to them (the bitmaps are read there).
    const rows = inflateCompressed(body.subarray(at));
    if (rows === null) return false;
    body = Buffer.concat([body.subarray(0, at), rows]);
    bodyEnd = body.length;
  }
  const width = columns.key.indexes.length;
  const key = image.keys;
  while (at < bodyEnd) {
    if (!readImage(body, at, bodyEnd, columns, before) || image.unnamed) return false;
    at = image.end;
    if (image.found !== width) return false;
    pushKey(keys, key, width);
    if (!update) continue;
    // The after image's values overwrite the before image's in `key`: a value absent from it
    // (binlog_row_image=MINIMAL) did not change.
    const from = keys.length;
    let same = true;
    for (let part = 0; part < width; part++) keys.push(key[part]!);
    if (!readImage(body, at, bodyEnd, columns, after) || image.unnamed) return false;
    at = image.end;
    for (let part = 0; part < width; part++) same &&= key[part] === keys[from + part];
    keys.length = from;
    if (!same) pushKey(keys, key, width);
  }
  return at === bodyEnd;
}

/** Pushes the `width` values of `key` onto `keys`, unless an integer is UNREACHABLE_KEY or more. */
function pushKey(
  keys: Array<number | string>,
  key: ReadonlyArray<number | string>,
  width: number,
): void {
  for (let part = 0; part < width; part++) {
    const value = key[part]!;
    if (typeof value === 'number' && value >= UNREACHABLE_KEY) return;
  }
  for (let part = 0; part < width; part++) keys.push(key[part]!);
}
