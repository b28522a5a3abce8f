/**
 * The same statements, directly against the server and through the proxy, must give replies that
 * are identical byte for byte: every column type, text and binary protocol, with and without
 * DEPRECATE_EOF, multi-statements, CALL with several result sets, warnings, errors, cursors,
 * LOCAL INFILE, and rows and commands over 16 MB. Each also over the compressed protocol: the
 * server compresses itself, the proxy compresses what it and the server say, and the packets
 * inside must be the same.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  Capability,
  Command,
  MariaDbCapability,
  PacketHeader,
} from '../../src/protocol/constants.ts';
import {
  LONG_DATA,
  execute,
  fetch,
  prepare,
  sendLongData,
  statementCommand,
} from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient, replyBytes, replyError } from '../support/raw-client.ts';
import type { RawClientOptions, RawPacket } from '../support/raw-client.ts';

const DB = 'nc_differential';

/** A labelled reply, as it came off the wire. */
type Transcript = Array<{ step: string; bytes: Buffer }>;

class Recorder {
  readonly transcript: Transcript = [];
  readonly client: RawClient;
  /**
   * Compressed, the server numbers the packets inside anew at each of its flushes (after each
   * result of a multi-statement, say: it takes the compressed packets' number), while the proxy
   * passes on the numbers of its plain connection to the server. Clients do not check them
   * there; the payloads and their order are compared, with the numbers counted on from the first.
   */
  readonly #renumber: boolean;
  constructor(client: RawClient, renumber: boolean) {
    this.client = client;
    this.#renumber = renumber;
  }

  /**
   * Keeps a reply, after checking it failed exactly when `expectedErrno` says so: byte-identical
   * errors where results were meant would prove nothing.
   */
  async record(step: string, packets: RawPacket[], expectedErrno?: number): Promise<RawPacket[]> {
    assert.equal(
      replyError(packets)?.errno,
      expectedErrno,
      `${step}: ${replyError(packets)?.message ?? 'no error'}`,
    );
    const first = packets[0]?.sequenceId ?? 0;
    const numbered = this.#renumber
      ? packets.map((packet, index) => ({ ...packet, sequenceId: (first + index) & 0xff }))
      : packets;
    this.transcript.push({ step, bytes: replyBytes(numbered) });
    await this.#checkBoundary(step);
    return packets;
  }

  /** A reply read too short or too long would leave bytes before the ping's single OK. */
  async #checkBoundary(step: string): Promise<void> {
    const pong = await this.client.command(Buffer.from([Command.PING]));
    assert.equal(pong.length, 1, `after ${step}: ping reply is one packet`);
    assert.equal(pong[0]!.payload[0], PacketHeader.OK, `after ${step}: ping reply is OK`);
  }

  query(sql: string, expectedErrno?: number): Promise<RawPacket[]> {
    return this.client.query(sql).then((packets) => this.record(sql, packets, expectedErrno));
  }

  command(step: string, payload: Buffer, expectedErrno?: number): Promise<RawPacket[]> {
    return this.client
      .command(payload)
      .then((packets) => this.record(step, packets, expectedErrno));
  }

  async prepare(sql: string): Promise<number> {
    const packets = await this.client.command(prepare(sql));
    assert.equal(packets[0]!.payload[0], PacketHeader.OK, `prepare ${sql}`);
    const id = packets[0]!.payload.readUInt32LE(1);
    // Statement ids come from a counter the server does not reset for each connection.
    const [ok, ...rest] = packets;
    const masked = Buffer.from(ok!.payload);
    masked.writeUInt32LE(0, 1);
    await this.record(`prepare ${sql}`, [{ sequenceId: ok!.sequenceId, payload: masked }, ...rest]);
    return id;
  }

  async execute(sql: string, params: Param[]): Promise<void> {
    const id = await this.prepare(sql);
    await this.command(`execute ${sql}`, execute(id, params));
    this.client.sendOnly(statementCommand(Command.STMT_CLOSE, id));
  }
}

async function direct(database: string | null, deprecateEof: boolean): Promise<RawClient> {
  return RawClient.connect({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database,
    deprecateEof,
  });
}

async function admin(sql: string[]): Promise<void> {
  const client = await direct(null, false);
  try {
    for (const statement of sql) {
      const reply = await client.query(statement);
      assert.notEqual(
        reply.at(-1)!.payload[0],
        PacketHeader.ERR,
        `${statement}: ${reply.at(-1)!.payload.toString('utf8', 9)}`,
      );
    }
  } finally {
    client.close();
  }
}

