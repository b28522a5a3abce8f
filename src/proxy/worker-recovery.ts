/**
 * What the main thread does when a worker dies: the write marks its sessions held in the shared
 * registry would stay set for good (their tables never served from the cache again), so they are
 * released here, as the writes themselves would have released them.
 *
 * Not at once: the server may still be running a write the dead worker sent (one waiting for a
 * row lock, say), and it would commit after a release, under results stored meanwhile. With the
 * admin account the main thread kills the worker's backend connections and waits until the
 * server no longer lists them; only then are the marks released (their tables' numbers raised
 * first). Without an admin account nothing can be asked, and the marks are released at once.
 */
import type { InvalidationRegistry, ReleasedMarks } from '../cache/invalidation-registry.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { BackendAddress } from './client-session.ts';
import type { Logger } from './log.ts';
import type { AdminAccount } from './schema-catalog.ts';

/** How often the process list is read while killed connections wind down. */
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
  if (admin === null) {
    if (ids.length > 0)
      log.warn(
        `worker ${worker}: no admin account to ask the server whether its ${ids.length} connection(s) are done; releasing their marks now`,
      );
  } else if (ids.length > 0) {
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
    user: admin.user,
    password: admin.password,
    database: null,
  });
  try {
    for (const id of ids) {
      const result = await connection.query(`KILL CONNECTION ${id}`);
      if (result.error !== null && result.error.errno !== ER_NO_SUCH_THREAD) {
        // Without the privilege to kill, the server's own end of each statement is waited for.
        log.warn(`worker ${worker}: KILL CONNECTION ${id}: ${result.error.message}`);
      }
    }
    const list = ids.join(',');
    const reportAt = Date.now() + WIND_DOWN_MS;
    let reported = false;
    // The list shows other users' connections only with the PROCESS privilege.
    for (;;) {
      const rows = await connection.queryRows(
        `SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (${list})`,
      );
      if (rows.length === 0) return;
      if (!reported && Date.now() > reportAt) {
        reported = true;
        log.warn(`worker ${worker}: connection(s) ${rows.join(',')} still running; waiting`);
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
