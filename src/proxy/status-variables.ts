/**
 * The server's status replies with nicecache's query cache counters in them: SHOW [GLOBAL |
 * SESSION] STATUS (as text or as a prepared statement) and SELECTs of information_schema's
 * GLOBAL_STATUS and SESSION_STATUS. The statement still goes to the server, which applies LIKE or
 * WHERE, names and types the columns and orders the rows as it always does; the proxy then swaps
 * in its values for the Qcache_* rows and, for SHOW STATUS without WHERE, adds rows for counters
 * the server does not have, where the server's order puts them.
 */
import { MAX_PACKET_PAYLOAD, PacketHeader } from '../protocol/constants.ts';
import {
  lenencIntSize,
  readLenencBytes,
  readLenencInt,
  writeLenencInt,
} from '../protocol/lenenc.ts';
import { encodePacket } from '../protocol/packet.ts';
import type { StatementControl } from '../sql/statement-classifier.ts';

/** A status reply to rewrite: what the statement asked, and in which protocol rows come. */
export interface StatusRewrite {
  statement: StatementControl & { kind: 'show-status' | 'status-table' };
  /** Rows of a COM_STMT_EXECUTE: the binary protocol. */
  binary: boolean;
}

/** Values replacing the server's (by upper-case name), and rows the server does not have. */
export interface StatusValues {
  own: ReadonlyMap<string, string>;
  extra: ReadonlyArray<readonly [string, string]>;
  /**
   * Amounts taken from the server's counters (by upper-case name) in a session's own status
   * (SHOW [SESSION] STATUS, SESSION_STATUS), not in global status: what the proxy's own
   * statements added (see OwnStatementStatus).
   */
  sessionLess?: ReadonlyMap<string, number>;
}

/** The column types whose binary values are length-encoded strings. */
const STRING_TYPES = new Set([
  0x0f, // VARCHAR
  0xf5, // JSON
  0xf6, // NEWDECIMAL
  0xf7, // ENUM
  0xf8, // SET
  0xf9, // TINY_BLOB
  0xfa, // MEDIUM_BLOB
  0xfb, // LONG_BLOB
  0xfc, // BLOB
  0xfd, // VAR_STRING
  0xfe, // STRING
  0x00, // DECIMAL
]);

interface Column {
  schema: string;
  orgTable: string;
  orgName: string;
  type: number;
}

/**
 * Rebuilds the server's reply (`payloads`, one per packet) with the proxy's values. Returns null
 * when the reply is not a result set the proxy can follow (an error, an unexpected column): the
 * caller relays it unchanged.
 */
export function rewriteStatusReply(
  payloads: readonly Buffer[],
  deprecateEof: boolean,
  rewrite: StatusRewrite,
  values: StatusValues,
): Buffer | null {
  const header = payloads[0];
  if (header === undefined || header[0] === PacketHeader.ERR || header[0] === PacketHeader.OK)
    return null;
  const count = readLenencInt(header, 0);
  if (count === null || count.value < 1 || count.value > 4096) return null;
  const columnCount = count.value;
  const columns: Column[] = [];
  for (let i = 1; i <= columnCount; i++) {
    const column = readColumn(payloads[i]);
    if (column === null) return null;
    columns.push(column);
  }
  const statement = rewrite.statement;
  let nameColumn: number;
  let valueColumn: number;
  if (statement.kind === 'show-status') {
    if (columnCount !== 2) return null;
    nameColumn = 0;
    valueColumn = 1;
  } else {
    nameColumn = columns.findIndex((column) => isStatusColumn(column, 'VARIABLE_NAME'));
    valueColumn = columns.findIndex((column) => isStatusColumn(column, 'VARIABLE_VALUE'));
    // Without the name beside the value, the row cannot be told.
    if (nameColumn < 0 || valueColumn < 0) return null;
  }
  if (rewrite.binary) {
    for (const column of columns) if (!STRING_TYPES.has(column.type)) return null;
  }
  const sessionScope =
    statement.kind === 'show-status'
      ? statement.scope === 'session'
      : columns[valueColumn]!.orgTable.toUpperCase() === 'SESSION_STATUS';
  const less = sessionScope ? (values.sessionLess ?? null) : null;
  const firstRow = 1 + columnCount + (deprecateEof ? 0 : 1);
  const rows: Array<Array<Buffer | null>> = [];
  let index = firstRow;
  for (; index < payloads.length; index++) {
    const row = payloads[index]!;
    if (row[0] === PacketHeader.EOF && row.length < MAX_PACKET_PAYLOAD) break;
    if (row[0] === PacketHeader.ERR) return null;
    const fields = rewrite.binary ? readBinaryRow(row, columnCount) : readTextRow(row, columnCount);
    if (fields === null) return null;
    const name = fields[nameColumn];
    if (name !== null && name !== undefined) {
      const upper = name.toString('utf8').toUpperCase();
      const own = values.own.get(upper);
      if (own !== undefined) fields[valueColumn] = Buffer.from(own, 'utf8');
      const taken = less?.get(upper);
      if (taken !== undefined) fields[valueColumn] = lessBy(fields[valueColumn] ?? null, taken);
    }
    rows.push(fields);
  }
  const final = payloads[index];
  if (final === undefined || index !== payloads.length - 1) return null;
  if (statement.kind === 'show-status' && !statement.where) {
    addExtraRows(rows, values.extra, statement.like === null ? null : likeToRegExp(statement.like));
  }
  const packets: Buffer[] = [];
  let sequenceId = 1;
  for (let i = 0; i < firstRow; i++) packets.push(encodePacket(payloads[i]!, sequenceId++));
  for (const fields of rows) {
    const row = rewrite.binary ? encodeBinaryRow(fields) : encodeTextRow(fields);
    packets.push(encodePacket(row, sequenceId++));
  }
  packets.push(encodePacket(final, sequenceId));
  return Buffer.concat(packets);
}

