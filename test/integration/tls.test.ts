/**
 * TLS from clients to the proxy (--tls-cert, --tls-key): real clients that verify the proxy's
 * certificate get the server's answers, the cache serves them, and a hit whose reply waits in a
 * slow client's TLS stream keeps its bytes. The backend connection stays as it was.
 *
 * The certificate is made here with openssl (scripts/setup.sh installs it), for 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as connectTls } from 'node:tls';
import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { Capability, Command } from '../../src/protocol/constants.ts';
import {
  encodeHandshakeResponse,
  greetingScramble,
  parseGreeting,
} from '../../src/protocol/handshake.ts';
import { nativePasswordScramble } from '../../src/protocol/native-password.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';
import { runStatements } from '../support/cache-scenario.ts';
import { makeCertificate } from '../support/certificates.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { LoginError, RawClient } from '../support/raw-client.ts';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';

const DB = 'nc_tls';
/** utf8mb4_general_ci */
const CHARSET = 45;

let dir: string;
let cert: string;
let key: string;
let ca: string;
let proxy: ProxyProcess;
let plainProxy: ProxyProcess;
/** Started with no certificate: it makes a self-signed one. */
let selfSignedProxy: ProxyProcess;

function makeServerCertificate(): void {
  makeCertificate(cert, key);
  ca = readFileSync(cert, 'utf8');
}

async function direct(sql: string): Promise<unknown> {
  const connection = await mysql.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
  });
  try {
    return (await connection.query(sql))[0];
  } finally {
    await connection.end();
  }
}

async function qcacheHits(): Promise<number> {
  const connection = await mysql.createConnection({
    host: '127.0.0.1',
    port: proxy.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    ssl: { ca },
  });
  try {
    const [rows] = await connection.query("SHOW STATUS LIKE 'Qcache_hits'");
    return Number((rows as { Value: string }[])[0]!.Value);
  } finally {
    await connection.end();
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nicecache-tls-'));
  cert = join(dir, 'cert.pem');
  key = join(dir, 'key.pem');
  makeServerCertificate();
  const admin = await RawClient.connect({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: BACKEND_DATABASE,
  });
  for (const sql of [
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
    `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two'), (3, 'three')`,
    `CREATE TABLE ${DB}.big (id INT PRIMARY KEY, pad TEXT)`,
    `INSERT INTO ${DB}.big SELECT seq, REPEAT(CHAR(65 + seq % 26), 1000) FROM seq_1_to_12000`,
  ]) {
    await admin.query(sql);
  }
  admin.close();
  proxy = await startProxyProcess({
    // Two workers sharing one store: the slow reader's pinned view is another worker's to keep.
    workers: 2,
    extraArgs: [
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      // Small, so that a few hundred fills go round the store's memory several times; the
      // limit lets a 12 MB result in, more than the kernel's socket buffers take at once.
      '--query-cache-size',
      '32M',
      '--query-cache-limit',
      '16M',
    ],
  });
  plainProxy = await startProxyProcess({ workers: 1, extraArgs: ['--tls', 'off'] });
  selfSignedProxy = await startProxyProcess({ workers: 1 });
});

after(async () => {
  await proxy?.stop();
  await plainProxy?.stop();
  await selfSignedProxy?.stop();
  rmSync(dir, { recursive: true, force: true });
  await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
});

