/**
 * One connection to the server as a replica: logs in with the admin account, learns what the
 * stream will look like (checksums, name case, the server's clock), declares itself a MariaDB
 * GTID-aware replica with heartbeats, and asks for the binary log from a GTID position with
 * COM_BINLOG_DUMP. From then on every packet of the connection is a binlog event, an EOF or an
 * error, handed over as it arrives.
 */
import { Command } from '../protocol/constants.ts';
import type { LowerCaseTableNames } from '../sql/table-ref.ts';
import { MysqlConnection, ServerError } from '../upstream/mysql-connection.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { AdminAccount } from '../proxy/schema-catalog.ts';
import { GtidPosition } from './gtid-position.ts';

/** The server has no binary log to follow: a setting, not a failure to retry. */
export class BinlogUnavailable extends Error {}

export interface DumpRequest {
  backend: BackendAddress;
  admin: AdminAccount;
  connectTimeoutMs: number;
  /** Where to start; null: the server's current position. */
  position: GtidPosition | null;
  /** This replica's server_id: unique among the server's replicas. */
  serverId: number;
  /** How often the server sends a heartbeat while it has no event to send. */
  heartbeatMs: number;
}

export interface BinlogDump {
  connection: MysqlConnection;
  /** The position the dump starts from. */
  position: GtidPosition;
  /** Events end with a CRC32 (binlog_checksum=CRC32). */
  checksum: boolean;
  lowerCaseTableNames: LowerCaseTableNames;
  version: string;
  /** The server's clock minus ours, in ms: event timestamps are the server's. */
  clockOffsetMs: number;
}

/** MariaDB's capability level for a replica that understands GTID events (MARIA_SLAVE_CAPABILITY_GTID). */
const MARIADB_SLAVE_CAPABILITY_GTID = 4;

/**
 * Opens the connection and sends the dump command; events then go to `onEvent`. Throws
 * BinlogUnavailable when log_bin is OFF, ServerError when the server refuses (privileges), or
 * the connection's error.
 */
export async function openBinlogDump(
  request: DumpRequest,
  onPacket: (payload: Buffer) => void,
  onEnd: (error: Error) => void,
): Promise<BinlogDump> {
  const connection = await MysqlConnection.connect({
    host: request.backend.host,
    port: request.backend.port,
    tls: request.backend.tls,
    user: request.admin.user,
    password: request.admin.password,
    database: null,
    connectTimeoutMs: request.connectTimeoutMs,
  });
  try {
    const before = Date.now();
    const [row] = await connection.queryRows(
      'SELECT @@global.log_bin, @@global.binlog_checksum, @@global.gtid_binlog_pos, ' +
        '@@lower_case_table_names, UNIX_TIMESTAMP(NOW(6)) * 1000, @@version',
    );
    const after = Date.now();
    const [logBin, checksum, current, lowerCase, serverNow, version] = row!;
    if (logBin !== '1') throw new BinlogUnavailable('the server has no binary log (log_bin=OFF)');
    const position = request.position ?? GtidPosition.parse(current ?? '');
    if (position === null) throw new Error(`unreadable @@gtid_binlog_pos '${current}'`);
    // The dump starts at the position's next transaction. Strict mode off and no duplicates
    // ignored: the server's defaults for a replica of several domains.
    const sets = [
      'SET @master_binlog_checksum = @@global.binlog_checksum',
      `SET @mariadb_slave_capability = ${MARIADB_SLAVE_CAPABILITY_GTID}`,
      `SET @master_heartbeat_period = ${request.heartbeatMs * 1_000_000}`,
      `SET @slave_connect_state = '${position.toString()}'`,
      'SET @slave_gtid_strict_mode = 0',
      'SET @slave_gtid_ignore_duplicates = 0',
    ];
    for (const sql of sets) {
      const result = await connection.query(sql);
      if (result.error) throw new ServerError(result.error);
    }
    // COM_BINLOG_DUMP: position 4 and no file name ask for the GTID position set above.
    const dump = Buffer.alloc(11);
    dump[0] = Command.BINLOG_DUMP;
    dump.writeUInt32LE(4, 1);
    dump.writeUInt16LE(0, 5);
    dump.writeUInt32LE(request.serverId >>> 0, 7);
    connection.stream(dump, onPacket, onEnd);
    return {
      connection,
      position,
      checksum: (checksum ?? 'NONE').toUpperCase() === 'CRC32',
      lowerCaseTableNames: Number(lowerCase) as LowerCaseTableNames,
      version: version ?? '',
      clockOffsetMs: Number(serverNow) - (before + after) / 2,
    };
  } catch (error) {
    connection.destroy();
    throw error;
  }
}
