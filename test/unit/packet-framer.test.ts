/**
 * The framer and the reply tracker, fed real server replies (captured by
 * test/support/capture-fixtures.ts) cut at every offset: packet boundaries and reply ends must
 * not depend on how the bytes arrive.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { MAX_PACKET_PAYLOAD } from '../../src/protocol/constants.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';

interface Capture {
  name: string;
  command: number;
  deprecateEof: boolean;
  reply: string;
}

const captures = JSON.parse(
  readFileSync(new URL('../fixtures/captured-replies.json', import.meta.url), 'utf8'),
) as Capture[];

interface Seen {
  sequenceId: number;
  length: number;
  continuation: boolean;
  firstByte: number;
  payload: string | null;
}

/** Reads packet headers the simplest way, as the reference the framer must agree with. */
function referencePackets(stream: Buffer): Seen[] {
  const packets: Seen[] = [];
  let previousFull = false;
  for (let pos = 0; pos < stream.length;) {
    const length = stream.readUIntLE(pos, 3);
    const payload = stream.subarray(pos + 4, pos + 4 + length);
    packets.push({
      sequenceId: stream[pos + 3]!,
      length,
      continuation: previousFull,
      firstByte: length === 0 ? -1 : payload[0]!,
      payload: payload.toString('hex'),
    });
    previousFull = length === MAX_PACKET_PAYLOAD;
    pos += 4 + length;
  }
  return packets;
}

function frame(pieces: Buffer[], inspectLimit?: number): { packets: Seen[]; ends: number[] } {
  const packets: Seen[] = [];
  const ends: number[] = [];
  let consumed = 0;
  const framer = new PacketFramer((packet) => {
    packets.push({
      sequenceId: packet.sequenceId,
      length: packet.length,
      continuation: packet.continuation,
      firstByte: packet.firstByte,
      payload: packet.payload === null ? null : packet.payload.toString('hex'),
    });
    ends.push(consumed + packet.end);
  }, inspectLimit);
  for (const piece of pieces) {
    framer.push(piece);
    consumed += piece.length;
  }
  assert.ok(framer.idle, 'nothing left half-read');
  return { packets, ends };
}

describe('packet framer on captured replies', () => {
  for (const capture of captures) {
    const stream = Buffer.from(capture.reply, 'base64');
    const expected = referencePackets(stream);

    test(`${capture.name} (${capture.deprecateEof ? 'DEPRECATE_EOF' : 'EOF'}): split at every offset`, () => {
      for (let cut = 0; cut <= stream.length; cut++) {
        const { packets } = frame([stream.subarray(0, cut), stream.subarray(cut)]);
        assert.deepEqual(packets, expected, `cut at ${cut}`);
      }
      const bytes = Array.from({ length: stream.length }, (_, i) => stream.subarray(i, i + 1));
      assert.deepEqual(frame(bytes).packets, expected, 'one byte at a time');
    });

    test(`${capture.name} (${capture.deprecateEof ? 'DEPRECATE_EOF' : 'EOF'}): the reply ends at its last packet`, () => {
      const newTracker = (): ReplyTracker =>
        new ReplyTracker(replyShapeOf(capture.command)!, capture.deprecateEof, capture.command);
      // What the tracker reads of the reply (status, warnings, where each status field is) fed
      // packets that are payloads alone: the framer's packets, read where they lie in the
      // chunks, must say the same.
      const reference = newTracker();
      const referenceFields: number[] = [];
      for (const packet of referencePackets(stream)) {
        const payload = Buffer.from(packet.payload!, 'hex');
        reference.feedServer({ ...packet, payload, raw: null, end: 0 });
        referenceFields.push(reference.statusAt);
      }
      for (let cut = 0; cut <= stream.length; cut++) {
        const tracker = newTracker();
        const fields: number[] = [];
        let doneAt = -1;
        let consumed = 0;
        const framer = new PacketFramer((packet) => {
          assert.equal(doneAt, -1, 'no packet after the end');
          if (tracker.feedServer(packet)) doneAt = consumed + packet.end;
          fields.push(tracker.statusAt);
        }, 64);
        for (const piece of [stream.subarray(0, cut), stream.subarray(cut)]) {
          framer.push(piece);
          consumed += piece.length;
        }
        assert.equal(doneAt, stream.length, `cut at ${cut}`);
        assert.deepEqual(
          [tracker.status, tracker.warnings, tracker.results, fields],
          [reference.status, reference.warnings, reference.results, referenceFields],
          `cut at ${cut}`,
        );
      }
    });
  }

  test('payloads beyond the inspect limit are reported by first byte only', () => {
    const stream = Buffer.from(captures[0]!.reply, 'base64');
    const { packets } = frame([stream], 16);
    const expected = referencePackets(stream).map((packet) => ({
      ...packet,
      payload: packet.length <= 16 ? packet.payload : null,
    }));
    assert.deepEqual(packets, expected);
  });
});

