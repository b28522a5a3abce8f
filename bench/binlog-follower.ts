/**
 * The binlog follower's cost and lag, against a throwaway MariaDB with log_bin started here.
 * The proxy runs in this process (one worker, idle: no client connects) and the write load on a
 * thread of its own (binlog-writer-worker.ts), so the main thread's own CPU time is the
 * follower's.
 *
 * 1. Throughput: UPDATES single-row UPDATEs sent directly to the server, pipelined on several
 *    connections; the follower's main-thread CPU divided by the events it read, and its
 *    events/s from the first write until it has read the last transaction.
 * 2. Lag: SAMPLES single-row UPDATEs one at a time, idle (one right after another, then with
 *    SPARSE_GAP_MS between them) and then under a background write load;
 *    for each, the time from the UPDATE's reply to the moment the registry word of its table
 *    moves, watched from the main thread (setImmediate polling, a few µs apart). Negative: the
 *    follower saw the commit before the client had its reply. Then how long the table stays
 *    uncacheable: from the reply until the server has confirmed the commit visible and the
 *    follower has released the table.
 * 3. Lag under sysbench: oltp_read_write sent directly to the server while oltp_read_only reads
 *    through the proxy (its worker serving hits and misses), the same lag samples taken one after
 *    another for as long as the write load runs.
 *
 *   node bench/binlog-follower.ts [updates, default 100000] [samples, default 500] [oltp seconds, default 20; 0 skips 3]
 *
 * OLTP_THREADS (default 2) for each of the two sysbench runs, OLTP_TABLE_SIZE (default 10000).
 */
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { someRowName } from '../src/cache/row-slots.ts';
import { startProxy } from '../src/proxy/proxy-server.ts';
import { createLogger } from '../src/proxy/log.ts';
import { BENCH_DB, counterTable, startLogBinServer } from './binlog-bench-server.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';

const UPDATES = Number(process.argv[2] ?? 100_000);
const SAMPLES = Number(process.argv[3] ?? 500);
const OLTP_SECONDS = Number(process.argv[4] ?? 20);
const OLTP_THREADS = Number(process.env['OLTP_THREADS'] ?? 2);
const OLTP_TABLE_SIZE = Number(process.env['OLTP_TABLE_SIZE'] ?? 10_000);
const CONNECTIONS = 4;
/** Statements in flight per connection. */
const PIPELINE = 32;
/** The pause between the sparse samples' writes: longer than the follower's tick. */
const SPARSE_GAP_MS = 40;
const DB = BENCH_DB;

const server = await startLogBinServer();
const backend = { host: '127.0.0.1', port: server.port };
const connect = (): Promise<MysqlConnection> =>
  MysqlConnection.connect({ ...backend, user: 'root', password: '', database: null });

const setup = await connect();
async function run(sql: string, on = setup): Promise<void> {
  const result = await on.query(sql);
  if (result.error) throw new Error(`${sql}: ${result.error.message}`);
}
await run(`CREATE DATABASE ${DB}`);
for (const table of ['t', 'lag', 'noise']) {
  for (const sql of counterTable(table)) await run(sql);
}

const proxy = await startProxy({
  host: '127.0.0.1',
  port: 0,
  backend,
  workers: 1,
  connectTimeoutMs: 5000,
  handshakeTimeoutMs: 10_000,
  requireBackend: true,
  version: 'bench',
  drainTimeoutMs: 1000,
  cache: {
    type: 1,
    sizeBytes: 16 * 1024 * 1024,
    limitBytes: 1024 * 1024,
    ttlMs: 0,
    singleFlightWaitMs: 50,
    deferTransactions: true,
    admin: { user: 'root', password: '' },
  },
  binlog: { mode: 'on', maxLagMs: 1000, serverId: null },
  log: createLogger(),
});
const follower = proxy.follower!;
const registry = proxy.registry;
const status = follower.status;

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await nextTick();
}

