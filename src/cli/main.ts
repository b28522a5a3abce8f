/** The `nicecache` command: parses arguments and starts things; no logic of its own. */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { createLogger } from '../proxy/log.ts';
import { startProxy } from '../proxy/proxy-server.ts';
import type { RunningProxy } from '../proxy/proxy-server.ts';
import { startMetricsServer } from '../metrics/metrics-server.ts';
import type { MetricsServer } from '../metrics/metrics-server.ts';
import type { Logger } from '../proxy/log.ts';
import {
  ConfigError,
  TLS_SETTING,
  backendTlsInForce,
  changedSettings,
  parseProxyConfig,
  proxyHelp,
} from './config.ts';
import type { TlsFiles } from './config.ts';
import type { TlsCredentials } from '../proxy/worker-protocol.ts';
import type { ServerTls } from '../upstream/mysql-connection.ts';
import type { ProxyConfig } from './config.ts';
import { runBench } from './bench-command.ts';
import { runMariadb } from './mariadb-command.ts';
import { version } from './version.ts';

// SIGUSR1 makes Node open its inspector on 127.0.0.1:9229, unauthenticated, in a process that
// holds the admin password and sees all traffic. The npm scripts start Node with
// --disable-sigusr1; a listener of our own does the same however Node was started.
let signalLog = createLogger();
process.on('SIGUSR1', () => signalLog.info('SIGUSR1 ignored (the inspector stays closed)'));

const usage = `Usage: nicecache <command> [options]

Commands:
  proxy    run the caching proxy in front of a MySQL or MariaDB server
  bench    the benchmark harness: sysbench's OLTP workloads against servers and nicecache
  mariadb  run a throwaway MariaDB server (for tests and benchmarks)
  help     this text

'nicecache <command> --help' explains a command's options; 'nicecache --version' prints the
version.`;

/**
 * A password among the arguments is in /proc/PID/cmdline for every local user to read. Say so,
 * and overwrite it there: Node's process.title rewrites the memory the kernel shows.
 */
function scrubPassword(args: string[], log: Logger): void {
  log.warn(
    '--admin-password on the command line is visible to every user of this machine (ps, /proc); give it in NICECACHE_ADMIN_PASSWORD or the config file instead',
  );
  const shown = args.map((arg, index) =>
    arg.startsWith('--admin-password=')
      ? '--admin-password=***'
      : args[index - 1] === '--admin-password'
        ? '***'
        : arg,
  );
  process.title = ['nicecache', 'proxy', ...shown].join(' ');
}

/**
 * SIGHUP and SIGUSR2 would end the process by default, with no drain. A running proxy does not
 * change its settings (workers, caches and sessions are built on them), so it reads the
 * configuration again, says what differs and that a restart applies it, and carries on. The one
 * exception is TLS: the certificate and key files are read again and given to the workers, for
 * the connections they accept from then on (a renewed certificate needs no restart).
 */
function onReloadSignal(
  signal: string,
  args: string[],
  running: ProxyConfig,
  proxy: RunningProxy | null,
  log: Logger,
): void {
  let fresh: ProxyConfig | null;
  try {
    fresh = parseProxyConfig(args);
  } catch (error) {
    log.error(
      `${signal}: the configuration does not parse: ${(error as Error).message}; nothing changes`,
    );
    return;
  }
  // TLS is the exception: its files are read again (a renewed certificate has the same path).
  let tlsReloaded = false;
  if (proxy !== null && running.tls !== null && fresh !== null && fresh.tls !== null) {
    try {
      proxy.reloadTls(readTlsCredentials(fresh.tls));
      tlsReloaded = true;
      log.info(
        `${signal}: TLS certificate and key read again from ${fresh.tls.certFile} and ${fresh.tls.keyFile}: connections from now on get them`,
      );
    } catch (error) {
      log.error(`${signal}: ${(error as Error).message}; TLS keeps the certificate in force`);
    }
  }
  const changed = (fresh === null ? [] : changedSettings(running, fresh)).filter(
    (name) => !(tlsReloaded && name === TLS_SETTING),
  );
  log.info(
    changed.length === 0
      ? `${signal}: configuration unchanged; nothing to do`
      : `${signal}: the configuration now differs in ${changed.join(', ')}; nicecache keeps the settings in force until it is restarted`,
  );
}

/** --backend-tls and how the server's certificate is checked; null when off. */
function serverTls(config: ProxyConfig): ServerTls | null {
  const mode = backendTlsInForce(config);
  if (mode === 'off') return null;
  return {
    required: mode === 'required',
    followsClient: mode === 'follow',
    ca:
      config.backendTlsCa === null ? null : readOptionFile(config.backendTlsCa, '--backend-tls-ca'),
    verify: config.backendTlsVerify,
  };
}

