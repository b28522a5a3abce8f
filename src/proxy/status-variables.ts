/**
 * SHOW [GLOBAL | SESSION] STATUS answered with nicecache's own query cache counters under the
 * server's names. The statement still goes to the server, which applies LIKE or WHERE and names
 * the columns as it always does; the proxy then swaps in its values for the Qcache_* rows and
 * adds rows for counters the server does not have (only when no WHERE clause filters them).
 */
import { MAX_PACKET_PAYLOAD, PacketHeader } from '../protocol/constants.ts';
import {
  lenencIntSize,
  readLenencBytes,
  readLenencInt,
  writeLenencInt,
} from '../protocol/lenenc.ts';
import { encodePacket } from '../protocol/packet.ts';

export interface StatusStatement {
  /** The LIKE pattern as a regular expression; null when there is none. */
  like: RegExp | null;
  /** A WHERE clause filters rows: only rows the server returned are answered. */
  filtered: boolean;
}

const SHOW_STATUS = /^SHOW\s+(?:GLOBAL\s+|SESSION\s+|LOCAL\s+)?STATUS\b\s*(.*)$/is;
const LIKE = /^LIKE\s+'((?:[^'\\]|\\.|'')*)'\s*$/is;

/** Recognises SHOW STATUS in a statement's key text. */
export function parseShowStatus(keyText: string): StatusStatement | null {
  const match = SHOW_STATUS.exec(keyText);
  if (match === null) return null;
  const rest = match[1]!.trim();
  if (rest === '') return { like: null, filtered: false };
  const like = LIKE.exec(rest);
  if (like !== null) return { like: likeToRegExp(like[1]!), filtered: false };
  return { like: null, filtered: true };
}

/** SQL LIKE (with \ escapes), compared as the server compares status names: without case. */
function likeToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (c === "'" && pattern[i + 1] === "'") source += escapeRegExp(pattern[i++]!);
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, 'is');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Rebuilds the server's reply (`payloads`, one per packet) with the proxy's values: `own` maps
 * upper-case names to values that replace the server's; `extra` rows are added in name order
 * when `statement` lets them through. Returns null when the reply is not a two-column result set
 * (an error, say): the caller relays it unchanged.
 */
export function rewriteStatusReply(
  payloads: readonly Buffer[],
  deprecateEof: boolean,
  statement: StatusStatement,
  own: ReadonlyMap<string, string>,
  extra: ReadonlyArray<readonly [string, string]>,
): Buffer | null {
  const header = payloads[0];
  if (header === undefined || header[0] === PacketHeader.ERR || header[0] === PacketHeader.OK)
    return null;
  const columns = readLenencInt(header, 0);
  if (columns === null || columns.value !== 2) return null;
  const firstRow = 1 + 2 + (deprecateEof ? 0 : 1);
  const rows: Array<[string, string | null]> = [];
  let index = firstRow;
  for (; index < payloads.length; index++) {
    const row = payloads[index]!;
    if (row[0] === PacketHeader.EOF && row.length < MAX_PACKET_PAYLOAD) break;
    if (row[0] === PacketHeader.ERR) return null;
    const name = readLenencBytes(row, 0);
    if (name === null) return null;
    const value = row[name.end] === 0xfb ? null : readLenencBytes(row, name.end);
    const text = name.value.toString('utf8');
    rows.push([text, own.get(text.toUpperCase()) ?? value?.value.toString('utf8') ?? null]);
  }
  const final = payloads[index];
  if (final === undefined) return null;
  if (!statement.filtered) {
    const present = new Set(rows.map(([name]) => name.toUpperCase()));
    for (const [name, value] of extra) {
      if (present.has(name.toUpperCase())) continue;
      if (statement.like !== null && !statement.like.test(name)) continue;
      rows.push([name, value]);
    }
    rows.sort(([a], [b]) => {
      const left = a.toUpperCase();
      const right = b.toUpperCase();
      return left < right ? -1 : left > right ? 1 : 0;
    });
  }
  const packets: Buffer[] = [];
  let sequenceId = 1;
  for (let i = 0; i < firstRow; i++) packets.push(encodePacket(payloads[i]!, sequenceId++));
  for (const [name, value] of rows)
    packets.push(encodePacket(encodeRow(name, value), sequenceId++));
  packets.push(encodePacket(final, sequenceId));
  return Buffer.concat(packets);
}

function encodeRow(name: string, value: string | null): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const valueBytes = value === null ? null : Buffer.from(value, 'utf8');
  const size =
    lenencIntSize(nameBytes.length) +
    nameBytes.length +
    (valueBytes === null ? 1 : lenencIntSize(valueBytes.length) + valueBytes.length);
  const row = Buffer.allocUnsafe(size);
  let pos = writeLenencInt(row, 0, nameBytes.length);
  pos += nameBytes.copy(row, pos);
  if (valueBytes === null) row[pos] = 0xfb;
  else {
    pos = writeLenencInt(row, pos, valueBytes.length);
    valueBytes.copy(row, pos);
  }
  return row;
}
