/**
 * The proxy's settings, from (lowest to highest precedence) defaults, a JSON config file,
 * NICECACHE_* environment variables, and command-line options.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { LogFormat } from '../proxy/log.ts';

export interface HostPort {
  host: string;
  port: number;
}

export interface ProxyConfig {
  listen: HostPort;
  /** A Unix socket to listen on as well (--socket); null: none. */
  socket: string | null;
  backend: HostPort;
  workers: number;
  connectTimeoutMs: number;
  drainTimeoutMs: number;
  queryCacheType: 0 | 1 | 2;
  queryCacheSize: number;
  queryCacheLimit: number;
  queryCacheTtlMs: number;
  singleFlightWaitMs: number;
  /** Answer BEGIN, hits and COMMIT of read transactions without the server (see deferred-transaction.ts). */
  deferTransactions: boolean;
  adminUser: string | null;
  adminPassword: string;
  /** A client that has not logged in this long after its greeting is dropped. */
  handshakeTimeoutMs: number;
  /** Refuse to start when the backend cannot be reached (default: start, clients get 1429). */
  requireBackend: boolean;
  /** The password was given as an option, visible to every user in the process list. */
  adminPasswordOnCommandLine: boolean;
  /** Follow the server's binary log to see writes made elsewhere (see binlog/binlog-follower.ts). */
  binlog: BinlogMode;
  /** Beyond this lag (or when disconnected) the follower stops hits until it catches up. */
  binlogMaxLagMs: number;
  /** The follower's server_id as a replica; null: a random one in a high range. */
  binlogServerId: number | null;
  /** Where to serve Prometheus metrics at /metrics; null: nowhere. */
  metrics: HostPort | null;
  /** Keep per-statement digests (statement-digests.ts), with the cache or without. */
  digests: boolean;
  logFormat: LogFormat;
  /**
   * Whether TLS is offered to clients: auto offers it with the certificate of --tls-cert and
   * --tls-key, or without them with a self-signed one made at start; off offers none.
   */
  tlsMode: TlsMode;
  /** The certificate and key files offered to clients (--tls-cert, --tls-key); null: none given. */
  tls: TlsFiles | null;
  /** Clients that do not start TLS are refused, as the server's require_secure_transport does. */
  requireSecureTransport: boolean;
  /**
   * TLS to the server: off, when the server offers it (preferred), or always (required); follow,
   * for a client on TLS as the server offers it and for a client in the clear never, so that the
   * server sees each client's connection as the client made it; auto is off for a backend on a
   * loopback address, preferred otherwise (see backendTlsInForce).
   */
  backendTls: BackendTlsMode;
  /** PEM CA certificates to check the server's certificate with; null: the system's. */
  backendTlsCa: string | null;
  /** Refuse a server certificate that is not trusted or does not name the backend host. */
  backendTlsVerify: boolean;
}

export type BackendTlsMode = 'auto' | 'off' | 'preferred' | 'required' | 'follow';

export type TlsMode = 'auto' | 'off';

