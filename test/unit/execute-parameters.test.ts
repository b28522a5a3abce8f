/**
 * Reading one parameter of a COM_STMT_EXECUTE where it lies: the value a prepared statement's
 * `WHERE id = ?` is bounded to. A value read wrongly would put an execution's result under
 * another row's slot (a stale read when that row is written), so every type's encoding, the
 * NULL bitmap, the values before the one read, and packets cut short are checked; and the row
 * slot made from the number is the one made from the same value's digits in a text.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidationRegistry, nameHash } from '../../src/cache/invalidation-registry.ts';
import {
  rowBytesHashOf,
  rowHashOf,
  rowNameHash,
  rowSlotName,
  rowTextHashOf,
} from '../../src/cache/row-slots.ts';
import { KeyKind, keyValueOf } from '../../src/sql/point-access.ts';
import { EXECUTE_HEADER_LENGTH, executeLayoutOf } from '../../src/protocol/command-fields.ts';
import {
  NO_INTEGER,
  integerParameter,
  textParameter,
  textSpan,
} from '../../src/protocol/execute-parameters.ts';
import { foldKeyText } from '../../src/sql/key-text.ts';

const UNSIGNED = 0x80;

/** One parameter: its type, the flags byte, and its value's bytes (null: NULL in the bitmap). */
type Parameter = [type: number, flags: number, value: Buffer | null];

/** An execute packet with the types sent; `cut` bytes dropped from its end. */
function executeOf(parameters: Parameter[], cut = 0): Buffer {
  const head = Buffer.alloc(EXECUTE_HEADER_LENGTH);
  head[0] = 0x17;
  head.writeUInt32LE(1, 6);
  const bitmap = Buffer.alloc((parameters.length + 7) >> 3);
  const types = Buffer.alloc(2 * parameters.length);
  const values: Buffer[] = [];
  parameters.forEach(([type, flags, value], index) => {
    types[2 * index] = type;
    types[2 * index + 1] = flags;
    if (value === null) bitmap[index >> 3]! |= 1 << (index & 7);
    else values.push(value);
  });
  const packet = Buffer.concat([head, bitmap, Buffer.from([1]), types, ...values]);
  return packet.subarray(0, packet.length - cut);
}

/** The value of parameter `index` as the router reads it. */
function valueOf(packet: Buffer, count: number, index: number): number {
  const layout = executeLayoutOf(packet, count);
  if (layout === null) return NO_INTEGER;
  return integerParameter(packet, count, packet, layout.bitmapEnd + 1, layout.valuesStart, index);
}

const int8 = (v: number): Buffer => Buffer.from([v & 0xff]);
const int16 = (v: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v & 0xffff);
  return b;
};
const int32 = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v | 0);
  return b;
};
const int64 = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, v));
  return b;
};
const float = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return b;
};
const double = (v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return b;
};
/** A length-encoded string; `wide` writes its length in the 0xfc form. */
const text = (s: string, wide = false): Buffer => {
  const bytes = Buffer.from(s, 'latin1');
  return wide
    ? Buffer.concat([Buffer.from([0xfc, bytes.length & 0xff, bytes.length >> 8]), bytes])
    : Buffer.concat([Buffer.from([bytes.length]), bytes]);
};