/** Runs UPDATEs of `table` on a thread of its own; `count` 0: until stop() is called. */
function writer(
  table: string,
  count: number,
  connections: number,
): { done: Promise<void>; stop(): void } {
  const worker = new Worker(new URL('./binlog-writer-worker.ts', import.meta.url), {
    workerData: {
      port: server.port,
      table: `${DB}.${table}`,
      count,
      connections,
      pipeline: PIPELINE,
    },
  });
  const done = new Promise<void>((resolve, reject) => {
    worker.once('message', () => {
      resolve();
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  return { done, stop: () => worker.postMessage('stop') };
}

// --- 1. throughput and CPU per event ---------------------------------------------------------
await until(() => registry.writesElsewhereSeen());
const transactionsBefore = status.transactions;
const eventsBefore = status.events;
const throughputChecksBefore = status.visibilityChecks;
const cpuBefore = process.threadCpuUsage();
const startedAt = performance.now();
await writer('t', UPDATES, CONNECTIONS).done;
const writtenAt = performance.now();
await until(() => status.transactions - transactionsBefore >= UPDATES);
const caughtUpAt = performance.now();
const cpu = process.threadCpuUsage(cpuBefore);
const events = status.events - eventsBefore;
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(
  `throughput: ${UPDATES} UPDATEs (${events} events) written in ${(writtenAt - startedAt).toFixed(0)} ms, ` +
    `read by the follower ${(caughtUpAt - writtenAt).toFixed(0)} ms after the last reply`,
);
console.log(
  `  follower: ${((events / (caughtUpAt - startedAt)) * 1000).toFixed(0)} events/s, ` +
    `${((UPDATES / (caughtUpAt - startedAt)) * 1000).toFixed(0)} transactions/s; ` +
    `main-thread CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs * 1000) / events).toFixed(2)} µs per event, ` +
    `${((cpuMs * 1000) / UPDATES).toFixed(2)} µs per transaction; ` +
    `${status.visibilityChecks - throughputChecksBefore} visibility checks`,
);

// --- 2. lag: reply → registry word moved -------------------------------------------------------
// The table's word, and its "some row": a write bounded to rows (a point statement logged as a
// statement, or a row event whose key the follower reads) marks that and the row, not the table.
const lagSlots = Int32Array.of(
  registry.slotOf(`${DB}.lag`),
  registry.slotOf(someRowName(`${DB}.lag`)),
);
const sampler = await connect();

interface LagSamples {
  /** Reply → the table's or its rows' word moved (no worker serves it from then on), sorted. */
  lags: number[];
  /** Reply → the table released again (results of it may be stored again), sorted. */
  uncacheable: number[];
}

const nothingInFlight = (): boolean =>
  registry.isFresh(lagSlots, registry.sequence(), registry.sequence());

/** `samples` lags, or as many as can be taken before `running()` turns false. */
async function sampleLag(
  samples: number,
  running: () => boolean = () => true,
  gapMs = 0,
): Promise<LagSamples> {
  const lags: number[] = [];
  const uncacheable: number[] = [];
  for (let i = 0; i < samples && running(); i++) {
    // Nothing in flight: a result of the table read now could be stored and served.
    await until(nothingInFlight);
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const seq = registry.sequence();
    let movedAt = NaN;
    // The watcher runs beside the UPDATE: the follower may see the commit before the reply.
    const watcher = (async () => {
      // The table's words, or everything's (a commit read while the catalog reloads after DDL).
      await until(() => !registry.isFresh(lagSlots, seq, seq));
      movedAt = performance.now();
    })();
    await run(`UPDATE ${DB}.lag SET v = v + 1 WHERE id = ${(i % 1000) + 1}`, sampler);
    const repliedAt = performance.now();
    await watcher;
    lags.push(movedAt - repliedAt);
    await until(nothingInFlight);
    uncacheable.push(performance.now() - repliedAt);
  }
  const order = (a: number, b: number): number => a - b;
  return { lags: lags.sort(order), uncacheable: uncacheable.sort(order) };
}

const percentile = (sorted: number[], p: number): string =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!.toFixed(2);

const spread = (sorted: number[]): string =>
  `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${percentile(sorted, 100)} ms`;

/** The samples' two distributions, and the visibility checks the follower made meanwhile. */
function describeSamples(samples: LagSamples, checks: number): string {
  return (
    `${spread(samples.lags)}; uncacheable after the reply for ${spread(samples.uncacheable)} ` +
    `(${checks} visibility checks)`
  );
}

let checksBefore = status.visibilityChecks;
const idle = await sampleLag(SAMPLES);
console.log(
  `lag idle, one write after another (${SAMPLES} samples): ${describeSamples(idle, status.visibilityChecks - checksBefore)}`,
);
checksBefore = status.visibilityChecks;
const sparse = await sampleLag(SAMPLES, undefined, SPARSE_GAP_MS);
console.log(
  `lag idle, ${SPARSE_GAP_MS} ms between writes (${SAMPLES} samples): ${describeSamples(sparse, status.visibilityChecks - checksBefore)}`,
);
const noise = writer('noise', 0, 2);
checksBefore = status.visibilityChecks;
const loaded = await sampleLag(SAMPLES);
const loadedChecks = status.visibilityChecks - checksBefore;
noise.stop();
await noise.done;
console.log(
  `lag under a direct write load (2 connections × ${PIPELINE} pipelined UPDATEs of another table): ` +
    describeSamples(loaded, loadedChecks),
);

// --- 3. lag under oltp_read_write sent directly, oltp_read_only through the proxy -------------

interface SysbenchRun {
  done: Promise<string>;
  running: () => boolean;
}

/** sysbench `test` `command` against `port`, its output once it ends. */
function sysbench(test: string, port: number, command: string, extra: string[] = []): SysbenchRun {
  const child = spawn(
    'sysbench',
    [
      test,
      '--db-driver=mysql',
      '--mysql-host=127.0.0.1',
      `--mysql-port=${port}`,
      '--mysql-user=root',
      '--mysql-db=sbtest',
      '--tables=1',
      `--table-size=${OLTP_TABLE_SIZE}`,
      '--db-ps-mode=disable',
      ...extra,
      command,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let running = true;
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      running = false;
      if (code === 0) resolve(output);
      else reject(new Error(`sysbench ${test} ${command} exited with ${code}:\n${output}`));
    });
  });
  return { done, running: () => running };
}

const tps = (output: string): string =>
  /transactions:\s+\d+\s+\(([\d.]+) per sec/.exec(output)?.[1] ?? '?';

if (OLTP_SECONDS > 0) {
  await run('CREATE DATABASE sbtest');
  await sysbench('oltp_read_write', server.port, 'prepare').done;
  // Its DDL makes the catalog reload; commits read meanwhile invalidate everything. Not measured.
  await sampleLag(20);
  const load = [`--threads=${OLTP_THREADS}`, `--time=${OLTP_SECONDS}`];
  const writes = sysbench('oltp_read_write', server.port, 'run', load);
  const reads = sysbench('oltp_read_only', proxy.port, 'run', load);
  const everything = (): string =>
    status.rows().find(([name]) => name === 'Nicecache_binlog_invalidations_all')![1];
  const everythingBefore = everything();
  const oltpChecksBefore = status.visibilityChecks;
  const underOltp = await sampleLag(Number.MAX_SAFE_INTEGER, writes.running);
  const oltpChecks = status.visibilityChecks - oltpChecksBefore;
  const [written, read] = await Promise.all([writes.done, reads.done]);
  console.log(
    `lag under oltp_read_write sent directly (${OLTP_THREADS} threads, ${tps(written)} tps) while ` +
      `oltp_read_only reads through the proxy (${OLTP_THREADS} threads, ${tps(read)} tps), ` +
      `${underOltp.lags.length} samples: ${describeSamples(underOltp, oltpChecks)}; ` +
      `the follower invalidated everything ${Number(everything()) - Number(everythingBefore)} times meanwhile`,
  );
}

for (const connection of [setup, sampler]) connection.close();
await proxy.close();
await server.stop();
