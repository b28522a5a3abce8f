/**
 * Faults: a backend that is down or silent, a backend connection cut mid-result, malformed
 * packets from a client, slow readers and slow backends. Each hits one client only; the proxy and
 * every other client carry on, and the proxy's memory stays bounded.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import mysql from 'mysql2/promise';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { readErr } from '../../src/protocol/generic-packets.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyShape, ReplyTracker } from '../../src/protocol/reply-tracker.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';
import { startFaultForwarder } from '../support/fault-forwarder.ts';
import type { FaultForwarder } from '../support/fault-forwarder.ts';
import { freePort } from '../support/free-port.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient, replyBytes } from '../support/raw-client.ts';
import { onServer } from '../support/server-statements.ts';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';

const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: BACKEND_DATABASE };

function driverConnection(port: number): Promise<Connection> {
  return mariadb.createConnection({
    host: '127.0.0.1',
    port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: BACKEND_DATABASE,
    connectTimeout: 5000,
  });
}

/** Resident memory of a process, in bytes (worker threads included: they share the process). */
function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

async function firstPacketError(port: number): Promise<ReturnType<typeof readErr>> {
  const client = await RawClient.open('127.0.0.1', port);
  const packet = await client.readPacket(10_000);
  assert.ok(packet !== null, 'the client gets a packet, not a silent close');
  assert.equal(packet.payload[0], PacketHeader.ERR);
  assert.equal(packet.sequenceId, 0);
  const closed = await client.readPacket(10_000);
  assert.equal(closed, null, 'then the connection closes');
  return readErr(packet.payload);
}

describe('backend unreachable', () => {
  test('backend down at start: the proxy starts, each client gets a clear error (HY000)', async () => {
    const port = await freePort();
    const proxy = await startProxyProcess({ backend: `127.0.0.1:${port}` });
    try {
      for (let i = 0; i < 3; i++) {
        const err = await firstPacketError(proxy.port);
        assert.equal(err.errno, 1429);
        assert.equal(err.sqlState, 'HY000');
        assert.match(err.message, new RegExp(`Can't connect to server on '127.0.0.1:${port}'`));
      }
      const cli = spawnSync(
        'mariadb',
        ['-h', '127.0.0.1', '-P', String(proxy.port), '-u', 'root', '-e', 'SELECT 1'],
        {
          encoding: 'utf8',
          timeout: 20_000,
        },
      );
      assert.notEqual(cli.status, 0);
      // The CLI wraps errors that arrive before its TLS attempt, but passes the text on.
      assert.match(cli.stderr, new RegExp(`1429.*Can't connect to server on '127.0.0.1:${port}'`));
    } finally {
      assert.equal(await proxy.stop(), 0);
    }
  });

  test('a backend that accepts but never greets: error after --connect-timeout, no hang', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const proxy = await startProxyProcess({
      backend: `127.0.0.1:${port}`,
      extraArgs: ['--connect-timeout', '300'],
    });
    try {
      const started = Date.now();
      const err = await firstPacketError(proxy.port);
      assert.equal(err.errno, 1429);
      assert.match(err.message, /no greeting within 300 ms/);
      assert.ok(Date.now() - started < 5000);
    } finally {
      assert.equal(await proxy.stop(), 0);
      silent.close();
    }
  });
  test("the backend's own refusal before the handshake reaches the client unchanged", async () => {
    // A private server, so filling its connection slots disturbs nobody.
    const server = await startEphemeralServer({ serverOptions: { max_connections: 10 } });
    const proxy = await startProxyProcess({ backend: `127.0.0.1:${server.port}`, workers: 1 });
    const held: RawClient[] = [];
    try {
      // max_connections plus the one extra MariaDB keeps for an administrator.
      for (let i = 0; i < 11; i++) {
        const client = await RawClient.open('127.0.0.1', server.port);
        assert.equal((await client.readPacket())!.payload[0], 10, 'a greeting');
        held.push(client);
      }
      const directly = await RawClient.open('127.0.0.1', server.port);
      const refusal = await directly.readPacket();
      assert.equal(readErr(refusal!.payload).errno, 1040);
      const viaProxy = await RawClient.open('127.0.0.1', proxy.port);
      const relayed = await viaProxy.readPacket();
      assert.deepEqual(relayed, refusal);
      assert.equal(await viaProxy.readPacket(), null, 'then the connection closes');
    } finally {
      for (const client of held) client.destroy();
      assert.equal(await proxy.stop(), 0);
      await server.stop();
    }
  });
});

