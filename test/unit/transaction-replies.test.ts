/**
 * The server's replies to a session's BEGIN and COMMIT kept for the proxy to answer them: only a
 * plain OK whose status fits is kept, each found by the request's bytes, with what to send the
 * server in its place; a prepared statement's replies go when it is closed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Command, ServerStatus } from '../../src/protocol/constants.ts';
import { queryPayload } from '../../src/proxy/deferred-transaction.ts';
import { TransactionReplies } from '../../src/proxy/transaction-replies.ts';

/** An OK packet, header included: sequence id 1, no rows, `status`, `warnings`. */
function ok(status: number, warnings = 0): Buffer {
  const packet = Buffer.from([7, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
  packet.writeUInt16LE(status, 7);
  packet.writeUInt16LE(warnings, 9);
  return packet;
}

function executeOf(id: number): Buffer {
  const payload = Buffer.alloc(10);
  payload[0] = Command.STMT_EXECUTE;
  payload.writeUInt32LE(id, 1);
  payload.writeUInt32LE(1, 6);
  return payload;
}

const IN_TRANS = ServerStatus.IN_TRANS | ServerStatus.AUTOCOMMIT;
const begins = (status: number): boolean => (status & ServerStatus.IN_TRANS) !== 0;

describe('kept transaction replies', () => {
  test('a plain OK whose status fits is kept, found by the request’s bytes', () => {
    const replies = new TransactionReplies();
    const begin = queryPayload('BEGIN');
    replies.learn(begin, begin, ok(IN_TRANS), begins);
    assert.deepEqual(replies.get(Buffer.from(begin))?.bytes, ok(IN_TRANS));
    assert.equal(replies.get(queryPayload('begin')), undefined, 'another text');
    // Not kept: warnings, a status that does not fit, a state change the replay cannot know.
    const other = new TransactionReplies();
    other.learn(begin, begin, ok(IN_TRANS, 1), begins);
    other.learn(begin, begin, ok(ServerStatus.AUTOCOMMIT), begins);
    other.learn(begin, begin, ok(IN_TRANS | ServerStatus.SESSION_STATE_CHANGED), begins);
    other.learn(begin, begin, null, begins);
    assert.equal(other.get(begin), undefined);
  });

  test('an execution’s reply says to send the text, and goes when its statement is closed', () => {
    const replies = new TransactionReplies();
    const text = queryPayload('BEGIN');
    replies.learn(executeOf(7), text, ok(IN_TRANS), begins);
    replies.learn(executeOf(8), queryPayload('COMMIT'), ok(ServerStatus.AUTOCOMMIT), () => true);
    replies.learn(text, text, ok(IN_TRANS), begins);
    assert.deepEqual(replies.get(executeOf(7))?.sent, text);
    replies.forgetExecutions(7);
    assert.equal(replies.get(executeOf(7)), undefined);
    assert.notEqual(replies.get(executeOf(8)), undefined, 'another statement’s stays');
    assert.notEqual(replies.get(text), undefined, 'the text’s stays');
  });
});