/** PEM files of the certificate (chain) and private key the proxy offers clients. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export type BinlogMode = 'auto' | 'on' | 'off';

function parseLogFormat(text: string): LogFormat {
  const lowered = text.toLowerCase();
  if (lowered === 'text' || lowered === 'json') return lowered;
  throw new ConfigError(`--log-format: expected text or json, got '${text}'`);
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
    flag: 'socket',
    env: 'NICECACHE_SOCKET',
    value: 'PATH',
    fallback: '',
    help: "also listen on a Unix socket at PATH, as the server's own socket option does (default: none); its connections are served by the first worker",
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
    help: 'how long to wait for the backend (connect and greeting) before a client gets error 1429',
  },
  {
    flag: 'handshake-timeout',
    env: 'NICECACHE_HANDSHAKE_TIMEOUT',
    value: 'MS',
    fallback: '10000',
    help: 'a client that has not logged in this long after the greeting is dropped, and its backend connection with it',
  },
  {
    flag: 'require-backend',
    env: 'NICECACHE_REQUIRE_BACKEND',
    value: '',
    fallback: 'false',
    help: 'refuse to start when the backend cannot be reached (without it nicecache starts, and each client gets error 1429 until the backend answers)',
  },
  {
    flag: 'drain-timeout',
    env: 'NICECACHE_DRAIN_TIMEOUT',
    value: 'MS',
    fallback: '10000',
    help: 'on SIGTERM/SIGINT, how long running commands may take before connections are cut',
  },
  {
    flag: 'query-cache-type',
    env: 'NICECACHE_QUERY_CACHE_TYPE',
    value: '0|1|2',
    fallback: '1',
    help: 'OFF, ON, or DEMAND (only SELECT SQL_CACHE); sessions may SET query_cache_type',
  },
  {
    flag: 'query-cache-size',
    env: 'NICECACHE_QUERY_CACHE_SIZE',
    value: 'BYTES',
    fallback: '64M',
    help: 'memory for cached results, all workers together (K, M, G suffixes; 0 = relay only)',
  },
  {
    flag: 'query-cache-limit',
    env: 'NICECACHE_QUERY_CACHE_LIMIT',
    value: 'BYTES',
    fallback: '1M',
    help: 'results larger than this are not cached',
  },
  {
    flag: 'query-cache-ttl',
    env: 'NICECACHE_QUERY_CACHE_TTL',
    value: 'SECONDS',
    fallback: '0',
    help: 'drop results older than this even without writes (0 = never)',
  },
  {
    flag: 'single-flight-wait',
    env: 'NICECACHE_SINGLE_FLIGHT_WAIT',
    value: 'MS',
    fallback: '50',
    help: 'an identical miss waits this long for the first one before asking the server itself',
  },
  {
    flag: 'defer-transactions',
    env: 'NICECACHE_DEFER_TRANSACTIONS',
    value: 'on|off',
    fallback: 'on',
    help: 'answer BEGIN, the hits after it and COMMIT without the server until a statement needs it; a transaction whose hits a write overtook before then ends with ER_CHECKREAD (1020), rolled back',
  },
  {
    flag: 'admin-user',
    env: 'NICECACHE_ADMIN_USER',
    value: 'USER',
    fallback: '',
    help: 'account that reads views, triggers and foreign keys from information_schema; without it every write invalidates everything',
  },
  {
    flag: 'admin-password',
    env: 'NICECACHE_ADMIN_PASSWORD',
    value: 'PASSWORD',
    fallback: '',
    help: 'its password: give it in the environment or the config file, not as an option (options are visible to every user in the process list)',
  },
  {
    flag: 'binlog',
    env: 'NICECACHE_BINLOG',
    value: 'auto|on|off',
    fallback: 'auto',
    help: "follow the server's binary log so that writes made elsewhere (not through nicecache) invalidate too: auto follows when the server has log_bin=ON and the admin account may read it, on refuses to start otherwise, off does not follow",
  },
  {
    flag: 'binlog-max-lag',
    env: 'NICECACHE_BINLOG_MAX_LAG',
    value: 'MS',
    fallback: '1000',
    help: 'when the binlog follower is disconnected or further behind than this, no result is served from the cache until it has caught up',
  },
  {
    flag: 'binlog-server-id',
    env: 'NICECACHE_BINLOG_SERVER_ID',
    value: 'N',
    fallback: '',
    help: "the follower's server_id as a replica, unique among the server's replicas (default: a random one from 2^31 up)",
  },
  {
    flag: 'metrics',
    env: 'NICECACHE_METRICS',
    value: 'HOST:PORT',
    fallback: '',
    help: 'serve Prometheus metrics at http://HOST:PORT/metrics (default: not served)',
  },
  {
    flag: 'digests',
    env: 'NICECACHE_DIGESTS',
    value: 'on|off',
    fallback: 'on',
    help: 'keep per-statement digests (counts and server times per normalised statement, at /api/digests and as SELECT * FROM nicecache.digests), with the cache or without; off spares their CPU on every statement',
  },
  {
    flag: 'tls',
    env: 'NICECACHE_TLS',
    value: 'auto|off',
    fallback: 'auto',
    help: 'TLS to clients that ask for it: auto offers it with --tls-cert, or without one with a self-signed certificate made at start (which clients cannot verify); off offers none',
  },
  {
    flag: 'tls-cert',
    env: 'NICECACHE_TLS_CERT',
    value: 'FILE',
    fallback: '',
    help: 'PEM certificate (chain) offered to clients that ask for TLS; with --tls-key (default: a self-signed certificate made at start)',
  },
  {
    flag: 'tls-key',
    env: 'NICECACHE_TLS_KEY',
    value: 'FILE',
    fallback: '',
    help: "PEM private key of --tls-cert's certificate",
  },
  {
    flag: 'backend-tls',
    env: 'NICECACHE_BACKEND_TLS',
    value: 'off|preferred|required|follow',
    fallback: 'auto',
    help: "TLS to the server: preferred uses it when the server offers it, required refuses clients when it does not, follow uses it for clients on TLS only (the server sees each client's choice) (default: off for a backend on a loopback address, preferred otherwise: TLS costs CPU on every miss)",
  },
  {
    flag: 'backend-tls-ca',
    env: 'NICECACHE_BACKEND_TLS_CA',
    value: 'FILE',
    fallback: '',
    help: "PEM CA certificates to check the server's certificate with (default: the system's)",
  },
  {
    flag: 'backend-tls-verify',
    env: 'NICECACHE_BACKEND_TLS_VERIFY',
    value: '',
    fallback: 'false',
    help: 'refuse a server certificate that is not signed by a trusted CA or does not name the --backend host (default: TLS without checking who answers)',
  },
  {
    flag: 'require-secure-transport',
    env: 'NICECACHE_REQUIRE_SECURE_TRANSPORT',
    value: '',
    fallback: 'false',
    help: "refuse clients that do not start TLS, with the server's own answer to them under require_secure_transport (not with --tls off)",
  },
  {
    flag: 'log-format',
    env: 'NICECACHE_LOG_FORMAT',
    value: 'text|json',
    fallback: 'text',
    help: 'text: a line per event for people; json: one JSON object per line (time, level, worker, msg) for log collectors',
  },
] as const;

const SIZE_SUFFIXES: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/** Parses a byte size the way the server's options are written: 64M, 1G, 1048576. */
export function parseSize(text: string, what: string): number {
  const match = /^(\d+)([KMG]?)$/i.exec(text.trim());
  if (!match) throw new ConfigError(`${what}: expected a size such as 64M, got '${text}'`);
  return Number(match[1]) * SIZE_SUFFIXES[match[2]!.toUpperCase()]!;
}