describe('faults with a live backend', () => {
  let forwarder: FaultForwarder;
  let proxy: ProxyProcess;

  before(async () => {
    forwarder = await startFaultForwarder(BACKEND_HOST, BACKEND_PORT);
    proxy = await startProxyProcess({ backend: `127.0.0.1:${forwarder.port}`, workers: 2 });
  });

  after(async () => {
    assert.equal(await proxy.stop(), 0);
    await forwarder.close();
  });

  test('backend dies mid-result: that client fails, the others and the proxy carry on', async () => {
    const victim = await driverConnection(proxy.port);
    const victimLink = forwarder.connections.at(-1)!;
    const others = [await driverConnection(proxy.port), await driverConnection(proxy.port)];
    victimLink.cutAfter(200_000);
    await assert.rejects(victim.query("SELECT REPEAT('x', 1000) FROM seq_1_to_10000"));
    for (const other of others) {
      const rows = await other.query<Array<{ n: bigint }>>(
        'SELECT COUNT(*) AS n FROM seq_1_to_10000',
      );
      assert.equal(rows[0]!.n, 10000n);
      await other.end();
    }
    const fresh = await driverConnection(proxy.port);
    assert.deepEqual(await fresh.query('SELECT 1 AS one'), [{ one: 1 }]);
    await fresh.end();
    victim.destroy();
  });

  test('malformed packets: that client gets an error or is closed, nobody else notices', async () => {
    const bystander = await driverConnection(proxy.port);
    await bystander.query('SELECT 1');

    // A handshake response far too short.
    let client = await RawClient.open('127.0.0.1', proxy.port);
    const greeting = await client.readPacket();
    client.send(Buffer.from('nope'), greeting!.sequenceId + 1);
    let reply = await client.readPacket();
    assert.equal(readErr(reply!.payload).errno, 1043);
    assert.equal(await client.readPacket(), null);

    // An SSLRequest (TLS is offered, with the certificate made at start), then bytes that are
    // not a TLS handshake: the connection closes. (With --tls off: tls.test.ts.)
    client = await RawClient.open('127.0.0.1', proxy.port);
    await client.readPacket();
    const sslRequest = Buffer.alloc(32);
    sslRequest.writeUInt32LE(0x0800 | 0x0200 | 0x8000, 0);
    client.send(sslRequest, 1);
    client.socket.write(Buffer.from('not a ClientHello, not TLS at all'));
    assert.equal(await client.readPacket(), null);

    // An empty command packet after login.
    client = await RawClient.connect({ host: '127.0.0.1', port: proxy.port, ...login });
    client.send(Buffer.alloc(0), 0);
    reply = await client.readPacket();
    assert.equal(reply!.payload[0], PacketHeader.ERR);
    assert.equal(await client.readPacket(), null);

    // Random bytes instead of a handshake response, then a packet cut short.
    for (let round = 0; round < 20; round++) {
      client = await RawClient.open('127.0.0.1', proxy.port);
      await client.readPacket();
      const noise = Buffer.from(
        Array.from({ length: 1 + ((round * 37) % 200) }, (_, i) => (i * 131 + round * 17) & 0xff),
      );
      client.socket.write(noise);
      if (round % 2 === 0) client.socket.end();
      await new Promise((resolve) => setTimeout(resolve, 20));
      client.destroy();
    }

    // A command packet announced at 1000 bytes, of which 10 arrive before the client vanishes.
    client = await RawClient.connect({ host: '127.0.0.1', port: proxy.port, ...login });
    const header = Buffer.from([0xe8, 0x03, 0x00, 0x00, Command.QUERY]);
    client.socket.write(Buffer.concat([header, Buffer.from('SELECT 1 ')]));
    client.destroy();

    assert.deepEqual(await bystander.query('SELECT 2 AS two'), [{ two: 2 }]);
    await bystander.end();
    assert.doesNotMatch(proxy.log(), /worker \d+ (exited|failed)/);
  });

  test('a slow reader never makes the proxy buffer without bound', async () => {
    const client = await RawClient.connect({ host: '127.0.0.1', port: proxy.port, ...login });
    const baseline = residentBytes(proxy.child.pid!);
    // About 210 MB of rows, which the client does not read for a while.
    client.socket.removeAllListeners('data');
    client.socket.pause();
    client.send(
      Buffer.concat([
        Buffer.from([Command.QUERY]),
        Buffer.from("SELECT REPEAT('x', 1024) FROM seq_1_to_200000"),
      ]),
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const stalled = residentBytes(proxy.child.pid!);
    assert.ok(
      stalled - baseline < 64 * 1024 * 1024,
      `proxy grew by ${(stalled - baseline) >> 20} MB`,
    );

    const tracker = new ReplyTracker(ReplyShape.RESULT, false, Command.QUERY);
    let received = 0;
    const finished = new Promise<void>((resolve) => {
      const framer = new PacketFramer((packet) => {
        if (tracker.feedServer(packet)) resolve();
      }, 64);
      client.socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        framer.push(chunk);
      });
    });
    client.socket.resume();
    await finished;
    assert.ok(received > 200_000 * 1024, `all rows arrived (${received} bytes)`);
    assert.equal(tracker.failed, false);
    client.close();
  });

  test('a slow backend never makes the proxy buffer without bound', async () => {
    const client = await RawClient.connect({ host: '127.0.0.1', port: proxy.port, ...login });
    const link = forwarder.connections.at(-1)!;
    // The backend stops reading: what the client sends piles up in front of it, not in the proxy.
    link.client.pause();
    const baseline = residentBytes(proxy.child.pid!);
    const query = Buffer.concat([
      Buffer.from([Command.QUERY]),
      Buffer.from(`SELECT LENGTH('${'y'.repeat(200 * 1024 * 1024)}')`),
    ]);
    client.socket.write(encodePacket(query, 0));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const stalled = residentBytes(proxy.child.pid!);
    assert.ok(
      stalled - baseline < 64 * 1024 * 1024,
      `proxy grew by ${(stalled - baseline) >> 20} MB`,
    );
    client.destroy();
    link.client.resume();
  });
});

