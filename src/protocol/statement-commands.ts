/**
 * Encoders for the prepared-statement commands (COM_STMT_*), for clients of the proxy's own:
 * the benchmark driver and the tests.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_execute.html
 */
import { Command, CursorType } from './constants.ts';
import { lenencIntSize, writeLenencInt } from './lenenc.ts';

/** A parameter whose value was sent before with COM_STMT_SEND_LONG_DATA. */
export const LONG_DATA = Symbol('long data');

export type Param = null | bigint | number | string | Buffer | typeof LONG_DATA;

const FieldType = {
  DOUBLE: 0x05,
  NULL: 0x06,
  LONGLONG: 0x08,
  VAR_STRING: 0xfd,
  BLOB: 0xfc,
} as const;

export function prepare(sql: string): Buffer {
  return Buffer.concat([Buffer.from([Command.STMT_PREPARE]), Buffer.from(sql, 'utf8')]);
}

export function execute(statementId: number, params: Param[], cursor = false): Buffer {
  const head = Buffer.alloc(10);
  head[0] = Command.STMT_EXECUTE;
  head.writeUInt32LE(statementId, 1);
  head[5] = cursor ? CursorType.READ_ONLY : CursorType.NO_CURSOR;
  head.writeUInt32LE(1, 6);
  if (params.length === 0) return head;
  const nullBitmap = Buffer.alloc((params.length + 7) >> 3);
  const types = Buffer.alloc(params.length * 2);
  const values: Buffer[] = [];
  params.forEach((param, index) => {
    if (param === LONG_DATA) {
      types[index * 2] = FieldType.BLOB;
    } else if (param === null) {
      nullBitmap[index >> 3]! |= 1 << (index & 7);
      types[index * 2] = FieldType.NULL;
    } else if (
      typeof param === 'bigint' ||
      (typeof param === 'number' && Number.isInteger(param))
    ) {
      types[index * 2] = FieldType.LONGLONG;
      const value = Buffer.alloc(8);
      value.writeBigInt64LE(BigInt(param));
      values.push(value);
    } else if (typeof param === 'number') {
      types[index * 2] = FieldType.DOUBLE;
      const value = Buffer.alloc(8);
      value.writeDoubleLE(param);
      values.push(value);
    } else {
      const bytes = typeof param === 'string' ? Buffer.from(param, 'utf8') : param;
      types[index * 2] = typeof param === 'string' ? FieldType.VAR_STRING : FieldType.BLOB;
      const length = Buffer.alloc(lenencIntSize(bytes.length));
      writeLenencInt(length, 0, bytes.length);
      values.push(length, bytes);
    }
  });
  return Buffer.concat([head, nullBitmap, Buffer.from([1]), types, ...values]);
}

export function fetch(statementId: number, rows: number): Buffer {
  const payload = Buffer.alloc(9);
  payload[0] = Command.STMT_FETCH;
  payload.writeUInt32LE(statementId, 1);
  payload.writeUInt32LE(rows, 5);
  return payload;
}

export function sendLongData(statementId: number, param: number, data: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head[0] = Command.STMT_SEND_LONG_DATA;
  head.writeUInt32LE(statementId, 1);
  head.writeUInt16LE(param, 5);
  return Buffer.concat([head, data]);
}

export function statementCommand(command: number, statementId: number): Buffer {
  const payload = Buffer.alloc(5);
  payload[0] = command;
  payload.writeUInt32LE(statementId, 1);
  return payload;
}
