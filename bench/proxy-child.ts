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
