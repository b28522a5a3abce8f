/**
 * A client can end its own session, never the worker's: every way into a session runs under the
 * session's guard, and every field the proxy reads from a client packet is bounds-checked. The
 * scenarios run directly and through the proxy (2 workers, cache on), replies compared byte for
 * byte: a truncated prepared-statement command gets the server's own answer (or, like from the
 * server, none), and the other clients on the same worker carry on.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import {
  ProxyHarness,
  WARM_TABLE_STATEMENTS,
  differential,
  queryPacket,
  runStatements,
} from '../support/cache-scenario.ts';
import type { Run, Session } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { RawClient, replyError } from '../support/raw-client.ts';
import type { RawPacket } from '../support/raw-client.ts';

const DB = 'nc_session_guard';
const setup = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20))`,
  `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two')`,
];

/** The same cacheable read for both clients: the second one waits for the first (single flight). */
const SLOW_READ = `SELECT v FROM ${DB}.t WHERE id = 1`;

/** A direct connection to the server, outside what is compared. */
function directClient(): Promise<RawClient> {
  return RawClient.connect({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
  });
}

/** Waits until `count` connections run `sql` and wait for a table lock (bounded, not timed). */
async function waitForBlocked(observer: RawClient, sql: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const reply = await observer.query(
      `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '${sql.replace(/'/g, "''")}' AND STATE LIKE 'Waiting%'`,
    );
    const rows = reply.filter((packet) => packet.payload[0] !== 0xfe).slice(2);
    if (Number(rows[0]?.payload.subarray(1).toString()) >= count) return;
    await sleep(10);
  }
}

/** Reads one reply of the single-packet or result shape, as the session's client sees it. */
async function readResult(session: Session): Promise<RawPacket[]> {
  const packets: RawPacket[] = [];
  let eofs = 0;
  for (;;) {
    const packet = await session.client.readPacket();
    if (packet === null) throw new Error(`${session.name}: connection closed mid-reply`);
    packets.push(packet);
    const first = packet.payload[0];
    if (packets.length === 1 && (first === PacketHeader.OK || first === PacketHeader.ERR))
      return packets;
    if (first === PacketHeader.ERR) return packets;
    if (first === PacketHeader.EOF && packet.payload.length < 9 && ++eofs === 2) return packets;
  }
}

/** A one-byte body: too short for the statement id every COM_STMT_* command starts with. */
const TRUNCATED: ReadonlyArray<{ name: string; command: number; errno: number | null }> = [
  // The server sends nothing back for these two.
  { name: 'COM_STMT_CLOSE', command: Command.STMT_CLOSE, errno: null },
  { name: 'COM_STMT_SEND_LONG_DATA', command: Command.STMT_SEND_LONG_DATA, errno: null },
  // ER_UNKNOWN_STMT_HANDLER: the id read runs past the packet.
  { name: 'COM_STMT_RESET', command: Command.STMT_RESET, errno: 1243 },
  // ER_MALFORMED_PACKET.
  { name: 'COM_STMT_EXECUTE', command: Command.STMT_EXECUTE, errno: 1835 },
];

