/**
 * The binary log events the follower reads, and only the parts of them invalidation needs: the
 * common header, a table map's name, a row event's table id (its rows' keys: row-keys.ts), a query
 * event's schema, sql_mode and text, a GTID event's position. Every reader takes the event's
 * payload as it came from the dump (the leading OK byte already removed) and is bounds-checked:
 * an event it cannot read yields null, and the follower then invalidates everything.
 * @see https://mariadb.com/kb/en/replication-protocol/
 */
import { crc32, inflateSync } from 'node:zlib';

export const EVENT_HEADER_LENGTH = 19;
export const CHECKSUM_LENGTH = 4;

export const EventType = {
  QUERY: 2,
  ROTATE: 4,
  FORMAT_DESCRIPTION: 15,
  XID: 16,
  TABLE_MAP: 19,
  WRITE_ROWS_V1: 23,
  UPDATE_ROWS_V1: 24,
  DELETE_ROWS_V1: 25,
  HEARTBEAT: 27,
  WRITE_ROWS_V2: 30,
  UPDATE_ROWS_V2: 31,
  DELETE_ROWS_V2: 32,
  ANNOTATE_ROWS: 160,
  BINLOG_CHECKPOINT: 161,
  GTID: 162,
  GTID_LIST: 163,
  START_ENCRYPTION: 164,
  QUERY_COMPRESSED: 165,
  WRITE_ROWS_COMPRESSED_V1: 166,
  UPDATE_ROWS_COMPRESSED_V1: 167,
  DELETE_ROWS_COMPRESSED_V1: 168,
  WRITE_ROWS_COMPRESSED: 169,
  UPDATE_ROWS_COMPRESSED: 170,
  DELETE_ROWS_COMPRESSED: 171,
} as const;

/** Row events, of every version and MariaDB's compressed ones (whose rows are not read). */
export function isRowEvent(type: number): boolean {
  return (
    (type >= EventType.WRITE_ROWS_V1 && type <= EventType.DELETE_ROWS_V1) ||
    (type >= EventType.WRITE_ROWS_V2 && type <= EventType.DELETE_ROWS_V2) ||
    (type >= EventType.WRITE_ROWS_COMPRESSED_V1 && type <= EventType.DELETE_ROWS_COMPRESSED)
  );
}

export interface EventHeader {
  /** Seconds since the epoch when the statement began on the server. */
  timestamp: number;
  type: number;
  serverId: number;
  size: number;
  /** Where the next event starts in the server's binlog file. */
  nextPosition: number;
  flags: number;
}

/** The header's fields, or null when the event is shorter than a header or than it says. */
export function readEventHeader(event: Buffer): EventHeader | null {
  if (event.length < EVENT_HEADER_LENGTH) return null;
  const size = event.readUInt32LE(9);
  if (size !== event.length) return null;
  return {
    timestamp: event.readUInt32LE(0),
    type: event[4]!,
    serverId: event.readUInt32LE(5),
    size,
    nextPosition: event.readUInt32LE(13),
    flags: event.readUInt16LE(17),
  };
}

/** Does the event's CRC32 trailer match its bytes? */
export function checksumMatches(event: Buffer): boolean {
  if (event.length < EVENT_HEADER_LENGTH + CHECKSUM_LENGTH) return false;
  const end = event.length - CHECKSUM_LENGTH;
  return crc32(event.subarray(0, end)) === event.readUInt32LE(end);
}

/** A format description event's checksum algorithm: 0 none, 1 CRC32 (its last 5 bytes). */
export function formatChecksumAlgorithm(event: Buffer): number | null {
  // Header, binlog version (2), server version (50), create time (4), header length (1), then
  // the post-header lengths, the algorithm byte and the checksum itself.
  if (event.length < EVENT_HEADER_LENGTH + 57 + 5) return null;
  return event[event.length - 5]!;
}

/** A table id: 6 bytes, little-endian, at the start of a table map's or row event's post-header. */
export function readTableId(event: Buffer): number | null {
  if (event.length < EVENT_HEADER_LENGTH + 6) return null;
  return event.readUIntLE(EVENT_HEADER_LENGTH, 6);
}

