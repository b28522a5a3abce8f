/**
 * Per-statement digests at /api/digests: after a known workload on both workers of a real
 * proxy (text and prepared reads that miss and hit, a write, reads the cache must not answer),
 * every digest's counts are exactly what the workload did, merged over the workers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { ServerStatus } from '../../src/protocol/constants.ts';
import { readStatus } from '../../src/protocol/generic-packets.ts';
import { execute, prepare } from '../../src/protocol/statement-commands.ts';
import type { DigestRow } from '../../src/cache/statement-digests.ts';
import { connectOnWorker, rowsOf, runStatements } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { metricsUrl } from '../support/metrics.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { replyError } from '../support/raw-client.ts';
import type { RawClient } from '../support/raw-client.ts';

const DB = 'nc_digests';

/** The digests at `url` (the API's JSON), and a finder that fails naming what was there. */
async function digestsAt(
  url: string,
): Promise<{ digests: DigestRow[]; of: (digest: string) => DigestRow }> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const { digests } = (await response.json()) as { digests: DigestRow[] };
  const of = (digest: string): DigestRow => {
    const row = digests.find((candidate) => candidate.digest === digest);
    assert.ok(row, `no digest ${digest} in ${JSON.stringify(digests, null, 1)}`);
    return row;
  };
  return { digests, of };
}

/** The test's table, and a proxy of two workers with its metrics port, for one describe. */
class DigestsProxy {
  readonly #args: string[];
  #proxy: ProxyProcess | null = null;

  constructor(args: string[]) {
    this.#args = args;
  }

  get proxy(): ProxyProcess {
    return this.#proxy!;
  }

  get digestsUrl(): string {
    return metricsUrl(this.proxy).replace(/\/metrics$/, '/api/digests');
  }

  async start(): Promise<void> {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
      `INSERT INTO ${DB}.t VALUES (1, 10), (2, 20), (3, 30)`,
    ]);
    this.#proxy = await startProxyProcess({
      workers: 2,
      extraArgs: [...this.#args, '--metrics', '127.0.0.1:0'],
      // The debug log says which worker each connection landed on.
      env: { NICECACHE_DEBUG: '1' },
    });
  }

  async stop(): Promise<void> {
    assert.equal(await this.#proxy?.stop(), 0);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
  }

  /** What drivers log in to the proxy with. */
  get login(): { host: string; port: number; user: string; password: string; database: string } {
    return {
      host: this.proxy.host,
      port: this.proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
    };
  }

  /** A client logged in on `worker`. */
  on(worker: number): Promise<RawClient> {
    return connectOnWorker(this.proxy, worker, {
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
    });
  }
}