describe('session guard: a client never crashes the worker', () => {
  let proxy: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...WARM_TABLE_STATEMENTS]);
    // A wide single-flight window, so the second read surely joins the first one's flight (it
    // waits the whole window, since the first is held up by a lock, then goes to the server).
    proxy = await ProxyHarness.start(['--single-flight-wait', '2000']);
  });

  after(async () => {
    assert.equal(await proxy.stop(), 0);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
  });

  for (const { name, command, errno } of TRUNCATED) {
    test(`a truncated ${name} queued behind a single-flight wait ends nothing`, () =>
      differential(proxy, { database: DB, setup }, async (run: Run) => {
        // All three on one worker: the first two share a flight, the third is a bystander.
        const bystander = await run.session('bystander', { worker: 0 });
        const first = await run.session('first', { worker: 0 });
        const second = await run.session('second', { worker: 0 });
        await bystander.query('SELECT 1');
        const locker = await directClient();
        const observer = await directClient();
        try {
          // The first read is a miss held up by a table lock: its flight stays open.
          assert.equal(replyError(await locker.query(`LOCK TABLES ${DB}.t WRITE`)), null);
          first.client.send(queryPacket(SLOW_READ));
          await waitForBlocked(observer, SLOW_READ, 1);
          // The same read waits for the first one's flight; a truncated command is queued
          // behind it, then a ping. Resuming after the wait must not take the worker down.
          second.client.socket.write(
            Buffer.concat([
              encodePacket(queryPacket(SLOW_READ), 0),
              encodePacket(Buffer.from([command, 0x05]), 0),
              encodePacket(Buffer.from([Command.PING]), 0),
            ]),
          );
          await waitForBlocked(observer, SLOW_READ, 2);
          assert.equal(replyError(await locker.query('UNLOCK TABLES')), null);
          await first.record('first: the slow read', await readResult(first));
          await second.record('second: the same read', await readResult(second), undefined, false);
          if (errno !== null) {
            const reply = (await second.client.readPacket())!;
            await second.record(`second: ${name} cut short`, [reply], errno, false);
          }
          const pong = await second.client.readPacket();
          await second.record('second: ping after it', [pong!], undefined, false);
          await bystander.query(`SELECT v FROM ${DB}.t WHERE id = 2`);
          await first.query(SLOW_READ);
          await second.query(SLOW_READ);
        } finally {
          locker.close();
          observer.close();
        }
        if (run.isProxy)
          run.check(
            !/worker \d+ (exited|failed)|session error/.test(proxy.process.log()),
            'no worker died, and no session needed its guard (every field is bounds-checked)',
          );
      }));
  }

  test('a command out of sequence, even one with no reply, gets the server’s 1156 and the close', () =>
    differential(proxy, { database: DB, setup }, async (run: Run) => {
      const session = await run.session('client');
      await session.query(SLOW_READ);
      // COM_STMT_CLOSE, which the server never answers, sent with sequence id 7: the server
      // answers "Got packets out of order" all the same, then ends the connection.
      session.client.socket.write(Buffer.from([5, 0, 0, 7, Command.STMT_CLOSE, 1, 0, 0, 0]));
      const refusal = await session.client.readPacket();
      run.check(refusal !== null, 'an answer to the out-of-sequence command');
      await session.record(
        'COM_STMT_CLOSE with sequence id 7',
        refusal === null ? [] : [refusal],
        1156,
        false,
      );
      run.check((await session.client.readPacket()) === null, 'the connection closes after it');
    }));

  test('truncated prepared-statement commands get the server’s own answers', () =>
    differential(proxy, { database: DB, setup }, async (run: Run) => {
      const session = await run.session('client');
      const id = await session.prepare(`SELECT v FROM ${DB}.t WHERE id = ?`);
      await session.execute(`SELECT v FROM ${DB}.t WHERE id = ?`, [1]);
      // COM_STMT_EXECUTE shorter than its 9-byte header: 1835 Malformed communication packet.
      for (let body = 0; body < 9; body++) {
        const packet = Buffer.alloc(1 + body, 0x05);
        packet[0] = Command.STMT_EXECUTE;
        if (body >= 4) packet.writeUInt32LE(id, 1);
        await session.record(
          `execute cut to ${body} bytes`,
          await session.client.command(packet),
          1835,
        );
      }
      // Parameter types announced but cut short.
      const cut = Buffer.alloc(13);
      cut[0] = Command.STMT_EXECUTE;
      cut.writeUInt32LE(id, 1);
      cut.writeUInt32LE(1, 6);
      cut[10] = 0; // null bitmap
      cut[11] = 1; // new parameters bound: two type bytes follow, one is there
      cut[12] = 0x08;
      await session.record(
        'execute with its types cut short',
        await session.client.command(cut),
        1835,
      );
      // No reply from the server, none through the proxy; the ping after them is the judge.
      for (let body = 0; body < 4; body++) {
        session.client.sendOnly(
          Buffer.concat([Buffer.from([Command.STMT_CLOSE]), Buffer.alloc(body)]),
        );
      }
      for (let body = 0; body < 6; body++) {
        session.client.sendOnly(
          Buffer.concat([Buffer.from([Command.STMT_SEND_LONG_DATA]), Buffer.alloc(body)]),
        );
      }
      await session.command(
        'ping after cut COM_STMT_CLOSE and SEND_LONG_DATA',
        Buffer.from([Command.PING]),
      );
      await session.command('reset cut short', Buffer.from([Command.STMT_RESET]), 1243);
      await session.command('fetch cut short', Buffer.from([Command.STMT_FETCH]), 1243);
      await session.command('bulk execute cut short', Buffer.from([0xfa]), 1835);
      // The statement may have been closed by the cut COM_STMT_CLOSE (it names whatever the
      // bytes after it say): the server decides, the cache does not answer for it.
      await session.execute(`SELECT v FROM ${DB}.t WHERE id = ?`, [1]);
      await session.query(`SELECT v FROM ${DB}.t WHERE id = 2`);
      if (run.isProxy)
        run.check(
          !/worker \d+ (exited|failed)|session error/.test(proxy.process.log()),
          'no worker died, and no session needed its guard (every field is bounds-checked)',
        );
    }));
});
