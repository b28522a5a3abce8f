/**
 * The compressed protocol (CLIENT_COMPRESS) between clients and the proxy: real clients that ask
 * for it get it, hits included, and see what the server's own compression shows them. The
 * byte-for-byte comparison of replies over compression is in differential.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { CompressedPackets } from '../../src/protocol/compressed-packets.ts';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { readErr } from '../../src/protocol/generic-packets.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient } from '../support/raw-client.ts';
import { onServer } from '../support/server-statements.ts';

const DB = 'nc_compress';

let proxy: ProxyProcess;
let dir: string;
let savedLocalInfile = '';

function login(port: number, compress: boolean) {
  return {
    host: port === BACKEND_PORT ? BACKEND_HOST : '127.0.0.1',
    port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
    compress,
  };
}

async function statusValue(port: number, compress: boolean, name: string): Promise<string> {
  const connection = await mysql.createConnection(login(port, compress));
  try {
    const [rows] = await connection.query(`SHOW STATUS LIKE '${name}'`);
    return (rows as { Value: string }[])[0]!.Value;
  } finally {
    await connection.end();
  }
}

/** The mariadb command-line client, with --compress, on a script read from its input. */
function runCli(port: number, args: string[], input: string): { code: number | null; out: string } {
  const run = spawnSync(
    'mariadb',
    [
      '--no-defaults',
      '-h127.0.0.1',
      `-P${port}`,
      '--protocol=TCP',
      `-u${BACKEND_USER}`,
      ...(BACKEND_PASSWORD === '' ? [] : [`--password=${BACKEND_PASSWORD}`]),
      '--compress',
      ...args,
      DB,
    ],
    { input, encoding: 'utf8', timeout: 60_000 },
  );
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nicecache-compress-'));
  [[savedLocalInfile]] = (await onServer(['SELECT @@GLOBAL.local_infile'])) as [[string]];
  await onServer([
    'SET GLOBAL local_infile = 1',
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(200))`,
    `INSERT INTO ${DB}.t SELECT seq, REPEAT(CHAR(97 + seq % 26), 150) FROM seq_1_to_3000`,
    `CREATE TABLE ${DB}.loaded (id INT, v VARCHAR(10))`,
  ]);
  proxy = await startProxyProcess({ workers: 2 });
});

after(async () => {
  await proxy?.stop();
  await onServer([
    `DROP DATABASE IF EXISTS ${DB}`,
    `SET GLOBAL local_infile = ${savedLocalInfile}`,
  ]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the compressed protocol', () => {
  test('mysql2 and the mariadb connector with compress get the server’s rows, and hits', async () => {
    const read = 'SELECT id, v FROM t WHERE id <= 2000 ORDER BY id';
    const direct = await mysql.createConnection(login(BACKEND_PORT, false));
    const [expected] = await direct.query(read);
    await direct.end();
    const hitsBefore = Number(await statusValue(proxy.port, false, 'Qcache_hits'));

    const m2 = await mysql.createConnection(login(proxy.port, true));
    // A reply of about 300 KB: many reads of the server, each compressed on its way.
    assert.deepEqual((await m2.query(read))[0], expected);
    assert.deepEqual((await m2.query(read))[0], expected);
    const [executed] = await m2.execute('SELECT v FROM t WHERE id = ?', [27]);
    assert.deepEqual(executed, [{ v: 'b'.repeat(150) }]);
    await m2.end();

    // The connector sends its commands without waiting for the replies before them.
    const md = await mariadb.createConnection({ ...login(proxy.port, true), pipelining: true });
    const rows = await Promise.all(
      [3, 4, 5, 3].map((id) => md.query<{ v: string }[]>('SELECT v FROM t WHERE id = ?', [id])),
    );
    assert.deepEqual(
      rows.map((result) => result[0]!.v),
      [3, 4, 5, 3].map((id) => String.fromCharCode(97 + (id % 26)).repeat(150)),
    );
    await md.end();

    // mysql2's second read, and the connector's second `id = 3`, were answered by the cache.
    assert.equal(Number(await statusValue(proxy.port, false, 'Qcache_hits')) - hitsBefore, 2);
  });

  test('SHOW STATUS and SESSION_STATUS say Compression ON to a compressing client and OFF to the others, as the server does, with the cache and without', async () => {
    const relay = await startProxyProcess({ workers: 1, extraArgs: ['--query-cache-size', '0'] });
    const sessionStatus = async (port: number, compress: boolean): Promise<unknown> => {
      const connection = await mysql.createConnection(login(port, compress));
      try {
        return (
          await connection.query(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COMPRESSION'",
          )
        )[0];
      } finally {
        await connection.end();
      }
    };
    try {
      for (const port of [proxy.port, relay.port]) {
        const target = port === proxy.port ? 'cache' : 'relay';
        for (const compress of [true, false]) {
          assert.equal(
            await statusValue(port, compress, 'Compression'),
            await statusValue(BACKEND_PORT, compress, 'Compression'),
            `${target}, compress: ${compress}`,
          );
          assert.deepEqual(
            await sessionStatus(port, compress),
            await sessionStatus(BACKEND_PORT, compress),
            `${target}, compress: ${compress}, SESSION_STATUS`,
          );
        }
        assert.equal(await statusValue(port, true, 'Compression'), 'ON', target);
      }
    } finally {
      await relay.stop();
    }
  });

  test('the command-line client: a LOCAL INFILE after a result in one multi-statement, as directly', () => {
    // The CLI (libmariadb) numbers the file's packets from the compressed packets it read, which
    // the proxy numbers its own way: the server must still get them in order.
    const file = join(dir, 'rows.csv');
    writeFileSync(file, '1,a\n2,b\n3,c\n');
    const script = [
      'delimiter //',
      `SELECT COUNT(*) FROM t; LOAD DATA LOCAL INFILE '${file}' INTO TABLE loaded FIELDS TERMINATED BY ','; SELECT COUNT(*) FROM loaded //`,
      'delimiter ;',
      'SELECT id, v FROM loaded ORDER BY id;',
      'DELETE FROM loaded;',
      `SELECT id, LEFT(v, 10) FROM t WHERE id IN (1, 500, 2999) ORDER BY id;`,
    ].join('\n');
    const direct = runCli(BACKEND_PORT, ['--local-infile=1'], script);
    assert.equal(direct.code, 0, direct.out);
    const proxied = runCli(proxy.port, ['--local-infile=1'], script);
    assert.equal(proxied.code, 0, proxied.out);
    assert.equal(proxied.out, direct.out);
    assert.match(proxied.out, /COUNT\(\*\)\n3\n/);
  });

  test('TLS and compression together', () => {
    const run = runCli(
      proxy.port,
      ['--ssl', '--batch', '--skip-column-names'],
      "SHOW STATUS LIKE 'Compression'; SHOW STATUS LIKE 'Ssl_version'; SELECT LENGTH(v) FROM t WHERE id = 9;",
    );
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /^Compression\tON\nSsl_version\tTLSv1\.[23]\n150\n$/);
  });

  test('a compressed packet that does not inflate: error 1157, the connection ends, others go on', async () => {
    const client = await RawClient.connect({
      host: '127.0.0.1',
      port: proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
      compress: true,
    });
    assert.ok(client.compressed);
    const loginBytes = Buffer.concat(client.received).length;
    // A header that promises 100 bytes inflated, then bytes that are no zlib stream.
    const garbage = Buffer.alloc(20, 0x5a);
    const header = Buffer.alloc(7);
    header.writeUIntLE(garbage.length, 0, 3);
    header[3] = 0;
    header.writeUIntLE(100, 4, 3);
    client.socket.write(Buffer.concat([header, garbage]));
    await new Promise<void>((resolve) => {
      if (client.closed) resolve();
      else client.socket.once('close', () => resolve());
    });
    // What came after the login, read as the client would: compressed packets, then packets.
    const after = Buffer.concat(client.received).subarray(loginBytes);
    const payloads: Buffer[] = [];
    const framer = new PacketFramer((packet) => payloads.push(Buffer.from(packet.payload!)));
    new CompressedPackets().read(after, after.length, (bytes, length) =>
      framer.push(bytes, length),
    );
    assert.equal(payloads.length, 1);
    assert.equal(payloads[0]![0], PacketHeader.ERR);
    const err = readErr(payloads[0]!);
    assert.equal(err.errno, 1157);
    assert.equal(err.sqlState, '08S01');

    const other = await mysql.createConnection(login(proxy.port, true));
    assert.deepEqual((await other.query('SELECT id FROM t WHERE id = 1'))[0], [{ id: 1 }]);
    await other.end();
  });

  test('COM_CHANGE_USER over compression, with mysql2 and the mariadb connector, as directly', async () => {
    const seen = async (port: number): Promise<unknown[]> => {
      const rows: unknown[] = [];
      const viaMysql2 = await mysql.createConnection(login(port, true));
      await viaMysql2.changeUser({ ...login(port, true), database: 'mysql' });
      rows.push((await viaMysql2.query('SELECT DATABASE() AS d, CURRENT_USER() AS u'))[0]);
      // The next command after the change is numbered from 0 again, and answered.
      rows.push((await viaMysql2.query('SELECT COUNT(*) AS n FROM nc_compress.t'))[0]);
      await viaMysql2.end();
      const viaMariadb = await mariadb.createConnection(login(port, true));
      await viaMariadb.changeUser({ ...login(port, true), database: 'mysql' });
      rows.push(await viaMariadb.query('SELECT DATABASE() AS d, CURRENT_USER() AS u'));
      await viaMariadb.end();
      return rows;
    };
    const direct = await seen(BACKEND_PORT);
    assert.deepEqual(await seen(proxy.port), direct);
    assert.equal((direct[0] as Array<{ d: string }>)[0]!.d, 'mysql');
  });

  test('compressed packets numbered as the server numbers them, and refused as it refuses them', async () => {
    /** A compressed packet numbered `sequence` carrying `bytes` as they are. */
    const compressed = (sequence: number, bytes: Buffer): Buffer => {
      const header = Buffer.alloc(7);
      header.writeUIntLE(bytes.length, 0, 3);
      header[3] = sequence;
      return Buffer.concat([header, bytes]);
    };
    const query = (sql: string): Buffer =>
      encodePacket(Buffer.concat([Buffer.of(Command.QUERY), Buffer.from(sql)]), 0);
    const a = query("SELECT 'first'");
    const b = query("SELECT 'second'");
    // What a client may send, and what MariaDB makes of it: each command is numbered from 0,
    // even one whose start came in the packet before; within a command each packet is one more.
    const cases: Array<[string, Buffer[]]> = [
      ['one command numbered 1', [compressed(1, a)]],
      ['two commands, each numbered 0', [compressed(0, a), compressed(0, b)]],
      ['two commands numbered 0 and 1', [compressed(0, a), compressed(1, b)]],
      [
        'one command in two packets, 0 and 1',
        [compressed(0, a.subarray(0, 7)), compressed(1, a.subarray(7))],
      ],
      [
        'one command in two packets, 0 and 0',
        [compressed(0, a.subarray(0, 7)), compressed(0, a.subarray(7))],
      ],
      [
        'the second command begun in the first packet, ended in one numbered 1',
        [compressed(0, Buffer.concat([a, b.subarray(0, 6)])), compressed(1, b.subarray(6))],
      ],
    ];
    /** What the client sees: the answers, the server's error, and whether the connection ends. */
    const outcome = async (port: number, packets: Buffer[]): Promise<string[]> => {
      const client = await RawClient.connect({ ...login(port, true), host: '127.0.0.1' });
      for (const packet of packets) {
        client.socket.write(packet);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seen: string[] = [];
      for (;;) {
        const packet = await client.readPacket(1500).catch(() => 'waits' as const);
        if (packet === 'waits' || packet === null) {
          seen.push(packet === null ? 'closed' : 'waits');
          break;
        }
        const text = packet.payload.toString('latin1');
        if (packet.payload[0] === PacketHeader.ERR) {
          const err = readErr(packet.payload);
          seen.push(`error ${err.errno} ${err.sqlState} ${err.message}`);
        } else if (/first|second/.test(text) && !text.includes('def')) {
          seen.push(/first/.test(text) ? 'first' : 'second');
        }
      }
      client.destroy();
      return seen;
    };
    const outOfOrder = 'error 1156 08S01 Got packets out of order';
    for (const [name, packets] of cases) {
      const direct = await outcome(BACKEND_PORT, packets);
      assert.deepEqual(await outcome(proxy.port, packets), direct, name);
      // The cases hold both kinds: refused, and answered.
      if (name === 'one command numbered 1') assert.deepEqual(direct, [outOfOrder, 'closed']);
      if (name === 'two commands, each numbered 0')
        assert.deepEqual(direct, ['first', 'second', 'waits']);
    }
  });
});
