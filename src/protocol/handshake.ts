/**
 * The connection phase: the server's greeting (Handshake v10) and the client's
 * HandshakeResponse41, read and rewritten in place so that client and server agree on
 * capabilities the proxy understands. Authentication itself is left to the two ends.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_v10.html
 * @see https://mariadb.com/kb/en/connection/
 */
import { Capability, MariaDbCapability } from './constants.ts';
import { readLenencBytes, readNulBytes } from './lenenc.ts';

/**
 * Capabilities the proxy removes from the greeting: TLS and zlib compression (the proxy speaks
 * both with clients itself, see offerCapability), zstd compression (which it does not speak), and
 * protocol variants whose framing the proxy does not follow (optional result set metadata, query
 * attributes, MariaDB's COM_MULTI, bulk execution, progress reports and metadata caching).
 */
export const STRIPPED_CAPABILITIES =
  Capability.SSL |
  Capability.COMPRESS |
  Capability.ZSTD_COMPRESSION |
  Capability.OPTIONAL_RESULTSET_METADATA |
  Capability.QUERY_ATTRIBUTES |
  Capability.MULTI_FACTOR_AUTH |
  Capability.SSL_VERIFY_SERVER_CERT;

export const STRIPPED_MARIADB_CAPABILITIES =
  MariaDbCapability.PROGRESS |
  MariaDbCapability.COM_MULTI |
  MariaDbCapability.STMT_BULK_OPERATIONS |
  MariaDbCapability.CACHE_METADATA |
  MariaDbCapability.BULK_UNIT_RESULTS;

/** What the proxy needs of the server's greeting. */
export interface Greeting {
  serverVersion: string;
  connectionId: number;
  capabilities: number;
  /** MariaDB's extended capabilities, 0 for MySQL servers. */
  mariaDbCapabilities: number;
  characterSet: number;
  status: number;
  authPluginName: string;
}

/** Offsets of the capability words inside a greeting payload. */
interface GreetingLayout {
  capabilitiesLow: number;
  capabilitiesHigh: number;
  mariaDbCapabilities: number;
}

function greetingLayout(payload: Buffer): GreetingLayout | null {
  if (payload[0] !== 10) return null;
  const version = readNulBytes(payload, 1);
  // connection id (4) + scramble part 1 (8) + filler (1)
  const capabilitiesLow = version.end + 13;
  // charset (1) + status (2) after the low word
  const capabilitiesHigh = capabilitiesLow + 5;
  // auth data length (1) + reserved (6) after the high word
  const mariaDbCapabilities = capabilitiesHigh + 9;
  if (mariaDbCapabilities + 4 > payload.length) return null;
  return { capabilitiesLow, capabilitiesHigh, mariaDbCapabilities };
}

export function parseGreeting(payload: Buffer): Greeting | null {
  const layout = greetingLayout(payload);
  if (layout === null) return null;
  const version = readNulBytes(payload, 1);
  const capabilities =
    (payload.readUInt16LE(layout.capabilitiesLow) |
      (payload.readUInt16LE(layout.capabilitiesHigh) << 16)) >>>
    0;
  const isMariaDb = (capabilities & Capability.CLIENT_MYSQL) === 0;
  let authPluginName = '';
  if (capabilities & Capability.PLUGIN_AUTH) {
    const authDataLength = payload[layout.capabilitiesHigh + 2]!;
    const scramble2 = Math.max(13, authDataLength - 8);
    authPluginName = readNulBytes(
      payload,
      layout.mariaDbCapabilities + 4 + scramble2,
    ).value.toString('latin1');
  }
  return {
    serverVersion: version.value.toString('latin1'),
    connectionId: payload.readUInt32LE(version.end),
    capabilities,
    mariaDbCapabilities: isMariaDb ? payload.readUInt32LE(layout.mariaDbCapabilities) : 0,
    characterSet: payload[layout.capabilitiesLow + 2]!,
    status: payload.readUInt16LE(layout.capabilitiesLow + 3),
    authPluginName,
  };
}

/**
 * Removes the stripped capabilities from a greeting payload, in place, and returns what the
 * client is now offered.
 */
export function restrictGreeting(payload: Buffer): Greeting | null {
  const layout = greetingLayout(payload);
  const greeting = parseGreeting(payload);
  if (layout === null || greeting === null) return null;
  greeting.capabilities = (greeting.capabilities & ~STRIPPED_CAPABILITIES) >>> 0;
  payload.writeUInt16LE(greeting.capabilities & 0xffff, layout.capabilitiesLow);
  payload.writeUInt16LE(greeting.capabilities >>> 16, layout.capabilitiesHigh);
  if ((greeting.capabilities & Capability.CLIENT_MYSQL) === 0) {
    greeting.mariaDbCapabilities =
      (greeting.mariaDbCapabilities & ~STRIPPED_MARIADB_CAPABILITIES) >>> 0;
    payload.writeUInt32LE(greeting.mariaDbCapabilities, layout.mariaDbCapabilities);
  }
  return greeting;
}

/**
 * Adds a capability of the proxy's own to a greeting restricted by restrictGreeting, in place:
 * CLIENT_SSL, or CLIENT_COMPRESS. The proxy itself speaks it with clients; the backend connection
 * stays as it is. Both live in the greeting's low capability word.
 */
