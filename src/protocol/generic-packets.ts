/**
 * OK, ERR and EOF packets.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_err_packet.html
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_eof_packet.html
 */
import { PacketHeader } from './constants.ts';
import { lenencIntEnd, writeLenencInt, lenencIntSize } from './lenenc.ts';
import { encodePacket } from './packet.ts';

/** Status flags and warning count of an OK packet (0x00 or 0xFE header) or an EOF packet. */
export interface StatusInfo {
  status: number;
  warnings: number;
}

/** An EOF packet: 0xFE and fewer than 9 bytes; anything longer with 0xFE is an OK or a row. */
export function isEofPayload(payload: Buffer): boolean {
  return payload.length < 9 && payload[0] === PacketHeader.EOF;
}

/**
 * Reads status and warnings from a terminating packet: an EOF packet when `eofFormat`, otherwise
 * an OK packet. Returns null when the payload is too short to hold them.
 */
export function readStatus(payload: Buffer, eofFormat: boolean): StatusInfo | null {
  const at = statusOffset(payload, eofFormat);
  if (at < 0) return eofFormat && payload.length === 1 ? { status: 0, warnings: 0 } : null;
  return {
    status: payload.readUInt16LE(at),
    warnings: payload.readUInt16LE(eofFormat ? 1 : at + 2),
  };
}

/** Where readStatus() finds the 2-byte status field in the same payload, or -1. */
export function statusOffset(payload: Buffer, eofFormat: boolean): number {
  return statusOffsetIn(payload, 0, payload.length, eofFormat);
}

/**
 * statusOffset of the payload in `bytes[from, to)` (relative to `from`), read where it lies:
 * a reply's terminators are read with no view made of them.
 */
export function statusOffsetIn(
  bytes: Buffer,
  from: number,
  to: number,
  eofFormat: boolean,
): number {
  if (eofFormat) return to - from >= 5 ? 3 : -1;
  const affectedEnd = lenencIntEnd(bytes, from + 1, to);
  if (affectedEnd < 0) return -1;
  const insertIdEnd = lenencIntEnd(bytes, affectedEnd, to);
  return insertIdEnd < 0 || insertIdEnd + 4 > to ? -1 : insertIdEnd - from;
}

/** An ERR packet's parts. */
export interface ErrInfo {
  errno: number;
  sqlState: string;
  message: string;
}

export function readErr(payload: Buffer): ErrInfo {
  const errno = payload.length >= 3 ? payload.readUInt16LE(1) : 0;
  if (payload[3] === 0x23 /* '#' */ && payload.length >= 9) {
    return {
      errno,
      sqlState: payload.toString('latin1', 4, 9),
      message: payload.toString('utf8', 9),
    };
  }
  return { errno, sqlState: 'HY000', message: payload.toString('utf8', 3) };
}

/**
 * Encodes an ERR packet, always with the '#' SQLSTATE marker, also before the handshake where the
 * server itself leaves it out ("\xff\x10\x04Too many connections"): every client reads the
 * marker there (libmariadb and the mariadb CLI, mysql2, the mariadb connector, PyMySQL), and
 * PyMySQL up to 1.0 (Debian 12's) skips six bytes after the errno whether they are a marker or
 * not, so without one it shows the server's own refusal as "ny connections".
 */
export function encodeErr(err: ErrInfo, sequenceId: number): Buffer {
  const message = Buffer.from(err.message, 'utf8');
  const payload = Buffer.allocUnsafe(9 + message.length);
  payload[0] = PacketHeader.ERR;
  payload.writeUInt16LE(err.errno, 1);
  payload[3] = 0x23;
  payload.write(err.sqlState.padEnd(5, '0').slice(0, 5), 4, 'latin1');
  message.copy(payload, 9);
  return encodePacket(payload, sequenceId);
}

/** Encodes an OK packet; `header` 0xFE makes it the EOF replacement of DEPRECATE_EOF. */
export function encodeOk(
  info: {
    affectedRows?: number;
    insertId?: number;
    status: number;
    warnings?: number;
    header?: number;
  },
  sequenceId: number,
): Buffer {
  const affected = info.affectedRows ?? 0;
  const insertId = info.insertId ?? 0;
  const payload = Buffer.allocUnsafe(1 + lenencIntSize(affected) + lenencIntSize(insertId) + 4);
  payload[0] = info.header ?? PacketHeader.OK;
  let pos = writeLenencInt(payload, 1, affected);
  pos = writeLenencInt(payload, pos, insertId);
  payload.writeUInt16LE(info.status, pos);
  payload.writeUInt16LE(info.warnings ?? 0, pos + 2);
  return encodePacket(payload, sequenceId);
}

/** Encodes a classic EOF packet. */
export function encodeEof(info: StatusInfo, sequenceId: number): Buffer {
  const payload = Buffer.allocUnsafe(5);
  payload[0] = PacketHeader.EOF;
  payload.writeUInt16LE(info.warnings, 1);
  payload.writeUInt16LE(info.status, 3);
  return encodePacket(payload, sequenceId);
}
