/**
 * The copy of a reply the cache keeps, taken while the reply is framed from a read buffer that
 * the next read overwrites (as the backend socket's is): whatever the chunking, the copy is the
 * reply's bytes exactly, with its status offsets; past the limit it is dropped.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyCopy } from '../../src/proxy/reply-copy.ts';
import { seeded } from '../support/seeded-random.ts';

/** A reply of `count` packets of random sizes and bytes, as on the wire. */
function reply(random: () => number, count: number): Buffer {
  const packets: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const length = random() < 0.1 ? Math.floor(random() * 3000) : Math.floor(random() * 120);
    const packet = Buffer.alloc(4 + length);
    packet.writeUIntLE(length, 0, 3);
    packet[3] = i & 0xff;
    for (let j = 4; j < packet.length; j++) packet[j] = Math.floor(random() * 256);
    packets.push(packet);
  }
  return Buffer.concat(packets);
}

/**
 * Frames `bytes` in random chunks read into one reused buffer, appending every packet to a copy
 * (the first byte of every fifth packet noted as a status field); returns the copy's view.
 */
function copyThroughChunks(
  bytes: Buffer,
  random: () => number,
  limit: number,
): { view: Buffer | null; offsets: number[]; expected: number[] } {
  const copy = new ReplyCopy(limit);
  const readBuffer = Buffer.alloc(4096);
  const expected: number[] = [];
  let at = 0;
  let index = 0;
  const framer = new PacketFramer((packet) => {
    const statusAt = index % 5 === 0 && packet.length > 0 ? 0 : -1;
    if (statusAt >= 0) expected.push(at + 4);
    copy.append(packet, readBuffer, statusAt);
    at += 4 + packet.length;
    index++;
  });
  for (let pos = 0; pos < bytes.length;) {
    const size = Math.min(bytes.length - pos, 1 + Math.floor(random() * readBuffer.length));
    bytes.copy(readBuffer, 0, pos, pos + size);
    framer.push(readBuffer, size);
    copy.flush();
    // The next read lands in the same buffer: what the copy did not take is gone.
    readBuffer.fill(0xee);
    pos += size;
  }
  const view = copy.view();
  const result = {
    view: view === null ? null : Buffer.from(view),
    offsets: copy.statusOffsets.slice(0, copy.statusCount),
    expected,
  };
  // Its scratch buffer and offsets go back for the next copy, with what this one left in them.
  copy.abandon();
  return result;
}

describe('ReplyCopy', () => {
  test('is the reply byte for byte whatever the chunking, in a read buffer reused each time', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = seeded(seed);
      const bytes = reply(random, 1 + Math.floor(random() * 60));
      const { view, offsets, expected } = copyThroughChunks(bytes, random, 1 << 20);
      assert.ok(view !== null, `seed ${seed}: dropped`);
      assert.ok(view.equals(bytes), `seed ${seed}: the copy differs from the reply`);
      assert.deepEqual(offsets, expected, `seed ${seed}: status offsets`);
    }
  });

  test('is dropped past its limit', () => {
    const random = seeded(7);
    const bytes = reply(random, 40);
    assert.equal(copyThroughChunks(bytes, random, bytes.length - 1).view, null);
    assert.ok(copyThroughChunks(bytes, seeded(8), bytes.length).view?.equals(bytes));
  });
});