describe('TLS to clients', () => {
  test('mysql2 and the mariadb connector, verifying the certificate, get what the server says, and hits', async () => {
    const read = 'SELECT id, v FROM t ORDER BY id';
    const expected = await direct(read);
    const hitsBefore = await qcacheHits();

    // The same login for both drivers: to the proxy, over TLS, checking its certificate.
    const login = {
      host: '127.0.0.1',
      port: proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
      ssl: { ca },
    };
    const m2 = await mysql.createConnection(login);
    const stream = (m2 as unknown as { connection: { stream: { encrypted?: boolean } } }).connection
      .stream;
    assert.equal(stream.encrypted, true, 'mysql2 is not on TLS');
    assert.deepEqual((await m2.query(read))[0], expected);
    assert.deepEqual((await m2.query(read))[0], expected);
    const [executed] = await m2.execute('SELECT v FROM t WHERE id = ?', [2]);
    assert.deepEqual(executed, [{ v: 'two' }]);
    await m2.end();

    const md = await mariadb.createConnection(login);
    // The connector's rows are an array with a `meta` property: compared as plain rows.
    const rowsOf = async (): Promise<unknown[]> => [...(await md.query<unknown[]>(read))];
    assert.deepEqual(await rowsOf(), expected);
    assert.deepEqual(await rowsOf(), expected);
    await md.end();

    // Each driver's second read is a hit (the two announce different capabilities, so each has
    // results of its own).
    assert.equal((await qcacheHits()) - hitsBefore, 2);
  });

  test('the mariadb command-line client with --ssl-verify-server-cert', () => {
    assertCliServedOverTls(proxy.port, [`--ssl-ca=${cert}`, '--ssl-verify-server-cert']);
  });

  test('a client that does not ask for TLS is served in the clear as before', async () => {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
    });
    const stream = (connection as unknown as { connection: { stream: { encrypted?: boolean } } })
      .connection.stream;
    assert.notEqual(stream.encrypted, true);
    assert.deepEqual((await connection.query('SELECT v FROM t WHERE id = 1'))[0], [{ v: 'one' }]);
    await connection.end();
  });

  test('a ClientHello in the same packet as the SSLRequest: the login, renumbered, then a query', async () => {
    const result = await rawTlsSession(proxy.port, 'SELECT v FROM t WHERE id = 2');
    assert.equal(result.okSequenceId, 3, 'the OK after a TLS login is packet 3 for the client');
    assert.deepEqual(result.rows, ['two']);
  });

  test('without a certificate one is made at start: mariadb --ssl is served over TLS, and the startup line gives its fingerprint', async () => {
    const said = /a self-signed certificate made at start \(SHA-256 ([0-9A-F:]+);/.exec(
      selfSignedProxy.log(),
    );
    assert.ok(said, `the startup line does not say so:\n${selfSignedProxy.log()}`);
    assertCliServedOverTls(selfSignedProxy.port, []);
    // The certificate served is the one the line names, and no CA vouches for it.
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: selfSignedProxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
      ssl: { rejectUnauthorized: false },
    });
    const stream = (
      connection as unknown as {
        connection: { stream: { getPeerCertificate(): { fingerprint256: string } } };
      }
    ).connection.stream;
    assert.equal(stream.getPeerCertificate().fingerprint256, said[1]);
    await connection.end();
    await assert.rejects(
      mysql.createConnection({
        host: '127.0.0.1',
        port: selfSignedProxy.port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        ssl: {},
      }),
      /self[- ]signed/,
    );
  });

  test('with --tls off the greeting offers no TLS, and an SSLRequest gets error 1043', async () => {
    const tcp = connectTcp(plainProxy.port, '127.0.0.1');
    const packets = packetsOf(tcp);
    const greeting = parseGreeting((await packets.next()).payload)!;
    assert.equal(greeting.capabilities & Capability.SSL, 0);
    tcp.write(encodePacket(sslRequest(), 1));
    const reply = await packets.next();
    assert.equal(reply.payload[0], 0xff);
    assert.equal(reply.payload.readUInt16LE(1), 1043);
    tcp.destroy();
  });

  // In the clear, the socket holds the hit's own bytes (a view of the store) until it has sent
  // them; over TLS they are encrypted at once, and the TLS stream holds its own copy.
  for (const overTls of [false, true]) {
    test(
      `a large hit queued behind a slow reader ${overTls ? 'over TLS' : 'in the clear'} keeps its bytes while fills reuse the memory`,
      { timeout: 60_000 },
      async () => {
        const read = 'SELECT id, pad FROM big ORDER BY id';
        const expected = await direct(read);
        const options = {
          host: '127.0.0.1',
          port: proxy.port,
          user: BACKEND_USER,
          password: BACKEND_PASSWORD,
          database: DB,
          ...(overTls ? { ssl: { ca } } : {}),
        };
        const workerOf = async (connection: mysql.Connection): Promise<string> => {
          const [rows] = await connection.query("SHOW STATUS LIKE 'Nicecache_worker'");
          return (rows as Array<{ Value: string }>)[0]!.Value;
        };
        // The fills go through the other worker: the one store is theirs to reuse, and the pin
        // that keeps the queued view is the slow reader's worker's.
        const filler = await mysql.createConnection(options);
        const others: mysql.Connection[] = [];
        let slow = await mysql.createConnection(options);
        while ((await workerOf(slow)) === (await workerOf(filler))) {
          assert.ok(others.length < 40, 'the kernel puts connections on both workers');
          others.push(slow);
          slow = await mysql.createConnection(options);
        }
        await Promise.all(others.map((connection) => connection.end()));
        await filler.query('RESET QUERY CACHE');
        await filler.query(read);
        await slow.query(read);
        const hitsBefore = await qcacheHits();
        const socket = (slow as unknown as { connection: { stream: Socket } }).connection.stream;
        // The slow client stops reading: most of the ~12 MB hit stays queued in the proxy.
        socket.pause();
        const pending = slow.query(read);
        await sleep(200);
        // Meanwhile other results (~70 MB) go round the 32 MB store twice.
        for (let i = 0; i < 300; i++) {
          await filler.query(
            `SELECT id, pad FROM big WHERE id BETWEEN ${i * 20} AND ${i * 20 + 240}`,
          );
        }
        socket.resume();
        assert.deepEqual((await pending)[0], expected);
        assert.equal((await qcacheHits()) - hitsBefore, 1, 'the slow read was not a hit');
        await filler.end();
        await slow.end();
      },
    );
  }
});