export function offerCapability(payload: Buffer, greeting: Greeting, capability: number): void {
  const layout = greetingLayout(payload);
  if (layout === null) return;
  greeting.capabilities = (greeting.capabilities | capability) >>> 0;
  payload.writeUInt16LE(greeting.capabilities & 0xffff, layout.capabilitiesLow);
}

/**
 * Capabilities that only shape the login, the transport or the client library itself, never the
 * bytes of a reply after login: two sessions that differ only in these get the same replies.
 * (CLIENT_MYSQL is LONG_PASSWORD from a client; REMEMBER_OPTIONS is a libmysql setting that
 * mysqltest's default connection sends and its `connect` does not.)
 */
export const REPLY_NEUTRAL_CAPABILITIES =
  Capability.CLIENT_MYSQL |
  Capability.CONNECT_WITH_DB |
  Capability.SSL |
  Capability.COMPRESS |
  Capability.IGNORE_SIGPIPE |
  Capability.TRANSACTIONS |
  Capability.RESERVED |
  Capability.SECURE_CONNECTION |
  Capability.PLUGIN_AUTH |
  Capability.CONNECT_ATTRS |
  Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
  Capability.CAN_HANDLE_EXPIRED_PASSWORDS |
  Capability.MULTI_FACTOR_AUTH |
  Capability.SSL_VERIFY_SERVER_CERT |
  Capability.REMEMBER_OPTIONS;

/** What the proxy needs of the client's HandshakeResponse41. */
export interface HandshakeResponse {
  capabilities: number;
  mariaDbCapabilities: number;
  characterSet: number;
  user: string;
  /** The auth response's length: 0 when the client logs in without a password. */
  authLength: number;
  database: string | null;
}

/** An SSLRequest is the first 32 bytes of a HandshakeResponse41, sent alone, with CLIENT_SSL set. */
export function isSslRequest(payload: Buffer): boolean {
  return payload.length === 32 && (payload.readUInt32LE(0) & Capability.SSL) !== 0;
}

/**
 * Reads a HandshakeResponse41 and narrows its capabilities, in place, to those the greeting
 * offered: what the server then agrees to is exactly what the proxy understands.
 * Returns null for a payload too short or a pre-4.1 client.
 */
export function restrictHandshakeResponse(
  payload: Buffer,
  offered: Greeting,
): HandshakeResponse | null {
  if (payload.length < 33) return null;
  const requested = payload.readUInt32LE(0);
  if ((requested & Capability.PROTOCOL_41) === 0) return null;
  const capabilities = (requested & (offered.capabilities | Capability.CLIENT_MYSQL)) >>> 0;
  payload.writeUInt32LE(capabilities, 0);
  let mariaDbCapabilities = 0;
  if ((capabilities & Capability.CLIENT_MYSQL) === 0) {
    mariaDbCapabilities = (payload.readUInt32LE(28) & offered.mariaDbCapabilities) >>> 0;
    payload.writeUInt32LE(mariaDbCapabilities, 28);
  }
  const user = readNulBytes(payload, 32);
  let pos = user.end;
  let authLength: number;
  if (capabilities & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA) {
    // A length-encoded auth response: one that runs past the packet is a bad handshake.
    const auth = readLenencBytes(payload, pos);
    if (auth === null) return null;
    authLength = auth.value.length;
    pos = auth.end;
  } else if (capabilities & Capability.SECURE_CONNECTION) {
    authLength = payload[pos] ?? 0;
    pos += 1 + authLength;
  } else {
    const auth = readNulBytes(payload, pos);
    authLength = auth.value.length;
    pos = auth.end;
  }
  let database: string | null = null;
  if (capabilities & Capability.CONNECT_WITH_DB && pos < payload.length) {
    database = readNulBytes(payload, pos).value.toString('utf8');
  }
  return {
    capabilities,
    mariaDbCapabilities,
    characterSet: payload[8]!,
    user: user.value.toString('utf8'),
    authLength,
    database,
  };
}

/** The 20-byte scramble of a greeting: 8 bytes in part 1, the rest (NUL-terminated) in part 2. */
export function greetingScramble(payload: Buffer): Buffer {
  const version = readNulBytes(payload, 1);
  const part1 = payload.subarray(version.end + 4, version.end + 12);
  const part2Start = version.end + 31;
  return Buffer.concat([part1, payload.subarray(part2Start, part2Start + 12)]);
}

/** Builds a HandshakeResponse41 for a client that logs in with mysql_native_password. */
export function encodeHandshakeResponse(options: {
  capabilities: number;
  /** MariaDB's extended capabilities, written when CLIENT_MYSQL is clear. */
  mariaDbCapabilities?: number;
  characterSet: number;
  user: string;
  authResponse: Buffer;
  database: string | null;
  authPlugin: string;
}): Buffer {
  const fixed = Buffer.alloc(32);
  fixed.writeUInt32LE(options.capabilities, 0);
  fixed.writeUInt32LE(1 << 30, 4);
  fixed[8] = options.characterSet;
  if ((options.capabilities & Capability.CLIENT_MYSQL) === 0) {
    fixed.writeUInt32LE((options.mariaDbCapabilities ?? 0) >>> 0, 28);
  }
  const parts = [
    fixed,
    Buffer.from(`${options.user}\0`, 'utf8'),
    Buffer.from([options.authResponse.length]),
    options.authResponse,
  ];
  if (options.database !== null) parts.push(Buffer.from(`${options.database}\0`, 'utf8'));
  parts.push(Buffer.from(`${options.authPlugin}\0`, 'latin1'));
  return Buffer.concat(parts);
}
