/**
 * Benchmark targets, each given as NAME=SPEC:
 *   NAME=mysql://user:password@host:port/database   a server that is already running
 *   NAME=mariadb:opt=value,opt=value                 a throwaway MariaDB started with those options
 *   NAME=nicecache:OTHER                             nicecache in front of target OTHER
 *   NAME=nicecache:OTHER:opt=value,...               ... with proxy options (e.g. workers=2)
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startEphemeralServer } from '../upstream/ephemeral-server.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../upstream/mysql-connection.ts';
import type { TargetDescription } from './sweep-result.ts';
import { processCpus } from './topology.ts';

export type TargetSpec =
  | { name: string; kind: 'url'; spec: string; connection: ConnectionOptions }
  | { name: string; kind: 'mariadb'; spec: string; serverOptions: Record<string, string> }
  | {
      name: string;
      kind: 'nicecache';
      spec: string;
      backend: string;
      proxyOptions: Record<string, string>;
    };

/** A target ready to be measured. */
export interface RunningTarget {
  spec: TargetSpec;
  /** Where the driver connects. */
  connection: ConnectionOptions;
  /** The server holding the data (for a nicecache target, the one behind it). */
  server: ConnectionOptions;
  /** The proxy process of a nicecache target, for its CPU time. */
  proxyPid: number | null;
  /** The process of the server holding the data, when it runs on this machine: its CPU time. */
  serverPid: number | null;
  stop(): Promise<void>;
}

export class TargetError extends Error {}

function parseOptionList(text: string, what: string): Record<string, string> {
  const options: Record<string, string> = {};
  for (const part of text.split(',').filter((item) => item !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new TargetError(`${what}: expected name=value, got '${part}'`);
    options[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return options;
}

export function parseTarget(text: string, database: string): TargetSpec {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new TargetError(`--target: expected NAME=SPEC, got '${text}'`);
  const name = text.slice(0, eq);
  const spec = text.slice(eq + 1);
  if (spec.startsWith('mysql://') || spec.startsWith('mariadb://')) {
    let url: URL;
    try {
      url = new URL(spec.replace(/^mariadb:/, 'mysql:'));
    } catch {
      throw new TargetError(`--target ${name}: '${spec}' is not a URL`);
    }
    const hidden = url.password ? spec.replace(`:${url.password}@`, ':***@') : spec;
    return {
      name,
      kind: 'url',
      spec: hidden,
      connection: {
        host: url.hostname,
        port: Number(url.port || 3306),
        user: decodeURIComponent(url.username || 'root'),
        password: decodeURIComponent(url.password),
        database: url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : database,
      },
    };
  }
  if (spec === 'mariadb' || spec.startsWith('mariadb:')) {
    return {
      name,
      kind: 'mariadb',
      spec,
      serverOptions: parseOptionList(spec.slice('mariadb:'.length), `--target ${name}`),
    };
  }
  if (spec.startsWith('nicecache:')) {
    const [backend = '', options = ''] = spec.slice('nicecache:'.length).split(/:(.*)/s);
    if (backend === '')
      throw new TargetError(`--target ${name}: nicecache needs a target to front`);
    return {
      name,
      kind: 'nicecache',
      spec,
      backend,
      proxyOptions: parseOptionList(options, `--target ${name}`),
    };
  }
  throw new TargetError(
    `--target ${name}: '${spec}' is none of mysql://..., mariadb:options, nicecache:target`,
  );
}

const cliMain = fileURLToPath(new URL('../cli/main.ts', import.meta.url));

/** Starts `nicecache proxy` as its own process, so its CPU time is its own. */
export async function startProxy(
  backend: ConnectionOptions,
  options: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  // The throwaway servers' account can read the schema metadata the cache uses (views,
  // triggers, foreign keys); without it every write would invalidate everything.
  const withAdmin = 'admin-user' in options ? options : { 'admin-user': backend.user, ...options };
  const { 'admin-password': password, ...rest } = withAdmin;
  const extra = Object.entries(rest).flatMap(([key, value]) => [`--${key}`, value]);
  // The password goes in the environment: options are visible in the process list.
  const adminPassword = 'admin-user' in options ? password : backend.password;
  const child = spawn(
    process.execPath,
    [
      cliMain,
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--backend',
      `${backend.host}:${backend.port}`,
      ...extra,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env:
        adminPassword === undefined
          ? process.env
          : { ...process.env, NICECACHE_ADMIN_PASSWORD: adminPassword },
    },
  );
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const match = /listening on \S+:(\d+)/.exec(log);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new TargetError(`nicecache exited with ${code}: ${log}`)));
  });
  return { child, port };
}