export interface TableMap {
  tableId: number;
  schema: string;
  table: string;
}

/** A table map: the id and the name it stands for in the row events that follow. */
export function readTableMap(event: Buffer, bodyEnd: number): TableMap | null {
  const tableId = readTableId(event);
  // Post-header: table id (6) and flags (2); then length-prefixed, NUL-terminated names.
  let at = EVENT_HEADER_LENGTH + 8;
  if (tableId === null || at >= bodyEnd) return null;
  const schemaLength = event[at]!;
  const schemaStart = at + 1;
  at = schemaStart + schemaLength + 1;
  if (at >= bodyEnd) return null;
  const tableLength = event[at]!;
  const tableStart = at + 1;
  if (tableStart + tableLength > bodyEnd) return null;
  // Latin-1, one character per byte: the names' UTF-8 bytes in the form the router and the
  // schema metadata key tables by (see name-encoding.ts).
  return {
    tableId,
    schema: event.toString('latin1', schemaStart, schemaStart + schemaLength),
    table: event.toString('latin1', tableStart, tableStart + tableLength),
  };
}

export interface QueryEvent {
  /** The default database the statement ran in ('' for none). */
  schema: string;
  /** The session's sql_mode, or null when the status variables could not be read up to it. */
  sqlMode: bigint | null;
  /**
   * The collation id of the session's character_set_client, which the server read the text in;
   * null when the status variables could not be read up to it.
   */
  clientCollation: number | null;
  /** The statement text as the server logged it. */
  sql: string;
}

/**
 * Query status variable codes: those the server writes before the character set (MariaDB's
 * Query_log_event::write: flags, sql_mode, catalog, auto_increment, then the character set).
 */
const Q_FLAGS2 = 0;
const Q_SQL_MODE = 1;
/** Before MySQL 5.0.4: length, name, NUL. */
const Q_CATALOG = 2;
const Q_AUTO_INCREMENT = 3;
/** character_set_client, collation_connection, collation_server: 2 bytes each. */
const Q_CHARSET = 4;
/** Length, name. */
const Q_CATALOG_NZ = 6;

/** sql_mode's bits (the server's MODE_* flags): ANSI_QUOTES is 4, NO_BACKSLASH_ESCAPES 1 << 20. */
export const SQL_MODE_ANSI_QUOTES = 1n << 2n;
export const SQL_MODE_NO_BACKSLASH_ESCAPES = 1n << 20n;

/**
 * A query event (or MariaDB's compressed one): post-header thread id (4), execution time (4),
 * schema length (1), error code (2), status variables' length (2); then the status variables,
 * the schema and a NUL, then the statement to the end of the body.
 */
export function readQueryEvent(
  event: Buffer,
  bodyEnd: number,
  compressed: boolean,
): QueryEvent | null {
  const post = EVENT_HEADER_LENGTH;
  if (bodyEnd < post + 13) return null;
  const schemaLength = event[post + 8]!;
  const statusLength = event.readUInt16LE(post + 11);
  const statusStart = post + 13;
  const schemaStart = statusStart + statusLength;
  const sqlStart = schemaStart + schemaLength + 1;
  if (sqlStart > bodyEnd) return null;
  const sqlBytes = event.subarray(sqlStart, bodyEnd);
  let sql: string;
  if (compressed) {
    const inflated = inflateCompressed(sqlBytes);
    if (inflated === null) return null;
    sql = inflated.toString('latin1');
  } else sql = sqlBytes.toString('latin1');
  // Read as the router reads a client's statement: byte by byte (the client's character set is
  // not looked up, so no non-ASCII name in it is resolved); the schema's name in metadata form.
  const status = readStatusVariables(event, statusStart, schemaStart);
  return {
    schema: event.toString('latin1', schemaStart, schemaStart + schemaLength),
    sqlMode: status.sqlMode,
    clientCollation: status.clientCollation,
    sql,
  };
}

/**
 * sql_mode and the client's character set from the status variables, walked code by code up to
 * the character set. A code this reader does not know has a length it does not assume: what
 * comes after it is then unknown (null), as is what the event does not carry.
 */
