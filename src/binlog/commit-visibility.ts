/**
 * Asks the server how far into its binary log the storage engines have made commits visible.
 *
 * The server sends a replica a transaction once it is in the binary log, before InnoDB makes it
 * visible (MariaDB's group commit writes the log, wakes the dump threads, then runs each
 * engine's commit in log order). A result read in between would show the old rows, so the
 * follower keeps a commit's tables in flight until the server confirms the commit is visible.
 *
 * The confirmation: `START TRANSACTION WITH CONSISTENT SNAPSHOT` takes its read view under the
 * same lock as the engines' ordered commits, and MariaDB reports the binary log position that
 * view corresponds to in the session's Binlog_snapshot_file and Binlog_snapshot_position. Every
 * transaction that ends at or before that position is visible to that view and so to every
 * read view opened after it.
 * @see https://mariadb.com/kb/en/enhancements-for-start-transaction-with-consistent-snapshot/
 */
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { AdminAccount } from '../proxy/schema-catalog.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';

/**
 * A place in the binary log as one number: the file's sequence number (its name's extension)
 * times 2^32 plus the offset in it. Exact while the sequence stays below 2^21.
 */
export type BinlogCoordinate = number;

const FILE_SPAN = 2 ** 32;

/** The sequence number of a binlog file name (`binlog.000042` → 42); null when it has none. */
export function binlogFileNumber(name: string): number | null {
  const dot = name.lastIndexOf('.');
  if (dot < 0 || dot === name.length - 1) return null;
  let number = 0;
  for (let i = dot + 1; i < name.length; i++) {
    const digit = name.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    number = number * 10 + digit;
  }
  return number;
}

export function binlogCoordinate(fileNumber: number, offset: number): BinlogCoordinate {
  return fileNumber * FILE_SPAN + offset;
}

export interface VisibilityOptions {
  backend: BackendAddress;
  admin: AdminAccount;
  connectTimeoutMs: number;
}

/** One connection, opened when first needed and again after it is lost. */
export class CommitVisibility {
  readonly #options: VisibilityOptions;
  #connection: MysqlConnection | null = null;
  #closed = false;

  constructor(options: VisibilityOptions) {
    this.#options = options;
  }

  /** The coordinate up to which every commit is visible to reads that start from now on. */
  async visibleThrough(): Promise<BinlogCoordinate> {
    const connection = await this.#connect();
    try {
      // One round trip, one write: the server stops at the first statement that fails.
      const rows = await connection.queryRows(
        "START TRANSACTION WITH CONSISTENT SNAPSHOT; SHOW SESSION STATUS LIKE 'Binlog_snapshot_%'; ROLLBACK",
      );
      let file: string | null = null;
      let offset = NaN;
      for (const [name, value] of rows) {
        const lowered = name?.toLowerCase();
        if (lowered === 'binlog_snapshot_file') file = value ?? null;
        else if (lowered === 'binlog_snapshot_position') offset = Number(value);
      }
      const fileNumber = file === null ? null : binlogFileNumber(file);
      if (fileNumber === null || !Number.isSafeInteger(offset)) {
        throw new Error(
          `the server reports no binlog position for a consistent snapshot (file '${file ?? ''}')`,
        );
      }
      return binlogCoordinate(fileNumber, offset);
    } catch (error) {
      // Whatever state the session is in, a new one is opened for the next check.
      this.#drop(connection);
      throw error;
    }
  }

  close(): void {
    this.#closed = true;
    const connection = this.#connection;
    if (connection !== null) this.#drop(connection);
  }

  async #connect(): Promise<MysqlConnection> {
    if (this.#closed) throw new Error('stopped');
    const open = this.#connection;
    if (open !== null && !open.closed) return open;
    const options = this.#options;
    const connection = await MysqlConnection.connect({
      host: options.backend.host,
      port: options.backend.port,
      tls: options.backend.tls,
      user: options.admin.user,
      password: options.admin.password,
      database: null,
      connectTimeoutMs: options.connectTimeoutMs,
    });
    if (this.#closed) {
      connection.destroy();
      throw new Error('stopped');
    }
    this.#connection = connection;
    return connection;
  }

  #drop(connection: MysqlConnection): void {
    if (this.#connection === connection) this.#connection = null;
    connection.destroy();
  }
}