describe('workers', () => {
  test('with --workers 2 the kernel spreads connections over both workers', async () => {
    const proxy = await startProxyProcess({ workers: 2, env: { NICECACHE_DEBUG: '1' } });
    try {
      const clients = await Promise.all(
        Array.from({ length: 24 }, () =>
          RawClient.connect({ host: '127.0.0.1', port: proxy.port, ...login }),
        ),
      );
      for (const client of clients) client.close();
      const workers = new Set(
        [...proxy.log().matchAll(/\[worker (\d+)\] client connected/g)].map((match) => match[1]),
      );
      assert.deepEqual([...workers].sort(), ['0', '1']);
    } finally {
      assert.equal(await proxy.stop(), 0);
    }
  });
});

describe('shutdown', () => {
  test('SIGTERM: running commands finish, idle connections close, exit code 0', async () => {
    const proxy = await startProxyProcess({ workers: 2 });
    const busy = await driverConnection(proxy.port);
    const idle = await driverConnection(proxy.port);
    // The driver also reports a closed connection as an event; the assertions below are what matter.
    for (const connection of [busy, idle]) connection.on('error', () => {});
    const running = busy.query('SELECT SLEEP(1.5) AS slept, 42 AS answer');
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.child.kill('SIGTERM');
    assert.deepEqual(await running, [{ slept: 0, answer: 42 }]);
    assert.equal(await proxy.stop(), 0);
    await assert.rejects(idle.query('SELECT 1'));
    await assert.rejects(driverConnection(proxy.port));
    busy.destroy();
    idle.destroy();
  });

  test('SIGTERM: commands sent before it are answered, those sent after are not read', async () => {
    const proxy = await startProxyProcess({ workers: 1 });
    try {
      const client = await RawClient.connect({ host: proxy.host, port: proxy.port, ...login });
      const query = (sql: string): Buffer =>
        encodePacket(Buffer.concat([Buffer.of(Command.QUERY), Buffer.from(sql)]), 0);
      // A slow command, and one the cache routes, which waits (held) for the reply before it.
      client.writeRaw(
        Buffer.concat([query('SELECT SLEEP(1) AS slept'), query('SELECT 42 AS answered')]),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      proxy.child.kill('SIGTERM');
      // The drain reaches the session while the sleep runs; then the client sends more.
      await new Promise((resolve) => setTimeout(resolve, 300));
      client.writeRaw(query('SELECT 43 AS sent_after'));
      const replies: string[] = [];
      for (let packet = await client.readPacket(10_000); packet !== null;) {
        replies.push(packet.payload.toString('latin1'));
        packet = await client.readPacket(10_000);
      }
      const text = replies.join('\n');
      assert.match(text, /slept/);
      assert.match(text, /answered/);
      assert.doesNotMatch(text, /sent_after/);
      assert.equal(await proxy.stop(), 0);
    } finally {
      await proxy.stop();
    }
  });

  test('SIGTERM: a command waiting for an identical miss is answered before the close', async () => {
    const table = 'nc_drain_flight';
    await onServer([`DROP TABLE IF EXISTS ${table}`, `CREATE TABLE ${table} (id INT)`]);
    await onServer([`INSERT INTO ${table} VALUES (7)`]);
    const proxy = await startProxyProcess({
      workers: 1,
      extraArgs: ['--single-flight-wait', '5000'],
    });
    // Its own connection to the server: the lock is held until it says UNLOCK TABLES.
    const locker = await mysql.createConnection({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      ...login,
    });
    try {
      const first = await RawClient.connect({ host: proxy.host, port: proxy.port, ...login });
      const second = await RawClient.connect({ host: proxy.host, port: proxy.port, ...login });
      // The first read waits for the lock on the server; the second, identical, waits for it
      // in the proxy: nothing of the second's is in flight on its own connection.
      await locker.query(`LOCK TABLES ${table} WRITE`);
      const read = `SELECT id AS waited FROM ${table}`;
      const firstReply = first.query(read);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const secondReply = second.query(read);
      await new Promise((resolve) => setTimeout(resolve, 300));
      proxy.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await locker.query('UNLOCK TABLES');
      for (const reply of [await firstReply, await secondReply]) {
        assert.match(replyBytes(reply).toString('latin1'), /waited/);
      }
      assert.equal(await proxy.stop(), 0);
    } finally {
      await locker.end();
      await proxy.stop();
      await onServer([`DROP TABLE IF EXISTS ${table}`]);
    }
  });
});
