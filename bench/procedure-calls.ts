/**
 * Connections that call a stored procedure (or a stored function) now and then between their
 * reads, as applications with routines do: per target, the share of reads served from the cache,
 * how many statements the proxy's metadata account ran per call (its reloads), rounds per second
 * and the proxy's CPU per round. This checkout's proxy, and another checkout's (OTHER) side by
 * side, alternating.
 *
 *   [OTHER=<checkout>] [CALL='SELECT touched(k)'] node bench/procedure-calls.ts [seconds per run, default 10] [runs each, default 3] [connections, default 4]
 *
 * Environment: BACKEND (host:port, default 127.0.0.1:3306; root without password), WORKERS
 * (default 2), READS (point selects per call, default 20, over 10 ids), CALL (the statement
 * that calls, k standing for the id it touches: default `CALL touch(k)`; the function
 * touched(k) does the same UPDATE and returns k; the procedure scratch(k) does it through a
 * temporary table it creates if it does not exist yet; the view labelled reads calls through
 * the function label(k), which writes nothing: `CALL='SELECT c FROM labelled WHERE id = k'`
 * reads it). The metadata account's
 * statements are counted in information_schema.USER_STATISTICS: the script turns the server's
 * userstat on for the run and puts back the value it found.
 */
import { once } from 'node:events';
import { processCpuMicros } from '../src/bench/system-sampler.ts';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';
import {
  alternate,
  globalStatus,
  mean,
  metadataAccount,
  onServer as onServerAt,
  startProxyChild,
  withUserstat,
} from './proxy-child.ts';

const seconds = Number(process.argv[2] ?? 10);
const runs = Number(process.argv[3] ?? 3);
const connections = Number(process.argv[4] ?? 4);
const [backendHost, backendPort] = (process.env.BACKEND ?? '127.0.0.1:3306').split(':');
const workers = process.env.WORKERS ?? '2';
const reads = Number(process.env.READS ?? 20);
const other = process.env.OTHER;
const callText = process.env.CALL ?? 'CALL touch(k)';
const DB = 'nc_procedure_calls';
const META_USER = 'nc_calls_meta';
const META_PASSWORD = 'nc-calls-meta';
const IDS = 10;

const login = { user: 'root', password: '', database: DB };

const onServer = (sql: readonly string[]): Promise<Array<Array<string | null>>> =>
  onServerAt(backendHost!, Number(backendPort), sql);

async function metadataStatements(): Promise<number> {
  const rows = await onServer([
    `SELECT SELECT_COMMANDS + OTHER_COMMANDS FROM information_schema.USER_STATISTICS WHERE USER = '${META_USER}'`,
  ]);
  return Number(rows[0]?.[0] ?? 0);
}

function startProxy(checkout: string): ReturnType<typeof startProxyChild> {
  return startProxyChild(
    checkout,
    [
      '--backend',
      `${backendHost}:${backendPort}`,
      '--workers',
      workers,
      '--query-cache-size',
      '64M',
      '--admin-user',
      META_USER,
    ],
    { ...process.env, NICECACHE_ADMIN_PASSWORD: META_PASSWORD },
  );
}

const hits = (port: number): Promise<number> => globalStatus(port, login, 'Qcache_hits');

interface Figures {
  hitShare: number;
  metadataPerCall: number;
  roundsPerSecond: number;
  cpuPerRound: number;
}

/** One timed run through a fresh proxy of `checkout`. */
async function measure(checkout: string): Promise<Figures> {
  const { child, port } = await startProxy(checkout);
  try {
    const clients = await Promise.all(
      Array.from({ length: connections }, () =>
        MysqlConnection.connect({ host: '127.0.0.1', port, ...login }),
      ),
    );
    // The first load of every worker is over before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const hitsBefore = await hits(port);
    const metadataBefore = await metadataStatements();
    const cpuBefore = processCpuMicros(child.pid!);
    const end = performance.now() + seconds * 1000;
    let rounds = 0;
    await Promise.all(
      clients.map(async (client, index) => {
        for (let round = 0; performance.now() < end; round++) {
          const call = await client.query(
            callText.replace(/\bk\b/, String((index * 7 + round) % IDS)),
          );
          if (call.error !== null) throw new Error(call.error.message);
          for (let read = 0; read < reads; read++) {
            const id = ((round + read) % IDS) + 1;
            const result = await client.query(`SELECT id, c FROM t WHERE id = ${id}`);
            if (result.error !== null) throw new Error(result.error.message);
          }
          rounds++;
        }
      }),
    );
    const elapsed = seconds + (performance.now() - end) / 1000;
    const cpu = processCpuMicros(child.pid!) - cpuBefore;
    const metadata = (await metadataStatements()) - metadataBefore;
    const served = (await hits(port)) - hitsBefore;
    for (const client of clients) client.close();
    return {
      hitShare: served / (rounds * reads),
      metadataPerCall: metadata / rounds,
      roundsPerSecond: rounds / elapsed,
      cpuPerRound: cpu / rounds,
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
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, c CHAR(60)) ENGINE=InnoDB`,
    `INSERT INTO ${DB}.t SELECT seq, REPEAT(CHAR(97 + seq % 26), 60) FROM ${DB}.seq_1_to_${IDS}`,
    `CREATE TABLE ${DB}.calls (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0) ENGINE=InnoDB`,
    `INSERT INTO ${DB}.calls (id) SELECT seq FROM ${DB}.seq_0_to_${IDS}`,
    `CREATE PROCEDURE ${DB}.touch(k INT) UPDATE calls SET n = n + 1 WHERE id = k`,
    `CREATE PROCEDURE ${DB}.scratch(k INT) BEGIN
       CREATE TEMPORARY TABLE IF NOT EXISTS picked (id INT);
       DELETE FROM picked;
       INSERT INTO picked VALUES (k);
       UPDATE calls SET n = n + 1 WHERE id IN (SELECT id FROM picked);
     END`,
    `CREATE FUNCTION ${DB}.touched(k INT) RETURNS INT MODIFIES SQL DATA
     BEGIN UPDATE calls SET n = n + 1 WHERE id = k; RETURN k; END`,
    `CREATE FUNCTION ${DB}.label(k INT) RETURNS CHAR(60) READS SQL DATA
     RETURN (SELECT c FROM ${DB}.t WHERE id = k)`,
    `CREATE VIEW ${DB}.labelled AS SELECT id, n, ${DB}.label(id) AS c FROM ${DB}.calls`,
    ...metadataAccount(META_USER, META_PASSWORD),
  ],
  [`DROP USER IF EXISTS '${META_USER}'@'%'`],
  () => alternate(other, runs, measure),
);

console.log(
  `${callText}, then ${reads} point selects over ${IDS} ids, on ${connections} connections, ${workers} worker(s); ${runs} run(s) of ${seconds} s each, means`,
);
console.log(
  `${'target'.padEnd(8)} ${'reads served'.padStart(13)} ${'metadata statements per call'.padStart(29)} ${'rounds/s'.padStart(9)} ${'proxy CPU µs per round'.padStart(23)}`,
);
for (const [name, figures] of results) {
  console.log(
    `${name.padEnd(8)} ${(mean(figures, (f) => f.hitShare) * 100).toFixed(1).padStart(12)}% ${mean(
      figures,
      (f) => f.metadataPerCall,
    )
      .toFixed(2)
      .padStart(29)} ${mean(figures, (f) => f.roundsPerSecond)
      .toFixed(0)
      .padStart(9)} ${mean(figures, (f) => f.cpuPerRound)
      .toFixed(0)
      .padStart(23)}`,
  );
}
