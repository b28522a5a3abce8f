/**
 * What the main thread does when a worker dies: the write marks its sessions held in the shared
 * registry would stay set for good (their tables never served from the cache again), so they are
 * released here, as the writes themselves would have released them.
 *
 * Not at once: the server may still be running a write the dead worker sent (one waiting for a
 * row lock, say), and it would commit after a release, under results stored meanwhile. So the
 * main thread, with the admin account, kills the worker's backend connections and waits until
 * the server no longer knows them; only then are the marks released (their tables' numbers
 * raised first). KILL doubles as the probe: the server answers "unknown thread" once a
 * connection is gone, whatever the account's privileges (without the privilege to kill, the
 * statement is waited for). Without an admin account nothing can be asked: the marks stay, which
 * is safe, and the log says so.
 */
import type { InvalidationRegistry, ReleasedMarks } from '../cache/invalidation-registry.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { Logger } from './log.ts';
import type { AdminAccount } from './schema-catalog.ts';

/** How often the server is asked again while killed connections wind down. */
const POLL_MS = 50;
/** After the server could not be asked, how long before asking again; doubled, up to the max. */
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 10_000;
/** A connection the server still lists after this long is reported (and still waited for). */
const WIND_DOWN_MS = 30_000;

const ER_NO_SUCH_THREAD = 1094;

export async function releaseDeadWorker(
  registry: InvalidationRegistry,
  worker: number,
  backend: BackendAddress,
  admin: AdminAccount | null,
  log: Logger,
): Promise<ReleasedMarks> {
  const { ids, overflowed } = registry.connectionsOf(worker);
  const held = registry.heldBy(worker);
  if (held === 0) return registry.releaseWorker(worker);
  if (admin === null) {
    log.warn(
      `worker ${worker} died holding ${held} write mark(s); without an admin account nicecache cannot tell when the server is done with its writes, so their tables are not cached again until the proxy restarts`,
    );
    return { slots: 0, everything: 0, schemaChanges: 0 };
  }
  for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
    try {
      await endConnections(ids, backend, admin, log, worker);
      break;
    } catch (error) {
      log.warn(
        `worker ${worker}: cannot end its backend connections (retrying in ${delay} ms): ${(error as Error).message}`,
      );
      await sleep(delay);
    }
  }
  if (overflowed)
    log.warn(`worker ${worker}: more connections than it could record; some may still run`);
  return registry.releaseWorker(worker);
}

/** Kills the connections and waits until the server no longer lists them. */
async function endConnections(
  ids: readonly number[],
  backend: BackendAddress,
  admin: AdminAccount,
  log: Logger,
  worker: number,
): Promise<void> {
  const connection = await MysqlConnection.connect({
    host: backend.host,
    port: backend.port,
    tls: backend.tls,
    user: admin.user,
    password: admin.password,
    database: null,
  });
  try {
    let running = [...ids];
    const reportAt = Date.now() + WIND_DOWN_MS;
    let reported = false;
    for (;;) {
      const still: number[] = [];
      for (const id of running) {
        const result = await connection.query(`KILL CONNECTION ${id}`);
        if (result.error?.errno === ER_NO_SUCH_THREAD) continue;
        // Killed and winding down, or not ours to kill (its statement is waited for).
        still.push(id);
      }
      running = still;
      if (running.length === 0) return;
      if (!reported && Date.now() > reportAt) {
        reported = true;
        log.warn(`worker ${worker}: connection(s) ${running.join(',')} still running; waiting`);
      }
      await sleep(POLL_MS);
    }
  } finally {
    connection.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
