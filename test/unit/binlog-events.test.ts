/**
 * The binlog event readers on events built here byte by byte, as the server lays them out: the
 * header, CRC32 trailers, table maps, row events' table ids, query events' schema, sql_mode and
 * text (plain and compressed), GTID events, rotate events; GTID positions as the server writes
 * them, and binlog coordinates in the order the server writes the log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import {
  EVENT_HEADER_LENGTH,
  EventType,
  SQL_MODE_ANSI_QUOTES,
  checksumMatches,
  isRowEvent,
  readEventHeader,
  readGtidEvent,
  readQueryEvent,
  readRotateFileName,
  readTableId,
  readTableMap,
} from '../../src/binlog/binlog-events.ts';
import { GtidPosition } from '../../src/binlog/gtid-position.ts';
import { binlogCoordinate, binlogFileNumber } from '../../src/binlog/commit-visibility.ts';

/** An event of `type` with `body` after the header, and a CRC32 trailer when asked. */
function event(type: number, body: Buffer, checksum = true): Buffer {
  const size = EVENT_HEADER_LENGTH + body.length + (checksum ? 4 : 0);
  const header = Buffer.alloc(EVENT_HEADER_LENGTH);
  header.writeUInt32LE(1_700_000_000, 0);
  header[4] = type;
  header.writeUInt32LE(7, 5);
  header.writeUInt32LE(size, 9);
  header.writeUInt32LE(12345, 13);
  header.writeUInt16LE(0, 17);
  const withoutSum = Buffer.concat([header, body]);
  if (!checksum) return withoutSum;
  const sum = Buffer.alloc(4);
  sum.writeUInt32LE(crc32(withoutSum), 0);
  return Buffer.concat([withoutSum, sum]);
}

function tableId(id: number): Buffer {
  const bytes = Buffer.alloc(6);
  bytes.writeUIntLE(id, 0, 6);
  return bytes;
}

function queryBody(schema: string, status: Buffer, sql: Buffer): Buffer {
  const post = Buffer.alloc(13);
  post.writeUInt32LE(99, 0); // thread id
  post.writeUInt32LE(0, 4); // execution time
  post[8] = Buffer.byteLength(schema);
  post.writeUInt16LE(0, 9); // error code
  post.writeUInt16LE(status.length, 11);
  return Buffer.concat([post, status, Buffer.from(schema), Buffer.from([0]), sql]);
}

function sqlModeStatus(mode: bigint): Buffer {
  const flags2 = Buffer.from([0, 0, 0, 0, 0]);
  const sqlMode = Buffer.alloc(9);
  sqlMode[0] = 1;
  sqlMode.writeBigUInt64LE(mode, 1);
  return Buffer.concat([flags2, sqlMode]);
}

