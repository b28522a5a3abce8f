/** The `nicecache` command: parses arguments and starts things; no logic of its own. */
import { createLogger } from '../proxy/log.ts';
import { startProxy } from '../proxy/proxy-server.ts';
import { ConfigError, parseProxyConfig, proxyHelp } from './config.ts';
import { runBench } from './bench-command.ts';
import { runMariadb } from './mariadb-command.ts';

const usage = `Usage: nicecache <command> [options]

Commands:
  proxy    run the caching proxy in front of a MySQL or MariaDB server
  bench    the benchmark harness: sysbench's OLTP workloads against servers and nicecache
  mariadb  run a throwaway MariaDB server (for tests and benchmarks)
  help     this text

'nicecache <command> --help' explains a command's options.`;

async function runProxy(args: string[]): Promise<void> {
  const config = parseProxyConfig(args);
  if (config === null) {
    console.log(proxyHelp());
    return;
  }
  const log = createLogger();
  const proxy = await startProxy({
    host: config.listen.host,
    port: config.listen.port,
    backend: config.backend,
    workers: config.workers,
    connectTimeoutMs: config.connectTimeoutMs,
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
            admin:
              config.adminUser === null
                ? null
                : { user: config.adminUser, password: config.adminPassword },
          },
    log,
  });
  const { host, port } = config.backend;
  log.info(
    `nicecache listening on ${proxy.host}:${proxy.port} with ${config.workers} worker(s), fronting ${host}:${port}`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: draining connections`);
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
