/**
 * Wire constants of the MySQL/MariaDB client/server protocol.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html
 * @see https://mariadb.com/kb/en/clientserver-protocol/
 */

/** Largest payload of one physical packet; a payload of exactly this size continues in the next. */
export const MAX_PACKET_PAYLOAD = 0xffffff;

/** First byte of a command packet. */
export const Command = {
  SLEEP: 0x00,
  QUIT: 0x01,
  INIT_DB: 0x02,
  QUERY: 0x03,
  FIELD_LIST: 0x04,
  CREATE_DB: 0x05,
  DROP_DB: 0x06,
  REFRESH: 0x07,
  SHUTDOWN: 0x08,
  STATISTICS: 0x09,
  PROCESS_INFO: 0x0a,
  CONNECT: 0x0b,
  PROCESS_KILL: 0x0c,
  DEBUG: 0x0d,
  PING: 0x0e,
  TIME: 0x0f,
  DELAYED_INSERT: 0x10,
  CHANGE_USER: 0x11,
  BINLOG_DUMP: 0x12,
  TABLE_DUMP: 0x13,
  CONNECT_OUT: 0x14,
  REGISTER_SLAVE: 0x15,
  STMT_PREPARE: 0x16,
  STMT_EXECUTE: 0x17,
  STMT_SEND_LONG_DATA: 0x18,
  STMT_CLOSE: 0x19,
  STMT_RESET: 0x1a,
  SET_OPTION: 0x1b,
  STMT_FETCH: 0x1c,
  DAEMON: 0x1d,
  BINLOG_DUMP_GTID: 0x1e,
  RESET_CONNECTION: 0x1f,
  /** MariaDB: COM_STMT_BULK_EXECUTE; its capability is not offered, see handshake.ts. */
  STMT_BULK_EXECUTE: 0xfa,
} as const;

/** Capability flags (the low 32 bits; MariaDB's extended bits are in {@link MariaDbCapability}). */
export const Capability = {
  /** MySQL: LONG_PASSWORD. MariaDB servers clear it to say "extended capabilities follow". */
  CLIENT_MYSQL: 0x00000001,
  FOUND_ROWS: 0x00000002,
  LONG_FLAG: 0x00000004,
  CONNECT_WITH_DB: 0x00000008,
  NO_SCHEMA: 0x00000010,
  COMPRESS: 0x00000020,
  ODBC: 0x00000040,
  LOCAL_FILES: 0x00000080,
  IGNORE_SPACE: 0x00000100,
  PROTOCOL_41: 0x00000200,
  INTERACTIVE: 0x00000400,
  SSL: 0x00000800,
  IGNORE_SIGPIPE: 0x00001000,
  TRANSACTIONS: 0x00002000,
  RESERVED: 0x00004000,
  SECURE_CONNECTION: 0x00008000,
  MULTI_STATEMENTS: 0x00010000,
  MULTI_RESULTS: 0x00020000,
  PS_MULTI_RESULTS: 0x00040000,
  PLUGIN_AUTH: 0x00080000,
  CONNECT_ATTRS: 0x00100000,
  PLUGIN_AUTH_LENENC_CLIENT_DATA: 0x00200000,
  CAN_HANDLE_EXPIRED_PASSWORDS: 0x00400000,
  SESSION_TRACK: 0x00800000,
  DEPRECATE_EOF: 0x01000000,
  OPTIONAL_RESULTSET_METADATA: 0x02000000,
  ZSTD_COMPRESSION: 0x04000000,
  QUERY_ATTRIBUTES: 0x08000000,
  MULTI_FACTOR_AUTH: 0x10000000,
  CAPABILITY_EXTENSION: 0x20000000,
  SSL_VERIFY_SERVER_CERT: 0x40000000,
  REMEMBER_OPTIONS: 0x80000000,
} as const;

/** MariaDB's extended capabilities, sent as a second 32-bit word (bit 0 here is bit 32 overall). */
export const MariaDbCapability = {
  PROGRESS: 0x01,
  COM_MULTI: 0x02,
  STMT_BULK_OPERATIONS: 0x04,
  EXTENDED_METADATA: 0x08,
  CACHE_METADATA: 0x10,
  BULK_UNIT_RESULTS: 0x20,
} as const;

/** Server status flags carried by OK and EOF packets. */
export const ServerStatus = {
  IN_TRANS: 0x0001,
  AUTOCOMMIT: 0x0002,
  MORE_RESULTS_EXISTS: 0x0008,
  NO_GOOD_INDEX_USED: 0x0010,
  NO_INDEX_USED: 0x0020,
  CURSOR_EXISTS: 0x0040,
  LAST_ROW_SENT: 0x0080,
  DB_DROPPED: 0x0100,
  NO_BACKSLASH_ESCAPES: 0x0200,
  METADATA_CHANGED: 0x0400,
  QUERY_WAS_SLOW: 0x0800,
  PS_OUT_PARAMS: 0x1000,
  IN_TRANS_READONLY: 0x2000,
  SESSION_STATE_CHANGED: 0x4000,
} as const;

/** The first payload byte that tells a reply packet's kind. */
export const PacketHeader = {
  OK: 0x00,
  AUTH_MORE_DATA: 0x01,
  LOCAL_INFILE: 0xfb,
  /** EOF, the OK that replaces it under DEPRECATE_EOF, or an auth switch request. */
  EOF: 0xfe,
  ERR: 0xff,
} as const;

/** COM_STMT_EXECUTE flags. */
export const CursorType = {
  NO_CURSOR: 0x00,
  READ_ONLY: 0x01,
} as const;

/** MariaDB sends progress reports as ERR packets with this errno when the client asked for them. */
export const PROGRESS_REPORT_ERRNO = 0xffff;

/**
 * The server's column and parameter type codes (MYSQL_TYPE_*): in column definitions, binary
 * protocol parameters and the binary log's table maps.
 */
export const ColumnType = {
  DECIMAL: 0,
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  NULL: 6,
  TIMESTAMP: 7,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  TIME: 11,
  DATETIME: 12,
  YEAR: 13,
  NEWDATE: 14,
  VARCHAR: 15,
  BIT: 16,
  TIMESTAMP2: 17,
  DATETIME2: 18,
  TIME2: 19,
  JSON: 245,
  NEWDECIMAL: 246,
  ENUM: 247,
  SET: 248,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  VAR_STRING: 253,
  STRING: 254,
  GEOMETRY: 255,
} as const;
