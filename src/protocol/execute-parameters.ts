/**
 * One parameter of a COM_STMT_EXECUTE, read where it lies without decoding the others: the value
 * a prepared statement's `WHERE id = ?` is bounded to, for invalidating its results by row.
 * Everything is bounds-checked; whatever cannot be read as a plain non-negative integer is "no
 * value" (-1), and the caller then treats the execution as it treats any other.
 * @see https://mariadb.com/kb/en/com_stmt_execute/
 */
import { EXECUTE_HEADER_LENGTH } from './command-fields.ts';
import { ColumnType } from './constants.ts';
import { readLenencBytes, readLenencInt } from './lenenc.ts';

/** The binary protocol's parameter types (MYSQL_TYPE_*). */
const Type = ColumnType;

/** The unsigned flag of a parameter type's second byte. */
const UNSIGNED = 0x80;

/**
 * The largest value taken: 15 digits, as for a literal in a text (point-access.ts), so that a
 * value a double or a string carries converts to the same integer on the server.
 */
const MAX_VALUE = 999_999_999_999_999;

/** No value the caller can use. */
export const NO_INTEGER = -1;

/**
 * The value of parameter `index` of an execution whose parameters are `count` (null bitmap at
 * EXECUTE_HEADER_LENGTH), types the pairs of bytes in `types` from `typesAt`, values from
 * `valuesStart` in `payload`: a whole number from 0 to MAX_VALUE, as an integer type, a float or
 * double with no fraction, or a string or decimal of digits only (leading zeros allowed) carries
 * it; NO_INTEGER for NULL, anything else, or a packet cut short.
 */
export function integerParameter(
  payload: Buffer,
  count: number,
  types: Buffer,
  typesAt: number,
  valuesStart: number,
  index: number,
): number {
  const at = valueStart(payload, count, types, typesAt, valuesStart, index);
  if (at < 0) return NO_INTEGER;
  const type = types[typesAt + 2 * index]!;
  const unsigned = (types[typesAt + 2 * index + 1]! & UNSIGNED) !== 0;
  const end = payload.length;
  switch (type) {
    case Type.TINY:
      if (at + 1 > end) return NO_INTEGER;
      return unsigned ? payload[at]! : wholeNumber(payload.readInt8(at));
    case Type.SHORT:
      if (at + 2 > end) return NO_INTEGER;
      return unsigned ? payload.readUInt16LE(at) : wholeNumber(payload.readInt16LE(at));
    case Type.LONG:
    case Type.INT24:
      if (at + 4 > end) return NO_INTEGER;
      return unsigned ? payload.readUInt32LE(at) : wholeNumber(payload.readInt32LE(at));
    case Type.LONGLONG: {
      if (at + 8 > end) return NO_INTEGER;
      // Signed or not, a value below 2^50 has these high bits clear (a negative one has not).
      const high = payload.readUInt32LE(at + 4);
      if (high >= 0x40000) return NO_INTEGER;
      return wholeNumber(high * 0x1_0000_0000 + payload.readUInt32LE(at));
    }
    case Type.FLOAT:
      return at + 4 > end ? NO_INTEGER : wholeNumber(payload.readFloatLE(at));
    case Type.DOUBLE:
      return at + 8 > end ? NO_INTEGER : wholeNumber(payload.readDoubleLE(at));
    case Type.VARCHAR:
    case Type.DECIMAL:
    case Type.NEWDECIMAL:
    case 253: // VAR_STRING
    case 254: // STRING
      return digitsValue(payload, at);
    default:
      return NO_INTEGER;
  }
}

/** Where textParameter found a parameter's bytes (one per thread, rewritten by each call). */
export const textSpan = { start: 0, end: 0 };

/**
 * The bytes of parameter `index` (arguments as integerParameter's) when a string type carries
 * it (CHAR, VARCHAR, or a BLOB's, compared as bytes), set as `textSpan`; false for NULL, any
 * other type (a number is compared with a string column's values as a number) or a packet cut
 * short.
 */
