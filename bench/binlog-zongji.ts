/**
 * The follower's alternative, measured the way bench/binlog-follower.ts measures the follower
 * (section 1): `@vlasky/zongji` (the maintained npm binlog reader, on mysql2, which decodes
 * every row) reading the same load on the main thread, against a throwaway MariaDB with log_bin
 * started here, while the write load runs on a thread of its own (binlog-writer-worker.ts).
 * Prints the main thread's CPU per event and the events/s read, for the events nicecache needs
 * (table maps, row events, query events, XIDs).
 *
 *   node bench/binlog-zongji.ts [updates, default 100000]
 */
import { Worker } from 'node:worker_threads';
import ZongJi from '@vlasky/zongji';
import { BENCH_DB, counterTable, startLogBinServer } from './binlog-bench-server.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';

const UPDATES = Number(process.argv[2] ?? 100_000);
const CONNECTIONS = 4;
const PIPELINE = 32;
const DB = BENCH_DB;

const server = await startLogBinServer();
try {
  const setup = await MysqlConnection.connect({
    host: '127.0.0.1',
    port: server.port,
    user: 'root',
    password: '',
    database: null,
  });
  for (const sql of [`CREATE DATABASE ${DB}`, ...counterTable('t')]) {
    const result = await setup.query(sql);
    if (result.error) throw new Error(`${sql}: ${result.error.message}`);
  }
  setup.close();

  const reader = new ZongJi({ host: '127.0.0.1', port: server.port, user: 'root', password: '' });
  let events = 0;
  let transactions = 0;
  reader.on('binlog', (event: { getEventName(): string }) => {
    events++;
    if (event.getEventName() === 'xid') transactions++;
  });
  reader.on('error', (error: Error) => {
    console.error(`zongji: ${error.message}`);
    process.exitCode = 1;
  });
  const ready = new Promise<void>((resolve) => reader.once('ready', () => resolve()));
  reader.start({
    startAtEnd: true,
    serverId: 2 ** 31 + 7,
    includeEvents: ['tablemap', 'writerows', 'updaterows', 'deleterows', 'query', 'xid', 'rotate'],
  });
  await ready;

  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const cpuBefore = process.threadCpuUsage();
  const startedAt = performance.now();
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL('./binlog-writer-worker.ts', import.meta.url), {
      workerData: {
        port: server.port,
        table: `${DB}.t`,
        count: UPDATES,
        connections: CONNECTIONS,
        pipeline: PIPELINE,
      },
    });
    worker.once('message', () => {
      resolve();
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  const writtenAt = performance.now();
  await until(() => transactions >= UPDATES);
  const caughtUpAt = performance.now();
  const cpu = process.threadCpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    `zongji: ${UPDATES} UPDATEs (${events} events) written in ${(writtenAt - startedAt).toFixed(0)} ms, ` +
      `read ${(caughtUpAt - writtenAt).toFixed(0)} ms after the last reply`,
  );
  console.log(
    `  ${((events / (caughtUpAt - startedAt)) * 1000).toFixed(0)} events/s, ` +
      `${((UPDATES / (caughtUpAt - startedAt)) * 1000).toFixed(0)} transactions/s; ` +
      `main-thread CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs * 1000) / events).toFixed(2)} µs per event, ` +
      `${((cpuMs * 1000) / UPDATES).toFixed(2)} µs per transaction`,
  );
  reader.stop();
} finally {
  await server.stop();
}
