/**
 * Transactions the proxy begins without the server (src/proxy/deferred-transaction.ts): BEGIN,
 * the hits after it and the COMMIT or ROLLBACK that ends them are answered by the proxy, and the
 * first statement it cannot answer starts the transaction on the server.
 *
 * - Differential: the same statements directly and through the proxy, replies byte for byte
 *   (BEGIN and COMMIT replies, hits' status flags, diagnostics after either), with the counters
 *   showing the transactions were deferred and the server's Com_begin/Com_commit showing it
 *   never saw them.
 * - Snapshots: a table a hit read, written before the server's snapshot is taken, ends the
 *   transaction with ER_CHECKREAD; a table no hit read, written then, is read as the server's
 *   snapshot has it. Under a concurrent transfer load, every transaction a reader sees adds up.
 *
 * Steps inside a deferred transaction are recorded without the harness's COM_PING check: a
 * ping's reply carries the transaction flags, so the proxy starts the transaction for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ProxyHarness,
  WARM_TABLE_STATEMENTS,
  connectDirect,
  differential,
  rowsOf,
  runStatements,
} from '../support/cache-scenario.ts';
import type { Run, Session } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { execute, prepare } from '../../src/protocol/statement-commands.ts';
import { replyError } from '../support/raw-client.ts';
import type { RawClient, RawPacket } from '../support/raw-client.ts';

const DB = 'nc_deferred';

const TABLES = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `USE ${DB}`,
  'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB',
  "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
  'CREATE TABLE u (id INT PRIMARY KEY, w INT) ENGINE=InnoDB',
  'INSERT INTO u VALUES (1, 10), (2, 20)',
  'RESET QUERY CACHE',
];
const READ_T = 'SELECT * FROM t ORDER BY id';
const READ_U = 'SELECT * FROM u ORDER BY id';

/** A step recorded without the COM_PING after it (see the file's comment). */
function step(session: Session, sql: string): Promise<unknown> {
  return session.queryThenDiagnostics(sql);
}

/** The server's own count of a statement kind (Com_begin, Com_commit...), read directly. */
async function serverCount(name: string): Promise<number> {
  const client = await connectDirect();
  try {
    return Number(rowsOf(await client.query(`SHOW GLOBAL STATUS LIKE '${name}'`), false)[0]![1]);
  } finally {
    client.close();
  }
}

/**
 * Session A on worker 0 with READ_T cached and the server's replies to its BEGIN and COMMIT
 * known (so its next BEGIN can be the proxy's), counting from here.
 */
async function sessionThatBegan(run: Run): Promise<Session> {
  const a = await run.session('A', { worker: 0 });
  await a.query(READ_T);
  await a.query('BEGIN');
  await a.query('COMMIT');
  await run.baseline();
  return a;
}

async function rowsThrough(client: RawClient, sql: string): Promise<Array<Array<string | null>>> {
  const reply = await client.query(sql);
  const error = replyError(reply);
  assert.equal(error, null, `${sql}: ${error?.message}`);
  return rowsOf(reply, client.deprecateEof);
}

/** COM_STMT_PREPARE through `client`: the statement's id. */
async function prepared(client: RawClient, sql: string): Promise<number> {
  const reply = await client.command(prepare(sql));
  assert.equal(replyError(reply), null, `prepare ${sql}`);
  return reply[0]!.payload.readUInt32LE(1);
}

/**
 * The first column of each row of a binary result whose columns are all INT (as 4-byte
 * integers), or the error; an OK (no result set) gives no rows.
 */
function binaryInts(reply: RawPacket[], deprecateEof: boolean): number[] {
  if (reply.length === 1) return [];
  // Column count, one definition a column, then an EOF unless deprecated; rows start with 0x00.
  const columns = reply[0]!.payload[0]!;
  const rows = reply.slice(1 + columns + (deprecateEof ? 0 : 1), -1);
  return rows.map((row) => row.payload.readInt32LE(1 + ((columns + 9) >> 3)));
}

