/**
 * A text-protocol result set of the proxy's own (column definitions, rows, end), for tables the
 * proxy answers itself. Off the hot path: built once per such query.
 */
import { encodeEof, encodeOk } from './generic-packets.ts';
import { lenencIntSize, writeLenencInt } from './lenenc.ts';
import { encodePacket } from './packet.ts';

/** MYSQL_TYPE_LONGLONG and MYSQL_TYPE_VAR_STRING. */
const TYPE_LONGLONG = 0x08;
const TYPE_VAR_STRING = 0xfd;
/** NOT_NULL, UNSIGNED and NUM flags of a column definition. */
const NOT_NULL_FLAG = 0x0001;
const UNSIGNED_FLAG = 0x0020;
const NUM_FLAG = 0x8000;
/** utf8mb4_general_ci and binary: what the columns are said to hold. */
const UTF8MB4_GENERAL_CI = 45;
const BINARY = 63;

export interface ResultColumn {
  name: string;
  type: 'text' | 'unsigned';
}

export interface ResultSetOptions {
  /** The client's CLIENT_DEPRECATE_EOF: an OK packet, not EOF packets, ends the set. */
  deprecateEof: boolean;
  /** MariaDB's extended metadata: each column definition carries its (empty) type info. */
  extendedMetadata: boolean;
  /** The server status flags the ending packet carries (the session's). */
  status: number;
  /** Schema and table the columns are said to come from. */
  schema: string;
  table: string;
}

/**
 * The packets of a result set of `columns` and `rows` (text: strings, or numbers for unsigned
 * columns; null is NULL), numbered from 1 as a reply to a COM_QUERY.
 */
export function encodeTextResultSet(
  columns: readonly ResultColumn[],
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>,
  options: ResultSetOptions,
): Buffer {
  const { deprecateEof, extendedMetadata } = options;
  const packets: Buffer[] = [];
  let sequenceId = 1;
  packets.push(encodePacket(lengthEncodedInt(columns.length), sequenceId++));
  for (const column of columns) {
    packets.push(encodePacket(columnDefinition(column, options, extendedMetadata), sequenceId++));
  }
  const end = { status: options.status, warnings: 0 };
  if (!deprecateEof) packets.push(encodeEof(end, sequenceId++));
  for (const row of rows) packets.push(encodePacket(textRow(row), sequenceId++));
  if (deprecateEof) {
    // An OK packet with the EOF header ends the rows (CLIENT_DEPRECATE_EOF).
    packets.push(encodeOk({ ...end, header: 0xfe }, sequenceId));
  } else {
    packets.push(encodeEof(end, sequenceId));
  }
  return Buffer.concat(packets);
}

function lengthEncodedInt(value: number): Buffer {
  const bytes = Buffer.alloc(lenencIntSize(value));
  writeLenencInt(bytes, 0, value);
  return bytes;
}

function lengthEncodedString(text: string, encoding: BufferEncoding = 'utf8'): Buffer {
  const bytes = Buffer.from(text, encoding);
  return Buffer.concat([lengthEncodedInt(bytes.length), bytes]);
}

function columnDefinition(
  column: ResultColumn,
  options: ResultSetOptions,
  extendedMetadata: boolean,
): Buffer {
  const numeric = column.type === 'unsigned';
  const fixed = Buffer.alloc(13);
  fixed[0] = 0x0c;
  fixed.writeUInt16LE(numeric ? BINARY : UTF8MB4_GENERAL_CI, 1);
  fixed.writeUInt32LE(numeric ? 20 : 4096, 3);
  fixed[7] = numeric ? TYPE_LONGLONG : TYPE_VAR_STRING;
  fixed.writeUInt16LE(numeric ? NOT_NULL_FLAG | UNSIGNED_FLAG | NUM_FLAG : 0, 8);
  fixed[10] = 0;
  return Buffer.concat([
    lengthEncodedString('def'),
    lengthEncodedString(options.schema),
    lengthEncodedString(options.table),
    lengthEncodedString(options.table),
    lengthEncodedString(column.name),
    lengthEncodedString(column.name),
    // MariaDB's extended type information, when the client asked for it: none here.
    ...(extendedMetadata ? [Buffer.of(0)] : []),
    fixed,
  ]);
}

function textRow(row: ReadonlyArray<string | number | null>): Buffer {
  return Buffer.concat(
    row.map((value) =>
      // NULL is 0xFB; a text value goes as the client's own bytes were read (Latin-1).
      value === null ? Buffer.of(0xfb) : lengthEncodedString(String(value), 'latin1'),
    ),
  );
}
