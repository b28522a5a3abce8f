/**
 * A worker that dies with a write in flight: the main thread ends the worker's backend
 * connections, releases the marks the worker held (raising their tables first), and starts a new
 * worker. Afterwards the table is cached again, and nothing stale is served — the write the dead
 * worker had sent (waiting for a row lock held by a direct connection) must not commit behind a
 * cached result.
 *
 * The worker dies of an uncaught error thrown inside it (NICECACHE_TEST_FAULTS=1, `crash N` on
 * the proxy's standard input), as a bug would kill it. Every read through the proxy is compared
 * with the same read made directly on the server.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, test } from 'node:test';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { ProxyHarness, WARM_DB, rowsOf, runStatements } from '../support/cache-scenario.ts';
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

describe('a worker that dies with a write in flight', () => {
  let proxy: ProxyHarness;
  let direct: RawClient;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `CREATE DATABASE IF NOT EXISTS ${WARM_DB}`,
      `CREATE TABLE IF NOT EXISTS ${WARM_DB}.w (id INT PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT IGNORE INTO ${WARM_DB}.w VALUES (1)`,
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `CREATE TABLE ${DB}.kv (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`,
      `INSERT INTO ${DB}.kv VALUES (1, 'before'), (2, 'untouched')`,
    ]);
    proxy = await ProxyHarness.start([], { env: { NICECACHE_TEST_FAULTS: '1' }, stdin: true });
    direct = await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN });
  });

  after(async () => {
    direct.close();
    const code = await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
    assert.equal(code, 0, 'the proxy exits cleanly');
  });

  async function connectWhenListening(worker: number): Promise<RawClient> {
    for (let attempt = 0; ; attempt++) {
      const client = await proxy.connect(worker, LOGIN).catch(() => null);
      if (client !== null) return client;
      assert.ok(attempt < 100, `no connection landed on worker ${worker}`);
      await sleep(50);
    }
  }

  /** Reads through the proxy and directly: the replies must be the same bytes. */
  async function sameAsServer(client: RawClient, label: string): Promise<void> {
    const viaProxy = replyBytes(await client.query(READ));
    const fromServer = replyBytes(await direct.query(READ));
    assert.ok(viaProxy.equals(fromServer), `${label}: the proxy's reply is the server's`);
  }

  /** Closed after each test, whatever its outcome. */
  const opened: RawClient[] = [];
  afterEach(() => {
    for (const client of opened.splice(0)) client.close();
  });

  test('its marks are released once the server is done with its write; then cached again', async () => {
    const reader = await proxy.connect(0, LOGIN);
    opened.push(reader);
    // The counters are read on worker 0, which stays up.
    const stats = await proxy.connect(0, LOGIN);
    opened.push(stats);
    const counters = async (): Promise<Map<string, number>> => {
      const reply = await stats.query("SHOW GLOBAL STATUS LIKE 'Qcache%'");
      assert.equal(replyError(reply), null);
      return new Map(
        rowsOf(reply, false).map(([name, value]) => [name!.slice(7).toLowerCase(), Number(value)]),
      );
    };
    await sameAsServer(reader, 'first read');
    await sameAsServer(reader, 'cached read');

    // A row lock held directly, and a write through worker 1 that waits for it.
    const locker = await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN });
    opened.push(locker);
    assert.equal(replyError(await locker.query('BEGIN')), null);
    assert.equal(replyError(await locker.query('SELECT v FROM kv WHERE id = 1 FOR UPDATE')), null);
    const writer = await proxy.connect(1, LOGIN);
    opened.push(writer);
    assert.equal(replyError(await writer.query('SELECT 1')), null);
    writer.send(Buffer.from(`\u0003UPDATE kv SET v = 'after' WHERE id = 1`, 'latin1'));
    const monitor = await RawClient.connect({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      ...LOGIN,
    });
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

    // While it is in flight, the table is not served from the cache.
    const before = await counters();
    await sameAsServer(reader, 'read while the write is in flight');
    const during = await counters();
    assert.equal(during.get('hits'), before.get('hits'), 'no hit while the write is in flight');

    const logFrom = proxy.process.log().length;
    proxy.process.child.stdin!.write('crash 1\n');
    await waitFor('the worker to exit', () =>
      /worker 1 exited/.test(proxy.process.log().slice(logFrom)),
    );
    await waitFor('the writer to lose its connection', () => writer.closed);
    // A new worker 1 listens once the old one's marks are released.
    const replacement = await connectWhenListening(1);
    opened.push(replacement);
    assert.match(proxy.process.log().slice(logFrom), /worker 1 held 1 table mark/);

    // The dead worker's write is gone from the server: released, the table is cached again.
    await sameAsServer(reader, 'read after the restart');
    const refilled = await counters();
    await sameAsServer(reader, 'read after the restart, again');
    const afterRestart = await counters();
    assert.equal(afterRestart.get('hits')! - refilled.get('hits')!, 1, 'cached again');

    // The lock goes: had the write survived, it would commit now, under the cached result.
    assert.equal(replyError(await locker.query('ROLLBACK')), null);
    await sleep(100);
    await sameAsServer(reader, 'read after the lock was released');
    const rows = rowsOf(await direct.query(READ), false);
    assert.deepEqual(rows, [
      ['1', 'before'],
      ['2', 'untouched'],
    ]);

    // The new worker serves, reads and writes.
    await sameAsServer(replacement, 'read on the new worker');
    assert.equal(replyError(await replacement.query("UPDATE kv SET v = 'new' WHERE id = 2")), null);
    await sameAsServer(reader, 'read after a write through the new worker');
    await sameAsServer(replacement, 'read on the new worker after its write');
  });
});
