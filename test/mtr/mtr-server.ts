/**
 * The server the suite runs against: bootstrapped by mysql-test-run itself (`--start-and-exit`),
 * so it has the accounts, databases and settings the tests expect, and left running for every
 * run that follows in --extern mode. mtr restarts nothing in that mode, so what a failed test
 * leaves behind (databases, accounts, global settings, plugins, connections) is undone here.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';

export interface MtrServer {
  port: number;
  pid: number;
  vardir: string;
}

/**
 * Starts the server. Replication never starts by itself (two tests point a replica at the usual
 * port 3306, where another server may be running), and sequences are on.
 */
export async function startMtrServer(
  runner: string,
  tree: string,
  vardir: string,
  serverOptions: string[],
  logFile: string,
): Promise<MtrServer> {
  const args = [
    runner,
    `--vardir=${vardir}`,
    '--start-and-exit',
    ...serverOptions.map((option) => `--mysqld=${option}`),
    '--mysqld=--loose-sequence',
    '--mysqld=--skip-slave-start',
    'main.1st',
  ];
  const output = await runToEnd('perl', args, tree);
  writeFileSync(logFile, output.text);
  const pidFile = join(vardir, 'run', 'mysqld.1.pid');
  if (output.code !== 0 || !existsSync(pidFile)) {
    throw new Error(`mysql-test-run could not start the server (see ${logFile}):\n${output.text}`);
  }
  const config = readFileSync(join(vardir, 'my.cnf'), 'utf8');
  // Later runs in --extern mode rewrite my.cnf: keep the one the server was started with.
  copyFileSync(join(vardir, 'my.cnf'), join(vardir, 'my.cnf.server'));
  const section = config.split(/^\[/m).find((part) => part.startsWith('mysqld.1]'));
  const port = Number(/^port=(\d+)/m.exec(section ?? '')?.[1]);
  if (!Number.isInteger(port)) throw new Error(`no port for mysqld.1 in ${vardir}/my.cnf`);
  return { port, pid: Number(readFileSync(pidFile, 'utf8').trim()), vardir };
}

export async function stopMtrServer(server: MtrServer): Promise<void> {
  try {
    process.kill(server.pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 600; i++) {
    try {
      process.kill(server.pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.kill(server.pid, 'SIGKILL');
}

export function runToEnd(
  command: string,
  args: string[],
  cwd: string,
  onLine?: (line: string) => void,
): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let partial = '';
    const take = (chunk: Buffer): void => {
      const piece = chunk.toString();
      text += piece;
      if (onLine === undefined) return;
      const lines = (partial + piece).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', (code) => {
      if (onLine !== undefined && partial !== '') onLine(partial);
      resolve({ code, text });
    });
  });
}

/** mysql.proc (an Aria table): its definition, data and index. */
const PROC_FILES = ['frm', 'MAD', 'MAI'];

/** Global variables whose value moves by itself or cannot be set back. */
const MOVING_VARIABLES = new Set([
  'gtid_binlog_pos',
  'gtid_binlog_state',
  'gtid_current_pos',
  'gtid_slave_pos',
  'timestamp',
  'rand_seed1',
  'rand_seed2',
  'last_insert_id',
  'insert_id',
  'identity',
  'warning_count',
  'error_count',
  'in_transaction',
  'pseudo_thread_id',
]);

interface ServerState {
  variables: Map<string, string | null>;
  databases: Set<string>;
  accounts: Set<string>;
  plugins: Set<string>;
}

/** What the server looks like right after bootstrap, to put it back after a failed test. */
export class ServerBaseline {
  readonly #port: number;
  /** Where the files of mysql.proc are copied to at the start. */
  readonly #backupDir: string;
  #state: ServerState | null = null;
  #datadir = '';

  constructor(port: number, backupDir: string) {
    this.#port = port;
    this.#backupDir = backupDir;
  }

  async record(): Promise<void> {
    const connection = await this.#connect();
    try {
      this.#state = await readState(connection);
      this.#datadir = (await connection.queryRows('SELECT @@datadir'))[0]?.[0] ?? '';
      await connection.query('FLUSH TABLE mysql.proc');
      for (const ext of PROC_FILES) {
        copyFileSync(join(this.#datadir, 'mysql', `proc.${ext}`), this.#procBackup(ext));
      }
    } finally {
      connection.close();
    }
  }

  #procBackup(ext: string): string {
    return join(this.#backupDir, `proc.${ext}`);
  }

  /**
   * A test that fails half way through damaging mysql.proc on purpose (sp-destruct replaces its
   * files) leaves it unusable, and every test after it would fail on it: its files are put back
   * as they were at the start.
   */
  async #restoreProc(connection: MysqlConnection, done: string[]): Promise<void> {
    const check = await connection.query('SELECT COUNT(*) FROM information_schema.ROUTINES');
    if (check.error === null) return;
    await connection.query('FLUSH TABLE mysql.proc');
    for (const ext of PROC_FILES) {
      copyFileSync(this.#procBackup(ext), join(this.#datadir, 'mysql', `proc.${ext}`));
    }
    await connection.query('FLUSH TABLE mysql.proc');
    done.push(
      `mysql.proc's files put back as they were at the start (it said: ${check.error.message})`,
    );
  }

  /** Undoes what a test left: returns what was changed, for the log. */
  async restore(): Promise<string[]> {
    const baseline = this.#state;
    if (baseline === null) throw new Error('no baseline recorded');
    const connection = await this.#connect();
    const done: string[] = [];
    const run = async (sql: string): Promise<void> => {
      const result = await connection.query(sql);
      done.push(result.error === null ? sql : `${sql} -- ${result.error.message}`);
    };
    try {
      for (const [id] of await connection.queryRows(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump') AND USER NOT IN ('system user', 'event_scheduler')",
      )) {
        await run(`KILL ${id}`);
      }
      await connection.query('STOP ALL SLAVES');
      await this.#restoreProc(connection, done);
      const now = await readState(connection);
      for (const database of now.databases) {
        if (!baseline.databases.has(database)) await run(`DROP DATABASE ${quoteName(database)}`);
      }
      await run('DROP DATABASE IF EXISTS test');
      await run('CREATE DATABASE test');
      for (const account of now.accounts) {
        if (!baseline.accounts.has(account)) await run(`DROP USER ${account}`);
      }
      for (const plugin of now.plugins) {
        if (!baseline.plugins.has(plugin)) await run(`UNINSTALL PLUGIN ${quoteName(plugin)}`);
      }
      for (const [name, value] of baseline.variables) {
        if (MOVING_VARIABLES.has(name) || !now.variables.has(name)) continue;
        if (now.variables.get(name) === value) continue;
        await run(`SET GLOBAL ${name} = ${value === null ? 'DEFAULT' : sqlValue(value)}`);
      }
      await run('RESET QUERY CACHE');
    } finally {
      connection.close();
    }
    return done;
  }

  #connect(): Promise<MysqlConnection> {
    return MysqlConnection.connect({
      host: '127.0.0.1',
      port: this.#port,
      user: 'root',
      password: '',
      database: null,
    });
  }
}

async function readState(connection: MysqlConnection): Promise<ServerState> {
  const variables = new Map<string, string | null>();
  for (const [name, value] of await connection.queryRows('SHOW GLOBAL VARIABLES')) {
    if (name != null) variables.set(name.toLowerCase(), value ?? null);
  }
  const databases = new Set<string>();
  for (const [name] of await connection.queryRows('SHOW DATABASES')) {
    if (name != null) databases.add(name);
  }
  const accounts = new Set<string>();
  for (const [user, host] of await connection.queryRows(
    'SELECT User, Host FROM mysql.global_priv',
  )) {
    accounts.add(`${sqlValue(user ?? '')}@${sqlValue(host ?? '')}`);
  }
  const plugins = new Set<string>();
  for (const [name] of await connection.queryRows(
    'SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY IS NOT NULL',
  )) {
    if (name != null) plugins.add(name);
  }
  return { variables, databases, accounts, plugins };
}

function quoteName(name: string): string {
  return '`' + name.replaceAll('`', '``') + '`';
}

function sqlValue(value: string): string {
  if (/^-?\d+(?:\.\d+)?$/.test(value)) return value;
  return "'" + value.replaceAll('\\', '\\\\').replaceAll("'", "\\'") + "'";
}