const schema = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `CREATE TABLE ${DB}.types (
     id INT PRIMARY KEY, ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, bu BIGINT UNSIGNED,
     de DECIMAL(40,12), f FLOAT, d DOUBLE, b1 BIT(1), b64 BIT(64),
     dt DATE, dtm DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6), y YEAR,
     c CHAR(10), vc VARCHAR(300), bn BINARY(4), vb VARBINARY(20),
     tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB, tx TEXT, lt LONGTEXT,
     e ENUM('a','b'), s SET('x','y','z'), j JSON, g POINT, ip INET6, u UUID)`,
  `INSERT INTO ${DB}.types VALUES
     (1, 127, 32767, 8388607, 2147483647, 9223372036854775807, 18446744073709551615,
      123456789012345678901234567.123456789012, 3.4e38, 1.7976931348623157e308, 1, b'1111111111111111111111111111111111111111111111111111111111111111',
      '9999-12-31', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', '838:59:59.000000', 2155,
      'char', REPEAT('v', 300), x'00010203', x'ff00ff', x'00', REPEAT(x'ab', 1000), REPEAT('m', 70000), REPEAT('l', 100000),
      'text ✓ 😀', REPEAT('long text ', 1000), 'b', 'x,z', '{"a": [1, 2, {"b": null}], "c": "é"}', POINT(1.5, -2.25),
      '2001:db8::ff00:42:8329', '123e4567-e89b-12d3-a456-426614174000'),
     (2, -128, -32768, -8388608, -2147483648, -9223372036854775808, 0,
      -0.000000000001, -1.175494e-38, -2.2250738585072014e-308, 0, b'0',
      '1000-01-01', '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01.000000', '-838:59:59.000000', 1901,
      '', '', x'00000000', x'', x'', x'', x'', x'', '', '', 'a', '', '[]', POINT(0, 0), '::', '00000000-0000-0000-0000-000000000000'),
     (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
  `CREATE TABLE ${DB}.kv (k INT PRIMARY KEY, v VARCHAR(50))`,
  `INSERT INTO ${DB}.kv VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five')`,
  `CREATE PROCEDURE ${DB}.two_results(IN n INT)
   BEGIN
     SELECT k, v FROM ${DB}.kv WHERE k <= n ORDER BY k;
     SELECT COUNT(*) AS total FROM ${DB}.kv;
   END`,
];

/** How the test's client logs in, to the server and to the proxy alike. */
interface Login {
  deprecateEof: boolean;
  compress?: boolean;
}

const LOGINS: Array<[string, Login]> = [
  ['classic EOF', { deprecateEof: false }],
  ['DEPRECATE_EOF', { deprecateEof: true }],
  ['compressed', { deprecateEof: false, compress: true }],
];

/** Runs `script` once directly and once through the proxy, each on a freshly built schema. */
async function compare(
  proxy: ProxyProcess,
  login: Login,
  script: (recorder: Recorder) => Promise<void>,
): Promise<void> {
  const transcripts: Transcript[] = [];
  for (const port of [BACKEND_PORT, proxy.port]) {
    await admin(schema);
    const client = await RawClient.connect({
      host: port === BACKEND_PORT ? BACKEND_HOST : proxy.host,
      port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
      ...login,
    });
    assert.equal(client.compressed, login.compress === true, 'compression as asked for');
    const recorder = new Recorder(client, login.compress === true);
    try {
      await script(recorder);
    } finally {
      client.close();
    }
    transcripts.push(recorder.transcript);
  }
  const [viaServer, viaProxy] = transcripts as [Transcript, Transcript];
  assert.deepEqual(
    viaProxy.map((entry) => entry.step),
    viaServer.map((entry) => entry.step),
  );
  viaServer.forEach((expected, index) => {
    const actual = viaProxy[index]!;
    if (!actual.bytes.equals(expected.bytes)) {
      let offset = 0;
      while (actual.bytes[offset] === expected.bytes[offset]) offset++;
      assert.fail(
        `${expected.step}: reply differs at byte ${offset} (${actual.bytes.length} vs ${expected.bytes.length} bytes)\n` +
          `server: ${expected.bytes.subarray(offset, offset + 32).toString('hex')}\n` +
          `proxy:  ${actual.bytes.subarray(offset, offset + 32).toString('hex')}`,
      );
    }
  });
}

