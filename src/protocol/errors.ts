/**
 * Errors the proxy itself sends to clients: each with a stable code for logs and the errno and
 * SQLSTATE a MySQL client expects. Errors of the backend are never rewritten: they are relayed.
 * @see https://mariadb.com/kb/en/mariadb-error-code-reference/
 */
import type { ErrInfo } from './generic-packets.ts';

export const ProxyErrorCode = {
  BACKEND_UNREACHABLE: 'BACKEND_UNREACHABLE',
  BAD_HANDSHAKE: 'BAD_HANDSHAKE',
  TLS_NOT_OFFERED: 'TLS_NOT_OFFERED',
  ACCESS_DENIED: 'ACCESS_DENIED',
  MALFORMED_PACKET: 'MALFORMED_PACKET',
  BAD_COMPRESSED_PACKET: 'BAD_COMPRESSED_PACKET',
  UNKNOWN_COMMAND: 'UNKNOWN_COMMAND',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  SNAPSHOT_CHANGED: 'SNAPSHOT_CHANGED',
  NO_SUCH_TABLE: 'NO_SUCH_TABLE',
  NOT_SUPPORTED: 'NOT_SUPPORTED',
  NOT_GATHERED: 'NOT_GATHERED',
} as const;
export type ProxyErrorCode = (typeof ProxyErrorCode)[keyof typeof ProxyErrorCode];

const wire: Record<ProxyErrorCode, { errno: number; sqlState: string }> = {
  // ER_CONNECT_TO_FOREIGN_DATA_SOURCE, with the text of the client's own 2003. Errnos 2000-2999
  // are the client library's: libmariadb rejects a server packet carrying one as malformed.
  BACKEND_UNREACHABLE: { errno: 1429, sqlState: 'HY000' },
  // ER_HANDSHAKE_ERROR
  BAD_HANDSHAKE: { errno: 1043, sqlState: '08S01' },
  TLS_NOT_OFFERED: { errno: 1043, sqlState: '08S01' },
  // ER_ACCESS_DENIED_ERROR: MariaDB's answer to a login without TLS under require_secure_transport.
  ACCESS_DENIED: { errno: 1045, sqlState: '28000' },
  // ER_NET_PACKETS_OUT_OF_ORDER is what the server says of a packet it cannot read.
  MALFORMED_PACKET: { errno: 1156, sqlState: '08S01' },
  // ER_NET_UNCOMPRESS_ERROR: a compressed packet that does not inflate.
  BAD_COMPRESSED_PACKET: { errno: 1157, sqlState: '08S01' },
  // ER_UNKNOWN_COM_ERROR
  UNKNOWN_COMMAND: { errno: 1047, sqlState: '08S01' },
  // ER_SERVER_SHUTDOWN
  SHUTTING_DOWN: { errno: 1053, sqlState: '08S01' },
  // ER_CHECKREAD, which InnoDB raises (with innodb_snapshot_isolation) when a transaction's
  // snapshot no longer matches what it read, rolling the transaction back.
  SNAPSHOT_CHANGED: { errno: 1020, sqlState: 'HY000' },
  // ER_NO_SUCH_TABLE: a table of the nicecache schema the proxy does not have.
  NO_SUCH_TABLE: { errno: 1146, sqlState: '42S02' },
  // ER_NOT_SUPPORTED_YET: a statement over the proxy's own tables it does not evaluate.
  NOT_SUPPORTED: { errno: 1235, sqlState: '42000' },
  // ER_UNKNOWN_ERROR: the workers' figures did not all come in time.
  NOT_GATHERED: { errno: 1105, sqlState: 'HY000' },
};

/** An error of the proxy's own, ready to be put on the wire. */
export class ProxyError extends Error {
  readonly code: ProxyErrorCode;
  readonly errno: number;
  readonly sqlState: string;

  constructor(code: ProxyErrorCode, message: string) {
    super(message);
    this.code = code;
    this.errno = wire[code].errno;
    this.sqlState = wire[code].sqlState;
  }

  toErrInfo(): ErrInfo {
    return { errno: this.errno, sqlState: this.sqlState, message: this.message };
  }
}

/**
 * The text of error 1429 when the backend cannot be reached: the words a client prints for its
 * own 2003, so people recognise it, with the address it was tried on. The same text stops the
 * start with --require-backend.
 */
export function backendUnreachableMessage(address: string, error: NodeJS.ErrnoException): string {
  const reason = error.code === 'ECONNREFUSED' ? '111 "Connection refused"' : `"${error.message}"`;
  return `Can't connect to server on '${address}' (${reason})`;
}