describe('per-statement digests', () => {
  const fixture = new DigestsProxy([]);
  before(() => fixture.start());
  after(() => fixture.stop());
  const on = (worker: number): Promise<RawClient> => fixture.on(worker);

  async function run(client: RawClient, sql: string): Promise<void> {
    const error = replyError(await client.query(sql));
    assert.equal(error, null, `${sql}: ${error?.message}`);
  }

  test('counts of a known workload on two workers, exact and merged', async () => {
    const first = await on(0);
    const second = await on(1);
    // Worker 0: two ids, each a miss then a hit; worker 1: two hits of what worker 0 stored.
    for (const id of [1, 1, 2, 2]) await run(first, `SELECT v FROM t WHERE id = ${id}`);
    for (const id of [1, 1]) await run(second, `SELECT v FROM t WHERE id = ${id}`);
    await run(first, 'select v from t where id=2');
    await run(second, 'UPDATE t SET v = v + 1 WHERE id = 3');
    await run(second, 'SELECT v FROM t WHERE id = 2 FOR UPDATE');
    await run(second, 'SELECT SQL_NO_CACHE v FROM t WHERE id = 2');
    // A prepared read on worker 0, executed three times: a miss, then hits.
    const prepared = await first.command(prepare('SELECT v, id FROM t WHERE id = ?'));
    assert.equal(replyError(prepared), null);
    const statementId = prepared[0]!.payload.readUInt32LE(1);
    for (let round = 0; round < 3; round++) {
      const reply = await first.command(execute(statementId, [3]));
      assert.equal(replyError(reply), null);
    }
    first.close();
    second.close();

    const { digests, of } = await digestsAt(fixture.digestsUrl);

    const pointRead = of('SELECT v FROM t WHERE id = ?');
    assert.deepEqual(
      [pointRead.kind, pointRead.count, pointRead.hits, pointRead.misses, pointRead.bypasses],
      ['select', 6, 4, 2, 0],
    );
    // Only what went to the server is timed; each hit served one row (FOUND_ROWS() says 1).
    assert.equal(pointRead.serverCount, 2);
    assert.ok(pointRead.serverMicros > 0 && pointRead.maxServerMicros <= pointRead.serverMicros);
    assert.equal(pointRead.rowsServed, 4);
    assert.ok(pointRead.bytesServed > 0);

    // Letter case and spaces are the text's own, as in the cache's key: another digest.
    const lower = of('select v from t where id=?');
    assert.deepEqual([lower.count, lower.hits, lower.misses], [1, 0, 1]);

    const write = of('UPDATE t SET v = v + ? WHERE id = ?');
    assert.deepEqual(
      [write.kind, write.count, write.hits, write.misses, write.bypasses, write.serverCount],
      ['update', 1, 0, 0, 0, 1],
    );

    const locking = of('SELECT v FROM t WHERE id = ? FOR UPDATE');
    assert.deepEqual(
      [locking.count, locking.bypasses, locking.mainBypassReason, locking.bypassReasons],
      [1, 1, 'isolation', { isolation: 1 }],
    );
    const noCache = of('SELECT SQL_NO_CACHE v FROM t WHERE id = ?');
    assert.deepEqual([noCache.bypasses, noCache.mainBypassReason], [1, 'not_requested']);

    // The prepared statement's text is its digest, each execution counted.
    const executions = of('SELECT v, id FROM t WHERE id = ?');
    assert.deepEqual([executions.count, executions.hits, executions.misses], [3, 2, 1]);
    assert.equal(executions.rowsServed, 2);

    // The most executed first.
    const counts = digests.map((row) => row.count);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
    );
    // The same rows as SQL, through both drivers (the mariadb connector asks for
    // DEPRECATE_EOF and MariaDB's extended metadata, mysql2 for neither).
    const login = fixture.login;
    const expected = digests.map((row) => ({ digest: row.digest, count: row.count }));
    const m2 = await mysql.createConnection({ ...login, supportBigNumbers: true });
    const [viaMysql2] = await m2.query('SELECT * FROM nicecache.digests');
    // Only that statement is answered; the others over the schema get errors, as the server's.
    await assert.rejects(m2.query('SELECT digest FROM nicecache.digests'), { errno: 1235 });
    await assert.rejects(m2.query('SELECT * FROM nicecache.nope'), { errno: 1146 });
    assert.deepEqual((await m2.query('SELECT 1 AS one'))[0], [{ one: 1 }]);
    await m2.end();
    const md = await mariadb.createConnection(login);
    const viaConnector = await md.query<Array<Record<string, unknown>>>(
      'select * from `nicecache`.`digests`',
    );
    await md.end();
    for (const rows of [viaMysql2 as Array<Record<string, unknown>>, viaConnector]) {
      assert.deepEqual(Object.keys(rows[0]!), [
        'digest',
        'kind',
        'count',
        'hits',
        'misses',
        'bypasses',
        'main_bypass_reason',
        'server_count',
        'server_micros',
        'max_server_micros',
        'rows_served',
        'bytes_served',
      ]);
      const point = rows.find((row) => row['digest'] === pointRead.digest)!;
      assert.deepEqual(
        [point['count'], point['hits'], point['misses'], point['main_bypass_reason']].map((v) =>
          v === null ? null : Number(v),
        ),
        [6, 4, 2, null],
      );
      // Each worker's table as it was at the API read: only the drivers' own statements since.
      for (const { digest, count } of expected) {
        const row = rows.find((candidate) => candidate['digest'] === digest);
        assert.equal(Number(row?.['count']), count, digest);
      }
    }

    // Rows in the reply are the server's: the last read saw the UPDATE's value.
    const check = await on(1);
    assert.deepEqual(
      rowsOf(await check.query('SELECT v FROM t WHERE id = 3'), check.deprecateEof),
      [['31']],
    );
    check.close();
  });
});

