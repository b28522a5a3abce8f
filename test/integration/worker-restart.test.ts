/**
 * A worker that dies with a write in flight: the main thread ends the worker's backend
 * connections, releases the marks the worker held (raising their tables first), and starts a new
 * worker. Afterwards the table is cached again, and nothing stale is served — the write the dead
 * worker had sent (waiting for a row lock held by a direct connection) must not commit behind a
 * cached result.
 *
 * With an admin account that may not kill other users' connections, the main thread waits for
 * the server to end the write by itself (the lock released, it commits), and only then releases.
 *
 * The worker dies of an uncaught error thrown inside it (NICECACHE_TEST_FAULTS=1, `crash N` on
 * the proxy's standard input), as a bug would kill it. Every read through the proxy is compared
 * with the same read made directly on the server.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, test } from 'node:test';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import {
  ProxyHarness,
  WARM_TABLE_STATEMENTS,
  rowsOf,
  runStatements,
} from '../support/cache-scenario.ts';
import { RawClient, replyBytes, replyError } from '../support/raw-client.ts';

const DB = 'nc_worker_restart';
const READ = 'SELECT id, v FROM kv ORDER BY id';
const LOGIN = { user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB };

async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let attempt = 0; !(await condition()); attempt++) {
    assert.ok(attempt < 1000, `timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** An admin account with the metadata privileges only: it may not kill others' connections. */
const WEAK_ADMIN = 'nc_restart_admin';
const WEAK_PASSWORD = 'nc-restart-admin';

