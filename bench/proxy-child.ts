/**
 * What the TypeScript bench scripts share: a nicecache proxy of some checkout run as a child
 * process on a free port, a counter read from its SHOW STATUS, and statements run on the
 * server directly.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';

/**
 * `nicecache proxy` of `checkout` with `args` (a listening address of its own is added), once
 * it says where it listens.
 */
export function startProxyChild(
  checkout: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [join(checkout, 'src/cli/main.ts'), 'proxy', '--listen', '127.0.0.1:0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let log = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      log += String(chunk);
      const match = /listening on [^\s]*:(\d+)/.exec(log);
      if (match !== null) resolve({ child, port: Number(match[1]) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => reject(new Error(`the proxy did not start: ${log}`)));
  });
}

/** Runs `sql` in order on the server at `host`:`port` as root; the last statement's rows. */
export async function onServer(
  host: string,
  port: number,
  sql: readonly string[],
): Promise<Array<Array<string | null>>> {
  const admin = await MysqlConnection.connect({
    host,
    port,
    user: 'root',
    password: '',
    database: null,
  });
  let rows: Array<Array<string | null>> = [];
  try {
    for (const statement of sql) rows = await admin.queryRows(statement);
  } finally {
    admin.close();
  }
  return rows;
}

/**
 * Runs `setup` on the server, then `body` with the server's userstat on, then `cleanup`, and
 * puts userstat back as it was, whatever happens.
 */
export async function withUserstat<T>(
  host: string,
  port: number,
  setup: readonly string[],
  cleanup: readonly string[],
  body: () => Promise<T>,
): Promise<T> {
  const [row] = await onServer(host, port, ['SELECT @@global.userstat']);
  const userstat = row?.[0] ?? '0';
  await onServer(host, port, [...setup, 'SET GLOBAL userstat = 1']);
  try {
    return await body();
  } finally {
    await onServer(host, port, [`SET GLOBAL userstat = ${userstat}`, ...cleanup]);
  }
}

/**
 * Statements that (re)create `user`, able to read the schema metadata of every schema as the
 * proxy's admin account (README).
 */
export const metadataAccount = (user: string, password: string): string[] => [
  `DROP USER IF EXISTS '${user}'@'%'`,
  `CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`,
  `GRANT SELECT, SHOW VIEW, TRIGGER, EVENT, PROCESS ON *.* TO '${user}'@'%'`,
];

/**
 * `measure` of this checkout's proxy and of `other`'s (when given), in turn, `runs` times each:
 * the figures by target ('this', 'other').
 */
export async function alternate<F>(
  other: string | undefined,
  runs: number,
  measure: (checkout: string) => Promise<F>,
): Promise<Map<string, F[]>> {
  const targets: Array<[string, string]> = [['this', process.cwd()]];
  if (other !== undefined) targets.push(['other', other]);
  const results = new Map<string, F[]>(targets.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++) {
    for (const [name, checkout] of targets) results.get(name)!.push(await measure(checkout));
  }
  return results;
}

/** The mean of one figure over runs. */
export const mean = <F>(figures: readonly F[], pick: (figures: F) => number): number =>
  figures.reduce((sum, each) => sum + pick(each), 0) / figures.length;

/** A counter of SHOW GLOBAL STATUS, read through the proxy on `port`. */
export async function globalStatus(
  port: number,
  login: { user: string; password: string; database: string | null },
  name: string,
): Promise<number> {
  const connection = await MysqlConnection.connect({ host: '127.0.0.1', port, ...login });
  try {
    const rows = await connection.queryRows(`SHOW GLOBAL STATUS LIKE '${name}'`);
    return Number(rows[0]?.[1] ?? NaN);
  } finally {
    connection.close();
  }
}