describe('per-statement digests without the cache', () => {
  const fixture = new DigestsProxy(['--query-cache-size', '0']);
  before(() => fixture.start());
  after(() => fixture.stop());
  const on = (worker: number): Promise<RawClient> => fixture.on(worker);

  test('the relay counts and times every statement and execution, merged over the workers', async () => {
    const first = await on(0);
    const second = await on(1);
    for (const id of [1, 2, 1])
      assert.equal(replyError(await first.query(`SELECT v FROM t WHERE id = ${id}`)), null);
    for (const id of [3, 3])
      assert.equal(replyError(await second.query(`SELECT v FROM t WHERE id = ${id}`)), null);
    assert.equal(replyError(await second.query('UPDATE t SET v = v + 1 WHERE id = 3')), null);
    // A statement the server refuses is counted and timed all the same.
    assert.notEqual(replyError(await second.query('SELECT nope FROM t WHERE id = 1')), null);
    const prepared = await first.command(prepare('SELECT v, id FROM t WHERE id = ?'));
    assert.equal(replyError(prepared), null);
    const statementId = prepared[0]!.payload.readUInt32LE(1);
    for (let round = 0; round < 3; round++) {
      assert.equal(replyError(await first.command(execute(statementId, [round + 1]))), null);
    }
    // The proxy's answer carries the session's status as the server left it: in a transaction.
    assert.equal(replyError(await first.query('BEGIN')), null);
    const own = await first.query('SELECT * FROM nicecache.digests');
    assert.equal(replyError(own), null);
    const end = readStatus(own.at(-1)!.payload, !first.deprecateEof)!;
    assert.equal(
      end.status & (ServerStatus.IN_TRANS | ServerStatus.AUTOCOMMIT),
      ServerStatus.IN_TRANS | ServerStatus.AUTOCOMMIT,
    );
    assert.equal(replyError(await first.query('COMMIT')), null);
    const after = readStatus(
      (await first.query('SELECT * FROM nicecache.digests')).at(-1)!.payload,
      !first.deprecateEof,
    )!;
    assert.equal(after.status & ServerStatus.IN_TRANS, 0);
    // Closed: an execution of its id is the server's error, and no longer the statement's.
    first.sendOnly(Buffer.concat([Buffer.from([0x19]), u32(statementId)]));
    assert.notEqual(replyError(await first.command(execute(statementId, [1]))), null);
    first.close();
    second.close();

    const { of } = await digestsAt(fixture.digestsUrl);
    const pointRead = of('SELECT v FROM t WHERE id = ?');
    assert.deepEqual(
      [pointRead.kind, pointRead.count, pointRead.serverCount, pointRead.hits, pointRead.misses],
      ['select', 5, 5, 0, 0],
    );
    assert.ok(pointRead.serverMicros > 0);
    assert.ok(pointRead.maxServerMicros > 0 && pointRead.maxServerMicros <= pointRead.serverMicros);
    assert.deepEqual([pointRead.bypasses, pointRead.rowsServed, pointRead.bytesServed], [0, 0, 0]);
    const write = of('UPDATE t SET v = v + ? WHERE id = ?');
    assert.deepEqual([write.kind, write.count, write.serverCount], ['update', 1, 1]);
    const refused = of('SELECT nope FROM t WHERE id = ?');
    assert.deepEqual([refused.count, refused.serverCount], [1, 1]);
    // The prepared text's executions, not its prepare; the one after the close is nobody's.
    const executions = of('SELECT v, id FROM t WHERE id = ?');
    assert.deepEqual([executions.count, executions.serverCount], [3, 3]);
  });

  test('SELECT * FROM nicecache.digests is answered in turn, behind the replies before it', async () => {
    const login = fixture.login;
    const md = await mariadb.createConnection({ ...login, pipelining: true });
    await md.query('SELECT v FROM t WHERE id = 2');
    // Pipelined: the answer must not overtake the slow reply sent before it.
    const [slow, own] = await Promise.all([
      md.query<Array<Record<string, unknown>>>('SELECT SLEEP(0.3) AS slept, 7 AS seven'),
      md.query<Array<Record<string, unknown>>>('SELECT * FROM nicecache.digests'),
    ]);
    assert.deepEqual(
      slow.map((row) => [Number(row['slept']), Number(row['seven'])]),
      [[0, 7]],
    );
    const point = own.find((row) => row['digest'] === 'SELECT v FROM t WHERE id = ?');
    assert.ok(point, `no point read among ${own.map((row) => String(row['digest'])).join(', ')}`);
    assert.ok(Number(point['count']) >= 6);
    // Other statements over the schema get the errors the cache's sessions get.
    await assert.rejects(md.query('SELECT digest FROM nicecache.digests'), { errno: 1235 });
    await assert.rejects(md.query('SELECT * FROM nicecache.nope'), { errno: 1146 });
    // The session goes on; its transaction state is in the answer's status.
    await md.query('BEGIN');
    const inTransaction = await md.query<Array<Record<string, unknown>>>(
      'SELECT * FROM nicecache.digests',
    );
    assert.ok(inTransaction.length > 0);
    await md.query('COMMIT');
    await md.end();

    const m2 = await mysql.createConnection({ ...login, supportBigNumbers: true });
    const [rows] = await m2.query('SELECT * FROM nicecache.digests');
    assert.ok((rows as Array<Record<string, unknown>>).some((row) => row['kind'] === 'update'));
    await m2.end();
  });
});