function parseCacheType(text: string): 0 | 1 | 2 {
  const value = { '0': 0, OFF: 0, '1': 1, ON: 1, '2': 2, DEMAND: 2 }[text.trim().toUpperCase()];
  if (value === undefined) {
    throw new ConfigError(`--query-cache-type: expected 0, 1, 2, OFF, ON or DEMAND, got '${text}'`);
  }
  return value as 0 | 1 | 2;
}

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

function parseBinlogMode(text: string): BinlogMode {
  const mode = text.trim().toLowerCase();
  if (mode !== 'auto' && mode !== 'on' && mode !== 'off')
    throw new ConfigError(`--binlog: expected auto, on or off, got '${text}'`);
  return mode;
}

/** A server_id: 1 to 2^32 - 1 (0 is refused by replication). */
function parseServerId(text: string): number | null {
  if (text.trim() === '') return null;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 0xffffffff)
    throw new ConfigError(
      `--binlog-server-id: expected an integer from 1 to 4294967295, got '${text}'`,
    );
  return value;
}

function parseBoolean(text: string, what: string): boolean {
  const value = {
    '1': true,
    TRUE: true,
    ON: true,
    YES: true,
    '0': false,
    FALSE: false,
    OFF: false,
    NO: false,
  }[text.trim().toUpperCase()];
  if (value === undefined) throw new ConfigError(`${what}: expected true or false, got '${text}'`);
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
  for (const spec of proxyOptionSpecs) {
    options[spec.flag] = { type: spec.value === '' ? 'boolean' : 'string' };
  }
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
    const given = flags[flag];
    const fromFlag = typeof given === 'boolean' ? String(given) : given;
    return fromFlag ?? env[spec.env] ?? fromFile[flag] ?? spec.fallback;
  };
  const tlsMode = parseTlsMode(value('tls'));
  return {
    listen: parseHostPort(value('listen'), '--listen'),
    socket: value('socket') === '' ? null : value('socket'),
    backend: parseHostPort(value('backend'), '--backend'),
    workers: parsePositiveInt(value('workers'), '--workers'),
    connectTimeoutMs: parsePositiveInt(value('connect-timeout'), '--connect-timeout'),
    drainTimeoutMs: parsePositiveInt(value('drain-timeout'), '--drain-timeout', true),
    queryCacheType: parseCacheType(value('query-cache-type')),
    queryCacheSize: parseSize(value('query-cache-size'), '--query-cache-size'),
    queryCacheLimit: parseSize(value('query-cache-limit'), '--query-cache-limit'),
    queryCacheTtlMs: parsePositiveInt(value('query-cache-ttl'), '--query-cache-ttl', true) * 1000,
    singleFlightWaitMs: parsePositiveInt(value('single-flight-wait'), '--single-flight-wait', true),
    deferTransactions: parseBoolean(value('defer-transactions'), '--defer-transactions'),
    adminUser: value('admin-user') === '' ? null : value('admin-user'),
    adminPassword: value('admin-password'),
    handshakeTimeoutMs: parsePositiveInt(value('handshake-timeout'), '--handshake-timeout'),
    requireBackend: parseBoolean(value('require-backend'), '--require-backend'),
    adminPasswordOnCommandLine: typeof flags['admin-password'] === 'string',
    binlog: parseBinlogMode(value('binlog')),
    binlogMaxLagMs: parsePositiveInt(value('binlog-max-lag'), '--binlog-max-lag'),
    binlogServerId: parseServerId(value('binlog-server-id')),
    metrics: value('metrics') === '' ? null : parseHostPort(value('metrics'), '--metrics'),
    digests: parseBoolean(value('digests'), '--digests'),
    logFormat: parseLogFormat(value('log-format')),
    tlsMode,
    tls: parseTlsFiles(value('tls-cert'), value('tls-key'), tlsMode),
    backendTls: parseBackendTls(value('backend-tls')),
    backendTlsCa: value('backend-tls-ca') === '' ? null : value('backend-tls-ca'),
    backendTlsVerify: parseBoolean(value('backend-tls-verify'), '--backend-tls-verify'),
    requireSecureTransport: parseSecureTransport(
      parseBoolean(value('require-secure-transport'), '--require-secure-transport'),
      tlsMode,
    ),
  };
}

