/**
 * `--metrics HOST:PORT`: the proxy's counters in Prometheus's text format at `/metrics`, built
 * with prom-client. It runs on the main thread and reads, at each scrape, the same shared words
 * SHOW STATUS sums (every worker's region of CacheStats, the follower's FollowerStatus): nothing
 * is added to the workers' paths. Counters are the raw totals, which FLUSH STATUS does not reset
 * (Prometheus expects counters that only grow; SHOW STATUS shows them since the last flush).
 * The process's own CPU, memory and start time are given under Prometheus's standard names
 * (prom-client's default Node metrics are left out: some of its gauges end in `_total`, which
 * `promtool check metrics` rejects).
 *
 * `/` is a live page for people (page/): tiles, uPlot charts and the top digests, polled from
 * `/api/live` (live-snapshot.ts) once a second. Its files, uPlot's included, are served from
 * this installation: the page needs no network beyond the proxy.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter as PromCounter, Gauge, Registry } from 'prom-client';
import type { Metric } from 'prom-client';
import {
  ANSWER_SAMPLE_EVERY,
  BYPASS_NAMES,
  Counter,
  LATENCY_BOUNDS,
  Latency,
} from '../cache/cache-stats.ts';
import type { LatencyTotals } from '../cache/cache-stats.ts';
import type { HostPort } from '../cli/config.ts';
import type { Logger } from '../proxy/log.ts';
import { liveSnapshot } from './live-snapshot.ts';
import type { MetricsSources } from './metrics-sources.ts';

export interface MetricsServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** A counter read from a shared total at scrape time. */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new PromCounter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/**
 * A histogram read from the workers' shared buckets at scrape time. prom-client's own Histogram
 * counts observations made in this thread; the registry takes any metric that says what it is
 * and gives its values, which is what this object does.
 */