describe('packets read into one reused buffer', () => {
  // A socket reads every command into the same buffer (socket-reads.ts); the framer reuses the
  // views of packets at its start (payloads, and packets with their headers), so each view must
  // still show its own packet's bytes.
  test('every payload and packet is its own, whatever was read into the buffer before', () => {
    const buffer = Buffer.alloc(256);
    const seen: string[] = [];
    const raws: Buffer[] = [];
    let packets = 0;
    const framer = new PacketFramer((packet) => {
      // Half of them asked for the whole packet first: neither kind of view may stand in for
      // the other.
      if (packets++ % 2 === 0) raws.push(Buffer.from(packet.raw!));
      seen.push(packet.payload!.toString('latin1'));
      if (packets % 2 === 0) raws.push(Buffer.from(packet.raw!));
    });
    const read = (target: Buffer, text: string): void => {
      const packet = encodePacket(Buffer.from(text, 'latin1'), 0);
      packet.copy(target);
      framer.push(target, packet.length);
    };
    // Same length, other bytes; a length 64 apart (the same place among the kept views); an
    // empty payload; two packets in one read; and another buffer, as after backpressure.
    const texts = ['\u0003SELECT 1', '\u0003SELECT 2', '\u0003SELECT 1' + 'x'.repeat(64), '\u0003'];
    for (const text of texts) read(buffer, text);
    read(buffer, '');
    const two = Buffer.concat([
      encodePacket(Buffer.from('\u0003SELECT 3'), 0),
      encodePacket(Buffer.from('\u0003SELECT 4'), 1),
    ]);
    two.copy(buffer);
    framer.push(buffer, two.length);
    read(Buffer.alloc(256), '\u0003SELECT 5');
    read(buffer, '\u0003SELECT 6');
    const expected = [
      ...texts,
      '',
      '\u0003SELECT 3',
      '\u0003SELECT 4',
      '\u0003SELECT 5',
      '\u0003SELECT 6',
    ];
    assert.deepEqual(seen, expected);
    assert.deepEqual(
      raws,
      expected.map((text) => encodePacket(Buffer.from(text, 'latin1'), text.endsWith('4') ? 1 : 0)),
    );
  });
});

describe('packets of 16 MB and more', () => {
  for (const size of [
    MAX_PACKET_PAYLOAD - 1,
    MAX_PACKET_PAYLOAD,
    MAX_PACKET_PAYLOAD + 1000,
    2 * MAX_PACKET_PAYLOAD,
  ]) {
    test(`a payload of ${size} bytes`, () => {
      const payload = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4093) payload[i] = i & 0xff;
      const stream = Buffer.concat([
        encodePacket(payload, 7),
        encodePacket(Buffer.from([0xfe, 0, 0, 2, 0]), 0),
      ]);
      const expectedCount = Math.floor(size / MAX_PACKET_PAYLOAD) + 2;
      const reference = referencePackets(stream);
      assert.equal(reference.length, expectedCount);
      // Cuts around every header, and the stream in 64 KiB chunks.
      const boundaries = [0];
      for (const packet of reference) boundaries.push(boundaries.at(-1)! + 4 + packet.length);
      const cuts = boundaries.flatMap((boundary) =>
        Array.from({ length: 9 }, (_, i) => boundary - 4 + i),
      );
      for (const cut of cuts.filter((c) => c >= 0 && c <= stream.length)) {
        const { packets } = frame([stream.subarray(0, cut), stream.subarray(cut)]);
        assert.deepEqual(packets, reference, `cut at ${cut}`);
      }
      const chunks: Buffer[] = [];
      for (let pos = 0; pos < stream.length; pos += 65536)
        chunks.push(stream.subarray(pos, pos + 65536));
      const { packets, ends } = frame(chunks, 1024);
      assert.deepEqual(
        packets.map((p) => [p.sequenceId, p.length, p.continuation]),
        reference.map((p) => [p.sequenceId, p.length, p.continuation]),
      );
      assert.deepEqual(ends, boundaries.slice(1));
      const reassembled = Buffer.concat(
        frame([stream])
          .packets.slice(0, -1)
          .map((packet) => Buffer.from(packet.payload!, 'hex')),
      );
      assert.ok(reassembled.equals(payload), 'continuation packets carry the rest of the payload');
    });
  }
});