describe('a worker that dies with a write in flight', () => {
  let proxy: ProxyHarness | undefined;
  let weak: ProxyHarness | undefined;
  let direct: RawClient | undefined;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      ...WARM_TABLE_STATEMENTS,
      `DROP USER IF EXISTS '${WEAK_ADMIN}'@'%'`,
      `CREATE USER '${WEAK_ADMIN}'@'%' IDENTIFIED BY '${WEAK_PASSWORD}'`,
      `GRANT SELECT, SHOW VIEW, TRIGGER ON *.* TO '${WEAK_ADMIN}'@'%'`,
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
    ]);
    const faults = { env: { NICECACHE_TEST_FAULTS: '1' }, stdin: true };
    proxy = await ProxyHarness.start([], faults);
    weak = await ProxyHarness.start(
      ['--admin-user', WEAK_ADMIN, '--admin-password', WEAK_PASSWORD],
      faults,
    );
    direct = await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN });
  });

  after(async () => {
    direct?.close();
    const codes = await Promise.all([proxy?.stop(), weak?.stop()]);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `DROP USER IF EXISTS '${WEAK_ADMIN}'@'%'`,
    ]);
    assert.deepEqual(codes, [0, 0], 'the proxies exit cleanly');
  });

  /** Closed after each test, whatever its outcome. */
  const opened: RawClient[] = [];
  afterEach(() => {
    for (const client of opened.splice(0)) client.close();
  });

  /** Reads through the proxy and directly: the replies must be the same bytes. */
  async function sameAsServer(client: RawClient, label: string): Promise<void> {
    const viaProxy = replyBytes(await client.query(READ));
    const fromServer = replyBytes(await direct!.query(READ));
    assert.ok(viaProxy.equals(fromServer), `${label}: the proxy's reply is the server's`);
  }

  /**
   * A write through worker 1 waits for a row lock held directly; worker 1 dies. `canKill`: the
   * admin account may kill it, so its marks are released while the lock is still held and the
   * write never commits; otherwise they are released only once the write has committed.
   */
  async function dieWithWriteInFlight(harness: ProxyHarness, canKill: boolean): Promise<void> {
    // Through the proxy: it sees the DDL, so its metadata knows the table at once.
    await runStatements(harness.host, harness.port, [
      `DROP TABLE IF EXISTS ${DB}.kv`,
      `CREATE TABLE ${DB}.kv (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`,
      `INSERT INTO ${DB}.kv VALUES (1, 'before'), (2, 'untouched')`,
    ]);
    const connect = async (worker: number): Promise<RawClient> => {
      // A replacement worker listens soon after its predecessor died.
      for (let attempt = 0; ; attempt++) {
        const client = await harness.connect(worker, LOGIN).catch(() => null);
        if (client !== null) {
          opened.push(client);
          return client;
        }
        assert.ok(attempt < 100, `no connection landed on worker ${worker}`);
        await sleep(50);
      }
    };
    const reader = await connect(0);
    // The counters are read on worker 0, which stays up.
    const stats = await connect(0);
    const hits = async (): Promise<number> => {
      const rows = rowsOf(await stats.query("SHOW GLOBAL STATUS LIKE 'Qcache_hits'"), false);
      return Number(rows[0]![1]);
    };
    /** Two reads: the second is a hit exactly when `cached`. */
    const readTwice = async (label: string, cached: boolean): Promise<void> => {
      await sameAsServer(reader, label);
      const before = await hits();
      await sameAsServer(reader, `${label}, again`);
      assert.equal((await hits()) - before, cached ? 1 : 0, `${label}: cached is ${cached}`);
    };
    await readTwice('before the write', true);

    const locker = await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN });
    opened.push(locker);
    assert.equal(replyError(await locker.query('BEGIN')), null);
    assert.equal(replyError(await locker.query('SELECT v FROM kv WHERE id = 1 FOR UPDATE')), null);
    const writer = await connect(1);
    assert.equal(replyError(await writer.query('SELECT 1')), null);
    writer.send(Buffer.from(`\u0003UPDATE kv SET v = 'after' WHERE id = 1`, 'latin1'));
    const monitor = await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN });
    opened.push(monitor);
    await waitFor('the write to wait for its lock', async () => {
      const rows = rowsOf(
        await monitor.query(
          "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'UPDATE kv SET v = ''after''%'",
        ),
        false,
      );
      return rows[0]![0] === '1';
    });
    await readTwice('while the write is in flight', false);

    const logFrom = harness.process.log().length;
    // With PROCESS (the full admin) the metadata knows kv's point column, and the UPDATE is a
    // point write: it marks its row's slot and "some row". Without it, kv's slot alone.
    const marks = canKill ? 2 : 1;
    const released = (): boolean =>
      new RegExp(`worker 1 held ${marks} table mark`).test(harness.process.log().slice(logFrom));
    harness.process.child.stdin!.write('crash 1\n');
    await waitFor('the worker to exit', () =>
      /worker 1 exited/.test(harness.process.log().slice(logFrom)),
    );
    await waitFor('the writer to lose its connection', () => writer.closed);
    const replacement = await connect(1);

    if (canKill) {
      // The dead worker's write is gone from the server: released, the table is cached again.
      await waitFor('the marks to be released', released);
      await readTwice('after the restart', true);
    } else {
      // The write still waits for its lock: the marks stay.
      await readTwice('after the restart, the write still waiting', false);
      assert.equal(released(), false, 'not released while the server runs the write');
    }

    // The lock goes: a write that survived commits now.
    assert.equal(replyError(await locker.query('ROLLBACK')), null);
    await waitFor('the marks to be released', released);
    await sameAsServer(reader, 'after the lock was released');
    assert.deepEqual(rowsOf(await direct!.query(READ), false), [
      ['1', canKill ? 'before' : 'after'],
      ['2', 'untouched'],
    ]);
    await readTwice('after the release', true);

    // The new worker serves, reads and writes.
    await sameAsServer(replacement, 'read on the new worker');
    assert.equal(replyError(await replacement.query("UPDATE kv SET v = 'new' WHERE id = 2")), null);
    await sameAsServer(reader, 'read after a write through the new worker');
    await sameAsServer(replacement, 'read on the new worker after its write');
  }

  test('its connections killed, its marks are released; then cached again, nothing stale', () =>
    dieWithWriteInFlight(proxy!, true));

  test('an admin account that may not kill: the marks go once the server finished the write', () =>
    dieWithWriteInFlight(weak!, false));

  test('a worker that keeps dying is restarted after a growing delay', async () => {
    const proxy = weak!;
    const logFrom = proxy.process.log().length;
    for (let round = 0; round < 3; round++) {
      const client = await proxy.connect(1, LOGIN).catch(() => null);
      if (client === null) {
        await sleep(50);
        round--;
        continue;
      }
      opened.push(client);
      proxy.process.child.stdin!.write('crash 1\n');
      await waitFor('the worker to exit', () => client.closed);
    }
    const delays = [
      ...proxy.process
        .log()
        .slice(logFrom)
        .matchAll(/worker 1 exited .*? in (\d+) ms/g),
    ].map((match) => Number(match[1]));
    assert.ok(delays.length >= 2, `restart delays logged: ${delays.join(', ')}`);
    for (let i = 1; i < delays.length; i++) assert.ok(delays[i]! > delays[i - 1]!, 'growing');
    await proxy.connect(1, LOGIN).then(
      (client) => opened.push(client),
      () => undefined,
    );
  });
});
