/**
 * Length-encoded integers and strings.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_dt_integers.html
 */

/** A decoded value and the offset just past it. */
export interface Decoded<T> {
  value: T;
  end: number;
}

/**
 * Reads a length-encoded integer at `offset`. Values above 2^53 lose precision; the protocol only
 * uses them for row counts and lengths, where that never happens in practice.
 * Returns null when the buffer ends before the integer does, or on the 0xFB/0xFF markers.
 */
export function readLenencInt(buf: Buffer, offset: number): Decoded<number> | null {
  const value = lenencIntAt(buf, offset);
  return value < 0 ? null : { value, end: offset + encodedSize(buf[offset]!) };
}

/**
 * The length-encoded integer at `offset`, as readLenencInt reads it, or -1 where that returns
 * null: for a hot path that needs the value only, with no object made. `end`: where the bytes
 * that may hold it end (a packet's end in the chunk it was read in).
 */
export function lenencIntAt(buf: Buffer, offset: number, end: number = buf.length): number {
  if (offset >= end) return -1;
  const first = buf[offset]!;
  if (first < 0xfb) return first;
  const size = encodedSize(first);
  if (size === 0 || offset + size > end) return -1;
  if (first === 0xfc) return buf.readUInt16LE(offset + 1);
  if (first === 0xfd) return buf.readUIntLE(offset + 1, 3);
  return Number(buf.readBigUInt64LE(offset + 1));
}

/** The offset just past the length-encoded integer at `offset`, or -1 as for lenencIntAt. */
export function lenencIntEnd(buf: Buffer, offset: number, end: number = buf.length): number {
  if (offset >= end) return -1;
  const size = encodedSize(buf[offset]!);
  return size === 0 || offset + size > end ? -1 : offset + size;
}

/** Bytes an integer whose first byte is `first` takes, or 0 for the 0xFB/0xFF markers. */
function encodedSize(first: number): number {
  if (first < 0xfb) return 1;
  if (first === 0xfc) return 3;
  if (first === 0xfd) return 4;
  return first === 0xfe ? 9 : 0;
}

/** The number of bytes a length-encoded integer takes. */
export function lenencIntSize(value: number): number {
  if (value < 0xfb) return 1;
  if (value < 0x10000) return 3;
  if (value < 0x1000000) return 4;
  return 9;
}

/** Writes a length-encoded integer at `offset` and returns the offset just past it. */
export function writeLenencInt(buf: Buffer, offset: number, value: number): number {
  if (value < 0xfb) {
    buf[offset] = value;
    return offset + 1;
  }
  if (value < 0x10000) {
    buf[offset] = 0xfc;
    buf.writeUInt16LE(value, offset + 1);
    return offset + 3;
  }
  if (value < 0x1000000) {
    buf[offset] = 0xfd;
    buf.writeUIntLE(value, offset + 1, 3);
    return offset + 4;
  }
  buf[offset] = 0xfe;
  buf.writeBigUInt64LE(BigInt(value), offset + 1);
  return offset + 9;
}

/** Reads a length-encoded string as raw bytes (a view, not a copy). */
export function readLenencBytes(buf: Buffer, offset: number): Decoded<Buffer> | null {
  const length = readLenencInt(buf, offset);
  if (length === null || length.end + length.value > buf.length) return null;
  return {
    value: buf.subarray(length.end, length.end + length.value),
    end: length.end + length.value,
  };
}

/** Reads a NUL-terminated string as raw bytes; a missing NUL ends the string at the buffer's end. */
export function readNulBytes(buf: Buffer, offset: number): Decoded<Buffer> {
  const nul = buf.indexOf(0, offset);
  const stop = nul === -1 ? buf.length : nul;
  return { value: buf.subarray(offset, stop), end: nul === -1 ? buf.length : nul + 1 };
}