describe('TLS certificate reload', () => {
  test('SIGHUP reads the files again: new connections get the new certificate, open ones carry on', async () => {
    const liveCert = join(dir, 'live-cert.pem');
    const liveKey = join(dir, 'live-key.pem');
    copyFileSync(cert, liveCert);
    copyFileSync(key, liveKey);
    const renewedCert = join(dir, 'renewed-cert.pem');
    const renewedKey = join(dir, 'renewed-key.pem');
    makeCertificate(renewedCert, renewedKey);
    const reloading = await startProxyProcess({
      workers: 2,
      extraArgs: ['--tls-cert', liveCert, '--tls-key', liveKey],
    });
    try {
      const options = {
        host: '127.0.0.1',
        port: reloading.port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: DB,
        ssl: { rejectUnauthorized: false },
      };
      const fingerprint = (connection: mysql.Connection): string =>
        (
          connection as unknown as {
            connection: { stream: { getPeerCertificate(): { fingerprint256: string } } };
          }
        ).connection.stream.getPeerCertificate().fingerprint256;
      const before = await mysql.createConnection(options);
      const original = fingerprint(before);

      copyFileSync(renewedCert, liveCert);
      copyFileSync(renewedKey, liveKey);
      reloading.child.kill('SIGHUP');
      await waitFor(() => /read again from/.test(reloading.log()), 'the reload');
      // Both workers take connections: several new ones, all with the renewed certificate.
      for (let i = 0; i < 4; i++) {
        const after = await mysql.createConnection(options);
        assert.notEqual(fingerprint(after), original, 'a new connection got the old certificate');
        await after.end();
      }
      assert.deepEqual((await before.query('SELECT v FROM t WHERE id = 1'))[0], [{ v: 'one' }]);
      assert.equal(fingerprint(before), original);
      await before.end();

      // A key that does not fit: said so, and the renewed certificate stays in force.
      writeFileSync(liveKey, readFileSync(join(dir, 'key.pem')));
      reloading.child.kill('SIGHUP');
      await waitFor(
        () => /TLS keeps the certificate in force/.test(reloading.log()),
        'the refusal',
      );
      const still = await mysql.createConnection(options);
      assert.notEqual(fingerprint(still), original);
      assert.deepEqual((await still.query('SELECT v FROM t WHERE id = 2'))[0], [{ v: 'two' }]);
      await still.end();
    } finally {
      await reloading.stop();
    }
  });
});

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (condition()) return;
    await sleep(50);
  }
  throw new Error(`${what} did not happen within 5 s`);
}

