/**
 * `nicecache mariadb`: starts a private, throwaway MariaDB (own temp datadir, free port, root
 * with an empty password, database `test`), prints where it listens, and removes it all on
 * SIGTERM or SIGINT. CI uses it when no usable server runs; benchmarks use the same launcher.
 */
import { parseArgs } from 'node:util';
import { startEphemeralServer } from '../upstream/ephemeral-server.ts';
import type { ServerOptionValue } from '../upstream/ephemeral-server.ts';
import { ConfigError } from './config.ts';

export const mariadbHelp = `Usage: nicecache mariadb [--set NAME=VALUE ...] [--port-file FILE]

Starts a throwaway MariaDB server on a free port of 127.0.0.1 and keeps it running until
SIGTERM or SIGINT, then stops it and deletes its data directory.

Options:
  --set NAME=VALUE   a server option, e.g. --set query_cache_type=1 --set query_cache_size=100M
  --port-file FILE   also write the port to FILE once the server answers
  --help             this text`;

export async function runMariadb(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        set: { type: 'string', multiple: true },
        'port-file': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  if (parsed.values.help) {
    console.log(mariadbHelp);
    return;
  }
  const serverOptions: Record<string, ServerOptionValue> = {};
  for (const setting of parsed.values.set ?? []) {
    const eq = setting.indexOf('=');
    if (eq <= 0) throw new ConfigError(`--set: expected NAME=VALUE, got '${setting}'`);
    serverOptions[setting.slice(0, eq)] = setting.slice(eq + 1);
  }
  const server = await startEphemeralServer({ serverOptions });
  const portFile = parsed.values['port-file'];
  if (portFile !== undefined) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(portFile, `${server.port}\n`);
  }
  console.error(
    `info  mariadb ready on ${server.host}:${server.port} (pid ${server.pid}, datadir ${server.datadir})`,
  );
  const stop = (): void => {
    server.stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`nicecache: stopping mariadb failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The launcher does not keep the process alive by itself; this command exists to do so.
  setInterval(() => {}, 1 << 30);
}
