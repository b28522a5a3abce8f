/**
 * Length-encoded integers: the object-free readers the hot path uses say what the reader of
 * value and end says, at every width, truncated (by the buffer or by the end given) and on the
 * markers; and a stored reply's rows are counted past a column count of more than one byte.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  lenencIntAt,
  lenencIntEnd,
  lenencIntSize,
  readLenencInt,
  writeLenencInt,
} from '../../src/protocol/lenenc.ts';
import { countRows } from '../../src/proxy/reply-rows.ts';

describe('length-encoded integers', () => {
  test('every width reads back, with or without the offset after it', () => {
    for (const value of [0, 1, 250, 251, 0xffff, 0x10000, 0xffffff, 0x1000000, 2 ** 40 + 3]) {
      const buf = Buffer.alloc(12, 0xaa);
      const end = writeLenencInt(buf, 2, value);
      assert.equal(end, 2 + lenencIntSize(value));
      assert.deepEqual(readLenencInt(buf, 2), { value, end });
      assert.equal(lenencIntAt(buf, 2), value);
      assert.equal(lenencIntEnd(buf, 2), end);
      // One byte short of the integer, by the buffer's end or by the end given: none reads it.
      const short = buf.subarray(0, end - 1);
      assert.equal(readLenencInt(short, 2), null);
      assert.equal(lenencIntAt(short, 2), -1);
      assert.equal(lenencIntAt(buf, 2, end - 1), -1);
      assert.equal(lenencIntEnd(buf, 2, end - 1), -1);
    }
  });

  test('the NULL and error markers, and the end of the buffer, are no integer', () => {
    for (const marker of [0xfb, 0xff]) {
      const buf = Buffer.from([marker, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assert.equal(readLenencInt(buf, 0), null);
      assert.equal(lenencIntAt(buf, 0), -1);
      assert.equal(lenencIntEnd(buf, 0), -1);
    }
    assert.equal(readLenencInt(Buffer.alloc(2), 2), null);
    assert.equal(lenencIntAt(Buffer.alloc(2), 2), -1);
  });
});

/** A text result set of `columns` columns and `rows` rows, as a server sends it. */
function resultSet(columns: number, rows: number, deprecateEof: boolean): Buffer {
  const packets: Buffer[] = [];
  const count = Buffer.alloc(9);
  packets.push(count.subarray(0, writeLenencInt(count, 0, columns)));
  for (let i = 0; i < columns; i++) packets.push(Buffer.from(`column ${i}`));
  const eof = Buffer.from([0xfe, 0, 0, 2, 0]);
  if (!deprecateEof) packets.push(eof);
  for (let i = 0; i < rows; i++) packets.push(Buffer.from([1, 0x30 + (i % 10)]));
  packets.push(deprecateEof ? Buffer.from([0xfe, 0, 0, 2, 0, 0, 0]) : eof);
  return Buffer.concat(
    packets.map((payload, sequence) => {
      const header = Buffer.alloc(4);
      header.writeUIntLE(payload.length, 0, 3);
      header[3] = sequence & 0xff;
      return Buffer.concat([header, payload]);
    }),
  );
}

describe('countRows', () => {
  test('rows of a stored result set, whatever the width of its column count', () => {
    for (const deprecateEof of [false, true]) {
      for (const [columns, rows] of [
        [1, 0],
        [1, 1],
        [3, 17],
        [251, 2],
        [300, 0],
      ] as const) {
        assert.equal(countRows(resultSet(columns, rows, deprecateEof), deprecateEof), rows);
      }
    }
  });
});
