/**
 * When the client may speak inside a reply: an authentication exchange gives it a turn only
 * after the server asked (so a command a client pipelines is never relayed as auth data the
 * server would run as a command), and a binlog dump ends at its EOF or ERR. The MariaDB exchanges
 * are tested against the server in the integration tests; caching_sha2_password's "fast auth
 * done" (MySQL 8) is not something MariaDB sends, so it is checked here on its bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Command } from '../../src/protocol/constants.ts';
import type { FramedPacket } from '../../src/protocol/packet-framer.ts';
import { ReplyShape, ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';

function packet(bytes: number[]): FramedPacket {
  const payload = Buffer.from(bytes);
  const raw = Buffer.concat([Buffer.from([payload.length, 0, 0, 1]), payload]);
  return {
    sequenceId: 1,
    length: payload.length,
    continuation: false,
    firstByte: payload.length > 0 ? payload[0]! : -1,
    payload,
    raw,
    end: raw.length,
  };
}

const OK = [0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

describe('authentication turns', () => {
  test('the client speaks only after the server asked', () => {
    const tracker = new ReplyTracker(ReplyShape.AUTH, false);
    assert.equal(tracker.awaitsClient, false, 'nothing asked yet');
    assert.equal(tracker.authenticating, true);
    // Auth switch request: plugin name, then data.
    assert.equal(tracker.feedServer(packet([0xfe, 0x61, 0x00, 0x01, 0x02])), false);
    assert.equal(tracker.awaitsClient, true);
    tracker.feedClient(packet([0x01, 0x02, 0x03]));
    assert.equal(tracker.awaitsClient, false, 'one answer per request');
    assert.equal(tracker.feedServer(packet(OK)), true);
    assert.equal(tracker.authenticating, false);
  });

  test("caching_sha2_password's fast auth done asks nothing: the OK follows", () => {
    const tracker = new ReplyTracker(ReplyShape.AUTH, false);
    tracker.feedServer(packet([0x01, 0x03]));
    assert.equal(tracker.awaitsClient, false);
    // "Perform full authentication" does ask.
    tracker.feedServer(packet([0x01, 0x04]));
    assert.equal(tracker.awaitsClient, true);
  });
});

describe('binlog dump', () => {
  test('events until EOF, or an ERR', () => {
    assert.equal(replyShapeOf(Command.BINLOG_DUMP), ReplyShape.BINLOG_STREAM);
    const tracker = new ReplyTracker(ReplyShape.BINLOG_STREAM, false, Command.BINLOG_DUMP);
    assert.equal(tracker.feedServer(packet([0x00, 0x01, 0x02, 0x03])), false);
    assert.equal(tracker.feedServer(packet([0x00, 0xfe, 0xff])), false);
    assert.equal(tracker.feedServer(packet([0xfe, 0x00, 0x00, 0x02, 0x00])), true);
    const refused = new ReplyTracker(ReplyShape.BINLOG_STREAM, false, Command.BINLOG_DUMP);
    assert.equal(refused.feedServer(packet([0xff, 0xcb, 0x04, 0x23])), true);
    assert.equal(refused.failed, true);
  });
});
