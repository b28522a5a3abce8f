/**
 * The schema catalog never switches the cache off for good, and is current at once after DDL.
 *
 * - COM_REFRESH (granted or refused for want of RELOAD) changes no view, trigger or foreign key:
 *   the next SELECT on every worker is cached as before.
 * - A schema change pipelined with commands the proxy does not know, or whose client left, is
 *   still released: the cache works again on every worker.
 * - A metadata load that fails (the admin account locked) is retried by itself and recovers.
 * - After CREATE/DROP through one worker, the first statement on either worker already sees the
 *   new metadata: a read of the new table is stored, a write to it invalidates that table only.
 *
 * Differential: each script runs directly and through the proxy (2 workers, cache on, admin
 * account), replies compared byte for byte, and the proxy's counters checked.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Command } from '../../src/protocol/constants.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import {
  ProxyHarness,
  WARM_TABLE_STATEMENTS,
  differential,
  runStatements,
} from '../support/cache-scenario.ts';
import type { Run } from '../support/cache-scenario.ts';
import { replyError } from '../support/raw-client.ts';

const DB = 'nc_meta_recovery';
/** A user without RELOAD: its COM_REFRESH is refused with 1227. */
const PLAIN_USER = 'nc_meta_plain';
/** An admin account of the test's own, which it locks to make metadata loads fail. */
const ADMIN_USER = 'nc_meta_admin';
const ADMIN_PASSWORD = 'nc-meta-admin';

/**
 * COM_REFRESH with REFRESH_TABLES: harmless to the other tests (REFRESH_STATUS would reset the
 * counters the scenarios check, as FLUSH STATUS does).
 */
const REFRESH = Buffer.from([Command.REFRESH, 0x04]);
/** A command byte no server knows: the proxy cannot follow its reply. */
const UNKNOWN_COMMAND = Buffer.from([0x40]);

const setup = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `DROP USER IF EXISTS '${PLAIN_USER}'@'%'`,
  `CREATE DATABASE ${DB}`,
  `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`,
  `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two')`,
  `CREATE TABLE ${DB}.other (id INT PRIMARY KEY) ENGINE=InnoDB`,
  `INSERT INTO ${DB}.other VALUES (1)`,
  `CREATE USER '${PLAIN_USER}'@'%'`,
  `GRANT SELECT, INSERT, CREATE, DROP ON ${DB}.* TO '${PLAIN_USER}'@'%'`,
];

const ER_UNKNOWN_COM_ERROR = 1047;

/** The test's own admin account, made afresh; and a proxy that reads the metadata with it. */
const OWN_ADMIN = [
  `DROP USER IF EXISTS '${ADMIN_USER}'@'%'`,
  `CREATE USER '${ADMIN_USER}'@'%' IDENTIFIED BY '${ADMIN_PASSWORD}'`,
  `GRANT SELECT, SHOW VIEW, TRIGGER, PROCESS ON *.* TO '${ADMIN_USER}'@'%'`,
];
const withOwnAdmin = (): Promise<ProxyHarness> =>
  ProxyHarness.start(['--admin-user', ADMIN_USER, '--admin-password', ADMIN_PASSWORD]);

const READ_T = 'SELECT id, v FROM t ORDER BY id';
const READ_OTHER = 'SELECT id FROM other';

/**
 * `sql` (a SELECT ... FROM) with a column naming `worker`: the workers share one store, so each
 * reads a result of its own to show that it can store one as well as serve it.
 */
function onWorker(sql: string, worker: number): string {
  return sql.replace(' FROM ', `, ${worker} AS worker FROM `);
}

/** Through the proxy: a read is stored by its first run and served by its second, on `worker`. */
async function cachedOn(run: Run, worker: number, sql: string, label: string): Promise<void> {
  const session = await run.session(`reader on worker ${worker}`, { worker });
  await run.baseline();
  await session.query(onWorker(sql, worker));
  await session.query(onWorker(sql, worker));
  await run.expect({ bypass_unknown_table: 0, inserts: 1, hits: 1 }, label);
}