describe('binlog events', () => {
  test('the header, and a checksum that catches one flipped bit', () => {
    const e = event(EventType.XID, Buffer.alloc(8));
    const header = readEventHeader(e)!;
    assert.deepEqual(header, {
      timestamp: 1_700_000_000,
      type: EventType.XID,
      serverId: 7,
      size: e.length,
      nextPosition: 12345,
      flags: 0,
    });
    assert.equal(checksumMatches(e), true);
    e[EVENT_HEADER_LENGTH + 3]! ^= 0x10;
    assert.equal(checksumMatches(e), false);
    assert.equal(readEventHeader(e.subarray(0, 10)), null, 'shorter than a header');
    assert.equal(readEventHeader(e.subarray(0, e.length - 1)), null, 'shorter than it says');
  });

  test('a table map names the table of the row events that follow', () => {
    const names = Buffer.concat([
      Buffer.from([4]),
      Buffer.from('shop\0'),
      Buffer.from([6]),
      Buffer.from('orders\0'),
      Buffer.from([1, 3]), // column count and types: not read
    ]);
    const e = event(EventType.TABLE_MAP, Buffer.concat([tableId(0x10203), Buffer.alloc(2), names]));
    assert.deepEqual(readTableMap(e, e.length - 4), {
      tableId: 0x10203,
      schema: 'shop',
      table: 'orders',
    });
    assert.equal(readTableMap(e, EVENT_HEADER_LENGTH + 12), null, 'names cut off');
    for (const type of [23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 170, 171]) {
      assert.ok(isRowEvent(type), String(type));
    }
    for (const type of [2, 16, 19, 22, 26, 29, 33, 165, 172])
      assert.ok(!isRowEvent(type), String(type));
    const rows = event(
      EventType.UPDATE_ROWS_V2,
      Buffer.concat([tableId(0x10203), Buffer.alloc(4)]),
    );
    assert.equal(readTableId(rows), 0x10203);
  });

  test('a query event: its schema, sql_mode and statement', () => {
    const sql = 'UPDATE t SET v = "x"';
    const e = event(
      EventType.QUERY,
      queryBody('shop', sqlModeStatus(SQL_MODE_ANSI_QUOTES), Buffer.from(sql)),
    );
    const query = readQueryEvent(e, e.length - 4, false)!;
    assert.equal(query.schema, 'shop');
    assert.equal(query.sql, sql);
    assert.equal(query.sqlMode, SQL_MODE_ANSI_QUOTES);
    // A status variable before sql_mode whose length is not assumed: the mode is unknown.
    const odd = event(EventType.QUERY, queryBody('', Buffer.from([12, 0]), Buffer.from('BEGIN')));
    const unknown = readQueryEvent(odd, odd.length - 4, false)!;
    assert.equal(unknown.sqlMode, null);
    assert.equal(unknown.schema, '');
    assert.equal(unknown.sql, 'BEGIN');
  });

  test("MariaDB's compressed query event", () => {
    const sql = `INSERT INTO t VALUES ${'(1),'.repeat(100)}(2)`;
    const deflated = deflateSync(Buffer.from(sql));
    const compressed = Buffer.concat([
      Buffer.from([0x82, sql.length >> 8, sql.length & 0xff]),
      deflated,
    ]);
    const e = event(EventType.QUERY_COMPRESSED, queryBody('db', sqlModeStatus(0n), compressed));
    assert.equal(readQueryEvent(e, e.length - 4, true)!.sql, sql);
    const broken = event(
      EventType.QUERY_COMPRESSED,
      queryBody('db', sqlModeStatus(0n), Buffer.from([0x82, 0, 9, 1, 2])),
    );
    assert.equal(readQueryEvent(broken, broken.length - 4, true), null);
  });

  test('a GTID event: domain, sequence, and whether it stands alone', () => {
    const body = Buffer.alloc(13 + 6);
    body.writeBigUInt64LE(42n, 0);
    body.writeUInt32LE(3, 8);
    body[12] = 1;
    const e = event(EventType.GTID, body);
    const header = readEventHeader(e)!;
    assert.deepEqual(readGtidEvent(e, header, e.length - 4), {
      sequence: 42n,
      domain: 3,
      serverId: 7,
      standalone: true,
    });
  });
});

describe('GTID positions', () => {
  test('read as the server writes them, advanced per domain, written back in domain order', () => {
    const position = GtidPosition.parse('1-2-7,0-1-42')!;
    assert.equal(position.toString(), '0-1-42,1-2-7');
    position.advance(1, 5, 8n);
    position.advance(2, 5, 1n);
    assert.equal(position.toString(), '0-1-42,1-5-8,2-5-1');
    assert.equal(GtidPosition.parse('')!.toString(), '');
    assert.equal(GtidPosition.parse('0-1'), null);
    assert.equal(GtidPosition.parse("0-1-2'; DROP"), null);
  });
});

describe('binlog coordinates', () => {
  test('a rotate names the next file; coordinates order by file, then offset', () => {
    const body = Buffer.concat([Buffer.alloc(8), Buffer.from('binlog.000012')]);
    body.writeBigUInt64LE(4n, 0);
    const e = event(EventType.ROTATE, body);
    assert.equal(readRotateFileName(e, e.length - 4), 'binlog.000012');
    assert.equal(
      readRotateFileName(e.subarray(0, EVENT_HEADER_LENGTH + 8), EVENT_HEADER_LENGTH + 8),
      null,
    );
    assert.equal(binlogFileNumber('binlog.000012'), 12);
    assert.equal(binlogFileNumber('my.host-bin.1000000'), 1_000_000);
    assert.equal(binlogFileNumber('binlog'), null);
    assert.equal(binlogFileNumber('binlog.'), null);
    assert.equal(binlogFileNumber('binlog.00a1'), null);
    // The end of one file comes before the start of the next, whatever the offsets.
    assert.ok(binlogCoordinate(12, 4_000_000_000) < binlogCoordinate(13, 4));
    assert.ok(binlogCoordinate(12, 643) < binlogCoordinate(12, 644));
  });
});