function parseBackendTls(text: string): BackendTlsMode {
  const lowered = text.trim().toLowerCase();
  if (
    lowered === 'auto' ||
    lowered === 'off' ||
    lowered === 'preferred' ||
    lowered === 'required' ||
    lowered === 'follow'
  )
    return lowered;
  throw new ConfigError(
    `--backend-tls: expected auto, off, preferred, required or follow, got '${text}'`,
  );
}

/**
 * --backend-tls as it applies to the backend: auto is off on a loopback address (TLS costs CPU
 * on every miss, and the traffic never leaves the machine), preferred elsewhere.
 */
export function backendTlsInForce(config: ProxyConfig): Exclude<BackendTlsMode, 'auto'> {
  if (config.backendTls !== 'auto') return config.backendTls;
  const host = config.backend.host;
  return host === 'localhost' || host === '::1' || host.startsWith('127.') ? 'off' : 'preferred';
}

/** As the server refuses require_secure_transport=ON with no secure transport to offer. */
function parseSecureTransport(required: boolean, tlsMode: TlsMode): boolean {
  if (required && tlsMode === 'off') {
    throw new ConfigError(
      '--require-secure-transport with --tls off: no secure transport is offered to clients',
    );
  }
  return required;
}

function parseTlsMode(text: string): TlsMode {
  const lowered = text.trim().toLowerCase();
  if (lowered === 'auto' || lowered === 'off') return lowered;
  throw new ConfigError(`--tls: expected auto or off, got '${text}'`);
}

function parseTlsFiles(certFile: string, keyFile: string, tlsMode: TlsMode): TlsFiles | null {
  if (certFile === '' && keyFile === '') return null;
  if (certFile === '' || keyFile === '')
    throw new ConfigError('--tls-cert and --tls-key go together: give both, or neither');
  if (tlsMode === 'off')
    throw new ConfigError('--tls off offers no TLS: --tls-cert and --tls-key would not be used');
  return { certFile, keyFile };
}

/** How changedSettings names the TLS files. */
export const TLS_SETTING = '--tls-cert/--tls-key';

