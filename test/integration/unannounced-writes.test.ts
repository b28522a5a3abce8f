/**
 * No connection writes behind the cache's back: every path by which a client's bytes reach the
 * server is routed, or announced as a write of everything. Each scenario caches a read on one
 * connection, writes by one such path on another, and reads again; it runs directly and through
 * the proxy (2 workers, cache on), replies compared byte for byte, so a stale read fails it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Command } from '../../src/protocol/constants.ts';
import {
  NATIVE_PASSWORD_PLUGIN,
  nativePasswordScramble,
} from '../../src/protocol/native-password.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import {
  LONG_DATA,
  execute,
  prepare,
  sendLongData,
  statementCommand,
} from '../../src/protocol/statement-commands.ts';
import {
  ProxyHarness,
  Session,
  WARM_TABLE_STATEMENTS,
  connectDirect,
  differential,
  queryPacket,
  rowsOf,
  runStatements,
} from '../support/cache-scenario.ts';
import type { Run } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { RawClient } from '../support/raw-client.ts';

const DB = 'nc_unannounced';
/** An account without REPLICATION SLAVE, for the binlog dump the server refuses. */
const PLAIN_USER = 'nc_unannounced_plain';
const setup = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`,
  `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two'), (3, 'two')`,
  `DROP USER IF EXISTS '${PLAIN_USER}'@'%'`,
  `CREATE USER '${PLAIN_USER}'@'%'`,
  `GRANT ALL ON ${DB}.* TO '${PLAIN_USER}'@'%'`,
];

const READ = `SELECT id, v FROM ${DB}.t ORDER BY id`;
/** Makes a statement text of 17 MB: the client sends it as two packets, the first 0xFFFFFF bytes. */
const BIG_COMMENT = `/* ${'x'.repeat(17 * 1024 * 1024)} */`;

/** A session on worker 0 that has read READ twice: a miss that stored it, then a hit. */
async function cachedReader(run: Run): Promise<Session> {
  const reader = await run.session('reader', { worker: 0 });
  await reader.query(READ);
  await reader.query(READ);
  await run.expect({ hits: 1, inserts: 1 }, 'the read is cached');
  return reader;
}

/** Through the proxy: waits until no session holds the writes of a client that left. */
async function lingeringReleased(run: Run): Promise<boolean> {
  const proxy = run.proxy;
  if (proxy === null) return true;
  return waitUntil(10_000, async () => (await proxy.counters()).get('sessions_lingering') === 0);
}

/**
 * The reader caches READ on worker 0 (miss, then hit), `write` runs on a writer on worker 1,
 * then the reader reads again: it must see the write.
 */
async function readWriteRead(
  run: Run,
  write: (writer: Session) => Promise<void>,
  writer?: Session,
): Promise<void> {
  const reader = await cachedReader(run);
  await write(writer ?? (await run.session('writer', { worker: 1 })));
  await reader.query(READ);
}