/** A file an option names: one that cannot be read is a refused start that says so. */
function readOptionFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${flag} ${path}: ${(error as Error).message}`);
  }
}

/**
 * The PEM files of --tls-cert and --tls-key, checked before any worker starts: a file that
 * cannot be read, or a key that does not match its certificate, is a refused start that says so.
 */
function readTlsCredentials(files: TlsFiles): TlsCredentials {
  const credentials = {
    cert: readOptionFile(files.certFile, '--tls-cert'),
    key: readOptionFile(files.keyFile, '--tls-key'),
  };
  try {
    createSecureContext(credentials);
  } catch (error) {
    throw new ConfigError(
      `--tls-cert ${files.certFile} with --tls-key ${files.keyFile}: ${(error as Error).message}`,
    );
  }
  return credentials;
}

async function runProxy(args: string[]): Promise<void> {
  if (args.includes('--version')) {
    console.log(`nicecache ${version}`);
    return;
  }
  const config = parseProxyConfig(args);
  if (config === null) {
    console.log(proxyHelp());
    return;
  }
  const log = createLogger({ format: config.logFormat });
  signalLog = log;
  if (config.adminPasswordOnCommandLine && config.adminPassword !== '') scrubPassword(args, log);
  // Before the start, so that neither signal can end a proxy that is starting either.
  let running: RunningProxy | null = null;
  for (const signal of ['SIGHUP', 'SIGUSR2'] as const) {
    process.on(signal, () => onReloadSignal(signal, args, config, running, log));
  }
  const tls =
    config.tls !== null
      ? readTlsCredentials(config.tls)
      : config.tlsMode === 'off'
        ? null
        : await selfSignedCredentials();
  const proxy = await startProxy({
    tls,
    host: config.listen.host,
    port: config.listen.port,
    socketPath: config.socket,
    backend: { ...config.backend, tls: serverTls(config) },
    workers: config.workers,
    connectTimeoutMs: config.connectTimeoutMs,
    handshakeTimeoutMs: config.handshakeTimeoutMs,
    requireBackend: config.requireBackend,
    requireSecureTransport: config.requireSecureTransport,
    digests: config.digests,
    version,
    drainTimeoutMs: config.drainTimeoutMs,
    cache:
      config.queryCacheSize === 0
        ? null
        : {
            type: config.queryCacheType,
            sizeBytes: config.queryCacheSize,
            limitBytes: config.queryCacheLimit,
            ttlMs: config.queryCacheTtlMs,
            singleFlightWaitMs: config.singleFlightWaitMs,
            deferTransactions: config.deferTransactions,
            admin:
              config.adminUser === null
                ? null
                : { user: config.adminUser, password: config.adminPassword },
          },
    binlog: {
      mode: config.binlog,
      maxLagMs: config.binlogMaxLagMs,
      serverId: config.binlogServerId,
    },
    log,
  });
  running = proxy;
  let metrics: MetricsServer | null = null;
  if (config.metrics !== null) {
    try {
      metrics = await startMetricsServer(
        config.metrics,
        {
          stats: proxy.stats,
          budgetBytes: config.queryCacheSize,
          follower: proxy.follower?.status ?? null,
          workerRestarts: () => proxy.workerRestarts(),
          digests: () => proxy.digests(),
        },
        log,
      );
    } catch (error) {
      await proxy.close();
      throw new Error(
        `--metrics ${config.metrics.host}:${config.metrics.port}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    log.info(
      `metrics on http://${metrics.host}:${metrics.port}/metrics, the live page on http://${metrics.host}:${metrics.port}/`,
    );
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: draining connections`);
    void metrics?.close();
    proxy.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: Error) => {
        log.error(`shutdown failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Only then the line that says the proxy is up: whoever reads it may signal at once.
  const { host, port } = config.backend;
  log.info(
    `nicecache listening on ${proxy.host}:${proxy.port} with ${config.workers} worker(s), fronting ${host}:${port}${config.socket === null ? '' : `, and on the Unix socket ${config.socket} (worker 0)`}; ${tlsOffered(config, tls)}`,
  );
  // Correct without one, but a cache that seldom hits: say why where it will be read.
  if (config.queryCacheSize !== 0 && config.adminUser === null) log.warn(WITHOUT_ADMIN);
}

/**
 * Without metadata the proxy cannot tell a view from a table, nor which tables take InnoDB's
 * snapshot (README, "Give nicecache an admin account").
 */
const WITHOUT_ADMIN =
  'no admin account (--admin-user): every write invalidates every cached result, and a REPEATABLE READ transaction that BEGIN started on the server gets every read from the server; see README, "Give nicecache an admin account"';

/** What the startup line says of TLS to clients. */
function tlsOffered(config: ProxyConfig, tls: TlsCredentials | null): string {
  if (tls === null) return 'TLS not offered (--tls off)';
  if (config.tls !== null) return `TLS offered with ${config.tls.certFile}`;
  const fingerprint = new X509Certificate(tls.cert).fingerprint256;
  return `TLS offered with a self-signed certificate made at start (SHA-256 ${fingerprint}; clients that verify the server need --tls-cert and --tls-key)`;
}

/**
 * A certificate for clients that ask for TLS when none is given, as MariaDB 11.4 makes one at
 * start: the connection is encrypted, though no client can tell the proxy from another. A new
 * key each start, never written to disk. The library is loaded only here.
 */
async function selfSignedCredentials(): Promise<TlsCredentials> {
  const { generate } = await import('selfsigned');
  const notBeforeDate = new Date();
  const pems = await generate([{ name: 'commonName', value: 'nicecache' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 10 * 365 * 24 * 3600 * 1000),
  });
  return { cert: pems.cert, key: pems.private };
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'proxy':
      return runProxy(rest);
    case 'mariadb':
      return runMariadb(rest);
    case 'bench':
      return runBench(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(usage);
      return;
    case '--version':
    case '-V':
    case 'version':
      console.log(`nicecache ${version}`);
      return;
    default:
      throw new ConfigError(`unknown command '${command}'\n\n${usage}`);
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  if (error instanceof ConfigError) {
    console.error(`nicecache: ${error.message}`);
    process.exit(2);
  }
  // The message says what to do (e.g. which package to install); the stack only with debug on.
  const detail =
    process.env['NICECACHE_DEBUG'] === '1' ? (error.stack ?? error.message) : error.message;
  console.error(`nicecache: ${detail}`);
  process.exit(1);
});