/** Starts the targets that need starting, in dependency order; stops them all on failure. */
export async function startTargets(
  specs: TargetSpec[],
  database: string,
  log: (line: string) => void,
): Promise<RunningTarget[]> {
  const running = new Map<string, RunningTarget>();
  try {
    const serversFirst = [...specs].sort(
      (a, b) => Number(a.kind === 'nicecache') - Number(b.kind === 'nicecache'),
    );
    for (const spec of serversFirst) {
      running.set(spec.name, await startTarget(spec, running, database, log));
    }
  } catch (error) {
    await Promise.all([...running.values()].map((target) => target.stop()));
    throw error;
  }
  return specs.map((spec) => running.get(spec.name)!);
}

async function startTarget(
  spec: TargetSpec,
  running: Map<string, RunningTarget>,
  database: string,
  log: (line: string) => void,
): Promise<RunningTarget> {
  switch (spec.kind) {
    case 'url':
      return {
        spec,
        connection: spec.connection,
        server: spec.connection,
        proxyPid: null,
        serverPid: await localServerPid(spec.connection),
        stop: async () => {},
      };
    case 'mariadb': {
      log(`starting a throwaway MariaDB for '${spec.name}' (${spec.spec})`);
      const server = await startEphemeralServer({ serverOptions: spec.serverOptions });
      const connection: ConnectionOptions = {
        host: server.host,
        port: server.port,
        user: server.user,
        password: server.password,
        database,
      };
      return {
        spec,
        connection,
        server: connection,
        proxyPid: null,
        serverPid: server.pid,
        stop: () => server.stop(),
      };
    }
    case 'nicecache': {
      const backend = running.get(spec.backend);
      if (backend === undefined) {
        throw new TargetError(`--target ${spec.name}: no target named '${spec.backend}' to front`);
      }
      const { child, port } = await startProxy(backend.connection, spec.proxyOptions);
      log(`started nicecache for '${spec.name}' on port ${port}, in front of '${spec.backend}'`);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      return {
        spec,
        connection: { ...backend.connection, host: '127.0.0.1', port },
        server: backend.server,
        proxyPid: child.pid ?? null,
        serverPid: backend.serverPid,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
  }
}

/**
 * The pid of a server on this machine, from its pid file; null when it is elsewhere or the file
 * cannot be read (the step then reports no server CPU).
 */
async function localServerPid(server: ConnectionOptions): Promise<number | null> {
  if (!LOOPBACK.has(server.host) && !server.host.startsWith('127.')) return null;
  try {
    const connection = await MysqlConnection.connect({ ...server, database: null });
    try {
      const [[pidFile]] = (await connection.queryRows('SELECT @@pid_file')) as [[string]];
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      return Number.isInteger(pid) && existsSync(`/proc/${pid}/stat`) ? pid : null;
    } finally {
      connection.close();
    }
  } catch {
    return null;
  }
}

const LOOPBACK = new Set(['localhost', '::1']);

export function describeTarget(target: RunningTarget, serverVersion: string): TargetDescription {
  return {
    name: target.spec.name,
    spec: target.spec.spec,
    kind: target.spec.kind,
    serverVersion,
    serverOptions: target.spec.kind === 'mariadb' ? target.spec.serverOptions : null,
    serverCpus: target.serverPid === null ? null : processCpus(target.serverPid),
    proxyCpus: target.proxyPid === null ? null : processCpus(target.proxyPid),
  };
}