/** A counter's text less `amount`, never below 0; a value that is not a count stays as it is. */
function lessBy(value: Buffer | null, amount: number): Buffer | null {
  if (value === null) return null;
  const text = value.toString('latin1');
  if (!/^\d+$/.test(text)) return value;
  const count = BigInt(text) - BigInt(amount);
  return Buffer.from((count < 0n ? 0n : count).toString(), 'latin1');
}

/**
 * Adds the proxy's own rows where the server would list them: MariaDB orders SHOW STATUS by
 * name compared without letter case (strcasecmp, so `_` sorts before letters). The server's rows
 * keep their order.
 */
function addExtraRows(
  rows: Array<Array<Buffer | null>>,
  extra: ReadonlyArray<readonly [string, string]>,
  like: RegExp | null,
): void {
  const names = rows.map((row) => row[0]?.toString('utf8').toLowerCase() ?? '');
  const present = new Set(names);
  for (const [name, value] of extra) {
    const lower = name.toLowerCase();
    if (present.has(lower)) continue;
    if (like !== null && !like.test(name)) continue;
    let at = 0;
    while (at < names.length && names[at]! <= lower) at++;
    names.splice(at, 0, lower);
    rows.splice(at, 0, [Buffer.from(name, 'utf8'), Buffer.from(value, 'utf8')]);
    present.add(lower);
  }
}

function isStatusColumn(column: Column, name: string): boolean {
  const table = column.orgTable.toUpperCase();
  return (
    column.schema.toLowerCase() === 'information_schema' &&
    column.orgName.toUpperCase() === name &&
    (table === 'GLOBAL_STATUS' || table === 'SESSION_STATUS')
  );
}

/** A column definition: catalog, schema, table, org_table, name, org_name, then fixed fields. */
function readColumn(payload: Buffer | undefined): Column | null {
  if (payload === undefined) return null;
  let pos = 0;
  const strings: string[] = [];
  for (let i = 0; i < 6; i++) {
    const field = readLenencBytes(payload, pos);
    if (field === null) return null;
    strings.push(field.value.toString('utf8'));
    pos = field.end;
  }
  const fixed = readLenencInt(payload, pos);
  if (fixed === null || fixed.end + 7 > payload.length) return null;
  return {
    schema: strings[1]!,
    orgTable: strings[3]!,
    orgName: strings[5]!,
    type: payload[fixed.end + 6]!,
  };
}

function readTextRow(row: Buffer, columns: number): Array<Buffer | null> | null {
  const fields: Array<Buffer | null> = [];
  let pos = 0;
  for (let i = 0; i < columns; i++) {
    if (row[pos] === 0xfb) {
      fields.push(null);
      pos++;
      continue;
    }
    const field = readLenencBytes(row, pos);
    if (field === null) return null;
    fields.push(field.value);
    pos = field.end;
  }
  return pos === row.length ? fields : null;
}

/** A binary row of string columns: 0x00, the null bitmap (offset 2), lenenc values. */
function readBinaryRow(row: Buffer, columns: number): Array<Buffer | null> | null {
  if (row[0] !== 0x00) return null;
  const bitmapBytes = (columns + 7 + 2) >> 3;
  let pos = 1 + bitmapBytes;
  if (pos > row.length) return null;
  const fields: Array<Buffer | null> = [];
  for (let i = 0; i < columns; i++) {
    const bit = i + 2;
    if ((row[1 + (bit >> 3)]! & (1 << (bit & 7))) !== 0) {
      fields.push(null);
      continue;
    }
    const field = readLenencBytes(row, pos);
    if (field === null) return null;
    fields.push(field.value);
    pos = field.end;
  }
  return pos === row.length ? fields : null;
}

function encodeTextRow(fields: ReadonlyArray<Buffer | null>): Buffer {
  let size = 0;
  for (const field of fields)
    size += field === null ? 1 : lenencIntSize(field.length) + field.length;
  const row = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const field of fields) pos = writeField(row, pos, field, true);
  return row;
}

function encodeBinaryRow(fields: ReadonlyArray<Buffer | null>): Buffer {
  const bitmapBytes = (fields.length + 7 + 2) >> 3;
  let size = 1 + bitmapBytes;
  for (const field of fields)
    if (field !== null) size += lenencIntSize(field.length) + field.length;
  const row = Buffer.alloc(size);
  let pos = 1 + bitmapBytes;
  fields.forEach((field, i) => {
    if (field === null) {
      const bit = i + 2;
      row[1 + (bit >> 3)]! |= 1 << (bit & 7);
    } else {
      pos = writeField(row, pos, field, false);
    }
  });
  return row;
}

function writeField(row: Buffer, pos: number, field: Buffer | null, text: boolean): number {
  if (field === null) {
    if (text) row[pos++] = 0xfb;
    return pos;
  }
  pos = writeLenencInt(row, pos, field.length);
  return pos + field.copy(row, pos);
}

/** SQL LIKE with `\` escaping the next character, compared as the server compares status names: without case. */
export function likeToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, 'is');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
