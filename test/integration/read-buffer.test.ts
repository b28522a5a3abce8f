/**
 * The proxy reads each socket into a buffer it reuses from one read to the next
 * (src/proxy/socket-reads.ts). These scenarios make that reuse visible if it were wrong: relayed
 * bytes queued behind a slow reader (replies to a client that does not read, commands to a
 * server that is busy) while more reads arrive, commands cut across reads anywhere (mid-header
 * too), and many commands in one read. Each exchange runs directly against the server and
 * through the proxy (cache on, and as a plain relay), and the replies are compared byte for byte.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Command } from '../../src/protocol/constants.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';
import { queryPacket, runStatements } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient, replyBytes } from '../support/raw-client.ts';
import type { RawPacket } from '../support/raw-client.ts';

const DB = 'nc_read_buffer';

interface Exchange {
  /** Cut the written stream into pieces of these sizes, in turn (one write each, a pause between). */
  pieces?: readonly number[];
  /** Stop reading for this long after writing, then read in short bursts. */
  slowReaderMs?: number;
}

async function connectTo(port: number): Promise<RawClient> {
  return RawClient.connect({
    host: BACKEND_HOST,
    port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
  });
}

/**
 * Writes every command at once (or in `pieces`), then reads the replies in order: the bytes of
 * every reply, one buffer per command.
 */
async function pipelined(port: number, payloads: Buffer[], exchange: Exchange): Promise<Buffer[]> {
  const client = await connectTo(port);
  try {
    const stream = Buffer.concat(payloads.map((payload) => encodePacket(payload, 0)));
    if (exchange.slowReaderMs !== undefined) client.socket.pause();
    if (exchange.pieces === undefined) {
      client.socket.write(stream);
    } else {
      let at = 0;
      for (let index = 0; at < stream.length; index++) {
        const size = exchange.pieces[index % exchange.pieces.length]!;
        client.socket.write(stream.subarray(at, at + size));
        at += size;
        // Long enough for the proxy to read each piece on its own.
        await sleep(2);
      }
    }
    let burst: ReturnType<typeof setInterval> | null = null;
    if (exchange.slowReaderMs !== undefined) {
      await sleep(exchange.slowReaderMs);
      // Read a little, stop again: the proxy's writes keep meeting a full socket.
      let reading = false;
      burst = setInterval(() => {
        reading = !reading;
        if (reading) client.socket.resume();
        else client.socket.pause();
      }, 5);
    }
    try {
      const replies: Buffer[] = [];
      for (const payload of payloads) {
        const command = payload[0]!;
        const tracker = new ReplyTracker(replyShapeOf(command)!, client.deprecateEof, command);
        const framer = new PacketFramer((packet) => tracker.feedServer(packet));
        const packets: RawPacket[] = [];
        while (!tracker.done) {
          const packet = await client.readPacket(30_000);
          if (packet === null) throw new Error(`closed after ${replies.length} replies`);
          packets.push(packet);
          framer.push(encodePacket(packet.payload, packet.sequenceId));
        }
        replies.push(replyBytes(packets));
      }
      return replies;
    } finally {
      if (burst !== null) clearInterval(burst);
      client.socket.resume();
    }
  } finally {
    client.close();
  }
}

/** The exchange directly and through each proxy: every reply byte for byte the same. */
async function sameEverywhere(
  proxies: ProxyProcess[],
  payloads: Buffer[],
  exchange: Exchange,
): Promise<void> {
  const direct = await pipelined(BACKEND_PORT, payloads, {});
  for (const proxy of proxies) {
    // Twice: the second run is answered from the cache where it can be.
    for (let round = 0; round < 2; round++) {
      const proxied = await pipelined(proxy.port, payloads, exchange);
      assert.equal(proxied.length, direct.length);
      for (let index = 0; index < direct.length; index++) {
        assert.ok(
          proxied[index]!.equals(direct[index]!),
          `reply ${index} differs through the proxy (round ${round}, ${proxied[index]!.length} bytes against ${direct[index]!.length})`,
        );
      }
    }
  }
}

