/**
 * A private, throwaway MariaDB server for tests and benchmarks: its own data directory under the
 * system temp directory, a free port on 127.0.0.1, root with an empty password and a `test`
 * database. stop() leaves nothing behind, and a process that exits without calling it still kills
 * the server on its way out.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export type ServerOptionValue = string | number | boolean;

export interface EphemeralServerOptions {
  /**
   * mariadbd settings such as `{ query_cache_type: 1 }`, passed as `--key=value`; booleans become
   * ON/OFF. They override the defaults, which keep start-up fast.
   */
  serverOptions?: Record<string, ServerOptionValue>;
  /** Path of mariadbd; searched in PATH, /usr/sbin and /usr/libexec when omitted. */
  mariadbd?: string;
  /** Covers both initialising the data directory and the server's start. */
  startTimeoutMs?: number;
  /** Receives every line the installer and the server print. */
  log?: (line: string) => void;
}

export interface EphemeralServer {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The temp directory holding everything of this server; removed by stop(). */
  directory: string;
  datadir: string;
  socket: string;
  /** The running mariadbd's; a restart changes it. */
  pid: number;
  /**
   * Shuts the server down cleanly and starts it again on the same data directory and port, as
   * an operator's restart does: connections are cut, the data (and binary log) remain.
   */
  restart(): Promise<void>;
  /** Shuts the server down (SIGKILL if it takes too long) and removes its directory. */
  stop(): Promise<void>;
}

const INSTALL_HINT = 'install MariaDB with: apt-get install mariadb-server mariadb-client';

const DEFAULT_SERVER_OPTIONS: Record<string, ServerOptionValue> = {
  innodb_buffer_pool_size: '128M',
  innodb_log_file_size: '48M',
  // Debian's packaged server defaults, which --no-defaults would otherwise drop (to latin1).
  character_set_server: 'utf8mb4',
  collation_server: 'utf8mb4_general_ci',
};

const DEFAULT_START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const POLL_INTERVAL_MS = 50;
const OUTPUT_TAIL_LINES = 30;
const PORT_ATTEMPTS = 3;

/** Runs in the server before it accepts connections, so a greeting means the setup is done. */
const INIT_SQL = [
  // It runs at every start: with log_bin, a restart would log it (an account statement, which a
  // binlog follower must treat as invalidating everything) as if a client had sent it.
  'SET SESSION sql_log_bin = 0;',
  'CREATE DATABASE IF NOT EXISTS test;',
  // With --skip-name-resolve a TCP client is 127.0.0.1, never 'localhost'.
  "CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED BY '';",
  "GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;",
  '',
].join('\n');