describe('an execution’s integer parameter', () => {
  test('every integer encoding, signed and unsigned', () => {
    const cases: Array<[Parameter, number]> = [
      [[1, 0, int8(5)], 5],
      [[1, 0, int8(-5)], NO_INTEGER],
      [[1, UNSIGNED, int8(-5)], 251],
      [[2, 0, int16(300)], 300],
      [[2, 0, int16(-1)], NO_INTEGER],
      [[2, UNSIGNED, int16(-1)], 65535],
      [[3, 0, int32(100301)], 100301],
      [[3, 0, int32(-2)], NO_INTEGER],
      [[3, UNSIGNED, int32(-1)], 4294967295],
      [[9, 0, int32(70000)], 70000],
      [[8, 0, int64(123456789012n)], 123456789012],
      [[8, 0, int64(-1n)], NO_INTEGER],
      [[8, UNSIGNED, int64(-1n)], NO_INTEGER],
      [[8, 0, int64(999999999999999n)], 999999999999999],
      [[8, 0, int64(1000000000000000n)], NO_INTEGER],
      [[8, 0, int64(1n << 50n)], NO_INTEGER],
      [[8, 0, int64(0n)], 0],
    ];
    for (const [parameter, expected] of cases) {
      assert.equal(valueOf(executeOf([parameter]), 1, 0), expected, JSON.stringify(parameter));
    }
  });

  test('a float or double with no fraction, a string or decimal of digits', () => {
    const cases: Array<[Parameter, number]> = [
      [[5, 0, double(42)], 42],
      [[5, 0, double(42.5)], NO_INTEGER],
      [[5, 0, double(-3)], NO_INTEGER],
      [[5, 0, double(Number.NaN)], NO_INTEGER],
      [[5, 0, double(1e15)], NO_INTEGER],
      [[4, 0, float(7)], 7],
      [[4, 0, float(0.1)], NO_INTEGER],
      [[253, 0, text('100301')], 100301],
      [[254, 0, text('007')], 7],
      [[15, 0, text('0000000000000000000009')], 9],
      [[246, 0, text('12')], 12],
      [[246, 0, text('12.0')], NO_INTEGER],
      [[253, 0, text('')], NO_INTEGER],
      [[253, 0, text(' 5')], NO_INTEGER],
      [[253, 0, text('5 ')], NO_INTEGER],
      [[253, 0, text('-5')], NO_INTEGER],
      [[253, 0, text('1e3')], NO_INTEGER],
      [[253, 0, text('1000000000000000')], NO_INTEGER],
      [[253, 0, text('321', true)], 321],
      // Types that never bound a row's integer value.
      [[252, 0, text('5')], NO_INTEGER],
      [[13, 0, int16(2024)], NO_INTEGER],
      [[10, 0, Buffer.from([0])], NO_INTEGER],
    ];
    for (const [parameter, expected] of cases) {
      assert.equal(valueOf(executeOf([parameter]), 1, 0), expected, JSON.stringify(parameter));
    }
  });

  test('NULL, and the values before the one read skipped by their types', () => {
    const before: Parameter[] = [
      [1, 0, int8(9)],
      [2, 0, int16(9)],
      [13, 0, int16(2024)],
      [3, 0, int32(9)],
      [4, 0, float(9)],
      [8, 0, int64(9n)],
      [5, 0, double(9)],
      [6, 0, null],
      [3, 0, null],
      [10, 0, Buffer.from([4, 0xe8, 0x07, 1, 2])],
      [12, 0, Buffer.from([0])],
      [11, 0, Buffer.from([8, 0, 1, 0, 0, 0, 2, 3, 4])],
      [253, 0, text('x'.repeat(300), true)],
      [252, 0, Buffer.concat([Buffer.from([0xfd, 3, 0, 0]), Buffer.from('abc')])],
      [246, 0, text('1.5')],
      [16, 0, text('\u0001')],
    ];
    const packet = executeOf([...before, [3, 0, int32(77)], [3, 0, null]]);
    const count = before.length + 2;
    assert.equal(valueOf(packet, count, before.length), 77);
    assert.equal(valueOf(packet, count, before.length + 1), NO_INTEGER, 'NULL');
    assert.equal(valueOf(packet, count, 0), 9);
    assert.equal(valueOf(packet, count, 5), 9);
    assert.equal(valueOf(packet, count, count), NO_INTEGER, 'no such parameter');
  });

  test('a packet cut short, or a type the protocol does not send, gives no value', () => {
    const parameters: Parameter[] = [
      [253, 0, text('abc')],
      [8, 0, int64(5n)],
    ];
    assert.equal(valueOf(executeOf(parameters), 2, 1), 5);
    for (let cut = 1; cut <= 8; cut++) {
      assert.equal(valueOf(executeOf(parameters, cut), 2, 1), NO_INTEGER, `cut ${cut}`);
    }
    // A string whose length runs past the packet: what follows cannot be found.
    const runaway = executeOf([
      [253, 0, Buffer.from([0xfc, 0xff, 0xff, 1])],
      [3, 0, int32(5)],
    ]);
    assert.equal(valueOf(runaway, 2, 1), NO_INTEGER);
    const unknown = executeOf([
      [100, 0, text('a')],
      [3, 0, int32(5)],
    ]);
    assert.equal(valueOf(unknown, 2, 1), NO_INTEGER);
  });
});

describe('row slots of a number', () => {
  test('the slot made from a number is the one made from its digits', () => {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate(1 << 16));
    for (const table of ['test.sbtest1', 'd.t', 'a\u00e9.b']) {
      const hash = rowNameHash(table);
      const values = [0, 1, 9, 10, 99, 100, 101, 65535, 100301, 2 ** 32, 999999999999999];
      for (let i = 0; i < 200; i++) values.push(Math.floor(Math.random() * 1e15));
      for (const value of values) {
        assert.equal(
          registry.slotOfHash(rowHashOf(hash, value)),
          registry.slotOf(rowSlotName(table, String(value))),
          `${table} ${value}`,
        );
      }
    }
  });
});