describe('--require-secure-transport', () => {
  let server: EphemeralServer;
  let strict: ProxyProcess;

  before(async () => {
    // The server's own answer to the same logins: one with require_secure_transport=ON.
    server = await startEphemeralServer({ serverOptions: { require_secure_transport: 'ON' } });
    strict = await startProxyProcess({
      workers: 1,
      extraArgs: ['--tls-cert', cert, '--tls-key', key, '--require-secure-transport'],
    });
  });

  after(async () => {
    await strict?.stop();
    await server?.stop();
  });

  /** What a plain login gets after the greeting: the bytes of the refusal, as on the wire. */
  async function refusal(port: number, user: string, password: string): Promise<Buffer> {
    const client = await RawClient.open('127.0.0.1', port);
    try {
      await assert.rejects(
        client.login({ host: '127.0.0.1', port, user, password, database: null }),
        LoginError,
      );
      const received = Buffer.concat(client.received);
      return received.subarray(4 + received.readUIntLE(0, 3));
    } finally {
      client.close();
    }
  }

  test('a login without TLS is refused as the server refuses it, byte for byte', async () => {
    for (const [user, password] of [
      ['root', ''],
      ['root', 'not the password'],
      ['nobody', 'x'],
    ] as const) {
      const expected = await refusal(server.port, user, password);
      assert.match(expected.subarray(4).toString('latin1'), /Access denied/, 'the server refuses');
      assert.deepEqual(
        await refusal(strict.port, user, password),
        expected,
        `${user} with password '${password}'`,
      );
    }
  });

  test('a client that starts TLS logs in and is served', async () => {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: strict.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
      ssl: { ca },
    });
    try {
      assert.deepEqual((await connection.query('SELECT v FROM t WHERE id = 3'))[0], [
        { v: 'three' },
      ]);
    } finally {
      await connection.end();
    }
    await assert.rejects(
      mysql.createConnection({
        host: '127.0.0.1',
        port: strict.port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
      }),
      (error: { errno?: number }) => error.errno === 1045,
    );
  });

  test('with --tls off it is a refused start, as the server refuses it with no secure transport', async () => {
    await assert.rejects(
      startProxyProcess({ extraArgs: ['--require-secure-transport', '--tls', 'off'] }),
      /--require-secure-transport with --tls off: no secure transport/,
    );
  });
});

describe('TLS settings', () => {
  test('a key that does not match the certificate is a refused start that says so', async () => {
    const other = join(dir, 'other-key.pem');
    const made = spawnSync('openssl', ['genrsa', '-out', other, '2048']);
    assert.equal(made.status, 0);
    await assert.rejects(
      startProxyProcess({ extraArgs: ['--tls-cert', cert, '--tls-key', other] }),
      /--tls-cert .* with --tls-key .*/,
    );
    await assert.rejects(
      startProxyProcess({ extraArgs: ['--tls-cert', cert] }),
      /--tls-cert and --tls-key go together/,
    );
    await assert.rejects(
      startProxyProcess({ extraArgs: ['--tls', 'off', '--tls-cert', cert, '--tls-key', key] }),
      /--tls off offers no TLS/,
    );
    await assert.rejects(startProxyProcess({ extraArgs: ['--tls', 'on'] }), /--tls: expected/);
  });
});