function readStatusVariables(
  event: Buffer,
  from: number,
  to: number,
): { sqlMode: bigint | null; clientCollation: number | null } {
  let sqlMode: bigint | null = null;
  let at = from;
  while (at < to) {
    const code = event[at]!;
    if (code === Q_FLAGS2) at += 5;
    else if (code === Q_SQL_MODE) {
      if (at + 9 > to) break;
      sqlMode = event.readBigUInt64LE(at + 1);
      at += 9;
    } else if (code === Q_CATALOG) {
      if (at + 1 >= to) break;
      at += 2 + event[at + 1]! + 1;
    } else if (code === Q_CATALOG_NZ) {
      if (at + 1 >= to) break;
      at += 2 + event[at + 1]!;
    } else if (code === Q_AUTO_INCREMENT) at += 5;
    else if (code === Q_CHARSET) {
      if (at + 7 > to) break;
      return { sqlMode, clientCollation: event.readUInt16LE(at + 1) };
    } else break;
  }
  return { sqlMode, clientCollation: null };
}

/**
 * Collation ids (MariaDB's and MySQL's) of the client character sets in which a multi-byte
 * character may end in a byte that reads as a backslash or a quote: big5, cp932, gbk, sjis and
 * MySQL's gb18030. A statement logged in one of them may not read, byte by byte, as the server
 * read it.
 */
const AMBIGUOUS_CLIENT_COLLATIONS: ReadonlySet<number> = new Set(
  Object.values({
    big5: [1, 84, 1025, 1108],
    sjis: [13, 88, 1037, 1112],
    gbk: [28, 87, 1052, 1111],
    cp932: [95, 96, 1119, 1120],
    gb18030: [248, 249, 250],
  }).flat(),
);

/**
 * Can the statement's bytes be read one by one, as the classifier reads them, and mean what the
 * server read? Not when its character set is one of the above, or is not known.
 */
export function readsByteByByte(clientCollation: number | null): boolean {
  return clientCollation !== null && !AMBIGUOUS_CLIENT_COLLATIONS.has(clientCollation);
}

/**
 * MariaDB's compressed statement, or compressed rows of a row event: one byte whose low three
 * bits say how many bytes of uncompressed length follow (big-endian), then a zlib stream. Null
 * when it does not inflate to that length.
 */
export function inflateCompressed(bytes: Buffer): Buffer | null {
  if (bytes.length < 1) return null;
  const lengthBytes = bytes[0]! & 0x07;
  if (lengthBytes === 0 || lengthBytes > 4 || bytes.length < 1 + lengthBytes) return null;
  const expected = bytes.readUIntBE(1, lengthBytes);
  try {
    // Never more than it says: a stream that would inflate further fails here.
    const inflated = inflateSync(bytes.subarray(1 + lengthBytes), {
      maxOutputLength: Math.max(1, expected),
    });
    return inflated.length === expected ? inflated : null;
  } catch {
    return null;
  }
}

export interface GtidEvent {
  domain: number;
  serverId: number;
  sequence: bigint;
  /** The group is one statement with no BEGIN or COMMIT around it (DDL, non-transactional). */
  standalone: boolean;
}

/** FL_STANDALONE in a GTID event's flags. */
const GTID_STANDALONE = 1;

/** MariaDB's GTID event: sequence number (8), domain id (4), flags (1) after the header. */
export function readGtidEvent(
  event: Buffer,
  header: EventHeader,
  bodyEnd: number,
): GtidEvent | null {
  if (bodyEnd < EVENT_HEADER_LENGTH + 13) return null;
  return {
    sequence: event.readBigUInt64LE(EVENT_HEADER_LENGTH),
    domain: event.readUInt32LE(EVENT_HEADER_LENGTH + 8),
    serverId: header.serverId,
    standalone: (event[EVENT_HEADER_LENGTH + 12]! & GTID_STANDALONE) !== 0,
  };
}

/** A rotate event's post-header: the offset (8) the next file starts at; then its name. */
export function readRotateFileName(event: Buffer, bodyEnd: number): string | null {
  const nameStart = EVENT_HEADER_LENGTH + 8;
  if (bodyEnd <= nameStart) return null;
  return event.toString('latin1', nameStart, bodyEnd);
}
