/**
 * The proxy's resident memory with its cache full of small results: many distinct queries go
 * through a real `nicecache proxy` (one worker, so one store holds the whole budget), then the
 * proxy's RSS is read from /proc and set against --query-cache-size.
 *
 *   node bench/cache-memory.ts [queries, default 1000000] [--query-cache-size, default 64M]
 *
 * Environment: BACKEND (host:port, default 127.0.0.1:3306), USER (default root), PASSWORD.
 */
import { readFileSync } from 'node:fs';
import { startProxy } from '../src/bench/targets.ts';
import { parseSize } from '../src/cli/config.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';

const queries = Number(process.argv[2] ?? 1_000_000);
const sizeText = process.argv[3] ?? '64M';
const [host, port] = (process.env['BACKEND'] ?? '127.0.0.1:3306').split(':') as [string, string];
const user = process.env['USER_NAME'] ?? 'root';
const password = process.env['PASSWORD'] ?? '';
const CONNECTIONS = 8;
const DB = 'nc_cache_memory';

const rssOf = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const admin = await MysqlConnection.connect({
  host,
  port: Number(port),
  user,
  password,
  database: null,
});
await admin.query(`CREATE DATABASE IF NOT EXISTS ${DB}`);
await admin.query(`CREATE TABLE IF NOT EXISTS ${DB}.t (id INT PRIMARY KEY, v INT)`);
await admin.query(`REPLACE INTO ${DB}.t VALUES (1, 1)`);

// The backend account also reads the schema metadata (startProxy passes it as --admin-user).
const { child, port: proxyPort } = await startProxy(
  { host, port: Number(port), user, password, database: null },
  { workers: '1', 'query-cache-size': sizeText },
);
const pid = child.pid!;
const connect = (): Promise<MysqlConnection> =>
  MysqlConnection.connect({ host: '127.0.0.1', port: proxyPort, user, password, database: DB });

// Warm up once so startup memory (code, metadata) is in the baseline.
const probe = await connect();
await probe.query('SELECT v FROM t WHERE id = 0');
const baseline = rssOf(pid);
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    const connection = await connect();
    // Each text differs, so each is a result of its own (an empty one: a small entry).
    for (let i = next++; i < queries; i = next++)
      await connection.query(`SELECT v FROM t WHERE id = ${i + 2}`);
    connection.close();
  }),
);
const seconds = (performance.now() - started) / 1000;
const rows = await probe.queryRows("SHOW STATUS LIKE 'Qcache%'");
const status = new Map(rows.map(([name, value]) => [name!, value!]));
const rss = rssOf(pid);
const budget = parseSize(sizeText, 'size');
console.log(
  `${queries} distinct queries in ${seconds.toFixed(1)} s (${Math.round(queries / seconds)} qps)`,
);
console.log(
  `cached: ${status.get('Qcache_queries_in_cache')} results, ${mb(Number(status.get('Qcache_used_memory')))} charged of ${mb(budget)}; ${status.get('Qcache_lowmem_prunes')} evicted`,
);
console.log(
  `proxy RSS: ${mb(baseline)} before, ${mb(rss)} after: +${mb(rss - baseline)} for a ${mb(budget)} budget`,
);
// The heaps shrink once the garbage of a million misses is collected.
await new Promise((resolve) => setTimeout(resolve, 5000));
await probe.query('SELECT v FROM t WHERE id = 0');
const settled = rssOf(pid);
console.log(`proxy RSS 5 s later: ${mb(settled)}: +${mb(settled - baseline)}`);
probe.close();
child.kill('SIGTERM');
await admin.query(`DROP DATABASE ${DB}`);
admin.close();
