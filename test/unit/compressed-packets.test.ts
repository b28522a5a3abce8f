/**
 * The compressed protocol's packets, read back whatever the chunking; the server reading them
 * is tested in differential.test.ts (the test client compresses with this code).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import {
  COMPRESSED_HEADER_LENGTH,
  CompressedPackets,
  MIN_COMPRESS_LENGTH,
} from '../../src/protocol/compressed-packets.ts';
import { ProxyError } from '../../src/protocol/errors.ts';
import { seeded } from '../support/seeded-random.ts';

interface Header {
  wireLength: number;
  sequence: number;
  inflatedLength: number;
}

function headersOf(wrapped: Buffer): Header[] {
  const headers: Header[] = [];
  for (let at = 0; at < wrapped.length;) {
    const header = {
      wireLength: wrapped.readUIntLE(at, 3),
      sequence: wrapped[at + 3]!,
      inflatedLength: wrapped.readUIntLE(at + 4, 3),
    };
    headers.push(header);
    at += COMPRESSED_HEADER_LENGTH + header.wireLength;
  }
  return headers;
}

/** Feeds `stream` to a reader in random cuts through one reused buffer, as socket reads come. */
function readInChunks(stream: Buffer, random: () => number): Buffer {
  const reader = new CompressedPackets();
  const readBuffer = Buffer.alloc(4096);
  const out: Buffer[] = [];
  for (let at = 0; at < stream.length;) {
    const size = Math.min(1 + Math.floor(random() * 700), stream.length - at);
    stream.copy(readBuffer, 0, at, at + size);
    // What is delivered is only valid during the call: copied, as the framer would.
    reader.read(readBuffer, size, (bytes, length) =>
      out.push(Buffer.from(bytes.subarray(0, length))),
    );
    readBuffer.fill(0xee);
    at += size;
  }
  return Buffer.concat(out);
}

describe('compressed packets', () => {
  test('short writes go as they are, longer ones deflated, and zlib reads them', () => {
    const writer = new CompressedPackets();
    const short = Buffer.alloc(MIN_COMPRESS_LENGTH - 1, 'a');
    const long = Buffer.alloc(MIN_COMPRESS_LENGTH * 10, 'b');
    const [shortHeader] = headersOf(writer.wrap(short));
    assert.deepEqual(shortHeader, { wireLength: short.length, sequence: 0, inflatedLength: 0 });
    const wrapped = writer.wrap(long);
    const [longHeader] = headersOf(wrapped);
    assert.equal(longHeader!.inflatedLength, long.length);
    assert.ok(longHeader!.wireLength < long.length);
    assert.equal(longHeader!.sequence, 1);
    assert.deepEqual(inflateSync(wrapped.subarray(COMPRESSED_HEADER_LENGTH)), long);
  });

  test('bytes that do not shrink go as they are', () => {
    const random = seeded(7);
    const noise = Buffer.from(Array.from({ length: 3000 }, () => Math.floor(random() * 256)));
    const [header] = headersOf(new CompressedPackets().wrap(noise));
    assert.deepEqual(header, { wireLength: noise.length, sequence: 0, inflatedLength: 0 });
  });

  test('whatever the cuts between reads, the bytes come back in order', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const random = seeded(seed);
      const writer = new CompressedPackets();
      const written: Buffer[] = [];
      const stream: Buffer[] = [];
      for (let i = 0; i < 40; i++) {
        const length = 1 + Math.floor(random() * 2000);
        // Half compressible text, half noise, so both kinds of packet come.
        const bytes = Buffer.from(
          Array.from({ length }, (_, j) =>
            random() < 0.5 ? 97 + (j % 7) : Math.floor(random() * 256),
          ),
        );
        written.push(bytes);
        stream.push(writer.wrap(bytes));
      }
      assert.deepEqual(
        readInChunks(Buffer.concat(stream), random),
        Buffer.concat(written),
        `seed ${seed}`,
      );
    }
  });

  test('numbered as the server numbers: one past the packet read, then one more each', () => {
    const peer = new CompressedPackets();
    const ours = new CompressedPackets();
    peer.wrap(Buffer.from('x'));
    peer.wrap(Buffer.from('y'));
    // The peer's third packet is numbered 2.
    const third = peer.wrap(Buffer.from('z'));
    ours.read(third, third.length, () => {});
    const replies = Buffer.concat([ours.wrap(Buffer.from('a')), ours.wrap(Buffer.from('b'))]);
    assert.deepEqual(
      headersOf(replies).map((header) => header.sequence),
      [3, 4],
    );
    ours.restartSequence();
    assert.equal(headersOf(ours.wrap(Buffer.from('c')))[0]!.sequence, 0);
  });

  test('more than 16 MB takes several packets', () => {
    const big = Buffer.alloc(0xffffff + 1000, 'q');
    const wrapped = new CompressedPackets().wrap(big);
    const headers = headersOf(wrapped);
    assert.deepEqual(
      headers.map((header) => header.inflatedLength),
      [0xffffff, 1000],
    );
    assert.deepEqual(
      headers.map((header) => header.sequence),
      [0, 1],
    );
    assert.deepEqual(readInChunks(wrapped, seeded(3)).length, big.length);
  });

  test('a packet that does not inflate, or inflates to another length, is error 1157', () => {
    const bad = Buffer.concat([Buffer.from([5, 0, 0, 0, 10, 0, 0]), Buffer.from('zzzzz')]);
    const reader = new CompressedPackets();
    assert.throws(
      () => reader.read(bad, bad.length, () => {}),
      (error: unknown) => error instanceof ProxyError && error.errno === 1157,
    );
    const wrapped = new CompressedPackets().wrap(Buffer.alloc(200, 'w'));
    // The header says one byte fewer than the stream holds.
    wrapped.writeUIntLE(199, 4, 3);
    assert.throws(
      () => new CompressedPackets().read(wrapped, wrapped.length, () => {}),
      (error: unknown) => error instanceof ProxyError && error.errno === 1157,
    );
  });
});