describe('unannounced writes: every path to the server is routed', () => {
  let proxy: ProxyHarness;
  let saved: string[] = [];

  before(async () => {
    const client = await RawClient.connect({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: null,
    });
    saved = rowsOf(await client.query('SELECT @@GLOBAL.max_allowed_packet'), false)[0]! as string[];
    client.close();
    // Room for the 17 MB commands (new connections only see the new value).
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      'SET GLOBAL max_allowed_packet = 67108864',
      ...WARM_TABLE_STATEMENTS,
    ]);
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    assert.equal(await proxy.stop(), 0);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `SET GLOBAL max_allowed_packet = ${saved[0]}`,
      `DROP USER IF EXISTS '${PLAIN_USER}'@'%'`,
      `DROP DATABASE IF EXISTS ${DB}`,
    ]);
  });

  test('a 17 MB UPDATE sent as COM_QUERY', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        await writer.client
          .query(`UPDATE ${DB}.t SET v = 'big query' WHERE id = 1 ${BIG_COMMENT}`)
          .then((reply) => writer.record('17 MB UPDATE', reply));
      }),
    ));

  test('a client that leaves in the middle of a 17 MB UPDATE: it never runs, and reads hit again at once', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const reader = await cachedReader(run);
      // Only the first packet (0xFFFFFF bytes) of the UPDATE, then the client's end: the server
      // has part of the command and would wait for the rest until its net_read_timeout (30 s).
      const leaver = await run.session('leaver', { user: PLAIN_USER, worker: 1 });
      const sql = Buffer.from(`UPDATE ${DB}.t SET v = 'never' WHERE id = 1 ${BIG_COMMENT}`);
      const first = Buffer.alloc(4 + 0xffffff);
      first.writeUIntLE(0xffffff, 0, 3);
      first[4] = Command.QUERY;
      sql.copy(first, 5, 0, 0xffffff - 1);
      leaver.client.socket.end(first);
      // The server connection goes with the client's, at once, as it does directly.
      const gone = await waitUntil(10_000, async () => (await connectionsOf(PLAIN_USER)) === 0);
      run.check(gone, 'the server still holds the connection of the client that left, after 10 s');
      // The write announced with the first packet is released (one invalidation of everything):
      // the read is filled again, then hit, with the rows unchanged.
      await reader.query(READ);
      await reader.query(READ);
      await run.expect({ hits: 1, inserts: 1 }, 'the read is cached again');
    }));

  // An empty COM_CHANGE_USER: the server answers with a new greeting and reads a login. One stray
  // byte, then a command: the server says "Got packets out of order" (1156) after a second and
  // then waits on the client, answering nothing more, until the client leaves.
  const brokenChangeUser = [
    encodePacket(Buffer.of(Command.CHANGE_USER), 0),
    encodePacket(Buffer.of(Command.DROP_DB), 0),
  ];

  test('a client that leaves while the server waits on a broken COM_CHANGE_USER, an UPDATE after it', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const reader = await cachedReader(run);
      // The proxy holds the UPDATE until the server has answered what came before it, which the
      // server never does: the client's end must be noticed all the same.
      const leaver = await run.session('leaver', { user: PLAIN_USER, worker: 1 });
      leaver.client.socket.end(
        Buffer.concat([
          ...brokenChangeUser,
          encodePacket(queryPacket(`UPDATE ${DB}.t SET v = 'never' WHERE id = 1`), 0),
        ]),
      );
      const gone = await waitUntil(10_000, async () => (await connectionsOf(PLAIN_USER)) === 0);
      run.check(gone, 'the server still holds the connection of the client that left, after 10 s');
      // The UPDATE never ran: the rows are as they were.
      await reader.query(READ);
    }));

  test('a client that leaves while the server waits on a broken COM_CHANGE_USER, an unknown command after it', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const reader = await cachedReader(run);
      // The proxy sends both commands on after the error and announces the unknown one as a
      // write of everything; the server reads neither as a command and answers neither.
      const leaver = await run.session('leaver', { user: PLAIN_USER, worker: 1 });
      leaver.client.socket.write(
        Buffer.concat([
          ...brokenChangeUser,
          encodePacket(queryPacket('SELECT FOUND_ROWS()'), 0),
          encodePacket(Buffer.of(0xf8, 0x70, 0x58), 0),
        ]),
      );
      // The new greeting, then the error; the client leaves after them, answered no more.
      await leaver.client.readPacket();
      const error = await leaver.client.readPacket();
      assert.equal(error?.payload.readUInt16LE(1), 1156, 'Got packets out of order');
      await new Promise((resolve) => setTimeout(resolve, 200));
      leaver.client.socket.end();
      // Directly the server sees the client's end and closes; through the proxy it must see one
      // too, or the announced write holds every hit of every worker until the server gives up.
      const gone = await waitUntil(10_000, async () => (await connectionsOf(PLAIN_USER)) === 0);
      run.check(gone, 'the server still holds the connection of the client that left, after 10 s');
      // The announced write is released when the server's close reaches the proxy, a moment
      // after the server has dropped the connection (one invalidation of everything): the read
      // is then filled again, then hit, with the rows unchanged.
      run.check(await lingeringReleased(run), 'the proxy still holds the departed client’s write');
      await reader.query(READ);
      await reader.query(READ);
      await run.expect({ hits: 1, inserts: 1 }, 'the read is cached again');
    }));

  test('a 17 MB COM_STMT_EXECUTE of an UPDATE', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        const sql = `UPDATE ${DB}.t SET v = LEFT(?, 8) WHERE id = 2`;
        const id = await writer.prepare(sql);
        await writer.command(
          '17 MB execute',
          execute(id, [`big exec${'x'.repeat(17 * 1024 * 1024)}`]),
        );
      }),
    ));

  test('a 17 MB COM_STMT_PREPARE, then its execution', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        const id = await writer.prepare(
          `UPDATE ${DB}.t SET v = 'big prepare' WHERE id = 3 ${BIG_COMMENT}`,
        );
        await writer.command('execute the 17 MB statement', execute(id, []));
      }),
    ));

  test('COM_STMT_EXECUTE of statement id 0xFFFFFFFF ("the last prepared"), pipelined', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        // What Connector/C's mariadb_stmt_execute_direct sends: PREPARE and EXECUTE at once.
        writer.client.socket.write(
          Buffer.concat([
            encodePacket(prepare(`UPDATE ${DB}.t SET v = 'direct' WHERE id = 1`), 0),
            encodePacket(execute(0xffffffff, []), 0),
          ]),
        );
        const prepared = (await writer.client.readPacket())!;
        // Statement ids differ between connections: compare the rest.
        const masked = Buffer.from(prepared.payload);
        masked.writeUInt32LE(0, 1);
        await writer.record(
          'prepare',
          [{ sequenceId: prepared.sequenceId, payload: masked }],
          undefined,
          false,
        );
        await writer.record('execute the last prepared', [(await writer.client.readPacket())!]);
      }),
    ));

  test('17 MB of COM_STMT_SEND_LONG_DATA: each execution reads its own long data', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const session = await run.session('client');
      const sql = `SELECT COUNT(*) FROM ${DB}.t WHERE v = LEFT(?, 3)`;
      const id = await session.prepare(sql);
      for (const value of ['one', 'two']) {
        session.client.sendOnly(
          sendLongData(id, 0, Buffer.from(value + 'y'.repeat(17 * 1024 * 1024))),
        );
        await session.command(
          `execute with 17 MB of long data (${value})`,
          execute(id, [LONG_DATA]),
        );
      }
    }));

  test('an unknown command byte, then a write on the same connection', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        // No byte pipe after it: the server's own 1047, then commands go on being routed.
        writer.client.send(Buffer.from([0x20, 1, 2, 3]));
        await writer.record('unknown command 0x20', [(await writer.client.readPacket())!], 1047);
        await writer.query('SHOW WARNINGS');
        await writer.query(`UPDATE ${DB}.t SET v = 'after unknown' WHERE id = 1`);
      }),
    ));

  test('a binlog dump and a COM_SHUTDOWN the server refuses, then a write on the same connection', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const writer = await run.session('plain writer', {
        worker: 1,
        user: PLAIN_USER,
        password: '',
      });
      await readWriteRead(
        run,
        async () => {
          // One ERR packet, read as such (not through a reply shape of the proxy's own).
          writer.client.send(binlogDump());
          const refusal = (await writer.client.readPacket())!;
          await writer.record('binlog dump without REPLICATION SLAVE', [refusal], 1227);
          // Another command that would write if allowed (announced as a write of everything).
          await writer.command(
            'COM_SHUTDOWN without SHUTDOWN',
            Buffer.from([Command.SHUTDOWN, 0]),
            1227,
          );
          await writer.query(`UPDATE ${DB}.t SET v = 'after dump' WHERE id = 1`);
        },
        writer,
      );
    }));

  test('a binlog dump that fails: the server closes the connection, so does the proxy', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const session = await run.session('root');
      // A file that is not in the index (or no binary log at all): an ERR, then the server
      // ends the connection, as after every dump.
      session.client.send(binlogDump('nc-no-such-log.000001'));
      const failure = (await session.client.readPacket())!;
      await session.record('binlog dump of a missing file', [failure], 1236, false);
      run.check((await session.client.readPacket()) === null, 'the connection closes after it');
    }));

  test('a write pipelined with the handshake response, before the login OK', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async () => {
        const client = await RawClient.connect({
          host: run.host,
          port: run.port,
          user: BACKEND_USER,
          password: BACKEND_PASSWORD,
          database: DB,
          pipelined: [queryPacket(`UPDATE ${DB}.t SET v = 'pipelined' WHERE id = 1`)],
        });
        const writer = new Session(run, 'pipelining writer', client);
        try {
          const reply = await client.readPacket();
          run.check(reply !== null, 'the pipelined UPDATE gets its reply');
          await writer.record('UPDATE sent before the login OK', reply === null ? [] : [reply]);
        } finally {
          client.close();
        }
      }),
    ));

  test('COM_CHANGE_USER and its auth switch, then a write', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        const change = changeUser(writer.client.scramble, BACKEND_USER, BACKEND_PASSWORD, DB);
        writer.client.send(change);
        // MariaDB answers COM_CHANGE_USER with an auth switch carrying a fresh scramble (which
        // differs between runs: only the plugin name is compared).
        const authSwitch = (await writer.client.readPacket())!;
        const plugin = authSwitch.payload.subarray(0, authSwitch.payload.indexOf(0) + 1);
        await writer.record(
          'auth switch',
          [{ sequenceId: authSwitch.sequenceId, payload: plugin }],
          undefined,
          false,
        );
        const scramble = authSwitch.payload.subarray(plugin.length, plugin.length + 20);
        writer.client.send(
          nativePasswordScramble(BACKEND_PASSWORD, scramble),
          authSwitch.sequenceId + 1,
        );
        await writer.record('COM_CHANGE_USER done', [(await writer.client.readPacket())!]);
        await writer.query(`UPDATE ${DB}.t SET v = 'changed user' WHERE id = 1`);
      }),
    ));

  test('COM_STMT_BULK_EXECUTE (not offered: the server refuses it) and COM_DAEMON', () =>
    differential(proxy, { database: DB, setup }, (run) =>
      readWriteRead(run, async (writer) => {
        const id = await writer.prepare(`UPDATE ${DB}.t SET v = ? WHERE id = 1`);
        const bulk = Buffer.alloc(9);
        bulk[0] = Command.STMT_BULK_EXECUTE;
        bulk.writeUInt32LE(id, 1);
        bulk.writeUInt16LE(128, 5); // send types to server
        bulk.writeUInt16LE(0xfd, 7); // VAR_STRING
        const value = Buffer.from('\x00\x04bulk'); // indicator none, then a length-encoded value
        await writer.command('bulk execute', Buffer.concat([bulk, value]), 1295);
        await writer.command('COM_DAEMON', Buffer.from([Command.DAEMON]), 1047);
        writer.client.sendOnly(statementCommand(Command.STMT_CLOSE, id));
        await writer.query(`UPDATE ${DB}.t SET v = 'after bulk' WHERE id = 1`);
      }),
    ));
});

