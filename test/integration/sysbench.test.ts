/**
 * sysbench, the benchmark users will measure the proxy with: several threads of OLTP
 * transactions, with server-side prepared statements and without, must run through the proxy
 * without a single error.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const SYSBENCH = '/usr/bin/sysbench';
const DB = 'nc_sysbench';
const TABLE_SIZE = 10_000;

let proxy: ProxyProcess;
let admin: Connection;

interface Run {
  code: number | null;
  output: string;
}

interface Target {
  host: string;
  port: number;
}
const direct: Target = { host: BACKEND_HOST, port: BACKEND_PORT };

function sysbench(args: string[], { host, port }: Target, timeoutMs = 30_000): Promise<Run> {
  const connection = [
    '--db-driver=mysql',
    `--mysql-host=${host}`,
    `--mysql-port=${port}`,
    `--mysql-user=${BACKEND_USER}`,
    `--mysql-password=${BACKEND_PASSWORD}`,
    `--mysql-db=${DB}`,
    '--tables=1',
    `--table-size=${TABLE_SIZE}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(SYSBENCH, [...args.slice(0, 1), ...connection, ...args.slice(1)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A counter from sysbench's "SQL statistics" block, e.g. `transactions:  1234  (246.5 per sec.)`. */
function counter(output: string, name: string): number {
  const match = new RegExp(`^\\s*${name}:\\s+(\\d+)`, 'm').exec(output);
  assert.ok(match, `no '${name}' in sysbench output:\n${output}`);
  return Number(match[1]);
}

/**
 * The errnos of the errors sysbench ignored and retried, as its debug log names them. Its log
 * folds repeats into "(last message repeated N times)".
 */
function ignoredErrnos(output: string): number[] {
  const errnos: number[] = [];
  let last: number | null = null;
  for (const line of output.split('\n')) {
    const ignored = /^DEBUG: Ignoring error (\d+) /.exec(line);
    const repeated = /^\(last message repeated (\d+) times\)$/.exec(line);
    if (ignored) {
      last = Number(ignored[1]);
      errnos.push(last);
    } else if (repeated) {
      if (last !== null) for (let k = 0; k < Number(repeated[1]); k++) errnos.push(last);
    } else if (line.trim() !== '') {
      last = null;
    }
  }
  return errnos;
}

const ER_LOCK_DEADLOCK = 1213;

/**
 * Runs a workload through the proxy and checks that sysbench saw no error of any kind, except
 * InnoDB deadlocks between its own threads when `deadlocksPossible`: oltp_read_write's delete and
 * re-insert of random rows deadlocks now and then against the server directly too (sysbench
 * retries those), so only errors of another kind can be the proxy's doing.
 */
async function runThroughProxy(
  workload: string,
  options: string[],
  deadlocksPossible: boolean,
): Promise<void> {
  // Verbosity 5 makes sysbench name each error it ignores.
  const run = await sysbench([workload, ...options, '--verbosity=5', 'run'], proxy);
  assert.equal(run.code, 0, run.output);
  assert.ok(counter(run.output, 'transactions') > 0, run.output);
  assert.ok(counter(run.output, 'queries') > 0, run.output);
  assert.equal(counter(run.output, 'reconnects'), 0, run.output);
  const ignored = ignoredErrnos(run.output);
  assert.equal(counter(run.output, 'ignored errors'), ignored.length, run.output);
  const allowed = deadlocksPossible ? [ER_LOCK_DEADLOCK] : [];
  assert.deepStrictEqual(
    ignored.filter((errno) => !allowed.includes(errno)),
    [],
    run.output,
  );
  // Apart from those, the word may not appear anywhere.
  const rest = run.output
    .replace(/^DEBUG: Ignoring error 1213 .*$/gm, '')
    .replace(/^\s*ignored errors:.*$/m, '');
  assert.doesNotMatch(rest, /FATAL|error/i, run.output);
  // Whatever the threads did, the proxy itself had nothing to complain about (but the line at
  // start that says it runs without an admin account, as this one does).
  const complaints = proxy.log().replace(/^\S+ warn +no admin account .*$/m, '');
  assert.doesNotMatch(complaints, /^\S+ (warn|error)/m, proxy.log());
}

before(async () => {
  try {
    await access(SYSBENCH, constants.X_OK);
  } catch {
    assert.fail(
      `${SYSBENCH} is missing: install the Debian package sysbench (apt-get install sysbench)`,
    );
  }
  admin = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
  });
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  // Preparing is not what is tested; straight to the backend is quicker.
  const prepare = await sysbench(['oltp_read_write', 'prepare'], direct);
  assert.equal(prepare.code, 0, prepare.output);
  proxy = await startProxyProcess({ workers: 2 });
});

after(async () => {
  const code = await proxy?.stop();
  if (admin !== undefined) {
    const cleanup = await sysbench(['oltp_read_write', 'cleanup'], direct);
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.end();
    assert.equal(cleanup.code, 0, cleanup.output);
  }
  assert.equal(code, 0, `proxy exit code; its log:\n${proxy?.log()}`);
});

async function rowCount(): Promise<number> {
  const [row] = await admin.query<{ n: bigint }[]>(`SELECT COUNT(*) AS n FROM ${DB}.sbtest1`);
  return Number(row!.n);
}

test('oltp_read_write, 4 threads, server-side prepared statements (--db-ps-mode=auto)', async () => {
  await runThroughProxy('oltp_read_write', ['--threads=4', '--time=5', '--db-ps-mode=auto'], true);
  // Each transaction deletes a row and inserts it again: a lost or doubled write shows here.
  assert.equal(await rowCount(), TABLE_SIZE);
});

test('oltp_read_write, 4 threads, text protocol only (--db-ps-mode=disable)', async () => {
  await runThroughProxy(
    'oltp_read_write',
    ['--threads=4', '--time=5', '--db-ps-mode=disable'],
    true,
  );
  assert.equal(await rowCount(), TABLE_SIZE);
});

test('oltp_point_select, 4 threads, prepared statements', async () => {
  // Reads take no locks: not a single error is acceptable.
  await runThroughProxy(
    'oltp_point_select',
    ['--threads=4', '--time=3', '--db-ps-mode=auto'],
    false,
  );
});