/** The `mariadb` CLI with --ssl and `options` logs in to `port`, is on TLS, and is served. */
function assertCliServedOverTls(port: number, options: string[]): void {
  const run = spawnSync(
    'mariadb',
    [
      '-h127.0.0.1',
      `-P${port}`,
      `-u${BACKEND_USER}`,
      `--password=${BACKEND_PASSWORD}`,
      '--ssl',
      ...options,
      DB,
      '-e',
      'status; SELECT v FROM t WHERE id = 3',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /SSL:\s+Cipher in use is \S+/);
  assert.match(run.stdout, /\nv\nthree\n/);
}

/** The SSLRequest of a MariaDB client: the first 32 bytes of a handshake response, CLIENT_SSL set. */
function sslRequest(): Buffer {
  const payload = Buffer.alloc(32);
  payload.writeUInt32LE(clientCapabilities(), 0);
  payload.writeUInt32LE(1 << 30, 4);
  payload[8] = CHARSET;
  return payload;
}

function clientCapabilities(): number {
  return (
    (Capability.PROTOCOL_41 |
      Capability.SECURE_CONNECTION |
      Capability.PLUGIN_AUTH |
      Capability.TRANSACTIONS |
      Capability.CONNECT_WITH_DB |
      Capability.SSL) >>>
    0
  );
}

interface Packet {
  sequenceId: number;
  payload: Buffer;
}

/** The packets read from `stream`, one at a time. */
function packetsOf(stream: NodeJS.ReadableStream): { next(): Promise<Packet> } {
  const queue: Packet[] = [];
  let wake: (() => void) | null = null;
  const framer = new PacketFramer((packet) => {
    queue.push({ sequenceId: packet.sequenceId, payload: Buffer.from(packet.payload!) });
    wake?.();
  });
  stream.on('data', (chunk: Buffer) => framer.push(chunk));
  return {
    async next(): Promise<Packet> {
      const deadline = Date.now() + 10_000;
      while (queue.length === 0) {
        if (Date.now() > deadline) throw new Error('no packet within 10 s');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
        wake = null;
      }
      return queue.shift()!;
    },
  };
}

/**
 * A login over TLS by hand, with the SSLRequest and the TLS ClientHello in one TCP write (so the
 * proxy reads both at once), then one query: the OK's sequence id and the rows' first column.
 */
async function rawTlsSession(
  port: number,
  sql: string,
): Promise<{ okSequenceId: number; rows: string[] }> {
  const tcp = connectTcp(port, '127.0.0.1');
  const greetingBytes = await new Promise<Buffer>((resolve) => tcp.once('data', resolve));
  const greetingPayload = greetingBytes.subarray(4);
  const greeting = parseGreeting(greetingPayload)!;
  assert.ok(greeting.capabilities & Capability.SSL, 'the greeting does not offer TLS');
  let first = true;
  const transport = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      if (first) {
        first = false;
        tcp.write(Buffer.concat([encodePacket(sslRequest(), 1), chunk]));
      } else {
        tcp.write(chunk);
      }
      callback();
    },
  });
  tcp.on('data', (chunk: Buffer) => transport.push(chunk));
  const secure = connectTls({ socket: transport, ca, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  const packets = packetsOf(secure);
  const authResponse =
    BACKEND_PASSWORD === ''
      ? Buffer.alloc(0)
      : nativePasswordScramble(BACKEND_PASSWORD, greetingScramble(greetingPayload));
  secure.write(
    encodePacket(
      encodeHandshakeResponse({
        capabilities: clientCapabilities(),
        characterSet: CHARSET,
        user: BACKEND_USER,
        authResponse,
        database: DB,
        authPlugin: 'mysql_native_password',
      }),
      2,
    ),
  );
  const ok = await packets.next();
  assert.equal(ok.payload[0], 0x00, `login failed: ${ok.payload.toString('latin1')}`);
  secure.write(encodePacket(Buffer.concat([Buffer.of(Command.QUERY), Buffer.from(sql)]), 0));
  const rows: string[] = [];
  const columns = (await packets.next()).payload[0]!;
  for (let i = 0; i < columns; i++) await packets.next();
  await packets.next(); // EOF after the column definitions
  for (;;) {
    const row = await packets.next();
    if (row.payload[0] === 0xfe && row.payload.length < 9) break;
    rows.push(row.payload.subarray(1, 1 + row.payload[0]!).toString('utf8'));
  }
  secure.destroy();
  tcp.destroy();
  return { okSequenceId: ok.sequenceId, rows };
}
