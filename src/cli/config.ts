/**
 * The proxy's settings, from (lowest to highest precedence) defaults, a JSON config file,
 * NICECACHE_* environment variables, and command-line options.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

export interface HostPort {
  host: string;
  port: number;
}

export interface ProxyConfig {
  listen: HostPort;
  backend: HostPort;
  workers: number;
  connectTimeoutMs: number;
  drainTimeoutMs: number;
}

/** Each option: its flag, environment variable, config-file key, default and help text. */
export const proxyOptionSpecs = [
  {
    flag: 'listen',
    env: 'NICECACHE_LISTEN',
    value: 'HOST:PORT',
    fallback: '127.0.0.1:6033',
    help: 'where clients connect',
  },
  {
    flag: 'backend',
    env: 'NICECACHE_BACKEND',
    value: 'HOST:PORT',
    fallback: '127.0.0.1:3306',
    help: 'the MySQL or MariaDB server behind the proxy',
  },
  {
    flag: 'workers',
    env: 'NICECACHE_WORKERS',
    value: 'N',
    fallback: String(availableParallelism()),
    help: 'worker threads, each listening on the same port (default: the number of cores)',
  },
  {
    flag: 'connect-timeout',
    env: 'NICECACHE_CONNECT_TIMEOUT',
    value: 'MS',
    fallback: '5000',
    help: 'how long to wait for the backend before a client gets error 2003',
  },
  {
    flag: 'drain-timeout',
    env: 'NICECACHE_DRAIN_TIMEOUT',
    value: 'MS',
    fallback: '10000',
    help: 'on SIGTERM/SIGINT, how long running commands may take before connections are cut',
  },
] as const;

export class ConfigError extends Error {}

export function parseHostPort(text: string, what: string): HostPort {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new ConfigError(`${what}: expected HOST:PORT, got '${text}'`);
  return { host: match[1] ?? match[2]!, port };
}

function parsePositiveInt(text: string, what: string, allowZero = false): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ConfigError(
      `${what}: expected a ${allowZero ? 'non-negative' : 'positive'} integer, got '${text}'`,
    );
  }
  return value;
}

function readConfigFile(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`config file ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path}: expected a JSON object`);
  }
  const known = new Set<string>(proxyOptionSpecs.map((spec) => spec.flag));
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!known.has(key)) throw new ConfigError(`config file ${path}: unknown key '${key}'`);
    values[key] = String(value);
  }
  return values;
}

/** Parses `proxy` arguments; returns null when --help was asked for. */
export function parseProxyConfig(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): ProxyConfig | null {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    config: { type: 'string' },
    help: { type: 'boolean' },
  };
  for (const spec of proxyOptionSpecs) options[spec.flag] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const flags = parsed.values as Record<string, string | boolean | undefined>;
  if (flags['help']) return null;
  const configPath = (flags['config'] as string | undefined) ?? env['NICECACHE_CONFIG'];
  const fromFile = configPath ? readConfigFile(configPath) : {};
  const value = (flag: (typeof proxyOptionSpecs)[number]['flag']): string => {
    const spec = proxyOptionSpecs.find((candidate) => candidate.flag === flag)!;
    return (flags[flag] as string | undefined) ?? env[spec.env] ?? fromFile[flag] ?? spec.fallback;
  };
  return {
    listen: parseHostPort(value('listen'), '--listen'),
    backend: parseHostPort(value('backend'), '--backend'),
    workers: parsePositiveInt(value('workers'), '--workers'),
    connectTimeoutMs: parsePositiveInt(value('connect-timeout'), '--connect-timeout'),
    drainTimeoutMs: parsePositiveInt(value('drain-timeout'), '--drain-timeout', true),
  };
}

export function proxyHelp(): string {
  const lines = proxyOptionSpecs.map(
    (spec) =>
      `  --${`${spec.flag} ${spec.value}`.padEnd(26)}${spec.help}\n${' '.repeat(30)}env ${spec.env}; default ${spec.fallback}`,
  );
  return [
    'Usage: nicecache proxy [options]',
    '',
    'Runs the caching proxy. Clients connect to --listen as if it were the server; the server at',
    '--backend authenticates them itself (nicecache holds no passwords).',
    '',
    'Options:',
    ...lines,
    `  ${'--config FILE'.padEnd(28)}a JSON object with any of the options above, e.g. {"workers": 4}`,
    `${' '.repeat(30)}env NICECACHE_CONFIG`,
    `  ${'--help'.padEnd(28)}this text`,
    '',
    'Precedence: options, then environment, then config file, then defaults.',
    'SIGTERM or SIGINT: stop accepting, let running commands finish (--drain-timeout), exit 0.',
  ].join('\n');
}