describe('schema catalog: recovers by itself, current at once after DDL', () => {
  let proxy: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...WARM_TABLE_STATEMENTS]);
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    const code = await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `DROP USER IF EXISTS '${PLAIN_USER}'@'%'`,
      `DROP USER IF EXISTS '${ADMIN_USER}'@'%'`,
    ]);
    assert.equal(code, 0, 'the proxy exits cleanly');
  });

  for (const user of [BACKEND_USER, PLAIN_USER]) {
    test(`COM_REFRESH by ${user === BACKEND_USER ? 'an account with RELOAD' : 'an account without RELOAD'} leaves the cache on`, () =>
      differential(proxy, { database: DB, setup }, async (run) => {
        const a = await run.session('A', { worker: 0, ...(user === PLAIN_USER ? { user } : {}) });
        const b = await run.session('B', { worker: 1 });
        await a.query(READ_T);
        await b.query(READ_T);
        await run.baseline();
        await a.command('COM_REFRESH', REFRESH, user === PLAIN_USER ? 1227 : undefined);
        await run.expect({ invalidations_all: 1 }, 'COM_REFRESH invalidates everything');
        // The very next reads, on both workers: stored again at once, then served.
        for (const [worker, session] of [a, b].entries()) {
          await session.query(onWorker(READ_T, worker));
          await session.query(onWorker(READ_T, worker));
        }
        await run.expect(
          { bypass_unknown_table: 0, inserts: 2, hits: 2 },
          'reads after COM_REFRESH, both workers',
        );
      }));
  }

  test('a COM_REFRESH refused inside a transaction does not hold "everything" while it lasts', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const a = await run.session('A', { worker: 0, user: PLAIN_USER });
      const b = await run.session('B', { worker: 1 });
      await b.query(READ_OTHER);
      await a.query('BEGIN');
      await a.query("INSERT INTO t VALUES (3, 'three')");
      // The server commits the transaction before it checks RELOAD, then refuses.
      await a.command('COM_REFRESH in a transaction', REFRESH, 1227);
      await run.baseline();
      // A is idle now: B's other table is served from the cache again.
      await b.query(READ_OTHER);
      await b.query(READ_OTHER);
      await run.expect({ hits: 1 }, 'reads of another table while A is idle');
      await a.query(READ_T);
      await b.query(READ_T);
    }));

  test('DDL pipelined with an unknown command, then left: released', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const a = await run.session('A', { worker: 0 });
      // The DDL, COM_REFRESH and a command byte the proxy does not know, in one write: each
      // gets its reply, and the marks of all three are released.
      const ddl = Buffer.from([Command.QUERY, ...Buffer.from('CREATE TABLE piped (id INT)')]);
      a.client.socket.write(
        Buffer.concat([
          encodePacket(ddl, 0),
          encodePacket(REFRESH, 0),
          encodePacket(UNKNOWN_COMMAND, 0),
        ]),
      );
      for (const step of ['CREATE TABLE piped', 'COM_REFRESH', 'unknown command']) {
        const packet = await a.client.readPacket();
        assert.ok(packet !== null, `${step}: a reply`);
        const unknown = step === 'unknown command';
        await a.record(step, [packet], unknown ? ER_UNKNOWN_COM_ERROR : undefined, unknown);
      }
      a.client.destroy();
      await cachedOn(run, 0, READ_T, 'after the unknown command, worker 0');
      await cachedOn(run, 1, READ_T, 'after the unknown command, worker 1');
    }));

  test('DDL whose client leaves before the reply: released when the reply comes', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const a = await run.session('A', { worker: 0 });
      // The session's state is known (no probe to wait for): the DDL goes out as it arrives.
      await a.query(READ_OTHER);
      // Sent, then the connection ends at once (a FIN right behind the command).
      a.client.socket.end(
        encodePacket(
          Buffer.from([Command.QUERY, ...Buffer.from('CREATE TABLE left_behind (id INT)')]),
          0,
        ),
      );
      // Its reply comes to the proxy, not to the client: wait until the server has run it.
      const probe = await run.session('probe', { worker: 1 });
      for (let attempt = 0; ; attempt++) {
        const rows = await probe.rows(
          `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${DB}' AND TABLE_NAME = 'left_behind'`,
        );
        if (rows[0]![0] === '1') break;
        assert.ok(attempt < 500, 'the server ran the DDL');
        await sleep(10);
      }
      await cachedOn(run, 0, READ_T, 'after the DDL, worker 0');
      await cachedOn(run, 1, READ_T, 'after the DDL, worker 1');
    }));

  test('after CREATE and DROP on one worker, the first statement on either already sees it', () =>
    differential(proxy, { database: DB, setup }, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await a.query(READ_OTHER);
      await b.query(READ_OTHER);
      for (const [ddlSession, otherSession, name] of [
        [a, b, 'fresh0'],
        [b, a, 'fresh1'],
      ] as const) {
        await ddlSession.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`);
        await ddlSession.query(`INSERT INTO ${name} VALUES (1, 1)`);
        await run.baseline();
        // At once, no settling: the other worker first, then the one that ran the DDL.
        for (const session of [otherSession, ddlSession]) {
          const sql = onWorker(`SELECT v FROM ${name}`, session === a ? 0 : 1);
          await session.query(sql);
          await session.query(sql);
        }
        await run.expect(
          { bypass_unknown_table: 0, inserts: 2, hits: 2 },
          `first reads of ${name} after CREATE TABLE`,
        );
        // CREATE TABLE of a name the metadata did not know invalidated everything: store again.
        await otherSession.query(READ_OTHER);
        await ddlSession.query(READ_OTHER);
        // A write on the worker that did not run the DDL names the new table, not everything.
        await otherSession.query(`UPDATE ${name} SET v = 2`);
        await run.expect({ invalidations: 1, invalidations_all: 0 }, `a write to ${name}`);
        await ddlSession.query(READ_OTHER);
        await otherSession.query(READ_OTHER);
        await run.expect({ hits: 2 }, 'results of other tables survive the write');
        await ddlSession.query(`SELECT v FROM ${name}`);
        await ddlSession.query(`SELECT v FROM ${name}`);
        await run.expect({ hits: 1, inserts: 1 }, `${name} read again after the write`);
        await ddlSession.query(`DROP TABLE ${name}`);
        await run.baseline();
        await otherSession.query(`SELECT v FROM ${name}`, 1146);
        await otherSession.query(READ_OTHER);
        await ddlSession.query(READ_OTHER);
        await run.expect({ bypass_unknown_table: 1, hits: 2 }, `after DROP TABLE ${name}`);
      }
    }));

  test('a metadata load that fails is retried by itself until it succeeds', async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...setup, ...OWN_ADMIN]);
    const own = await withOwnAdmin();
    try {
      const client = await own.connect(0, {
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: DB,
      });
      // Every load fails from here: the account may not log in.
      await runStatements(BACKEND_HOST, BACKEND_PORT, [
        `ALTER USER '${ADMIN_USER}'@'%' ACCOUNT LOCK`,
      ]);
      assert.equal(replyError(await client.query('CREATE TABLE during_lock (id INT)')), null);
      await sleep(300);
      const before = await own.counters();
      assert.equal(replyError(await client.query(READ_T)), null);
      const during = await own.counters();
      assert.equal(
        during.get('bypass_unknown_table')! - before.get('bypass_unknown_table')!,
        1,
        'while loads fail, reads are not cached',
      );
      assert.match(own.process.log(), /cannot read schema metadata/);
      await runStatements(BACKEND_HOST, BACKEND_PORT, [
        `ALTER USER '${ADMIN_USER}'@'%' ACCOUNT UNLOCK`,
      ]);
      // No statement asks for it: the retry comes by itself (then the harness's reads see it).
      await own.settle();
      const settled = await own.counters();
      assert.equal(replyError(await client.query(READ_T)), null);
      assert.equal(replyError(await client.query(READ_T)), null);
      const after = await own.counters();
      assert.equal(after.get('bypass_unknown_table'), settled.get('bypass_unknown_table'));
      assert.equal(after.get('hits')! - settled.get('hits')!, 1, 'cached again');
      client.close();
    } finally {
      assert.equal(await own.stop(), 0);
    }
  });

  test('a CALL of a procedure that runs no DDL leaves the metadata as it is; one that may reloads it', async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      ...setup,
      `CREATE PROCEDURE ${DB}.touch(n INT) BEGIN UPDATE t SET v = v WHERE id = n; SELECT COUNT(*) FROM other; END`,
      `CREATE PROCEDURE ${DB}.touch_twice() BEGIN CALL touch(1); CALL touch(2); END`,
      `CREATE PROCEDURE ${DB}.remake() CREATE TABLE IF NOT EXISTS made (id INT)`,
      ...OWN_ADMIN,
    ]);
    const own = await withOwnAdmin();
    const connect = (): ReturnType<typeof own.connect> =>
      own.connect(0, { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB });
    const client = await connect();
    const other = await connect();
    /**
     * Runs `calls` on `caller`, then reads t twice there and twice on `other`, a session of the
     * same worker: how many of those reads the metadata could not place, how many were not
     * cached for another reason, and how many were served.
     */
    const afterCalls = async (
      calls: readonly string[],
      caller = client,
    ): Promise<{ unknown: number; notCached: number; hits: number }> => {
      for (const call of calls) assert.equal(replyError(await caller.query(call)), null, call);
      const before = await own.counters();
      for (const reader of [caller, caller, other, other]) {
        assert.equal(replyError(await reader.query(READ_T)), null);
      }
      const after = await own.counters();
      const change = (name: string): number => after.get(name)! - before.get(name)!;
      return {
        unknown: change('bypass_unknown_table'),
        notCached: change('not_cached') - change('bypass_unknown_table'),
        hits: change('hits'),
      };
    };
    try {
      await own.settle();
      assert.deepEqual(
        await afterCalls(['DO 1']),
        { unknown: 0, notCached: 0, hits: 3 },
        'the metadata is loaded',
      );
      // From here a reload fails: a read after one is not cached. The CALLs below must not ask
      // for one: their procedures run no DDL, themselves or through what they call. Nor may
      // they create a temporary table, so the session's own reads are cached after them.
      await runStatements(BACKEND_HOST, BACKEND_PORT, [
        `ALTER USER '${ADMIN_USER}'@'%' ACCOUNT LOCK`,
      ]);
      for (const calls of [
        ['CALL touch(1)'],
        // The second before anything has probed the session again.
        ['CALL touch(2)', 'CALL touch(3)'],
        ['SET @n = 4', 'CALL touch(@n)'],
        [`CALL ${DB}.touch_twice()`],
      ]) {
        // Each CALL writes t (its procedure's body says so): t's result is stored again, then served.
        assert.deepEqual(
          await afterCalls(calls),
          { unknown: 0, notCached: 0, hits: 3 },
          calls.join('; '),
        );
      }
      // The first statement of a session: its current database is not known yet (no probe has
      // run), but every procedure of that name runs no DDL.
      const fresh = await connect();
      assert.deepEqual(
        await afterCalls(['CALL touch(5)'], fresh),
        { unknown: 0, notCached: 0, hits: 3 },
        'CALL touch(5) first',
      );
      fresh.close();
      // One that may run DDL: every worker reloads (and fails to, here), and its session may
      // have temporary tables from now on.
      assert.deepEqual(
        await afterCalls(['CALL remake()']),
        { unknown: 2, notCached: 2, hits: 0 },
        'CALL remake()',
      );
      assert.match(own.process.log(), /cannot read schema metadata/);
      client.close();
      other.close();
    } finally {
      await runStatements(BACKEND_HOST, BACKEND_PORT, [
        `ALTER USER '${ADMIN_USER}'@'%' ACCOUNT UNLOCK`,
      ]);
      assert.equal(await own.stop(), 0);
    }
  });
});