export async function startEphemeralServer(
  options: EphemeralServerOptions = {},
): Promise<EphemeralServer> {
  const deadline = Date.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  const mariadbd = findMariadbd(options.mariadbd);
  const installDb = findInstallDb(mariadbd);
  const settings = mergeSettings(options.serverOptions ?? {});

  const directory = await mkdtemp(join(tmpdir(), 'nicecache-mariadb-'));
  const datadir = join(directory, 'data');
  const socket = join(directory, 'mysqld.sock');
  const initFile = join(directory, 'init.sql');
  const runAsRoot = process.getuid?.() === 0;

  try {
    await runToCompletion(
      installDb,
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        '--skip-name-resolve',
        // Its bootstrap server's temp files too: two installs sharing /tmp can collide.
        `--tmpdir=${directory}`,
        ...(runAsRoot ? ['--user=root'] : []),
        // The data files are laid out now, so their geometry must match what the server uses.
        ...toFlags(pickInitTimeSettings(settings)),
      ],
      deadline,
      options.log,
    );
    await writeFile(initFile, INIT_SQL);

    for (let attempt = 1; ; attempt++) {
      const port = await findFreePort();
      const args = [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--tmpdir=${directory}`,
        `--socket=${socket}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--pid-file=${join(directory, 'mysqld.pid')}`,
        `--init-file=${initFile}`,
        '--skip-log-bin',
        '--skip-name-resolve',
        ...(runAsRoot ? ['--user=root'] : []),
        ...toFlags(settings),
      ];
      const launch = await launchServer(mariadbd, args, port, directory, deadline, options.log);
      if (launch.kind === 'running') {
        const relaunch = async (): Promise<RunningChild> => {
          const timeout = Date.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
          const again = await launchServer(mariadbd, args, port, directory, timeout, options.log);
          if (again.kind === 'running') return again.server;
          throw new Error(`mariadbd did not restart: ${again.reason}\n${again.output}`);
        };
        return describeServer(launch.server, relaunch, port, directory, datadir, socket);
      }
      // Another process may take the port between our probe and the server's bind.
      const portTaken = /address already in use|bind on tcp\/ip port/i.test(launch.output);
      if (!portTaken || attempt === PORT_ATTEMPTS) {
        throw new Error(`mariadbd did not start: ${launch.reason}\n${launch.output}`);
      }
    }
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

// --- finding the binaries ---------------------------------------------------------------------

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function searchDirectories(extra: string[]): string[] {
  const fromPath = (process.env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '');
  return [...new Set([...fromPath, ...extra])];
}

function findInDirectories(names: string[], directories: string[]): string | undefined {
  for (const dir of directories) {
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function findMariadbd(explicit: string | undefined): string {
  if (explicit !== undefined) {
    if (isExecutable(explicit)) return explicit;
    throw new Error(`mariadbd not found at ${explicit}; ${INSTALL_HINT}`);
  }
  const found = findInDirectories(
    ['mariadbd'],
    searchDirectories(['/usr/sbin', '/usr/libexec', '/usr/local/sbin', '/usr/local/libexec']),
  );
  if (found === undefined) {
    throw new Error(`mariadbd not found in PATH, /usr/sbin or /usr/libexec; ${INSTALL_HINT}`);
  }
  return found;
}

function findInstallDb(mariadbd: string): string {
  const serverDir = dirname(mariadbd);
  // Next to the server first, so a server from a private install gets its own installer.
  const found = findInDirectories(
    ['mariadb-install-db', 'mysql_install_db'],
    [serverDir, join(serverDir, '..', 'bin'), ...searchDirectories(['/usr/bin', '/usr/local/bin'])],
  );
  if (found === undefined) throw new Error(`mariadb-install-db not found; ${INSTALL_HINT}`);
  return found;
}

// --- server settings --------------------------------------------------------------------------

/** mariadbd treats dashes and underscores alike; normalising lets a caller's key replace ours. */
function mergeSettings(
  overrides: Record<string, ServerOptionValue>,
): Map<string, ServerOptionValue> {
  const merged = new Map(Object.entries(DEFAULT_SERVER_OPTIONS));
  for (const [key, value] of Object.entries(overrides)) merged.set(key.replaceAll('-', '_'), value);
  return merged;
}

/** Settings fixed when the data directory is created (page size, log geometry, name case). */
function pickInitTimeSettings(
  settings: Map<string, ServerOptionValue>,
): Map<string, ServerOptionValue> {
  return new Map(
    [...settings].filter(([key]) => key.startsWith('innodb_') || key === 'lower_case_table_names'),
  );
}

/** ON/OFF rather than --skip-key, because it also suits settings that are not plain booleans. */
function toFlags(settings: Map<string, ServerOptionValue>): string[] {
  return [...settings].map(([key, value]) => {
    const text = typeof value === 'boolean' ? (value ? 'ON' : 'OFF') : String(value);
    return `--${key}=${text}`;
  });
}

// --- processes --------------------------------------------------------------------------------

interface OutputTail {
  add: (chunk: Buffer) => void;
  text: () => string;
}

/** Keeps the last lines a child printed, for error messages, and forwards each line to the log. */
function createOutputTail(log: ((line: string) => void) | undefined): OutputTail {
  const lines: string[] = [];
  let partial = '';
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > OUTPUT_TAIL_LINES) lines.shift();
    log?.(line);
  };
  return {
    add: (chunk) => {
      const pieces = (partial + chunk.toString()).split('\n');
      partial = pieces.pop() ?? '';
      for (const line of pieces) keep(line);
    },
    text: () => (partial === '' ? lines.join('\n') : [...lines, partial].join('\n')),
  };
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A failed spawn emits 'error' and may never emit 'exit'.
    child.once('error', () => resolve({ code: null, signal: null }));
  });
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function describeExit(exit: Exit): string {
  return exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

async function runToCompletion(
  command: string,
  args: string[],
  deadline: number,
  log: ((line: string) => void) | undefined,
): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = createOutputTail(log);
  child.stdout.on('data', output.add);
  child.stderr.on('data', output.add);
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const exited = exitOf(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, deadline - Date.now()));
  const exit = await exited.finally(() => clearTimeout(timer));
  if (spawnError !== undefined) throw new Error(`${command} could not run: ${spawnError.message}`);
  if (exit.code !== 0) {
    const reason = exit.signal === 'SIGKILL' ? 'timed out' : describeExit(exit);
    throw new Error(`${command} failed (${reason}):\n${output.text()}`);
  }
}

async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = probe.address();
      probe.close(() => {
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

type Greeting = { kind: 'ready' } | { kind: 'not-ready'; detail: string };

/**
 * A server sends its handshake as soon as it accepts a connection, so reading the first packet
 * answers "is it serving?" without speaking the rest of the protocol.
 */
function readGreeting(port: number, timeoutMs: number): Promise<Greeting> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    const finish = (greeting: Greeting): void => {
      socket.destroy();
      resolve(greeting);
    };
    socket.setTimeout(timeoutMs, () => finish({ kind: 'not-ready', detail: 'no greeting' }));
    socket.on('error', (error) => finish({ kind: 'not-ready', detail: error.message }));
    socket.on('close', () => finish({ kind: 'not-ready', detail: 'connection closed' }));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 5) return;
      const firstPayloadByte = received[4];
      if (firstPayloadByte === 10) {
        finish({ kind: 'ready' });
      } else if (firstPayloadByte === 0xff) {
        // Error packet: 0xff, 2-byte code, then (in a greeting) the message without SQL state.
        finish({ kind: 'not-ready', detail: received.subarray(7).toString() });
      } else {
        finish({ kind: 'not-ready', detail: `unexpected greeting byte ${firstPayloadByte}` });
      }
    });
  });
}

interface RunningChild {
  child: ChildProcess;
  exited: Promise<Exit>;
}

type Launch =
  { kind: 'running'; server: RunningChild } | { kind: 'failed'; reason: string; output: string };

async function launchServer(
  mariadbd: string,
  args: string[],
  port: number,
  directory: string,
  deadline: number,
  log: ((line: string) => void) | undefined,
): Promise<Launch> {
  const child = spawn(mariadbd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = exitOf(child);
  const output = createOutputTail(log);
  child.stdout.on('data', output.add);
  child.stderr.on('data', output.add);
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  trackForExit(child, directory);

  const fail = async (reason: string): Promise<Launch> => {
    if (!hasExited(child) && spawnError === undefined) child.kill('SIGKILL');
    await exited;
    untrack(child);
    return { kind: 'failed', reason, output: output.text() };
  };

  let lastDetail = 'no answer yet';
  for (;;) {
    if (spawnError !== undefined) return fail(`could not run ${mariadbd}: ${spawnError.message}`);
    if (hasExited(child)) return fail(describeExit(await exited));
    const remaining = deadline - Date.now();
    if (remaining <= 0) return fail(`no greeting on port ${port} in time (${lastDetail})`);
    const greeting = await readGreeting(port, Math.min(remaining, 1000));
    if (greeting.kind === 'ready') break;
    lastDetail = greeting.detail;
    await delay(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())));
  }

  // The server must not keep the caller's process alive; the exit hook stops it instead.
  child.unref();
  (child.stdout as Socket).unref();
  (child.stderr as Socket).unref();
  return { kind: 'running', server: { child, exited } };
}

function describeServer(
  first: RunningChild,
  relaunch: () => Promise<RunningChild>,
  port: number,
  directory: string,
  datadir: string,
  socket: string,
): EphemeralServer {
  let running = first;
  const shutDown = async (): Promise<void> => {
    const { child, exited } = running;
    if (!hasExited(child)) {
      child.kill('SIGTERM');
      // Cancelled once the server is gone, so the timer never delays the caller's exit.
      const timeout = new AbortController();
      const done = await Promise.race([
        exited.then(() => true),
        delay(STOP_TIMEOUT_MS, false, { signal: timeout.signal }).catch(() => true),
      ]);
      timeout.abort();
      if (!done) child.kill('SIGKILL');
      await exited;
    }
    untrack(child);
  };
  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    await shutDown();
    await rm(directory, { recursive: true, force: true });
  };
  const server: EphemeralServer = {
    host: '127.0.0.1',
    port,
    user: 'root',
    password: '',
    database: 'test',
    directory,
    datadir,
    socket,
    pid: first.child.pid!,
    restart: async () => {
      if (stopping !== undefined) throw new Error('the server was stopped');
      await shutDown();
      running = await relaunch();
      server.pid = running.child.pid!;
    },
    stop: () => (stopping ??= stop()),
  };
  return server;
}

// --- cleanup when the caller's process ends ---------------------------------------------------

const runningServers = new Map<ChildProcess, string>();
const TERMINATING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Kills, synchronously, every ephemeral server this process started and has not stopped, and
 * removes their directories as far as possible (a dying server may still hold files). Runs
 * automatically on process exit and on SIGINT/SIGTERM/SIGHUP; exported for callers with their
 * own shutdown paths.
 */
export function killEphemeralServersSync(): void {
  for (const [child, directory] of runningServers) {
    if (!hasExited(child)) child.kill('SIGKILL');
    try {
      rmSync(directory, { recursive: true, force: true });
    } catch {
      // Best effort: the process is ending and a leftover temp directory is harmless.
    }
  }
  runningServers.clear();
  removeExitHooks();
}

function onTerminatingSignal(signal: NodeJS.Signals): void {
  killEphemeralServersSync();
  // Nobody else handles the signal: re-raise it so the process ends as it would have without us.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function addExitHooks(): void {
  process.on('exit', killEphemeralServersSync);
  for (const signal of TERMINATING_SIGNALS) process.on(signal, onTerminatingSignal);
}

function removeExitHooks(): void {
  process.removeListener('exit', killEphemeralServersSync);
  for (const signal of TERMINATING_SIGNALS) process.removeListener(signal, onTerminatingSignal);
}

function trackForExit(child: ChildProcess, directory: string): void {
  // The hooks live only while a server runs, so an idle import changes no signal behaviour.
  if (runningServers.size === 0) addExitHooks();
  runningServers.set(child, directory);
}

function untrack(child: ChildProcess): void {
  if (!runningServers.delete(child)) return;
  if (runningServers.size === 0) removeExitHooks();
}