describe('transactions begun by the proxy', () => {
  let proxy: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...WARM_TABLE_STATEMENTS]);
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    const code = await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
    assert.equal(code, 0, 'the proxy exits cleanly');
  });

  const scenario = (script: (run: Run) => Promise<void>): Promise<void> =>
    differential(proxy, { database: DB, setup: TABLES }, script);

  test('BEGIN, hits and COMMIT or ROLLBACK answered by the proxy, byte for byte', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      const e = await run.session('E', { worker: 0, deprecateEof: true });
      for (const session of [a, e]) {
        await session.query(READ_T);
        await session.query(READ_U);
        // The server's replies to this session's BEGIN and COMMIT, kept for later.
        await session.query('BEGIN');
        await session.query(READ_T);
        await session.query('COMMIT');
        await session.query('START TRANSACTION READ ONLY');
        await session.query('ROLLBACK');
      }
      await run.baseline();
      const begins = await serverCount('Com_begin');
      const commits = await serverCount('Com_commit');
      const rollbacks = await serverCount('Com_rollback');
      for (const session of [a, e]) {
        for (let round = 0; round < 2; round++) {
          await step(session, 'BEGIN');
          await step(session, READ_T);
          await step(session, READ_U);
          await step(session, READ_T);
          await step(session, 'COMMIT');
        }
        // READ ONLY: the hits carry IN_TRANS_READONLY, as the server's replies do.
        await step(session, 'START TRANSACTION READ ONLY');
        await step(session, READ_U);
        await step(session, 'ROLLBACK');
        await session.query(READ_T);
      }
      await run.expect(
        { hits: 16, inserts: 0, transactions_deferred: 6, transactions_in_proxy: 6 },
        'six transactions, all in the proxy',
      );
      if (run.isProxy) {
        run.check((await serverCount('Com_begin')) === begins, 'the server saw no BEGIN');
        run.check((await serverCount('Com_commit')) === commits, 'the server saw no COMMIT');
        run.check((await serverCount('Com_rollback')) === rollbacks, 'the server saw no ROLLBACK');
      }
    }));

  test('the first statement the cache cannot answer starts the transaction on the server', () =>
    scenario(async (run) => {
      const a = await sessionThatBegan(run);
      // A miss first: the client's own BEGIN goes first, then the statement.
      await step(a, 'BEGIN');
      await step(a, 'SELECT v FROM t WHERE id = 2');
      await step(a, READ_T);
      await step(a, "UPDATE t SET v = 'deux' WHERE id = 2");
      await step(a, READ_T);
      await step(a, 'COMMIT');
      await run.expect(
        { hits: 1, transactions_deferred: 1, transactions_in_proxy: 0 },
        'a miss, then a hit in the snapshot it took, then own writes from the server',
      );
      // Hits first, then a write: the write runs in the transaction, then ROLLBACK undoes it.
      await a.query(READ_T);
      await step(a, 'BEGIN');
      await step(a, READ_T);
      await step(a, "UPDATE t SET v = 'zwei' WHERE id = 2");
      await step(a, READ_T);
      await step(a, 'ROLLBACK');
      await a.query(READ_T);
      await a.query('SELECT @@in_transaction');
      // A ping inside the transaction answers with the transaction's flags.
      await step(a, 'BEGIN');
      await step(a, READ_T);
      await a.query(READ_T);
      await step(a, 'COMMIT');
    }));

  test('prepared BEGIN, executions and COMMIT answered by the proxy, byte for byte', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      const ROW = 'SELECT v FROM t WHERE id = ?';
      const run_ = (sql: string, params: Array<number | string> = []): Promise<unknown> =>
        a.executeThenDiagnostics(sql, params);
      await a.execute(ROW, [1]);
      await a.execute(ROW, [2]);
      await a.execute(READ_T);
      // The server's replies to this session's prepared BEGIN and COMMIT, kept for later.
      await a.execute('BEGIN');
      await a.execute('COMMIT');
      await a.execute('START TRANSACTION READ ONLY');
      await a.execute('ROLLBACK');
      await run.baseline();
      const begins = await serverCount('Com_begin');
      const commits = await serverCount('Com_commit');
      const rollbacks = await serverCount('Com_rollback');
      for (let round = 0; round < 2; round++) {
        await run_('BEGIN');
        await run_(ROW, [1]);
        await run_(ROW, [2]);
        await run_(READ_T);
        await run_('COMMIT');
      }
      await run_('START TRANSACTION READ ONLY');
      await run_(ROW, [2]);
      await run_('ROLLBACK');
      await a.query('SELECT @@in_transaction');
      await run.expect(
        { hits: 7, inserts: 0, transactions_deferred: 3, transactions_in_proxy: 3 },
        'three transactions, all in the proxy',
      );
      if (run.isProxy) {
        run.check((await serverCount('Com_begin')) === begins, 'the server saw no BEGIN');
        run.check((await serverCount('Com_commit')) === commits, 'the server saw no COMMIT');
        run.check((await serverCount('Com_rollback')) === rollbacks, 'the server saw no ROLLBACK');
      }
      // A miss starts the transaction on the server; the COMMIT after reads only is answered
      // at once, and what it left is the server's.
      await run_('BEGIN');
      await run_(ROW, [3]);
      await run_(ROW, [1]);
      await run_('COMMIT');
      await step(a, 'SELECT ROW_COUNT()');
      await step(a, 'SELECT @@in_transaction');
      await run.expect(
        { hits: 1, transactions_deferred: 1, commits_deferred: 1 },
        'a miss, a hit in the snapshot it took, the COMMIT answered',
      );
      // A write inside: the server's transaction, and its COMMIT.
      await run_('BEGIN');
      await run_(ROW, [1]);
      await run_('UPDATE t SET v = ? WHERE id = ?', ['uno', 1]);
      await run_(ROW, [1]);
      await run_('COMMIT');
      await a.execute(ROW, [1]);
      await run.expect({ commits_deferred: 0 }, 'a transaction that wrote');
      // The statements closed right after they ran: what the proxy sends for them later is
      // their text, not an execution of a statement the server no longer has.
      await run_('BEGIN');
      a.closeStatement('BEGIN');
      await run_(ROW, [7]);
      await run_('COMMIT');
      a.closeStatement('COMMIT');
      await step(a, 'SELECT @@in_transaction');
      await a.query(READ_T);
    }));

  test('a COMMIT after reads only is answered at once and reaches the server with what follows', () =>
    scenario(async (run) => {
      const a = await sessionThatBegan(run);
      const commits = await serverCount('Com_commit');
      await step(a, 'BEGIN');
      await step(a, 'SELECT v FROM t WHERE id = 3');
      await step(a, READ_T);
      await step(a, 'COMMIT');
      // What COMMIT left: the server's COMMIT went first.
      await step(a, 'SELECT ROW_COUNT()');
      await step(a, 'SELECT @@in_transaction');
      await run.expect({ commits_deferred: 1, transactions_deferred: 1 }, 'COMMIT answered');
      if (run.isProxy) {
        run.check((await serverCount('Com_commit')) === commits + 1, 'the server committed');
      }
      // After a write the COMMIT is the server's: its answer is the one that counts.
      await step(a, 'BEGIN');
      await step(a, 'SELECT v FROM t WHERE id = 1');
      await step(a, "UPDATE t SET v = 'uno' WHERE id = 1");
      await step(a, 'COMMIT');
      await a.query(READ_T);
      await run.expect({ commits_deferred: 0 }, 'a transaction that wrote');
    }));

  test('a COMMIT answered for a session that then idles reaches the server: DDL does not wait', async () => {
    await runStatements(proxy.host, proxy.port, TABLES);
    await proxy.settle();
    const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };
    const a = await proxy.connect(0, login);
    const ddl = await proxy.connect(1, login);
    try {
      for (const sql of [READ_T, 'BEGIN', 'COMMIT']) await rowsThrough(a, sql);
      const before = await proxy.counters();
      await rowsThrough(a, 'BEGIN');
      await rowsThrough(a, 'SELECT v FROM t WHERE id = 2');
      await rowsThrough(a, 'COMMIT');
      const after = await proxy.counters();
      assert.equal(after.get('commits_deferred')! - before.get('commits_deferred')!, 1);
      // A metadata lock A's transaction still held would make this fail after 5 s.
      await rowsThrough(ddl, 'SET SESSION lock_wait_timeout = 5');
      assert.equal(replyError(await ddl.query('ALTER TABLE t ADD COLUMN extra INT')), null);
      assert.deepEqual(
        await rowsThrough(ddl, `SELECT COUNT(*) FROM information_schema.INNODB_TRX`),
        [['0']],
        'no transaction left open on the server',
      );
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'one', null]);
    } finally {
      a.close();
      ddl.close();
    }
  });

  test('READ ONLY: a write inside gets the server’s own error', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 1 });
      await a.query(READ_U);
      await a.query('START TRANSACTION READ ONLY');
      await a.query('COMMIT');
      await step(a, 'START TRANSACTION READ ONLY');
      await step(a, READ_U);
      await a.record('UPDATE u SET w = 0', await a.client.query('UPDATE u SET w = 0'), 1792, false);
      await step(a, 'SHOW WARNINGS');
      await step(a, READ_U);
      await step(a, 'COMMIT');
      await a.query(READ_U);
    }));

  test('diagnostics after a BEGIN or COMMIT the proxy answered are the server’s', () =>
    scenario(async (run) => {
      const a = await sessionThatBegan(run);
      // A warning, then BEGIN: the warning is gone.
      await a.queryThenDiagnostics("SELECT CAST('7x' AS SIGNED)");
      await step(a, 'BEGIN');
      await step(a, 'SHOW WARNINGS');
      await step(a, 'SELECT ROW_COUNT()');
      await step(a, 'COMMIT');
      // Hits, COMMIT, then what COMMIT left.
      await a.queryThenDiagnostics("SELECT CAST('8x' AS SIGNED)");
      await step(a, 'BEGIN');
      await step(a, READ_T);
      await step(a, 'COMMIT');
      await step(a, 'SELECT ROW_COUNT()');
      // BEGIN and COMMIT leave the warning list alone (only statements that read tables reset
      // it): a warning before them is still there after them.
      await a.queryThenDiagnostics("SELECT CAST('9x' AS SIGNED)");
      await step(a, 'BEGIN');
      await step(a, 'COMMIT');
      await step(a, 'SHOW WARNINGS');
      await run.expect(
        { transactions_deferred: 3, transactions_in_proxy: 2 },
        'every BEGIN deferred; the first transaction read diagnostics from the server',
      );
    }));

  test('isolation levels and session states it does not begin transactions in', () =>
    scenario(async (run) => {
      const a = await sessionThatBegan(run);
      await a.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
      await a.query(READ_T);
      await a.query('COMMIT');
      await run.expect({ transactions_deferred: 0 }, 'WITH CONSISTENT SNAPSHOT: at once');
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE');
      await a.query('BEGIN');
      await a.query('COMMIT');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query('COMMIT');
      await run.expect({ transactions_deferred: 0, hits: 0 }, 'SERIALIZABLE');
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await a.query(READ_T);
      await a.query('BEGIN');
      await a.query('COMMIT');
      await step(a, 'BEGIN');
      await step(a, READ_T);
      await step(a, 'COMMIT');
      await run.expect({ transactions_deferred: 1, hits: 1 }, 'READ COMMITTED');
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await a.query('SET autocommit = 0');
      await a.query('BEGIN');
      await a.query('COMMIT');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query('COMMIT');
      await a.query('SET autocommit = 1');
      await run.expect({ transactions_deferred: 0 }, 'autocommit=0');
      await a.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query('COMMIT');
      await run.expect({ transactions_deferred: 0 }, 'SET TRANSACTION for the next one');
    }));

  test('--defer-transactions off: BEGIN and COMMIT always reach the server', async () => {
    const off = await ProxyHarness.start(['--defer-transactions', 'off']);
    try {
      await runStatements(off.host, off.port, TABLES);
      await off.settle();
      const a = await off.connect(0, {
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: DB,
      });
      try {
        const before = await off.counters();
        const begins = await serverCount('Com_begin');
        for (let round = 0; round < 3; round++) {
          for (const sql of ['BEGIN', READ_T, READ_T, 'COMMIT']) await rowsThrough(a, sql);
        }
        const after = await off.counters();
        assert.equal(after.get('transactions_deferred'), before.get('transactions_deferred'));
        assert.ok(after.get('hits')! > before.get('hits')!, 'hits still served in transactions');
        assert.equal(
          (await serverCount('Com_begin')) - begins,
          3,
          'every BEGIN reached the server',
        );
      } finally {
        a.close();
      }
    } finally {
      assert.equal(await off.stop(), 0);
    }
  });

  test('a table a hit read, written before the server’s snapshot: ER_CHECKREAD, rolled back', async () => {
    await runStatements(proxy.host, proxy.port, TABLES);
    await proxy.settle();
    const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };
    const a = await proxy.connect(0, login);
    const b = await proxy.connect(1, login);
    try {
      for (const sql of [READ_T, READ_U, 'BEGIN', 'COMMIT']) await rowsThrough(a, sql);
      const before = await proxy.counters();

      // Written after the hit: the transaction cannot go on with what it was given.
      await rowsThrough(a, 'BEGIN');
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'one']);
      await rowsThrough(b, "UPDATE t SET v = 'uno' WHERE id = 1");
      const refused = await a.query('SELECT COUNT(*) FROM u');
      const error = replyError(refused);
      assert.equal(error?.errno, 1020, 'ER_CHECKREAD');
      assert.equal(error?.sqlState, 'HY000');
      assert.equal(error?.message, "Record has changed since last read in table 't'");
      assert.deepEqual(await rowsThrough(a, 'SELECT @@in_transaction'), [['0']], 'rolled back');
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'uno']);

      // Written when no hit had read it: the server's snapshot has the new value, and the hits
      // before it are unchanged in that snapshot.
      await rowsThrough(a, READ_T);
      await rowsThrough(a, 'BEGIN');
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'uno']);
      await rowsThrough(b, 'UPDATE u SET w = 11 WHERE id = 1');
      assert.deepEqual((await rowsThrough(a, READ_U))[0], ['1', '11']);
      await rowsThrough(b, "UPDATE t SET v = 'eins' WHERE id = 1");
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'uno'], 'repeatable');
      await rowsThrough(a, 'COMMIT');
      assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'eins']);

      const counters = await proxy.counters();
      const moved = (name: string): number => counters.get(name)! - before.get(name)!;
      assert.equal(moved('transaction_conflicts'), 1);
      assert.equal(moved('transactions_deferred'), 2);
    } finally {
      a.close();
      b.close();
    }
  });

  test('rows added before the server’s snapshot: ER_CHECKREAD for a hit that found none, not for one that found its row', async () => {
    await runStatements(proxy.host, proxy.port, TABLES);
    await proxy.settle();
    const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };
    const a = await proxy.connect(0, login);
    const b = await proxy.connect(1, login);
    const ROW_1 = 'SELECT v FROM t WHERE id = 1';
    const ROW_7 = 'SELECT v FROM t WHERE id = 7';
    try {
      for (const sql of [ROW_1, ROW_7, 'BEGIN', 'COMMIT']) await rowsThrough(a, sql);
      const before = await proxy.counters();

      // The hit said row 7 is not there; an INSERT then adds it (and marks no row of t).
      await rowsThrough(a, 'BEGIN');
      assert.deepEqual(await rowsThrough(a, ROW_7), []);
      await rowsThrough(b, "INSERT INTO t (id, v) VALUES (7, 'seven'), (8, 'eight')");
      const error = replyError(await a.query('SELECT COUNT(*) FROM u'));
      assert.equal(error?.errno, 1020, 'ER_CHECKREAD');
      assert.equal(error?.message, "Record has changed since last read in table 't'");
      assert.deepEqual(await rowsThrough(a, ROW_7), [['seven']]);

      // The hit found row 1, which no INSERT can change: the transaction goes on.
      await rowsThrough(a, 'BEGIN');
      assert.deepEqual(await rowsThrough(a, ROW_1), [['one']]);
      await rowsThrough(b, "INSERT INTO t (v, id) VALUES ('nine', 9)");
      assert.deepEqual(await rowsThrough(a, 'SELECT COUNT(*) FROM u'), [['2']]);
      assert.deepEqual(await rowsThrough(a, 'SELECT v FROM t WHERE id = 9'), [['nine']]);
      await rowsThrough(a, 'COMMIT');

      const counters = await proxy.counters();
      const moved = (name: string): number => counters.get(name)! - before.get(name)!;
      assert.equal(moved('transaction_conflicts'), 1);
      assert.equal(moved('transactions_deferred'), 2);
    } finally {
      a.close();
      b.close();
    }
  });

  /** TABLES made anew through `harness`, and a session on each of its two workers. */
  async function freshSessions(harness: ProxyHarness): Promise<[RawClient, RawClient]> {
    await runStatements(harness.host, harness.port, TABLES);
    await harness.settle();
    const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };
    return [await harness.connect(0, login), await harness.connect(1, login)];
  }

  /**
   * In `client`'s transaction, begun with BEGIN (the proxy's or the server's): a first read that
   * reads no row, a read of u (cached: a hit once the snapshot is known to be taken), then t
   * and u changed together by `writer`, then a read of t, which the server must answer from the
   * same snapshot as u was: both as they were, since the read of u came before the change.
   * `rowless` is that first read and `rows` its result. Returns the hits the read of u got.
   */
  async function snapshotAfterARowlessRead(
    harness: ProxyHarness,
    client: RawClient,
    writer: RawClient,
    rowless: string,
    rows: string[][],
  ): Promise<number> {
    for (const sql of [READ_T, READ_U, 'BEGIN', 'COMMIT']) await rowsThrough(client, sql);
    await rowsThrough(client, 'BEGIN');
    // InnoDB answers this without reading a row, and takes no snapshot for it.
    assert.deepEqual(await rowsThrough(client, rowless), rows);
    const before = await harness.counters();
    assert.deepEqual((await rowsThrough(client, READ_U))[0], ['1', '10']);
    const hits = (await harness.counters()).get('hits')! - before.get('hits')!;
    for (const sql of [
      'BEGIN',
      "UPDATE t SET v = 'uno' WHERE id = 1",
      'UPDATE u SET w = 11 WHERE id = 1',
      'COMMIT',
    ]) {
      await rowsThrough(writer, sql);
    }
    assert.deepEqual(
      (await rowsThrough(client, READ_T))[0],
      ['1', 'one'],
      't as in the snapshot u was read in: the change to both came after it',
    );
    assert.deepEqual((await rowsThrough(client, READ_U))[0], ['1', '10'], 'u, repeatable');
    await rowsThrough(client, 'COMMIT');
    assert.deepEqual((await rowsThrough(client, READ_T))[0], ['1', 'uno']);
    return hits;
  }

  test('begun by the proxy, a first read that reads no row: started WITH CONSISTENT SNAPSHOT, the hits after it agree with the server', async () => {
    const [a, b] = await freshSessions(proxy);
    try {
      assert.equal(
        await snapshotAfterARowlessRead(proxy, a, b, 'SELECT * FROM t WHERE 1=0', []),
        1,
        'u read in the snapshot: a hit',
      );
    } finally {
      a.close();
      b.close();
    }
  });

  test('begun by the proxy, a locking read first: the client’s BEGIN, so the snapshot is taken at the first plain read, as on the server', async () => {
    const [a, b] = await freshSessions(proxy);
    try {
      for (const sql of [READ_U, 'BEGIN', 'COMMIT']) await rowsThrough(a, sql);
      await rowsThrough(a, 'BEGIN');
      assert.deepEqual(await rowsThrough(a, 'SELECT v FROM t WHERE id = 1 FOR UPDATE'), [['one']]);
      await rowsThrough(b, 'UPDATE u SET w = 11 WHERE id = 1');
      // InnoDB took no snapshot for the locking read: this first plain read sees the change.
      assert.deepEqual((await rowsThrough(a, READ_U))[0], ['1', '11']);
      await rowsThrough(a, 'COMMIT');
    } finally {
      a.close();
      b.close();
    }
  });

  test('begun by the server, a first read that reads no row takes no snapshot: no hit until one that read a row', async () => {
    const off = await ProxyHarness.start(['--defer-transactions', 'off']);
    try {
      // The first has a row in its result, but not one of t's.
      for (const [rowless, rows] of [
        ['SELECT COUNT(*) FROM t WHERE 1=0', [['0']]],
        ['SELECT * FROM t LIMIT 0', []],
      ] as const) {
        const [a, b] = await freshSessions(off);
        try {
          assert.equal(
            await snapshotAfterARowlessRead(
              off,
              a,
              b,
              rowless,
              rows.map((row) => [...row]),
            ),
            0,
            `after ${rowless}, u read from the server`,
          );
        } finally {
          a.close();
          b.close();
        }
      }
      // A read that returned rows of its table did take it: the hits go on after it.
      const [a, b] = await freshSessions(off);
      b.close();
      try {
        await rowsThrough(a, READ_U);
        await rowsThrough(a, 'BEGIN');
        await rowsThrough(a, READ_T);
        const before = await off.counters();
        await rowsThrough(a, READ_U);
        await rowsThrough(a, 'COMMIT');
        assert.equal((await off.counters()).get('hits')! - before.get('hits')!, 1);
      } finally {
        a.close();
      }
    } finally {
      assert.equal(await off.stop(), 0);
    }
  });

  test('without an admin account, a transaction whose first read misses is served hits after it', async () => {
    // No metadata: the proxy cannot tell which tables take InnoDB's snapshot.
    const bare = await ProxyHarness.start(['--admin-user', '']);
    try {
      const [a, b] = await freshSessions(bare);
      b.close();
      try {
        for (const sql of [READ_T, 'BEGIN', 'COMMIT']) await rowsThrough(a, sql);
        const before = await bare.counters();
        await rowsThrough(a, 'BEGIN');
        assert.deepEqual(await rowsThrough(a, 'SELECT v FROM t WHERE id = 2'), [['two']]);
        assert.deepEqual((await rowsThrough(a, READ_T))[0], ['1', 'one']);
        await rowsThrough(a, 'COMMIT');
        const after = await bare.counters();
        assert.equal(after.get('hits')! - before.get('hits')!, 1, 'the second read a hit');
        assert.equal(after.get('transactions_deferred')! - before.get('transactions_deferred')!, 1);
      } finally {
        a.close();
      }
    } finally {
      assert.equal(await bare.stop(), 0);
    }
  });

  test('under concurrent transfers, every transaction a reader sees adds up', async () => {
    const ACCOUNTS = 8;
    const TOTAL = ACCOUNTS * 100;
    await runStatements(proxy.host, proxy.port, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `USE ${DB}`,
      'CREATE TABLE a (id INT PRIMARY KEY, bal INT) ENGINE=InnoDB',
      'CREATE TABLE b (id INT PRIMARY KEY, bal INT) ENGINE=InnoDB',
      `INSERT INTO a SELECT seq, 100 FROM seq_1_to_${ACCOUNTS / 2}`,
      `INSERT INTO b SELECT seq, 100 FROM seq_1_to_${ACCOUNTS / 2}`,
      'RESET QUERY CACHE',
    ]);
    await proxy.settle();
    const login = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };
    const writer = await proxy.connect(undefined, login);
    const readers = await Promise.all([0, 1, 0, 1].map((worker) => proxy.connect(worker, login)));
    // Readers of each account's row, by prepared statements (their hits bounded by row).
    const preparedReaders = await Promise.all([0, 1].map((worker) => proxy.connect(worker, login)));
    const before = await proxy.counters();
    let writing = true;
    let transfers = 0;
    const violations: string[] = [];
    let seen = 0;
    let conflicts = 0;
    let preparedSeen = 0;
    try {
      // Learn BEGIN and COMMIT on every reader first.
      for (const reader of readers) {
        await rowsThrough(reader, 'BEGIN');
        await rowsThrough(reader, 'COMMIT');
      }
      const write = (async () => {
        for (let i = 0; i < 200; i++) {
          const amount = 1 + (i % 7);
          const from = 1 + (i % (ACCOUNTS / 2));
          await rowsThrough(writer, 'BEGIN');
          if (i % 2 === 0) {
            await rowsThrough(writer, `UPDATE a SET bal = bal - ${amount} WHERE id = ${from}`);
            await rowsThrough(writer, `UPDATE b SET bal = bal + ${amount} WHERE id = ${from}`);
          } else {
            await rowsThrough(writer, `UPDATE b SET bal = bal - ${amount} WHERE id = ${from}`);
            await rowsThrough(writer, `UPDATE a SET bal = bal + ${amount} WHERE id = ${from}`);
          }
          await rowsThrough(writer, 'COMMIT');
          transfers++;
          // Pauses long enough for reads to be stored and hit between writes.
          await sleep(3);
        }
        writing = false;
      })();
      const read = async (reader: RawClient): Promise<void> => {
        while (writing) {
          await rowsThrough(reader, 'BEGIN');
          const first = await reader.query('SELECT SUM(bal) FROM a');
          const second = await reader.query('SELECT SUM(bal) FROM b');
          const third = await reader.query('SELECT SUM(bal) FROM a');
          const failed = [first, second, third].map(replyError).find((error) => error !== null);
          if (failed !== undefined) {
            assert.equal(failed.errno, 1020, `only ER_CHECKREAD may end it: ${failed.message}`);
            conflicts++;
            // Rolled back by the error; a COMMIT now commits nothing, as on the server.
            await rowsThrough(reader, 'COMMIT');
            continue;
          }
          const sums = [first, second, third].map((reply) =>
            Number(rowsOf(reply, reader.deprecateEof)[0]![0]),
          );
          await rowsThrough(reader, 'COMMIT');
          seen++;
          if (sums[0]! + sums[1]! !== TOTAL || sums[0] !== sums[2]) {
            violations.push(`a=${sums[0]} b=${sums[1]} a again=${sums[2]}`);
          }
        }
      };
      const readRows = async (reader: RawClient): Promise<void> => {
        const begin = await prepared(reader, 'BEGIN');
        const commit = await prepared(reader, 'COMMIT');
        const byTable = [
          await prepared(reader, 'SELECT bal FROM a WHERE id = ?'),
          await prepared(reader, 'SELECT bal FROM b WHERE id = ?'),
        ];
        const run = async (id: number, params: number[] = []): Promise<RawPacket[]> =>
          reader.command(execute(id, params));
        const ok = async (id: number): Promise<void> => {
          const error = replyError(await run(id));
          assert.equal(error, null, error?.message);
        };
        await ok(begin);
        await ok(commit);
        while (writing) {
          await ok(begin);
          const sums = [0, 0];
          let failed: ReturnType<typeof replyError> = null;
          reading: for (const table of [0, 1]) {
            for (let id = 1; id <= ACCOUNTS / 2; id++) {
              const reply = await run(byTable[table]!, [id]);
              failed = replyError(reply);
              if (failed !== null) break reading;
              sums[table] = sums[table]! + binaryInts(reply, reader.deprecateEof)[0]!;
            }
          }
          if (failed !== null) {
            assert.equal(failed.errno, 1020, `only ER_CHECKREAD may end it: ${failed.message}`);
            conflicts++;
            await ok(commit);
            continue;
          }
          await ok(commit);
          seen++;
          preparedSeen++;
          if (sums[0]! + sums[1]! !== TOTAL) violations.push(`rows: a=${sums[0]} b=${sums[1]}`);
        }
      };
      await Promise.all([write, ...readers.map(read), ...preparedReaders.map(readRows)]);
    } finally {
      writing = false;
      writer.close();
      for (const reader of [...readers, ...preparedReaders]) reader.close();
    }
    const counters = await proxy.counters();
    const moved = (name: string): number => counters.get(name)! - before.get(name)!;
    assert.deepEqual(violations, [], 'every transaction saw one snapshot');
    assert.equal(transfers, 200);
    assert.ok(seen > 0, 'readers finished transactions');
    assert.ok(preparedSeen > 0, 'readers by prepared statements finished transactions');
    assert.equal(moved('transaction_conflicts'), conflicts, 'each conflict counted once');
    assert.ok(moved('transactions_deferred') > 0, 'readers’ transactions were deferred');
    assert.ok(moved('hits') > 0, 'and served hits');
  });
});