function sharedHistogram(
  registry: Registry,
  name: string,
  help: string,
  read: () => LatencyTotals,
): void {
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset(): void {},
    get() {
      const totals = read();
      const bucket = `${name}_bucket`;
      return {
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: [
          ...LATENCY_BOUNDS.map((bound, index) => ({
            metricName: bucket,
            labels: { le: String(bound) },
            value: totals.cumulative[index]!,
          })),
          { metricName: bucket, labels: { le: '+Inf' }, value: totals.count },
          { metricName: `${name}_sum`, labels: {}, value: totals.sum },
          { metricName: `${name}_count`, labels: {}, value: totals.count },
        ],
      };
    },
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** The registry of every nicecache metric, read from `sources` at each scrape. */
export function buildRegistry(sources: MetricsSources): Registry {
  const registry = new Registry();
  totalCounter(
    registry,
    'process_cpu_seconds_total',
    'User and system CPU time of the whole process (every worker thread), in seconds.',
    () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
  );
  gauge(
    registry,
    'process_resident_memory_bytes',
    'Resident memory of the process, in bytes.',
    () => process.memoryUsage.rss(),
  );
  const startedAt = Date.now() / 1000 - process.uptime();
  gauge(
    registry,
    'process_start_time_seconds',
    'When the process started, in seconds since the Unix epoch.',
    () => startedAt,
  );
  const stats = sources.stats;
  const cacheTotal = (counter: number) => (): number => stats?.total(counter) ?? 0;

  totalCounter(
    registry,
    'nicecache_cache_hits_total',
    'SELECTs answered from the cache.',
    cacheTotal(Counter.HITS),
  );
  totalCounter(
    registry,
    'nicecache_cache_misses_total',
    'SELECTs sent to the server: stored afterwards (inserts) or not (not_cached, bypasses included).',
    () => (stats === null ? 0 : stats.total(Counter.INSERTS) + stats.total(Counter.NOT_CACHED)),
  );
  totalCounter(
    registry,
    'nicecache_cache_inserts_total',
    'Results stored in the cache.',
    cacheTotal(Counter.INSERTS),
  );
  totalCounter(
    registry,
    'nicecache_cache_not_cached_total',
    'SELECTs sent to the server whose result was not stored.',
    cacheTotal(Counter.NOT_CACHED),
  );
  totalCounter(
    registry,
    'nicecache_cache_evictions_total',
    'Results evicted to make room.',
    cacheTotal(Counter.LOWMEM_PRUNES),
  );
  totalCounter(
    registry,
    'nicecache_cache_too_large_total',
    'Results not stored because they outgrew --query-cache-limit.',
    cacheTotal(Counter.TOO_LARGE),
  );
  totalCounter(
    registry,
    'nicecache_cache_stale_fills_refused_total',
    'Results not stored because a write finished while they were read.',
    cacheTotal(Counter.STALE_FILLS_REFUSED),
  );
  totalCounter(
    registry,
    'nicecache_cache_stale_hits_refused_total',
    'Stored results found but not served: a write, a snapshot or the TTL had made them unusable.',
    cacheTotal(Counter.STALE_HITS_REFUSED),
  );
  totalCounter(
    registry,
    'nicecache_cache_single_flight_hits_total',
    'SELECTs served the result of an identical one in flight.',
    cacheTotal(Counter.SINGLE_FLIGHT_HITS),
  );
  totalCounter(
    registry,
    'nicecache_cache_admission_declined_total',
    'Cacheable SELECTs relayed without a copy: their tables are written before results are read again.',
    cacheTotal(Counter.ADMISSION_DECLINED),
  );
  totalCounter(
    registry,
    'nicecache_cache_admission_unseen_total',
    'Cacheable SELECTs relayed without a copy: the store was nearly full and they had not missed recently.',
    cacheTotal(Counter.ADMISSION_UNSEEN),
  );
  new PromCounter({
    name: 'nicecache_cache_bypasses_total',
    help: 'SELECTs sent to the server without consulting the cache, by reason.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      BYPASS_NAMES.forEach((reason, index) => {
        this.inc({ reason }, stats?.totalBypass(index) ?? 0);
      });
    },
  });
  new PromCounter({
    name: 'nicecache_invalidations_total',
    help: 'Invalidations: writes relayed by the proxy that invalidated their tables (write), or everything (everything), and transactions the binlog follower read committed elsewhere (binlog) and those of them that invalidated everything (binlog_everything).',
    labelNames: ['cause'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ cause: 'write' }, stats?.total(Counter.INVALIDATIONS) ?? 0);
      this.inc({ cause: 'everything' }, stats?.total(Counter.INVALIDATIONS_ALL) ?? 0);
      this.inc({ cause: 'binlog' }, sources.follower?.transactions ?? 0);
      this.inc({ cause: 'binlog_everything' }, sources.follower?.invalidationsAll ?? 0);
    },
  });
  gauge(
    registry,
    'nicecache_cache_entries',
    'Results in the cache now.',
    cacheTotal(Counter.QUERIES_IN_CACHE),
  );
  gauge(
    registry,
    'nicecache_cache_bytes',
    'Bytes charged to the cache now.',
    cacheTotal(Counter.BYTES_USED),
  );
  gauge(
    registry,
    'nicecache_cache_budget_bytes',
    'The cache budget, --query-cache-size.',
    () => sources.budgetBytes,
  );
  const empty: LatencyTotals = {
    cumulative: LATENCY_BOUNDS.map(() => 0),
    count: 0,
    sum: 0,
  };
  sharedHistogram(
    registry,
    'nicecache_answer_duration_seconds',
    `Commands the proxy answered itself (cache hits, and the transaction commands it answers), from routing to the reply handed to the socket; one routed command in ${ANSWER_SAMPLE_EVERY} is timed.`,
    () => stats?.latency(Latency.ANSWER) ?? empty,
  );
  sharedHistogram(
    registry,
    'nicecache_miss_duration_seconds',
    'Cacheable SELECTs that missed, from being sent to the server to the end of its reply.',
    () => stats?.latency(Latency.MISS) ?? empty,
  );
  totalCounter(
    registry,
    'nicecache_transactions_deferred_total',
    'BEGINs answered by the proxy.',
    cacheTotal(Counter.TRANSACTIONS_DEFERRED),
  );
  totalCounter(
    registry,
    'nicecache_transactions_in_proxy_total',
    'Transactions that began and ended without reaching the server.',
    cacheTotal(Counter.TRANSACTIONS_IN_PROXY),
  );
  totalCounter(
    registry,
    'nicecache_transaction_conflicts_total',
    'Transactions rolled back with ER_CHECKREAD: hits no longer matched the snapshot.',
    cacheTotal(Counter.TRANSACTION_CONFLICTS),
  );
  totalCounter(
    registry,
    'nicecache_client_connections_total',
    'Client connections accepted.',
    cacheTotal(Counter.CONNECTIONS),
  );
  gauge(
    registry,
    'nicecache_clients_connected',
    'Client connections open now.',
    cacheTotal(Counter.CLIENTS_CONNECTED),
  );
  gauge(
    registry,
    'nicecache_sessions_lingering',
    'Sessions whose client left while its writes still ran on the server; their tables stay marked written.',
    cacheTotal(Counter.SESSIONS_LINGERING),
  );
  totalCounter(
    registry,
    'nicecache_backend_unreachable_total',
    'Clients told the server could not be reached (connect, greeting, or lost before it).',
    cacheTotal(Counter.BACKEND_UNREACHABLE),
  );
  totalCounter(
    registry,
    'nicecache_worker_restarts_total',
    'Worker threads replaced after they exited.',
    sources.workerRestarts,
  );
  const follower = sources.follower;
  if (follower !== null) {
    totalCounter(
      registry,
      'nicecache_binlog_events_total',
      'Binary log events read by the follower.',
      () => follower.events,
    );
    totalCounter(
      registry,
      'nicecache_binlog_reconnects_total',
      "The follower's reconnections.",
      () => follower.reconnects,
    );
    totalCounter(
      registry,
      'nicecache_binlog_visibility_checks_total',
      'Times the follower asked the server how far commits are visible.',
      () => follower.visibilityChecks,
    );
    gauge(
      registry,
      'nicecache_binlog_lag_seconds',
      'How far behind the last commit the follower read was, in seconds (a lower bound).',
      () => follower.lagMs / 1000,
    );
    gauge(
      registry,
      'nicecache_binlog_following',
      '1 while the follower streams within its lag bound (hits allowed), else 0.',
      () => (follower.following ? 1 : 0),
    );
  }
  return registry;
}

