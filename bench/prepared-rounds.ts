/**
 * The prepare → execute → close pattern (PHP mysqli and PDO with native prepares, Go's
 * database/sql with arguments, Connector/J without its statement cache), repeated: per round
 * the hits it got (Qcache_hits through the proxy) and the proxy's CPU per execution, for
 * nicecache with its cache on and as a plain relay, side by side in one run.
 *
 *   node bench/prepared-rounds.ts [rounds per target, default 20000] [connections, default 4]
 *
 * Environment: BACKEND (host:port, default 127.0.0.1:3306; root without password), WORKERS
 * (proxy workers, default 1). A round is COM_STMT_PREPARE, COM_STMT_EXECUTE and COM_STMT_CLOSE
 * of a point select over 100 rows, the id cycling; every connection runs rounds back to back.
 * CPU is the proxy process's user + system time (/proc/PID/stat) over the timed rounds.
 */
import { once } from 'node:events';
import { processCpuMicros } from '../src/bench/system-sampler.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';
import { globalStatus, startProxyChild } from './proxy-child.ts';

const rounds = Number(process.argv[2] ?? 20_000);
const connections = Number(process.argv[3] ?? 4);
const [backendHost, backendPort] = (process.env.BACKEND ?? '127.0.0.1:3306').split(':');
const workers = process.env.WORKERS ?? '1';
const DB = 'nc_prepared_rounds';
const ROWS = 100;
const SQL = 'SELECT id, k, c FROM t WHERE id = ?';

const login = { user: 'root', password: '', database: DB };

async function setUp(): Promise<void> {
  const admin = await MysqlConnection.connect({
    host: backendHost!,
    port: Number(backendPort),
    ...login,
    database: null,
  });
  for (const sql of [
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, k INT, c CHAR(60)) ENGINE=InnoDB`,
    `INSERT INTO ${DB}.t SELECT seq, seq * 7, REPEAT(CHAR(97 + seq % 26), 60) FROM ${DB}.seq_1_to_${ROWS}`,
  ]) {
    const result = await admin.query(sql);
    if (result.error !== null) throw new Error(`${sql}: ${result.error.message}`);
  }
  admin.close();
}

function startProxy(cacheSize: string): ReturnType<typeof startProxyChild> {
  return startProxyChild(process.cwd(), [
    '--backend',
    `${backendHost}:${backendPort}`,
    '--workers',
    workers,
    '--query-cache-size',
    cacheSize,
  ]);
}

const hits = (port: number): Promise<number> => globalStatus(port, login, 'Qcache_hits');

/** `count` rounds over `connections` connections; the ids cycle over the table. */
async function runRounds(port: number, count: number): Promise<void> {
  const clients = await Promise.all(
    Array.from({ length: connections }, () =>
      MysqlConnection.connect({ host: '127.0.0.1', port, ...login }),
    ),
  );
  let next = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < count) {
        const id = (next++ % ROWS) + 1;
        const statement = await client.prepare(SQL);
        const result = await client.execute(statement, [id]);
        if (result.error !== null) throw new Error(result.error.message);
        client.closeStatement(statement);
      }
    }),
  );
  for (const client of clients) client.close();
}

interface Figures {
  hitsPerRound: number;
  cpuPerExecution: number;
  roundsPerSecond: number;
}

async function measure(cacheSize: string): Promise<Figures> {
  const { child, port } = await startProxy(cacheSize);
  try {
    // One round of every id first: those fill the cache; the timed rounds may then all hit.
    await runRounds(port, ROWS);
    const hitsBefore = cacheSize === '0' ? 0 : await hits(port);
    const cpuBefore = processCpuMicros(child.pid!);
    const start = performance.now();
    await runRounds(port, rounds);
    const seconds = (performance.now() - start) / 1000;
    const cpu = processCpuMicros(child.pid!) - cpuBefore;
    const hitsAfter = cacheSize === '0' ? 0 : await hits(port);
    return {
      hitsPerRound: (hitsAfter - hitsBefore) / rounds,
      // A round is three commands; only the execution has a reply worth caching.
      cpuPerExecution: cpu / rounds,
      roundsPerSecond: rounds / seconds,
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

await setUp();
const cached = await measure('64M');
const relay = await measure('0');
const show = (name: string, figures: Figures): string =>
  `${name.padEnd(18)} ${figures.hitsPerRound.toFixed(3).padStart(14)} ${figures.cpuPerExecution.toFixed(1).padStart(22)} ${figures.roundsPerSecond.toFixed(0).padStart(12)}`;
console.log(
  `prepare → execute → close, ${rounds} rounds on ${connections} connections, ${workers} worker(s)`,
);
console.log(
  `${'target'.padEnd(18)} ${'hits per round'.padStart(14)} ${'proxy CPU µs per round'.padStart(22)} ${'rounds/s'.padStart(12)}`,
);
console.log(show('nicecache (cache)', cached));
console.log(show('nicecache (relay)', relay));
console.log(
  `cache ÷ relay, proxy CPU per round: ${(cached.cpuPerExecution / relay.cpuPerExecution).toFixed(2)}`,
);