describe('--digests off', () => {
  for (const cache of ['on', 'off'] as const) {
    test(`none kept, the nicecache schema left to the server (cache ${cache})`, async () => {
      const proxy = await startProxyProcess({
        extraArgs: [
          '--digests',
          'off',
          '--metrics',
          '127.0.0.1:0',
          ...(cache === 'off' ? ['--query-cache-size', '0'] : []),
        ],
      });
      try {
        const login = {
          user: BACKEND_USER,
          password: BACKEND_PASSWORD,
        };
        const viaProxy = await mysql.createConnection({
          ...login,
          host: proxy.host,
          port: proxy.port,
        });
        const direct = await mysql.createConnection({
          ...login,
          host: BACKEND_HOST,
          port: BACKEND_PORT,
        });
        await viaProxy.query('SELECT 1');
        const errnoOf = async (connection: mysql.Connection): Promise<number | undefined> => {
          try {
            await connection.query('SELECT * FROM nicecache.digests');
          } catch (error) {
            return (error as { errno?: number }).errno;
          }
          return undefined;
        };
        const fromServer = await errnoOf(direct);
        assert.notEqual(fromServer, undefined);
        assert.equal(await errnoOf(viaProxy), fromServer);
        await viaProxy.end();
        await direct.end();
        const response = await fetch(metricsUrl(proxy).replace(/\/metrics$/, '/api/digests'));
        assert.deepEqual(await response.json(), { digests: [] });
      } finally {
        assert.equal(await proxy.stop(), 0);
      }
    });
  }
});

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
}