/** A result of about `megabytes` MB whose every row differs (a reused buffer shows). */
function bigSelect(megabytes: number, salt: number): Buffer {
  const rows = megabytes * 512;
  return queryPacket(
    `SELECT seq, REPEAT(CHAR(65 + (seq + ${salt}) % 26), 2000 + seq % 97) FROM seq_1_to_${rows}`,
  );
}

/** A command of about `size` bytes whose text differs from every other one's. */
function distinctSelect(index: number, size: number): Buffer {
  const text = `${index}:`.padEnd(size, String.fromCharCode(97 + (index % 26)));
  return queryPacket(`SELECT '${text}' AS v${index % 10}`);
}

describe('reads into a reused buffer', () => {
  let cached: ProxyProcess;
  let relay: ProxyProcess;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(200))`,
      `INSERT INTO ${DB}.t SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 200) FROM ${DB}.seq_1_to_300`,
    ]);
    // One worker each: every connection of a scenario meets the same sessions' buffers.
    cached = await startProxyProcess({ workers: 1, extraArgs: ['--query-cache-size', '64M'] });
    relay = await startProxyProcess({ workers: 1, extraArgs: ['--query-cache-size', '0'] });
  });

  after(async () => {
    await cached?.stop();
    await relay?.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
  });

  test('big replies to a client that reads slowly, as the backend keeps sending', async () => {
    const payloads = [bigSelect(8, 0), queryPacket('SELECT 1'), bigSelect(8, 7), bigSelect(4, 3)];
    await sameEverywhere([relay, cached], payloads, { slowReaderMs: 500 });
  });

  test('commands queued to a busy server, as the client keeps sending', async () => {
    // The server reads nothing during the sleep: the proxy's writes to it queue up, and its
    // reads of the client go on meanwhile (each command fits one read, so it is relayed as read).
    const payloads = [queryPacket('SELECT SLEEP(0.5)')];
    for (let index = 0; index < 1500; index++) payloads.push(distinctSelect(index, 6000));
    payloads.push(Buffer.from([Command.PING]));
    await sameEverywhere([relay], payloads, {});
  });

  test('commands relayed as read to a busy server through the cache', async () => {
    // Through the cache, queries behind another wait for its reply (as copies); other commands
    // are relayed as read: COM_STMT_RESET of statements that do not exist, each answered with an
    // error that names its statement id, so a command overwritten in the queue shows.
    const resets = [queryPacket('SELECT SLEEP(0.5)')];
    for (let id = 1; id <= 40_000; id++) {
      const reset = Buffer.from([Command.STMT_RESET, 0, 0, 0, 0]);
      reset.writeUInt32LE(id, 1);
      resets.push(reset);
    }
    await sameEverywhere([cached], resets, {});
  });

  test('commands cut across reads anywhere, mid-header too', async () => {
    const payloads: Buffer[] = [];
    for (let id = 1; id <= 40; id++) payloads.push(queryPacket(`SELECT v FROM t WHERE id = ${id}`));
    payloads.push(queryPacket(`SELECT * FROM t`));
    payloads.push(distinctSelect(2, 4000));
    // Sizes prime to a packet's length: cuts fall on every offset of header and payload.
    await sameEverywhere([relay, cached], payloads, { pieces: [1, 2, 3, 5, 7, 11, 13, 29, 97] });
  });

  test('many commands in one read', async () => {
    const payloads: Buffer[] = [];
    for (let round = 0; round < 5; round++) {
      for (let id = 1; id <= 300; id += 7)
        payloads.push(queryPacket(`SELECT v FROM t WHERE id = ${id}`));
      payloads.push(Buffer.from([Command.PING]));
      payloads.push(queryPacket(`SELECT COUNT(*), SUM(LENGTH(v)) FROM t`));
    }
    await sameEverywhere([relay, cached], payloads, {});
  });
});