/** The settings that differ between two configurations, by option name. */
export function changedSettings(before: ProxyConfig, after: ProxyConfig): string[] {
  const names: Record<string, string> = {
    listen: '--listen',
    socket: '--socket',
    backend: '--backend',
    workers: '--workers',
    connectTimeoutMs: '--connect-timeout',
    drainTimeoutMs: '--drain-timeout',
    queryCacheType: '--query-cache-type',
    queryCacheSize: '--query-cache-size',
    queryCacheLimit: '--query-cache-limit',
    queryCacheTtlMs: '--query-cache-ttl',
    singleFlightWaitMs: '--single-flight-wait',
    deferTransactions: '--defer-transactions',
    adminUser: '--admin-user',
    adminPassword: '--admin-password',
    handshakeTimeoutMs: '--handshake-timeout',
    requireBackend: '--require-backend',
    binlog: '--binlog',
    binlogMaxLagMs: '--binlog-max-lag',
    binlogServerId: '--binlog-server-id',
    metrics: '--metrics',
    digests: '--digests',
    logFormat: '--log-format',
    tlsMode: '--tls',
    tls: TLS_SETTING,
    requireSecureTransport: '--require-secure-transport',
    backendTls: '--backend-tls',
    backendTlsCa: '--backend-tls-ca',
    backendTlsVerify: '--backend-tls-verify',
  };
  return Object.keys(names)
    .filter(
      (key) =>
        JSON.stringify(before[key as keyof ProxyConfig]) !==
        JSON.stringify(after[key as keyof ProxyConfig]),
    )
    .map((key) => names[key]!);
}

/** Wraps help text to the terminal width most people have, indented under its option. */
function wrap(text: string, indent: number, width = 100): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function optionHelp(name: string, help: string): string {
  const [first, ...rest] = wrap(help, 30);
  return [`  ${name.padEnd(28)}${first}`, ...rest.map((line) => ' '.repeat(30) + line)].join('\n');
}

export function proxyHelp(): string {
  const lines = proxyOptionSpecs.map(
    (spec) =>
      `${optionHelp(`--${spec.flag}${spec.value === '' ? '' : ` ${spec.value}`}`, spec.help)}\n${' '.repeat(30)}env ${spec.env}; default ${spec.fallback === '' ? 'none' : spec.fallback}`,
  );
  return [
    'Usage: nicecache proxy [options]',
    '',
    'Runs the caching proxy. Clients connect to --listen as if it were the server; the server at',
    '--backend authenticates them itself (nicecache holds no passwords).',
    '',
    'Options:',
    ...lines,
    optionHelp('--config FILE', 'a JSON object with any of the options above, e.g. {"workers": 4}'),
    `${' '.repeat(30)}env NICECACHE_CONFIG`,
    optionHelp('--version', 'print the version and exit'),
    optionHelp('--help', 'this text'),
    '',
    'Precedence: options, then environment, then config file, then defaults. Secrets (the admin',
    'password) belong in the environment or the config file: options are visible to every user',
    'of the machine in the process list, so nicecache warns when it gets one and blanks it there.',
    '',
    'Start-up fails (exit code 1, with the reason) when the port is held by another nicecache or',
    'another program, when the admin account cannot log in or lacks global SELECT, SHOW VIEW and',
    'TRIGGER, and, with --require-backend, when the backend cannot be reached.',
    '',
    'Signals:',
    optionHelp(
      'SIGTERM, SIGINT',
      'stop accepting, let running commands finish (--drain-timeout), exit 0',
    ),
    optionHelp(
      'SIGHUP, SIGUSR2',
      'logged and ignored: the configuration is read again and checked, and what differs is logged, but the settings in force stay until a restart',
    ),
    optionHelp('SIGUSR1', "ignored: Node's inspector is never opened"),
    '',
    "Errors a client gets from nicecache itself (the backend's own are relayed unchanged):",
    optionHelp(
      '1429 (HY000)',
      `"Can't connect to server on 'HOST:PORT' (111 "Connection refused")": the backend cannot be reached or did not greet within --connect-timeout`,
    ),
    optionHelp(
      '1043 (08S01)',
      '"Bad handshake", or TLS requested (nicecache does not offer TLS yet)',
    ),
    optionHelp('1156 (08S01)', 'a command packet nicecache cannot read'),
  ].join('\n');
}