export function textParameter(
  payload: Buffer,
  count: number,
  types: Buffer,
  typesAt: number,
  valuesStart: number,
  index: number,
): boolean {
  const at = valueStart(payload, count, types, typesAt, valuesStart, index);
  if (at < 0) return false;
  switch (types[typesAt + 2 * index]!) {
    case Type.VARCHAR:
    case 249: // TINY_BLOB
    case 250: // MEDIUM_BLOB
    case 251: // LONG_BLOB
    case 252: // BLOB
    case 253: // VAR_STRING
    case 254: /* STRING */ {
      const length = readLenencInt(payload, at);
      if (length === null || length.end + length.value > payload.length) return false;
      textSpan.start = length.end;
      textSpan.end = length.end + length.value;
      return true;
    }
    default:
      return false;
  }
}

/**
 * Where the value of parameter `index` starts (arguments as integerParameter's), found by the
 * lengths of the values before it; -1 when it is NULL or the packet is cut short before it.
 */
function valueStart(
  payload: Buffer,
  count: number,
  types: Buffer,
  typesAt: number,
  valuesStart: number,
  index: number,
): number {
  if (index >= count || types.length < typesAt + 2 * count) return -1;
  let at = valuesStart;
  for (let parameter = 0; parameter < index; parameter++) {
    if (isNull(payload, parameter)) continue;
    at = valueEnd(payload, types[typesAt + 2 * parameter]!, at);
    if (at < 0) return -1;
  }
  return isNull(payload, index) ? -1 : at;
}

function isNull(payload: Buffer, parameter: number): boolean {
  const at = EXECUTE_HEADER_LENGTH + (parameter >> 3);
  return at >= payload.length || (payload[at]! & (1 << (parameter & 7))) !== 0;
}

/** `value` when it is a whole number from 0 to MAX_VALUE, else NO_INTEGER. */
function wholeNumber(value: number): number {
  return Number.isInteger(value) && value >= 0 && value <= MAX_VALUE ? value : NO_INTEGER;
}

/** Where a value of `type` that starts at `at` ends; -1 when that is past the packet's end. */
function valueEnd(payload: Buffer, type: number, at: number): number {
  let end: number;
  switch (type) {
    case Type.NULL:
      return at;
    case Type.TINY:
      end = at + 1;
      break;
    case Type.SHORT:
    case Type.YEAR:
      end = at + 2;
      break;
    case Type.LONG:
    case Type.INT24:
    case Type.FLOAT:
      end = at + 4;
      break;
    case Type.LONGLONG:
    case Type.DOUBLE:
      end = at + 8;
      break;
    case Type.TIMESTAMP:
    case Type.DATE:
    case Type.TIME:
    case Type.DATETIME:
      // One byte of length, then that many.
      end = at < payload.length ? at + 1 + payload[at]! : -1;
      break;
    default: {
      // Strings, decimals, blobs, BIT, ENUM, SET, JSON, GEOMETRY: a length-encoded string. A
      // type the protocol does not send (the server refuses it) is not guessed at.
      if (type > Type.BIT && type < Type.JSON) return -1;
      end = readLenencBytes(payload, at)?.end ?? -1;
      break;
    }
  }
  return end >= 0 && end <= payload.length ? end : -1;
}

/** The number a length-encoded string of decimal digits at `at` spells, or NO_INTEGER. */
function digitsValue(payload: Buffer, at: number): number {
  const digits = readLenencBytes(payload, at)?.value;
  if (digits === undefined || digits.length === 0) return NO_INTEGER;
  let value = 0;
  for (let i = 0; i < digits.length; i++) {
    const digit = digits[i]! - 0x30;
    if (digit < 0 || digit > 9) return NO_INTEGER;
    value = value * 10 + digit;
    // Past MAX_VALUE it stays past it (leading zeros add nothing): stop before losing precision.
    if (value > MAX_VALUE) return NO_INTEGER;
  }
  return value;
}
