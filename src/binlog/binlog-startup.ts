/**
 * What --binlog decides at start: follow the server's binary log, refuse to start (`on`, when it
 * cannot be followed, naming what to enable or grant), or run without it and say so once
 * (`auto`, at info level: it is how the server is set up, not a fault). A server that cannot be
 * reached at start is followed once it answers; hits wait.
 */
import { randomInt } from 'node:crypto';
import { CacheStats } from '../cache/cache-stats.ts';
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import type { BinlogMode } from '../cli/config.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { Logger } from '../proxy/log.ts';
import { SchemaCatalog } from '../proxy/schema-catalog.ts';
import type { AdminAccount } from '../proxy/schema-catalog.ts';
import { StartupError } from '../proxy/startup-checks.ts';
import { ServerError } from '../upstream/mysql-connection.ts';
import { BinlogUnavailable } from './binlog-connection.ts';
import { BinlogFollower } from './binlog-follower.ts';
import { FollowerState, FollowerStatus } from './follower-status.ts';

export interface BinlogSettings {
  mode: BinlogMode;
  maxLagMs: number;
  /** null: random, from 2^31 up (replicas configured by hand use small numbers). */
  serverId: number | null;
}

export interface BinlogStartOptions {
  settings: BinlogSettings;
  backend: BackendAddress;
  admin: AdminAccount | null;
  connectTimeoutMs: number;
  /** A view of the registry on the follower's own region. */
  registry: InvalidationRegistry;
  status: FollowerStatus;
  stats: CacheStats | null;
  log: Logger;
}

const UNSEEN =
  'writes made on the server other than through nicecache are not seen (cached results stay as they were)';
const HOW =
  'start the server with log_bin (any binlog_format) and give the admin account REPLICATION SLAVE';

/** ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR. */
const PRIVILEGE_ERRORS: ReadonlySet<number> = new Set([1227, 1045, 1044]);

export async function startBinlogFollower(
  options: BinlogStartOptions,
): Promise<BinlogFollower | null> {
  const { settings, log, admin } = options;
  if (settings.mode === 'off') return null;
  if (admin === null) {
    if (settings.mode === 'on')
      throw new StartupError(
        `--binlog on needs --admin-user: an account with REPLICATION SLAVE (and SELECT, SHOW VIEW, TRIGGER on *.*) that reads the binary log`,
      );
    options.registry.setWritesElsewhereSeen(true);
    log.info(
      `binlog: ${UNSEEN}: there is no --admin-user to follow the binary log with; to see them, ${HOW} and pass --admin-user`,
    );
    return null;
  }
  const catalog = new SchemaCatalog(options.registry, options.backend, admin, log);
  catalog.warmUp();
  const follower = new BinlogFollower({
    backend: options.backend,
    admin,
    connectTimeoutMs: options.connectTimeoutMs,
    serverId: settings.serverId ?? 2 ** 31 + randomInt(2 ** 30),
    maxLagMs: settings.maxLagMs,
    registry: options.registry,
    catalog,
    status: options.status,
    stats: options.stats,
    log,
    // A server down at start may turn out to have no binary log: auto then runs without.
    givesUp: (error) => {
      const refusal = settings.mode === 'auto' ? refusalOf(error, admin) : null;
      if (refusal !== null) log.info(`binlog: ${UNSEEN}: ${refusal}`);
      return refusal !== null;
    },
  });
  try {
    await follower.start();
    log.info(
      `binlog: following the server's binary log; hits stop whenever it is more than ${settings.maxLagMs} ms behind`,
    );
    return follower;
  } catch (error) {
    const refusal = refusalOf(error as Error, admin);
    if (refusal === null) {
      // Not reachable now: followed once the server answers; until then no hits.
      log.warn(
        `binlog: cannot reach the server's binary log yet (${(error as Error).message}); no hits until it is followed`,
      );
      follower.startRetrying();
      return follower;
    }
    follower.stop();
    catalog.stop();
    options.registry.setWritesElsewhereSeen(true);
    options.status.state = FollowerState.OFF;
    if (settings.mode === 'on') throw new StartupError(`--binlog on: ${refusal}`);
    log.info(`binlog: ${UNSEEN}: ${refusal}`);
    return null;
  }
}

/** Why the binary log cannot be followed by this setup, or null for a failure to retry. */
function refusalOf(error: Error, admin: AdminAccount): string | null {
  if (error instanceof BinlogUnavailable)
    return `${error.message}; start the server with log_bin (any binlog_format), or run with --binlog off`;
  if (error instanceof ServerError && PRIVILEGE_ERRORS.has(error.errno))
    return `the admin account '${admin.user}' may not read the binary log (${error.message}); grant it with GRANT REPLICATION SLAVE ON *.* TO <the admin account>`;
  return null;
}
