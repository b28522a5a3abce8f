/**
 * What DDL relayed by the proxy costs the server in metadata reloads: a connection creates and
 * drops a table again and again through the proxy, and per DDL statement the script counts the
 * statements the metadata account ran (every worker reloads after DDL) and the rows of
 * mysql.proc and mysql.event the server read for it (userstat's TABLE_STATISTICS), with DDL per
 * second and the proxy's CPU per DDL. This checkout's proxy, and another checkout's (OTHER)
 * side by side, alternating.
 *
 *   [OTHER=<checkout>] node bench/ddl-reloads.ts [seconds per run, default 10] [runs each, default 3]
 *
 * Environment: BACKEND (host:port, default 127.0.0.1:3306; root without password), WORKERS
 * (default 2), PROCEDURES (stored procedures created for the run, default 200: a server with
 * routines). The script turns the server's userstat on for the run and puts back the value it
 * found.
 */
import { once } from 'node:events';
import { processCpuMicros } from '../src/bench/system-sampler.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';
import {
  alternate,
  mean,
  metadataAccount,
  onServer as onServerAt,
  startProxyChild,
  withUserstat,
} from './proxy-child.ts';

const seconds = Number(process.argv[2] ?? 10);
const runs = Number(process.argv[3] ?? 3);
const [backendHost, backendPort] = (process.env.BACKEND ?? '127.0.0.1:3306').split(':');
const workers = process.env.WORKERS ?? '2';
const procedures = Number(process.env.PROCEDURES ?? 200);
const other = process.env.OTHER;
const DB = 'nc_ddl_reloads';
const META_USER = 'nc_ddl_meta';
const META_PASSWORD = 'nc-ddl-meta';

const onServer = (sql: readonly string[]): Promise<Array<Array<string | null>>> =>
  onServerAt(backendHost!, Number(backendPort), sql);

/** The metadata account's statements, and the rows of mysql.proc and mysql.event read so far. */
async function serverCounts(): Promise<{ statements: number; systemRows: number }> {
  const [statements] = await onServer([
    `SELECT SELECT_COMMANDS + OTHER_COMMANDS FROM information_schema.USER_STATISTICS WHERE USER = '${META_USER}'`,
  ]);
  const [systemRows] = await onServer([
    "SELECT SUM(ROWS_READ) FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME IN ('proc', 'event')",
  ]);
  return { statements: Number(statements?.[0] ?? 0), systemRows: Number(systemRows?.[0] ?? 0) };
}

interface Figures {
  statementsPerDdl: number;
  systemRowsPerDdl: number;
  ddlPerSecond: number;
  cpuPerDdl: number;
}

/** One timed run through a fresh proxy of `checkout`. */
async function measure(checkout: string): Promise<Figures> {
  const { child, port } = await startProxyChild(
    checkout,
    ['--backend', `${backendHost}:${backendPort}`, '--workers', workers, '--admin-user', META_USER],
    { ...process.env, NICECACHE_ADMIN_PASSWORD: META_PASSWORD },
  );
  try {
    const client = await MysqlConnection.connect({
      host: '127.0.0.1',
      port,
      user: 'root',
      password: '',
      database: DB,
    });
    // The first load of every worker is over before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await serverCounts();
    const cpuBefore = processCpuMicros(child.pid!);
    const end = performance.now() + seconds * 1000;
    let ddl = 0;
    while (performance.now() < end) {
      for (const sql of ['CREATE TABLE scratch (id INT PRIMARY KEY)', 'DROP TABLE scratch']) {
        const result = await client.query(sql);
        if (result.error !== null) throw new Error(result.error.message);
        ddl++;
      }
    }
    const elapsed = seconds + (performance.now() - end) / 1000;
    const cpu = processCpuMicros(child.pid!) - cpuBefore;
    client.close();
    // The reloads the last DDL started land before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await serverCounts();
    return {
      statementsPerDdl: (after.statements - before.statements) / ddl,
      systemRowsPerDdl: (after.systemRows - before.systemRows) / ddl,
      ddlPerSecond: ddl / elapsed,
      cpuPerDdl: cpu / ddl,
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

const results = await withUserstat(
  backendHost!,
  Number(backendPort),
  [
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.counts (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0)`,
    ...Array.from(
      { length: procedures },
      (_, i) =>
        `CREATE PROCEDURE ${DB}.touch_${i}(k INT) UPDATE counts SET n = n + ${i} WHERE id = k`,
    ),
    ...metadataAccount(META_USER, META_PASSWORD),
  ],
  [`DROP USER IF EXISTS '${META_USER}'@'%'`, `DROP DATABASE IF EXISTS ${DB}`],
  () => alternate(other, runs, measure),
);

console.log(
  `CREATE TABLE and DROP TABLE through the proxy, ${procedures} procedures on the server, ${workers} worker(s); ${runs} run(s) of ${seconds} s each, means`,
);
console.log(
  `${'target'.padEnd(8)} ${'metadata statements per DDL'.padStart(28)} ${'mysql.proc/event rows read per DDL'.padStart(35)} ${'DDL/s'.padStart(7)} ${'proxy CPU µs per DDL'.padStart(21)}`,
);
for (const [name, figures] of results) {
  console.log(
    `${name.padEnd(8)} ${mean(figures, (f) => f.statementsPerDdl)
      .toFixed(2)
      .padStart(28)} ${mean(figures, (f) => f.systemRowsPerDdl)
      .toFixed(1)
      .padStart(35)} ${mean(figures, (f) => f.ddlPerSecond)
      .toFixed(0)
      .padStart(7)} ${mean(figures, (f) => f.cpuPerDdl)
      .toFixed(0)
      .padStart(21)}`,
  );
}