/** A file of the live page: its bytes, read once at start, and its content type. */
interface PageFile {
  body: Buffer;
  type: string;
}

function pageFiles(): Map<string, PageFile> {
  const own = (name: string): Buffer => readFileSync(new URL(`./page/${name}`, import.meta.url));
  const uplot = (name: string): Buffer =>
    readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`));
  return new Map([
    ['/', { body: own('index.html'), type: 'text/html; charset=utf-8' }],
    ['/live.js', { body: own('live.js'), type: 'text/javascript; charset=utf-8' }],
    ['/live.css', { body: own('live.css'), type: 'text/css; charset=utf-8' }],
    ['/uplot.js', { body: uplot('uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' }],
    ['/uplot.css', { body: uplot('uPlot.min.css'), type: 'text/css; charset=utf-8' }],
  ]);
}

/**
 * Serves `/metrics`, `/api/digests` and `/api/live` (JSON), and the live page at `/`, on
 * `listen`; resolves once listening.
 */
export async function startMetricsServer(
  listen: HostPort,
  sources: MetricsSources,
  log: Logger,
): Promise<MetricsServer> {
  const registry = buildRegistry(sources);
  const files = pageFiles();
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/api/digests') {
      sources.digests().then(
        (digests) => {
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.end(request.method === 'HEAD' ? undefined : JSON.stringify({ digests }));
        },
        (error: Error) => {
          log.warn(`digests: ${error.message}`);
          response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`);
        },
      );
      return;
    }
    if (path === '/api/live') {
      liveSnapshot(sources).then(
        (snapshot) => {
          response.writeHead(200, {
            'Content-Type': 'application/json',
            'Cache-Control': 'no-store',
          });
          response.end(request.method === 'HEAD' ? undefined : JSON.stringify(snapshot));
        },
        (error: Error) => {
          log.warn(`live: ${error.message}`);
          response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`);
        },
      );
      return;
    }
    const file = path === undefined ? undefined : files.get(path);
    if (file !== undefined) {
      response.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length });
      response.end(request.method === 'HEAD' ? undefined : file.body);
      return;
    }
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'Content-Type': 'text/plain' })
        .end('not found: try /, /metrics, /api/live or /api/digests\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: Error) => {
        log.warn(`metrics: ${error.message}`);
        response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Scrapers keep connections open; they must not hold up a shutdown.
  server.unref();
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