describe('row slots of a row name', () => {
  test('the slot made from the table’s hash and the row name is the one made from both', () => {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate(1 << 16));
    for (const table of ['test.sbtest1', 'd.t', 'a\u00e9.b']) {
      const hash = rowNameHash(table);
      for (const name of ['', '0', '42', "'abc", 'x\u00e9\u4e2d', '1,2', '00ff']) {
        assert.equal(
          registry.slotOfHash(nameHash(hash, name)),
          registry.slotOf(rowSlotName(table, name)),
          `${table} ${name}`,
        );
      }
    }
  });
});

describe('an execution’s string parameter', () => {
  /** Parameter `index`'s bytes as the router finds them, or null. */
  const bytesOf = (packet: Buffer, count: number, index: number): string | null => {
    const layout = executeLayoutOf(packet, count);
    if (layout === null) return null;
    const found = textParameter(
      packet,
      count,
      packet,
      layout.bitmapEnd + 1,
      layout.valuesStart,
      index,
    );
    return found ? packet.toString('latin1', textSpan.start, textSpan.end) : null;
  };

  test('a string type gives its bytes; a number, NULL or a packet cut short gives none', () => {
    const packet = executeOf([
      [3, 0, int32(5)],
      [253, 0, text('Ab-1')],
      [6, 0, null],
      [254, 0, text('')],
      [252, 0, text('blob')],
      [15, 0, text('v'.repeat(300), true)],
      [8, 0, int64(7n)],
    ]);
    assert.equal(bytesOf(packet, 7, 1), 'Ab-1');
    assert.equal(bytesOf(packet, 7, 3), '');
    assert.equal(bytesOf(packet, 7, 4), 'blob', 'a BLOB type: compared as bytes');
    assert.equal(bytesOf(packet, 7, 5), 'v'.repeat(300), 'a length of three bytes');
    assert.equal(bytesOf(packet, 7, 0), null, 'a number is compared as a number');
    assert.equal(bytesOf(packet, 7, 2), null, 'NULL');
    assert.equal(bytesOf(packet, 7, 6), null);
    assert.equal(bytesOf(packet, 7, 7), null, 'no such parameter');
    const cut = executeOf([[253, 0, text('abcdef')]], 2);
    assert.equal(bytesOf(cut, 1, 0), null, 'cut short');
  });

  test('the slot made from a string’s bytes is the one made from its folded text', () => {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate(1 << 16));
    const hash = rowNameHash('d.t');
    for (const value of ['abc', 'ABC', 'a-B_c.1:2', '', 'x'.repeat(255)]) {
      const bytes = Buffer.from(value, 'latin1');
      assert.equal(
        registry.slotOfHash(rowTextHashOf(hash, bytes, 0, bytes.length)),
        registry.slotOf(rowSlotName('d.t', foldKeyText(value, 0, value.length))),
        value,
      );
    }
  });

  test('the slot made from a parameter’s bytes is the one made from its literal, in a column of bytes', () => {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate(1 << 16));
    const hash = rowNameHash('d.t');
    const slotOfLiteral = (value: string, kind: KeyKind, max: number): number =>
      registry.slotOf(rowSlotName('d.t', keyValueOf(value, kind, max)!));
    for (const bytes of [
      Buffer.from('0123456789abcdef0123456789abcdef', 'hex'),
      Buffer.from([0, 1, 0xff, 0x7f, 0x80]),
      Buffer.from('Ab-1', 'latin1'),
      Buffer.alloc(0),
    ]) {
      const hex = `x${bytes.toString('hex')}`;
      const name = bytes.toString('hex');
      assert.equal(
        registry.slotOfHash(rowBytesHashOf(hash, bytes, 0, bytes.length, 0)),
        slotOfLiteral(hex, KeyKind.BYTES, 16),
        name,
      );
      assert.equal(
        registry.slotOfHash(rowBytesHashOf(hash, bytes, 0, bytes.length, 16)),
        slotOfLiteral(hex, KeyKind.FIXED_BYTES, 16),
        `${name}, padded`,
      );
    }
    // A quoted literal of the same bytes names the same row.
    const ab = Buffer.from('Ab-1', 'latin1');
    assert.equal(
      registry.slotOfHash(rowBytesHashOf(hash, ab, 0, ab.length, 8)),
      slotOfLiteral("'Ab-1", KeyKind.FIXED_BYTES, 8),
    );
    assert.notEqual(
      registry.slotOfHash(rowBytesHashOf(hash, ab, 0, ab.length, 0)),
      slotOfLiteral("'ab-1", KeyKind.BYTES, 8),
      'bytes keep their letter case',
    );
  });
});
