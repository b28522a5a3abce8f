/**
 * What is checked once before the workers start, so that a configuration that cannot work stops
 * the start with the server's own words instead of a warning every few seconds and a cache that
 * silently never hits:
 * - the admin account (--admin-user) must log in and hold global SELECT, SHOW VIEW and TRIGGER,
 *   without which information_schema hides views' definitions and triggers (see
 *   upstream/schema-metadata.ts) and metadata-based invalidation cannot be trusted;
 * - with --require-backend, the backend must greet.
 * Without --require-backend an unreachable backend is only logged: the proxy starts, and each
 * client gets error 1429 until the backend answers.
 */
import { backendUnreachableMessage } from '../protocol/errors.ts';
import { globalPrivileges, currentAccount, probeGreeting } from '../upstream/backend-check.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { Logger } from './log.ts';
import type { AdminAccount } from './schema-catalog.ts';

/** What the schema metadata needs to see every view, trigger and foreign key. */
export const METADATA_PRIVILEGES = ['SELECT', 'SHOW VIEW', 'TRIGGER'] as const;

export class StartupError extends Error {}

export interface StartupCheckOptions {
  backend: BackendAddress;
  /** null: no metadata account to check. */
  admin: AdminAccount | null;
  requireBackend: boolean;
  connectTimeoutMs: number;
  log: Logger;
}

/**
 * Throws a StartupError for a setup that cannot work. Returns the admin account's global
 * privileges, or null when there is no admin account or the server could not be asked.
 */
export async function checkBackendAtStart(
  options: StartupCheckOptions,
): Promise<ReadonlySet<string> | null> {
  const { backend, admin, log } = options;
  const address = `${backend.host}:${backend.port}`;
  const outcome = await probeGreeting(backend.host, backend.port, options.connectTimeoutMs);
  if (outcome.kind !== 'greeted') {
    const reason =
      outcome.kind === 'refused'
        ? `the server at ${address} refuses connections: ${outcome.error.errno} (${outcome.error.sqlState}): ${outcome.error.message}`
        : backendUnreachableMessage(address, outcome.error);
    if (options.requireBackend) throw new StartupError(`${reason} (--require-backend)`);
    log.warn(
      `backend not available at start: ${reason}; clients get this error until it answers${admin === null ? '' : ', and the admin account is not checked'}`,
    );
    return null;
  }
  return admin === null ? null : await checkAdminAccount(backend, admin, options.connectTimeoutMs);
}

/** Does the account hold `privilege` on *.* (or everything)? */
export function holdsGlobally(privileges: ReadonlySet<string>, privilege: string): boolean {
  return privileges.has(privilege) || privileges.has('ALL PRIVILEGES') || privileges.has('ALL');
}

async function checkAdminAccount(
  backend: BackendAddress,
  admin: AdminAccount,
  connectTimeoutMs: number,
): Promise<ReadonlySet<string>> {
  let connection: MysqlConnection;
  try {
    connection = await MysqlConnection.connect({
      host: backend.host,
      port: backend.port,
      tls: backend.tls,
      user: admin.user,
      password: admin.password,
      database: null,
      connectTimeoutMs,
    });
  } catch (error) {
    throw new StartupError(
      `the admin account '${admin.user}' cannot log in to ${backend.host}:${backend.port}: ${(error as Error).message}. ` +
        'Check --admin-user and the password (NICECACHE_ADMIN_PASSWORD or the config file), or leave --admin-user out to run without metadata.',
    );
  }
  try {
    const held = await globalPrivileges(connection);
    const missing = METADATA_PRIVILEGES.filter((privilege) => !holdsGlobally(held, privilege));
    if (missing.length === 0) return held;
    const account = await currentAccount(connection);
    throw new StartupError(
      `the admin account ${account} lacks ${missing.join(', ')} on *.*, without which nicecache cannot see every view, trigger and foreign key. ` +
        `Grant them with: GRANT ${METADATA_PRIVILEGES.join(', ')} ON *.* TO ${account};`,
    );
  } finally {
    connection.close();
  }
}