describe('differential: direct and through the proxy, byte for byte', () => {
  let proxy: ProxyProcess;
  let savedMaxPacket = '';
  let savedLocalInfile = '';

  before(async () => {
    const client = await direct(null, false);
    const read = async (variable: string): Promise<string> => {
      const reply = await client.query(`SELECT @@GLOBAL.${variable}`);
      // column count, column, (EOF), row: the row's single lenenc string
      const row = reply.find(
        (packet, index) => index >= 2 && packet.payload[0] !== PacketHeader.EOF,
      )!;
      return row.payload.toString('utf8', 1, 1 + row.payload[0]!);
    };
    savedMaxPacket = await read('max_allowed_packet');
    savedLocalInfile = await read('local_infile');
    client.close();
    await admin(['SET GLOBAL max_allowed_packet = 67108864', 'SET GLOBAL local_infile = 1']);
    proxy = await startProxyProcess({ workers: 2 });
  });

  after(async () => {
    await admin([
      `DROP DATABASE IF EXISTS ${DB}`,
      `SET GLOBAL max_allowed_packet = ${savedMaxPacket}`,
      `SET GLOBAL local_infile = ${savedLocalInfile}`,
    ]);
    assert.equal(await proxy.stop(), 0);
  });

  for (const [mode, login] of LOGINS) {
    test(`every column type, text protocol (${mode})`, () =>
      compare(proxy, login, async (r) => {
        await r.query('SELECT * FROM types ORDER BY id');
        await r.query('SELECT * FROM types WHERE id = 3');
        await r.query('SELECT * FROM types WHERE 1 = 0');
        await r.query(
          "SELECT NULL, 0, -1, 1.5e300, CAST(18446744073709551615 AS UNSIGNED), _binary x'00ff'",
        );
        await r.query(
          'SELECT id, b64 + 0, HEX(g), JSON_EXTRACT(j, "$.a[2]") FROM types ORDER BY id DESC',
        );
      }));

    test(`every column type, binary protocol (${mode})`, () =>
      compare(proxy, login, async (r) => {
        await r.execute('SELECT * FROM types ORDER BY id', []);
        await r.execute('SELECT * FROM types WHERE id = ?', [1]);
        await r.execute('SELECT * FROM types WHERE id > ?', [99]);
        await r.execute('SELECT ?, ?, ?, ?, ?', [
          null,
          -5n,
          2.5,
          'text ✓',
          Buffer.from([0, 1, 255]),
        ]);
        await r.execute('INSERT INTO kv VALUES (?, ?)', [10, 'ten']);
        await r.execute('UPDATE kv SET v = ? WHERE k > ?', ['many', 3]);
      }));

    test(`multi-statements, CALL with several result sets, warnings and errors (${mode})`, () =>
      compare(proxy, login, async (r) => {
        await r.query(
          "SELECT 1; SELECT 'a', 'b'; INSERT INTO kv VALUES (6, 'six'); SELECT * FROM kv WHERE 0; DELETE FROM kv WHERE k = 6",
        );
        await r.query('CALL two_results(3)');
        await r.query('CALL two_results(0); SELECT 2');
        await r.query("SELECT CAST('12abc' AS SIGNED), 1/0");
        await r.query('SHOW WARNINGS');
        await r.query('SELEC 1', 1064);
        await r.query('SELECT * FROM no_such_table', 1146);
        await r.query("INSERT INTO kv VALUES (1, 'again')", 1062);
        await r.query('SELECT 1; SELECT * FROM no_such_table; SELECT 3', 1146);
        await r.query('DO 1');
        await r.query('BEGIN');
        await r.query("UPDATE kv SET v = 'changed' WHERE k = 1");
        await r.query('ROLLBACK');
        await r.query('SELECT * FROM kv ORDER BY k');
      }));

    test(`prepared statement commands and cursors (${mode})`, () =>
      compare(proxy, login, async (r) => {
        const id = await r.prepare('SELECT k, v FROM kv WHERE k >= ? ORDER BY k');
        await r.command('execute with cursor', execute(id, [2], true));
        await r.command('fetch 2', fetch(id, 2));
        await r.command('fetch 2 more', fetch(id, 2));
        await r.command('fetch past the end', fetch(id, 2));
        await r.command('reset', statementCommand(Command.STMT_RESET, id));
        await r.command('execute again', execute(id, [4]));
        const insert = await r.prepare('INSERT INTO kv VALUES (?, ?)');
        r.client.sendOnly(sendLongData(insert, 1, Buffer.from('long ')));
        r.client.sendOnly(sendLongData(insert, 1, Buffer.from('data')));
        await r.command('execute with long data', execute(insert, [7, LONG_DATA]));
        r.client.sendOnly(statementCommand(Command.STMT_CLOSE, insert));
        // The error names the statement id, which differs between connections: compare the rest.
        const closed = await r.client.command(execute(insert, [8, 'x']));
        const unknown = replyError(closed);
        assert.equal(unknown?.errno, 1243);
        const header = closed[0]!.payload.subarray(0, 9);
        const message = Buffer.from(unknown.message.replace(/\(\d+\)/, '(id)'));
        await r.record(
          'execute closed statement',
          [{ sequenceId: closed[0]!.sequenceId, payload: Buffer.concat([header, message]) }],
          1243,
        );
        await r.query('SELECT * FROM kv WHERE k = 7');
        await r.command('prepare error', prepare('SELECT * FROM missing WHERE a = ?'), 1146);
        await r.prepare('SELECT 1');
        await r.prepare('DO ?');
      }));

    test(`other commands (${mode})`, () =>
      compare(proxy, login, async (r) => {
        await r.command(
          'field list',
          Buffer.concat([Buffer.from([Command.FIELD_LIST]), Buffer.from('kv\0')]),
        );
        await r.command(
          'field list of a missing table',
          Buffer.concat([Buffer.from([Command.FIELD_LIST]), Buffer.from('nope\0')]),
          1146,
        );
        await r.command(
          'init db',
          Buffer.concat([Buffer.from([Command.INIT_DB]), Buffer.from('mysql')]),
        );
        await r.command(
          'init db missing',
          Buffer.concat([Buffer.from([Command.INIT_DB]), Buffer.from('nope_nope')]),
          1049,
        );
        await r.query('SELECT DATABASE()');
        await r.command('set option multi statements off', Buffer.from([Command.SET_OPTION, 1, 0]));
        await r.query('SELECT 1; SELECT 2', 1064);
        await r.command('set option multi statements on', Buffer.from([Command.SET_OPTION, 0, 0]));
        await r.command(
          'kill a missing thread',
          Buffer.from([Command.PROCESS_KILL, 0x3f, 0x42, 0x0f, 0]),
          1094,
        );
        // Uptime and counters differ between two connections; the reply's shape must not.
        const statistics = await r.client.command(Buffer.from([Command.STATISTICS]));
        assert.equal(statistics.length, 1);
        assert.match(statistics[0]!.payload.toString(), /^Uptime: \d+ {2}Threads: \d+/);
        await r.record('statistics', [
          {
            sequenceId: statistics[0]!.sequenceId,
            payload: Buffer.from(statistics[0]!.payload.toString().replace(/[\d.]+/g, '#')),
          },
        ]);
        await r.command('reset connection', Buffer.from([Command.RESET_CONNECTION]));
        await r.query('SELECT DATABASE(), @@autocommit');
      }));

    test(`LOAD DATA LOCAL INFILE (${mode})`, () =>
      compare(proxy, login, async (r) => {
        const rows = Array.from({ length: 20000 }, (_, i) => `${100 + i}\tvalue ${i}\n`).join('');
        const load = async (sql: string): Promise<void> => {
          const packets = await r.client.command(
            Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql)]),
            () => Buffer.from(rows),
          );
          await r.record(sql, packets);
        };
        await load("LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE kv");
        await r.query('SELECT COUNT(*), SUM(k) FROM kv');
        await load(
          "LOAD DATA LOCAL INFILE 'rows.tsv' IGNORE INTO TABLE kv; SELECT COUNT(*) FROM kv",
        );
      }));
  }

  test('sessions that differ in capabilities: each gets its own bytes, neutral bits share results', async () => {
    // JSON, POINT and INET6 columns: with MariaDB's extended metadata their column definitions
    // carry the type's name, without it they do not.
    const sql = 'SELECT j, g, ip, u FROM types WHERE id = 1';
    const variants: Array<[string, Partial<RawClientOptions>]> = [
      ['plain', {}],
      ['MariaDB client', { mariaDbCapabilities: 0 }],
      ['extended metadata', { mariaDbCapabilities: MariaDbCapability.EXTENDED_METADATA }],
      ['REMEMBER_OPTIONS', { extraCapabilities: Capability.REMEMBER_OPTIONS }],
    ];
    const open = (port: number, options: Partial<RawClientOptions>): Promise<RawClient> =>
      RawClient.connect({
        host: port === BACKEND_PORT ? BACKEND_HOST : proxy.host,
        port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: DB,
        ...options,
      });
    await admin(schema);
    const expected = new Map<string, Buffer>();
    for (const [name, options] of variants) {
      const client = await open(BACKEND_PORT, options);
      expected.set(name, replyBytes(await client.query(sql)));
      client.close();
    }
    assert.ok(
      !expected.get('plain')!.equals(expected.get('extended metadata')!),
      'the server answers the two differently',
    );
    // One worker: every session meets the results the others stored.
    const solo = await startProxyProcess({ workers: 1 });
    const hits = async (client: RawClient): Promise<number> => {
      const reply = await client.query("SHOW GLOBAL STATUS LIKE 'Qcache_hits'");
      const row = reply.find(
        (packet, index) => index >= 3 && packet.payload[0] !== PacketHeader.EOF,
      )!;
      const name = row.payload[0]!;
      return Number(row.payload.toString('latin1', 2 + name, 2 + name + row.payload[1 + name]!));
    };
    try {
      const hitsOf: Record<string, number> = {};
      for (const [name, options] of variants) {
        const client = await open(solo.port, options);
        try {
          const before = await hits(client);
          for (let round = 0; round < 2; round++) {
            const got = replyBytes(await client.query(sql));
            assert.ok(
              got.equals(expected.get(name)!),
              `${name}, read ${round + 1}: the server's bytes`,
            );
          }
          hitsOf[name] = (await hits(client)) - before;
        } finally {
          client.close();
        }
      }
      // The plain session filled and hit. A MariaDB client (CLIENT_MYSQL clear, so extended
      // capabilities follow) asking for none, and REMEMBER_OPTIONS, change no reply: both their
      // reads hit the plain result. Extended metadata needs results of its own.
      assert.deepEqual(hitsOf, {
        plain: 1,
        'MariaDB client': 2,
        'extended metadata': 1,
        REMEMBER_OPTIONS: 2,
      });
    } finally {
      assert.equal(await solo.stop(), 0);
    }
  });

  test('an unknown command gets the server’s own error, and commands go on (no byte pipe)', async () => {
    const replies: Buffer[][] = [];
    for (const port of [BACKEND_PORT, proxy.port]) {
      const client = await RawClient.connect({
        host: port === BACKEND_PORT ? BACKEND_HOST : proxy.host,
        port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: null,
      });
      // 0x20 is no command at all: the server answers it with its own error and reads the next
      // command; the proxy relays it and goes on following (and routing) every command after it.
      client.send(Buffer.from([0x20, 1, 2, 3]));
      const unknown = await client.readPacket();
      const after = await client.query("SELECT 'still here'");
      replies.push([unknown!.payload, replyBytes(after)]);
      client.close();
    }
    const [direct, proxied] = replies as [Buffer[], Buffer[]];
    assert.equal(replyError([{ sequenceId: 1, payload: direct[0]! }])?.errno, 1047);
    assert.deepEqual(proxied, direct);
  });

  for (const [mode, login] of [
    ['DEPRECATE_EOF', { deprecateEof: true }],
    // Compressed packets carry at most 16 MB too: the command goes in several of them.
    ['compressed', { deprecateEof: true, compress: true }],
  ] as Array<[string, Login]>) {
    test(`a command and a row over 16 MB, both protocols (${mode})`, () =>
      compare(proxy, login, async (r) => {
        const big = 'x'.repeat(17 * 1024 * 1024);
        await r.query(`CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)`);
        // The INSERT itself is over 16 MB: the client sends it as several packets.
        await r.query(`INSERT INTO big VALUES (1, '${big}'), (2, 'small')`);
        await r.query('SELECT * FROM big ORDER BY id');
        await r.query(`SELECT id, LENGTH(b), SHA1(b) FROM big`);
        await r.execute('SELECT b, id FROM big WHERE id = ?', [1]);
        // A payload of exactly 0xFFFFFF bytes is followed by an empty packet.
        await r.query(`SELECT REPEAT('y', ${0xffffff - 5})`);
        const sha1 = createHash('sha1').update(big).digest('hex');
        const check = await r.client.query(`SELECT SHA1(b) FROM big WHERE id = 1`);
        assert.ok(replyBytes(check).includes(Buffer.from(sha1)), 'the 17 MB value arrived intact');
      }));
  }
});