/** The server's connections of `user`, counted directly. */
async function connectionsOf(user: string): Promise<number> {
  const client = await connectDirect();
  try {
    const reply = await client.query(
      `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '${user}'`,
    );
    return Number(rowsOf(reply, client.deprecateEof)[0]![0]);
  } finally {
    client.close();
  }
}

/** Polls `condition` every 20 ms until it holds (true) or `ms` pass (false). */
async function waitUntil(ms: number, condition: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** COM_BINLOG_DUMP, non-blocking, from position 4 of `file` (empty: the first log). */
function binlogDump(file = ''): Buffer {
  const head = Buffer.alloc(11);
  head[0] = Command.BINLOG_DUMP;
  head.writeUInt32LE(4, 1);
  head.writeUInt16LE(1, 5); // BINLOG_DUMP_NON_BLOCK
  head.writeUInt32LE(4242, 7); // server id
  return Buffer.concat([head, Buffer.from(file)]);
}

/** COM_CHANGE_USER with mysql_native_password, answering the greeting's scramble. */
function changeUser(scramble: Buffer, user: string, password: string, database: string): Buffer {
  const auth = nativePasswordScramble(password, scramble);
  const charset = Buffer.alloc(2);
  charset.writeUInt16LE(45);
  return Buffer.concat([
    Buffer.from([Command.CHANGE_USER]),
    Buffer.from(`${user}\0`),
    Buffer.from([auth.length]),
    auth,
    Buffer.from(`${database}\0`),
    charset,
    Buffer.from(`${NATIVE_PASSWORD_PLUGIN}\0`),
  ]);
}
