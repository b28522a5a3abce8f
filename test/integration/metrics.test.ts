/**
 * `--metrics`: a real proxy serves /metrics, Prometheus's own `promtool check metrics` accepts
 * what it serves, and the counters move with the traffic a real client sends (a fill, a hit, a
 * write's invalidation, a bypass, a connection, a client told the server is down), FLUSH
 * STATUS leaving them growing as Prometheus needs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { metricsUrl, parseSamples, promtoolCheck } from '../support/metrics.ts';

const DB = 'nc_metrics';

async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseSamples(await response.text());
}

describe('--metrics', () => {
  let proxy: ProxyProcess;
  let url: string;
  let client: Connection;

  before(async () => {
    proxy = await startProxyProcess({
      workers: 2,
      extraArgs: ['--metrics', '127.0.0.1:0', '--admin-user', BACKEND_USER],
      env: { NICECACHE_ADMIN_PASSWORD: BACKEND_PASSWORD },
    });
    url = metricsUrl(proxy);
    const direct = await mariadb.createConnection({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: BACKEND_DATABASE,
    });
    await direct.query(`DROP DATABASE IF EXISTS ${DB}`);
    await direct.query(`CREATE DATABASE ${DB}`);
    await direct.query(`CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v INT)`);
    await direct.query(`INSERT INTO ${DB}.t VALUES (1, 10), (2, 20)`);
    await direct.end();
    // One connection: its reads stay on one worker, so the second read can hit the first's fill.
    client = await mariadb.createConnection({
      host: proxy.host,
      port: proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
    });
  });

  after(async () => {
    await client?.query(`DROP DATABASE IF EXISTS ${DB}`);
    await client?.end();
    assert.equal(await proxy?.stop(), 0);
  });

  test('promtool accepts the scrape, before and after traffic', async () => {
    const idle = promtoolCheck(await (await fetch(url)).text());
    assert.equal(idle.status, 0, idle.output);
    await client.query('SELECT v FROM t WHERE id = 1');
    await client.query('SELECT v FROM t WHERE id = 1');
    const busy = promtoolCheck(await (await fetch(url)).text());
    assert.equal(busy.status, 0, busy.output);
  });

  test('a fill, hits and a write move their counters; FLUSH STATUS resets none of them', async () => {
    const read = 'SELECT id, v FROM t ORDER BY id';
    const before = await scrape(url);
    // Until a read is served from the cache (a table read for the first time may wait for metadata).
    let hitsSeen = 0;
    const deadline = Date.now() + 20_000;
    while (hitsSeen < 2) {
      if (Date.now() > deadline) assert.fail(`only ${hitsSeen} hit(s) in 20 s`);
      await client.query(read);
      const now = await scrape(url);
      hitsSeen = now.get('nicecache_cache_hits_total')! - before.get('nicecache_cache_hits_total')!;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const after = await scrape(url);
    assert.ok(
      hitsSeen >= 2,
      `hits went from ${before.get('nicecache_cache_hits_total')} by ${hitsSeen}`,
    );
    assert.ok(
      after.get('nicecache_cache_inserts_total')! > before.get('nicecache_cache_inserts_total')!,
      'the fill was counted',
    );
    assert.ok(after.get('nicecache_cache_entries')! >= 1);
    assert.ok(after.get('nicecache_cache_bytes')! > 0);
    assert.equal(after.get('nicecache_cache_budget_bytes'), 64 * 1024 * 1024);

    const writesBefore = after.get('nicecache_invalidations_total{cause="write"}')!;
    await client.query('UPDATE t SET v = v + 1 WHERE id = 2');
    const written = await scrape(url);
    assert.equal(written.get('nicecache_invalidations_total{cause="write"}'), writesBefore + 1);

    // A bypass, by its reason: a non-deterministic function.
    const uncacheable = written.get('nicecache_cache_bypasses_total{reason="uncacheable"}')!;
    await client.query('SELECT id, RAND() FROM t');
    const bypassed = await scrape(url);
    assert.equal(
      bypassed.get('nicecache_cache_bypasses_total{reason="uncacheable"}'),
      uncacheable + 1,
    );

    const hitsBeforeFlush = bypassed.get('nicecache_cache_hits_total')!;
    await client.query('FLUSH STATUS');
    const shown = await client.query<Array<{ Value: string }>>(
      "SHOW GLOBAL STATUS LIKE 'Qcache_hits'",
    );
    assert.equal(shown[0]!.Value, '0', 'SHOW STATUS starts again after FLUSH STATUS');
    const flushed = await scrape(url);
    assert.equal(
      flushed.get('nicecache_cache_hits_total'),
      hitsBeforeFlush,
      'the counter does not',
    );
  });

  test('connections: accepted, open now', async () => {
    const before = await scrape(url);
    const extra = await mariadb.createConnection({
      host: proxy.host,
      port: proxy.port,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
    });
    const during = await scrape(url);
    await extra.end();
    assert.equal(
      during.get('nicecache_client_connections_total'),
      before.get('nicecache_client_connections_total')! + 1,
    );
    assert.equal(
      during.get('nicecache_clients_connected'),
      before.get('nicecache_clients_connected')! + 1,
    );
    // The close reaches the worker a moment after the client's end().
    for (let i = 0; i < 100; i++) {
      if (
        (await scrape(url)).get('nicecache_clients_connected') ===
        before.get('nicecache_clients_connected')
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.fail('the closed connection is still counted as open');
  });

  test('hit and miss latency histograms fill with traffic, cumulative as Prometheus reads them', async () => {
    const histogram = (samples: Map<string, number>, name: string) => {
      const buckets = [...samples]
        .filter(([key]) => key.startsWith(`${name}_bucket{`))
        .map(([, value]) => value);
      return {
        buckets,
        count: samples.get(`${name}_count`)!,
        sum: samples.get(`${name}_sum`)!,
      };
    };
    const answer = 'nicecache_answer_duration_seconds';
    const miss = 'nicecache_miss_duration_seconds';
    const before = await scrape(url);
    // Five reads the cache has never seen: five misses, each timed.
    for (let i = 0; i < 5; i++) await client.query(`SELECT v, ${i} AS n FROM t WHERE id = 1`);
    // Then hits: one routed command in 64 is timed on its worker, all of them hits here.
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) await client.query(`SELECT v, ${i} AS n FROM t WHERE id = 1`);
    }
    const after = await scrape(url);
    assert.equal(histogram(after, miss).count - histogram(before, miss).count, 5);
    assert.ok(histogram(after, miss).sum > histogram(before, miss).sum);
    const answered = histogram(after, answer).count - histogram(before, answer).count;
    // 100 hits on one worker: at least one in 64 timed, whatever the countdown stood at.
    assert.ok(answered >= 1 && answered <= 2, `${answered} hits timed`);
    for (const name of [answer, miss]) {
      const { buckets, count } = histogram(after, name);
      assert.equal(buckets.length, 20, `${name}: 19 bounds and +Inf`);
      buckets.forEach((value, index) => assert.ok(index === 0 || value >= buckets[index - 1]!));
      assert.equal(buckets.at(-1), count, `${name}: +Inf is the count`);
    }
    const checked = promtoolCheck(await (await fetch(url)).text());
    assert.equal(checked.status, 0, checked.output);
  });

  test('the process figures, and nothing but /metrics', async () => {
    const samples = await scrape(url);
    assert.ok(samples.get('process_cpu_seconds_total')! > 0);
    assert.ok(samples.get('process_resident_memory_bytes')! > 10 * 1024 * 1024);
    assert.equal(samples.get('nicecache_worker_restarts_total'), 0);
    // No follower against this server (no binary log): no binlog series.
    assert.ok(![...samples.keys()].some((name) => name.startsWith('nicecache_binlog_')));
    const other = await fetch(url.replace(/\/metrics$/, '/other'));
    assert.equal(other.status, 404);
    await other.text();
    const post = await fetch(url, { method: 'POST' });
    assert.equal(post.status, 405);
    await post.text();
  });
});

describe('--metrics with the server down', () => {
  test('each client told the server cannot be reached is counted', async () => {
    const deadPort = await freePort();
    const proxy = await startProxyProcess({
      backend: `127.0.0.1:${deadPort}`,
      workers: 1,
      extraArgs: ['--metrics', '127.0.0.1:0'],
    });
    try {
      const url = metricsUrl(proxy);
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          mariadb.createConnection({ host: proxy.host, port: proxy.port, user: 'root' }),
          (error: { errno?: number }) => error.errno === 1429,
        );
      }
      assert.equal((await scrape(url)).get('nicecache_backend_unreachable_total'), 2);
    } finally {
      await proxy.stop();
    }
  });
});
