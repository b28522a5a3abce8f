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
  readsByteByByte,
  readRotateFileName,
  readTableId,
  readTableMap,
} from '../../src/binlog/binlog-events.ts';
import { GtidPosition } from '../../src/binlog/gtid-position.ts';
import { readRowKeys, readTableColumns } from '../../src/binlog/row-keys.ts';
import { KeyKind } from '../../src/sql/point-access.ts';
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
    assert.equal(unknown.clientCollation, null);
    assert.equal(unknown.schema, '');
    assert.equal(unknown.sql, 'BEGIN');
  });

  test("a query event's character set: read past the catalog and auto_increment, and judged", () => {
    const status = (collation: number | null): Buffer =>
      Buffer.concat([
        sqlModeStatus(0n),
        Buffer.from([6, 3]), // catalog 'std', no NUL
        Buffer.from('std'),
        Buffer.from([3, 2, 0, 1, 0]), // auto_increment_increment 2, offset 1
        ...(collation === null
          ? []
          : [Buffer.from([4, collation & 0xff, collation >> 8, 8, 0, 8, 0])]),
        Buffer.from([5, 6]), // a time zone: after the character set, not read
        Buffer.from('+00:00'),
      ]);
    const collationOf = (collation: number | null): number | null => {
      const e = event(EventType.QUERY, queryBody('shop', status(collation), Buffer.from('DO 1')));
      const query = readQueryEvent(e, e.length - 4, false)!;
      assert.equal(query.sqlMode, 0n);
      assert.equal(query.sql, 'DO 1');
      return query.clientCollation;
    };
    // utf8mb4_general_ci, latin1_swedish_ci, utf8mb4_uca1400_ai_ci: strings read byte by byte.
    for (const collation of [45, 8, 2304]) {
      assert.equal(collationOf(collation), collation);
      assert.equal(readsByteByByte(collation), true, String(collation));
    }
    // gbk_chinese_ci, sjis_nopad_bin, big5_bin, cp932_japanese_ci: a character may end in a
    // byte that reads as a backslash or a quote.
    for (const collation of [28, 1112, 84, 95]) {
      assert.equal(collationOf(collation), collation);
      assert.equal(readsByteByByte(collation), false, String(collation));
    }
    assert.equal(collationOf(null), null, 'not in the event');
    assert.equal(readsByteByByte(null), false, 'unknown: not read byte by byte');
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

/** A table map body: `types` with their metadata block, and optional metadata fields after. */
function tableMapBody(types: number[], metadata: number[], optional: Buffer): Buffer {
  return Buffer.concat([
    tableId(42),
    Buffer.alloc(2),
    Buffer.from([1]),
    Buffer.from('d\0'),
    Buffer.from([1]),
    Buffer.from('t\0'),
    Buffer.from([types.length, ...types]),
    Buffer.from([metadata.length, ...metadata]),
    Buffer.alloc((types.length + 7) >> 3, 0xff), // every column may be NULL
    optional,
  ]);
}

/** The optional metadata of binlog_row_metadata=FULL: the columns' names and a primary key. */
function fullMetadata(names: string[], primaryKey: number[]): Buffer {
  const nameBytes = Buffer.concat(
    names.map((name) => Buffer.from([name.length, ...Buffer.from(name)])),
  );
  return Buffer.concat([
    Buffer.from([4, nameBytes.length]),
    nameBytes,
    Buffer.from([8, primaryKey.length, ...primaryKey]),
  ]);
}

describe('the keys of the rows a row event changed', () => {
  // VARCHAR(300) (2-byte length, metadata 300 little-endian), then INT, then BIGINT.
  const types = [15, 3, 8];
  const metadata = [0x2c, 0x01];
  const map = event(
    EventType.TABLE_MAP,
    tableMapBody(types, metadata, fullMetadata(['v', 'ID', 'n'], [1])),
  );
  const columns = readTableColumns(map, map.length - 4)!;

  /** A row image of every column: a NULL bitmap of none, then the values. */
  function row(v: string, id: number, n: bigint): Buffer {
    const value = Buffer.alloc(2 + v.length + 4 + 8);
    value.writeUInt16LE(v.length, 0);
    value.write(v, 2, 'latin1');
    value.writeUInt32LE(id, 2 + v.length);
    value.writeBigUInt64LE(n, 6 + v.length);
    return Buffer.concat([Buffer.from([0]), value]);
  }

  function rowsEvent(type: number, rows: Buffer[], images = 1, extra: Buffer | null = null) {
    return event(
      type,
      Buffer.concat([
        tableId(42),
        Buffer.alloc(2),
        ...(extra === null ? [] : [extra]),
        Buffer.from([3]),
        Buffer.alloc(images, 0b111), // every column present
        ...rows,
      ]),
    );
  }

  test('the table map: types, metadata, and the key column by name', () => {
    assert.deepEqual([...columns.types], types);
    assert.equal(columns.meta[0], 300);
    const { INTEGER, TEXT, BYTES, FIXED_BYTES } = KeyKind;
    assert.deepEqual(columns.key, { indexes: [1], name: 'id', kinds: [INTEGER], widths: [4] });
    assert.ok(columns.named);
    const noNames = event(EventType.TABLE_MAP, tableMapBody(types, metadata, Buffer.alloc(0)));
    assert.equal(readTableColumns(noNames, noNames.length - 4)?.key, null, 'without FULL');
    assert.equal(readTableColumns(noNames, noNames.length - 4)?.named, false);
    const twoColumns = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [1, 2])),
    );
    assert.deepEqual(
      readTableColumns(twoColumns, twoColumns.length - 4)?.key,
      { indexes: [1, 2], name: 'id,n', kinds: [INTEGER, INTEGER], widths: [4, 8] },
      'a key of two columns',
    );
    const stringKey = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [0])),
    );
    assert.deepEqual(
      readTableColumns(stringKey, stringKey.length - 4)?.key,
      { indexes: [0], name: "v'", kinds: [TEXT], widths: [0] },
      'a VARCHAR key: its name marked as a string column',
    );
    const withString = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [1, 0])),
    );
    assert.deepEqual(
      readTableColumns(withString, withString.length - 4)?.key,
      { indexes: [1, 0], name: "id,v'", kinds: [INTEGER, TEXT], widths: [4, 0] },
      'INT, VARCHAR',
    );
    // CHAR(10): a STRING whose real type is STRING; ENUM is a STRING too, and no key.
    const char = event(
      EventType.TABLE_MAP,
      tableMapBody([254, 3], [254, 10], fullMetadata(['c', 'id'], [0])),
    );
    assert.deepEqual(readTableColumns(char, char.length - 4)?.key, {
      indexes: [0],
      name: "c'",
      kinds: [TEXT],
      widths: [0],
    });
    // The columns' collations (COLUMN_CHARSET: every character column's, in order; or
    // DEFAULT_CHARSET: a default, then the columns that differ by their index among them):
    // the binary one's VARCHAR is a VARBINARY, its CHAR a BINARY of its width.
    const binaryVarchar = event(
      EventType.TABLE_MAP,
      tableMapBody(
        types,
        metadata,
        Buffer.concat([fullMetadata(['v', 'id', 'n'], [0]), Buffer.from([3, 1, 63])]),
      ),
    );
    assert.deepEqual(readTableColumns(binaryVarchar, binaryVarchar.length - 4)?.key, {
      indexes: [0],
      name: 'v#',
      kinds: [BYTES],
      widths: [0],
    });
    // VARCHAR (utf8mb4_general_ci, 45), ENUM (no collation here), BINARY(16), INT.
    const uuid = event(
      EventType.TABLE_MAP,
      tableMapBody(
        [15, 254, 254, 3],
        [40, 0, 247, 1, 254, 16],
        Buffer.concat([
          fullMetadata(['s', 'e', 'u', 'id'], [3, 2]),
          Buffer.from([2, 3, 45, 1, 63]),
        ]),
      ),
    );
    assert.deepEqual(readTableColumns(uuid, uuid.length - 4)?.key, {
      indexes: [3, 2],
      name: 'id,u#',
      kinds: [INTEGER, FIXED_BYTES],
      widths: [4, 16],
    });
    // CHAR(120) of utf8mb4 is 480 bytes: its real type's byte keeps the length's two high bits
    // inverted (0xee, not 0xfe). A character column, and a key of strings itself.
    const longChar = event(
      EventType.TABLE_MAP,
      tableMapBody(
        [254, 254, 3],
        [254, 16, 0xee, 0xe0],
        Buffer.concat([fullMetadata(['id', 'c', 'k'], [0]), Buffer.from([3, 2, 63, 45])]),
      ),
    );
    assert.deepEqual(readTableColumns(longChar, longChar.length - 4)?.key, {
      indexes: [0],
      name: 'id#',
      kinds: [FIXED_BYTES],
      widths: [16],
    });
    const longCharKey = event(
      EventType.TABLE_MAP,
      tableMapBody(
        [254, 254, 3],
        [254, 16, 0xee, 0xe0],
        Buffer.concat([fullMetadata(['id', 'c', 'k'], [1]), Buffer.from([3, 2, 63, 45])]),
      ),
    );
    assert.deepEqual(readTableColumns(longCharKey, longCharKey.length - 4)?.key?.kinds, [TEXT]);
    // A collation of a character column the map does not have: the field is not trusted.
    const beyond = event(
      EventType.TABLE_MAP,
      tableMapBody(
        [15, 254, 254, 3],
        [40, 0, 247, 1, 254, 16],
        Buffer.concat([fullMetadata(['s', 'e', 'u', 'id'], [2]), Buffer.from([2, 3, 45, 2, 63])]),
      ),
    );
    assert.deepEqual(readTableColumns(beyond, beyond.length - 4)?.key?.kinds, [TEXT]);
    const enumKey = event(
      EventType.TABLE_MAP,
      tableMapBody([254, 3], [247, 1], fullMetadata(['e', 'id'], [0])),
    );
    assert.equal(readTableColumns(enumKey, enumKey.length - 4)?.key, null, 'an ENUM key');
    const twice = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [1, 1])),
    );
    assert.equal(readTableColumns(twice, twice.length - 4)?.key, null, 'a column twice');
    const unknown = event(EventType.TABLE_MAP, tableMapBody([0], [], Buffer.alloc(0)));
    assert.equal(readTableColumns(unknown, unknown.length - 4), null, 'an old DECIMAL column');
    const shortMeta = event(EventType.TABLE_MAP, tableMapBody(types, [0x2c], Buffer.alloc(0)));
    assert.equal(readTableColumns(shortMeta, shortMeta.length - 4), null, 'metadata cut short');
  });

  test('inserts, deletes, updates (v1 and v2): each key once, a moved key twice', () => {
    const keys: number[] = [];
    const insert = rowsEvent(EventType.WRITE_ROWS_V1, [row('ab', 5, 1n), row('', 6, 2n)]);
    assert.ok(readRowKeys(insert, EventType.WRITE_ROWS_V1, insert.length - 4, columns, keys));
    assert.deepEqual(keys, [5, 6]);
    keys.length = 0;
    const update = rowsEvent(
      EventType.UPDATE_ROWS_V2,
      [row('x', 7, 1n), row('y', 7, 2n), row('x', 8, 1n), row('x', 9, 1n)],
      2,
      Buffer.from([2, 0]),
    );
    assert.ok(readRowKeys(update, EventType.UPDATE_ROWS_V2, update.length - 4, columns, keys));
    assert.deepEqual(keys, [7, 8, 9]);
    keys.length = 0;
    const remove = rowsEvent(EventType.DELETE_ROWS_V1, [row('z', 2 ** 32 - 3, 0n)]);
    assert.ok(readRowKeys(remove, EventType.DELETE_ROWS_V1, remove.length - 4, columns, keys));
    assert.deepEqual(keys, [2 ** 32 - 3], 'read unsigned: a negative key is no point read value');
  });

  test('a key of strings: each row named by its value folded; a value that names no row is the whole table', () => {
    const byString = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [0])),
    );
    const stringColumns = readTableColumns(byString, byString.length - 4)!;
    const keys: Array<number | string> = [];
    const insert = rowsEvent(EventType.WRITE_ROWS_V1, [
      row('Ab-C_1.x:Y', 5, 1n),
      row('', 6, 2n),
      row('pad  ', 7, 3n),
    ]);
    assert.ok(readRowKeys(insert, EventType.WRITE_ROWS_V1, insert.length - 4, stringColumns, keys));
    assert.deepEqual(keys, ['abc1xy', '', 'pad'], 'folded; trailing spaces dropped');
    keys.length = 0;
    const update = rowsEvent(
      EventType.UPDATE_ROWS_V2,
      [row('a', 7, 1n), row('A', 8, 2n), row('a', 7, 1n), row('b', 7, 1n)],
      2,
      Buffer.from([2, 0]),
    );
    assert.ok(
      readRowKeys(update, EventType.UPDATE_ROWS_V2, update.length - 4, stringColumns, keys),
    );
    assert.deepEqual(keys, ['a', 'a', 'b'], 'a change of case is the same row; a move is two');
    for (const value of ['a b', 'caf\xe9', "it's", 'x\\y', ' a']) {
      keys.length = 0;
      const named = rowsEvent(EventType.DELETE_ROWS_V1, [row('ok', 1, 1n), row(value, 2, 1n)]);
      assert.equal(
        readRowKeys(named, EventType.DELETE_ROWS_V1, named.length - 4, stringColumns, keys),
        false,
        `${JSON.stringify(value)} names no row: the table is written whole`,
      );
    }
    // Both kinds in one key: INT, then VARCHAR.
    const both = event(
      EventType.TABLE_MAP,
      tableMapBody(types, metadata, fullMetadata(['v', 'id', 'n'], [1, 0])),
    );
    const bothColumns = readTableColumns(both, both.length - 4)!;
    keys.length = 0;
    const mixed = rowsEvent(EventType.WRITE_ROWS_V1, [row('X', 5, 1n), row('y', 6, 2n)]);
    assert.ok(readRowKeys(mixed, EventType.WRITE_ROWS_V1, mixed.length - 4, bothColumns, keys));
    assert.deepEqual(keys, [5, 'x', 6, 'y']);
  });

  test('a key of bytes: each row named by its bytes in hex, a BINARY’s padded to its width', () => {
    // The same VARCHAR(300), its collation binary: a VARBINARY. Any byte names a row, exactly.
    const byBytes = event(
      EventType.TABLE_MAP,
      tableMapBody(
        types,
        metadata,
        Buffer.concat([fullMetadata(['v', 'id', 'n'], [0]), Buffer.from([3, 1, 63])]),
      ),
    );
    const bytesColumns = readTableColumns(byBytes, byBytes.length - 4)!;
    const keys: Array<number | string> = [];
    const insert = rowsEvent(EventType.WRITE_ROWS_V1, [
      row('Ab', 5, 1n),
      row('\0\xff ', 6, 2n),
      row('', 7, 3n),
    ]);
    assert.ok(readRowKeys(insert, EventType.WRITE_ROWS_V1, insert.length - 4, bytesColumns, keys));
    assert.deepEqual(keys, ['4162', '00ff20', ''], 'no case folded, no space dropped');
    // BINARY(4) (CHAR of 4 bytes, binary), then INT: the log leaves trailing zero bytes out.
    const fixedMap = event(
      EventType.TABLE_MAP,
      tableMapBody(
        [254, 3],
        [254, 4],
        Buffer.concat([fullMetadata(['u', 'id'], [0]), Buffer.from([2, 1, 63])]),
      ),
    );
    const fixed = readTableColumns(fixedMap, fixedMap.length - 4)!;
    const image = (u: string, id: number): Buffer =>
      Buffer.concat([
        Buffer.from([0, u.length]),
        Buffer.from(u, 'latin1'),
        Buffer.from(Uint32Array.of(id).buffer),
      ]);
    const rows = event(
      EventType.DELETE_ROWS_V1,
      Buffer.concat([
        tableId(42),
        Buffer.alloc(2),
        Buffer.from([2]),
        Buffer.from([0b11]),
        image('ab', 1),
        image('\x01\x02\x03\x04', 2),
      ]),
    );
    keys.length = 0;
    assert.ok(readRowKeys(rows, EventType.DELETE_ROWS_V1, rows.length - 4, fixed, keys));
    assert.deepEqual(keys, ['61620000', '01020304']);
  });

  test('compressed rows (log_bin_compress): inflated after the bitmaps, then read alike', () => {
    /** MariaDB's compressed form: a byte 0x80 | 3, the length in 3 bytes, a zlib stream. */
    const compressedRows = (rows: Buffer[]): Buffer => {
      const plain = Buffer.concat(rows);
      const length = Buffer.alloc(3);
      length.writeUIntBE(plain.length, 0, 3);
      return Buffer.concat([Buffer.from([0x83]), length, deflateSync(plain)]);
    };
    const keys: number[] = [];
    const update = rowsEvent(
      EventType.UPDATE_ROWS_COMPRESSED_V1,
      [
        compressedRows([
          row('x', 7, 1n),
          row('y', 17, 2n),
          row('x'.repeat(200), 8, 1n),
          row('', 8, 1n),
        ]),
      ],
      2,
    );
    assert.ok(
      readRowKeys(update, EventType.UPDATE_ROWS_COMPRESSED_V1, update.length - 4, columns, keys),
    );
    assert.deepEqual(keys, [7, 17, 8]);
    keys.length = 0;
    const remove = rowsEvent(EventType.DELETE_ROWS_COMPRESSED_V1, [
      compressedRows([row('a', 3, 0n), row('b', 4, 0n)]),
    ]);
    assert.ok(
      readRowKeys(remove, EventType.DELETE_ROWS_COMPRESSED_V1, remove.length - 4, columns, keys),
    );
    assert.deepEqual(keys, [3, 4]);
    // A stream that does not inflate to the length it says, or rows that do not end with it.
    const stream = compressedRows([row('a', 3, 0n)]);
    stream.writeUIntBE(stream.readUIntBE(1, 3) + 1, 1, 3);
    const wrongLength = rowsEvent(EventType.WRITE_ROWS_COMPRESSED_V1, [stream]);
    assert.equal(
      readRowKeys(
        wrongLength,
        EventType.WRITE_ROWS_COMPRESSED_V1,
        wrongLength.length - 4,
        columns,
        [],
      ),
      false,
    );
    const cut = rowsEvent(EventType.WRITE_ROWS_COMPRESSED_V1, [
      compressedRows([row('a', 3, 0n).subarray(0, 5)]),
    ]);
    assert.equal(
      readRowKeys(cut, EventType.WRITE_ROWS_COMPRESSED_V1, cut.length - 4, columns, []),
      false,
    );
  });

  test('an event that does not come out exactly is not read', () => {
    const keys: number[] = [];
    const good = rowsEvent(EventType.WRITE_ROWS_V1, [row('ab', 5, 1n)]);
    const cut = good.subarray(0, good.length - 4 - 3);
    assert.equal(readRowKeys(cut, EventType.WRITE_ROWS_V1, cut.length, columns, keys), false);
    const trailing = rowsEvent(EventType.WRITE_ROWS_V1, [row('ab', 5, 1n), Buffer.from([0])]);
    assert.equal(
      readRowKeys(trailing, EventType.WRITE_ROWS_V1, trailing.length - 4, columns, keys),
      false,
    );
    const compressed = rowsEvent(EventType.WRITE_ROWS_COMPRESSED_V1, [row('ab', 5, 1n)]);
    assert.equal(
      readRowKeys(
        compressed,
        EventType.WRITE_ROWS_COMPRESSED_V1,
        compressed.length - 4,
        columns,
        keys,
      ),
      false,
      'compressed rows are not read',
    );
    // A NULL key (the NULL bitmap's second bit) cannot be a primary key's: not trusted.
    const nullKey = rowsEvent(EventType.DELETE_ROWS_V1, [
      Buffer.concat([Buffer.from([0b010, 1, 0, 0x41]), Buffer.alloc(8)]),
    ]);
    assert.equal(
      readRowKeys(nullKey, EventType.DELETE_ROWS_V1, nullKey.length - 4, columns, keys),
      false,
    );
  });

  test('a key of two columns: each row’s values in the key’s order, a moved part and MINIMAL images', () => {
    // INT a, VARCHAR(300) v, BIGINT b; the key is (b, a).
    const pairMap = event(
      EventType.TABLE_MAP,
      tableMapBody([3, 15, 8], [0x2c, 0x01], fullMetadata(['A', 'v', 'b'], [2, 0])),
    );
    const pair = readTableColumns(pairMap, pairMap.length - 4)!;
    assert.deepEqual(pair.key, {
      indexes: [2, 0],
      name: 'b,a',
      kinds: [KeyKind.INTEGER, KeyKind.INTEGER],
      widths: [8, 4],
    });
    /** A row image of the columns in `present` (a, v, b), none NULL. */
    const image = (a: number | null, v: string | null, b: bigint | null): Buffer => {
      const parts: Buffer[] = [Buffer.from([0])];
      if (a !== null) parts.push(Buffer.from(Uint32Array.of(a).buffer));
      if (v !== null) parts.push(Buffer.from([v.length, 0]), Buffer.from(v, 'latin1'));
      if (b !== null) {
        const bytes = Buffer.alloc(8);
        bytes.writeBigUInt64LE(b);
        parts.push(bytes);
      }
      return Buffer.concat(parts);
    };
    const rows = (type: number, bitmaps: number[], images: Buffer[]): Buffer =>
      event(
        type,
        Buffer.concat([tableId(42), Buffer.alloc(2), Buffer.from([3, ...bitmaps]), ...images]),
      );
    const keys: number[] = [];
    const insert = rows(EventType.WRITE_ROWS_V1, [0b111], [image(1, 'x', 10n), image(2, '', 20n)]);
    assert.ok(readRowKeys(insert, EventType.WRITE_ROWS_V1, insert.length - 4, pair, keys));
    assert.deepEqual(keys, [10, 1, 20, 2]);
    keys.length = 0;
    // Full images: a row whose v changed (its key once), a row whose a changed (both keys).
    const update = rows(
      EventType.UPDATE_ROWS_V1,
      [0b111, 0b111],
      [image(1, 'x', 10n), image(1, 'y', 10n), image(2, '', 20n), image(3, '', 20n)],
    );
    assert.ok(readRowKeys(update, EventType.UPDATE_ROWS_V1, update.length - 4, pair, keys));
    assert.deepEqual(keys, [10, 1, 20, 2, 20, 3]);
    keys.length = 0;
    // MINIMAL: the before image is the key, the after image only what changed (a, then v).
    const minimal = rows(
      EventType.UPDATE_ROWS_V1,
      [0b101, 0b001],
      [image(1, null, 10n), image(5, null, null)],
    );
    assert.ok(readRowKeys(minimal, EventType.UPDATE_ROWS_V1, minimal.length - 4, pair, keys));
    assert.deepEqual(keys, [10, 1, 10, 5], 'b kept from the before image');
    keys.length = 0;
    const unmoved = rows(
      EventType.UPDATE_ROWS_V1,
      [0b101, 0b010],
      [image(1, null, 10n), image(null, 'z', null)],
    );
    assert.ok(readRowKeys(unmoved, EventType.UPDATE_ROWS_V1, unmoved.length - 4, pair, keys));
    assert.deepEqual(keys, [10, 1]);
    keys.length = 0;
    // A before image without the whole key is not trusted; a part out of reach leaves its row out.
    const partial = rows(EventType.DELETE_ROWS_V1, [0b001], [image(1, null, null)]);
    assert.equal(
      readRowKeys(partial, EventType.DELETE_ROWS_V1, partial.length - 4, pair, keys),
      false,
    );
    keys.length = 0;
    const far = rows(
      EventType.DELETE_ROWS_V1,
      [0b101],
      [image(1, null, 10n ** 15n), image(2, null, 7n)],
    );
    assert.ok(readRowKeys(far, EventType.DELETE_ROWS_V1, far.length - 4, pair, keys));
    assert.deepEqual(keys, [7, 2]);
  });

  test('a BIGINT key beyond what a point read can hold is left out', () => {
    const map8 = event(EventType.TABLE_MAP, tableMapBody([8], [], fullMetadata(['id'], [0])));
    const big = readTableColumns(map8, map8.length - 4)!;
    const value = (n: bigint): Buffer => {
      const bytes = Buffer.alloc(9);
      bytes.writeBigUInt64LE(n, 1);
      return bytes;
    };
    const keys: number[] = [];
    const rows = event(
      EventType.WRITE_ROWS_V1,
      Buffer.concat([
        tableId(42),
        Buffer.alloc(2),
        Buffer.from([1, 1]),
        value(999_999_999_999_999n),
        value(10n ** 15n),
        value(2n ** 64n - 1n),
      ]),
    );
    assert.ok(readRowKeys(rows, EventType.WRITE_ROWS_V1, rows.length - 4, big, keys));
    assert.deepEqual(keys, [999_999_999_999_999]);
  });
});
