/**
 * Differential tests of the query cache: every scenario runs the same statements directly against
 * the server and through the proxy (cache on, two workers, the schema catalog read with an admin
 * account), each side from freshly built tables, and the replies must be identical byte for byte
 * — after writes too, so a stale cached result shows up as a difference. Through the proxy each
 * scenario also checks the cache's counters (SHOW GLOBAL STATUS LIKE 'Qcache%'), so that a proxy
 * which cached nothing, or served hits where it must not, fails as well.
 *
 * Sessions are placed on chosen workers: on the same one to share a store (one session's result
 * served to another, or refused to it), on different ones for invalidation across workers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { readLenencBytes, writeLenencInt, lenencIntSize } from '../../src/protocol/lenenc.ts';
import { LONG_DATA, execute, fetch, sendLongData } from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import {
  ProxyHarness,
  WARM_DB,
  connectDirect,
  differential,
  queryPacket,
  rowsOf,
  runStatements,
  withServerQueryCache,
} from '../support/cache-scenario.ts';
import type { Run, Session } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PORT } from '../support/env.ts';
import type { RawPacket } from '../support/raw-client.ts';

const DB = 'nc_qcache';
const DB2 = 'nc_qcache2';
const USER = 'nc_qcache_user';
const USER_PASSWORD = 'nc-qcache-secret';

/** Drops what any scenario may have left, empties the cache, and creates `ddl` in DB. */
function fresh(...ddl: string[]): string[] {
  return [
    `DROP DATABASE IF EXISTS ${DB}`,
    `DROP DATABASE IF EXISTS ${DB2}`,
    `DROP USER IF EXISTS '${USER}'@'%'`,
    `CREATE DATABASE ${DB}`,
    `USE ${DB}`,
    "SET time_zone = '+00:00'",
    ...ddl,
    'RESET QUERY CACHE',
  ];
}

const KV = [
  'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB',
  "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five')",
];
const KV2 = [
  'CREATE TABLE u (id INT PRIMARY KEY, w INT) ENGINE=InnoDB',
  'INSERT INTO u VALUES (1, 10), (2, 20), (3, 30)',
];

/** A table and a stored function that writes a row of it for each call. */
const LOGGED = [
  'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
  `CREATE FUNCTION logged(x VARCHAR(60)) RETURNS VARCHAR(60) NOT DETERMINISTIC MODIFIES SQL DATA
   BEGIN INSERT INTO audit (note) VALUES (x); RETURN UPPER(x); END`,
];

/**
 * Tables whose writes by key are no point writes: a trigger may change the key it inserts
 * under (lifted), a cascade writes another table (parent's child).
 */
const NO_POINT_WRITES = [
  'CREATE TABLE lifted (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
  'CREATE TRIGGER lift BEFORE INSERT ON lifted FOR EACH ROW SET NEW.id = NEW.id + 100',
  'CREATE TABLE parent (id INT PRIMARY KEY) ENGINE=InnoDB',
  'CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE) ENGINE=InnoDB',
  'INSERT INTO parent VALUES (1), (2)',
  'INSERT INTO child VALUES (1, 1), (2, 2)',
];
const READ_T = 'SELECT * FROM t ORDER BY id';
const READ_U = 'SELECT * FROM u ORDER BY id';
const PREP_T = 'SELECT id, v FROM t WHERE id >= ? ORDER BY id';
const PREP_U = 'SELECT id, w FROM u WHERE id >= ? ORDER BY id';

/** An execution binding one 4-byte integer (MYSQL_TYPE_LONG), as sysbench binds its ids. */
function executeLong(statementId: number, value: number): Buffer {
  const packet = Buffer.alloc(18);
  packet[0] = Command.STMT_EXECUTE;
  packet.writeUInt32LE(statementId, 1);
  packet.writeUInt32LE(1, 6);
  // The null bitmap (one byte, 0) at 10, types sent at 11, LONG and its flags, then the value.
  packet[11] = 1;
  packet[12] = 3;
  packet.writeInt32LE(value, 14);
  return packet;
}

/** The first row's values of a recorded text reply. */
function firstRow(session: Session, packets: RawPacket[]): Array<string | null> {
  return rowsOf(packets, session.client.deprecateEof)[0] ?? [];
}

/** SHOW STATUS rows with their values replaced by '#': the counts are the proxy's own. */
function maskStatusValues(packets: RawPacket[], deprecateEof: boolean): RawPacket[] {
  const header = packets[0]!.payload;
  if (header[0] === PacketHeader.ERR || header[0] === PacketHeader.OK) return packets;
  const firstRowIndex = 1 + 2 + (deprecateEof ? 0 : 1);
  return packets.map((packet, index) => {
    const payload = packet.payload;
    if (index < firstRowIndex || payload[0] === PacketHeader.EOF) return packet;
    const name = readLenencBytes(payload, 0)!;
    const value = Buffer.from('#');
    const masked = Buffer.alloc(name.end + lenencIntSize(value.length) + value.length);
    payload.copy(masked, 0, 0, name.end);
    const at = writeLenencInt(masked, name.end, value.length);
    value.copy(masked, at);
    return { sequenceId: packet.sequenceId, payload: masked };
  });
}

/** COM_STMT_EXECUTE of one BIGINT parameter without resending its type (new-params-bound 0). */
function executeWithoutTypes(statementId: number, value: bigint): Buffer {
  const payload = Buffer.alloc(10 + 1 + 1 + 8);
  payload[0] = Command.STMT_EXECUTE;
  payload.writeUInt32LE(statementId, 1);
  payload[5] = 0;
  payload.writeUInt32LE(1, 6);
  payload[10] = 0; // null bitmap
  payload[11] = 0; // types not sent again
  payload.writeBigInt64LE(value, 12);
  return payload;
}

function initDb(database: string): Buffer {
  return Buffer.concat([Buffer.from([Command.INIT_DB]), Buffer.from(database)]);
}

/**
 * SET SESSION query_cache_type is the server's variable: the proxy forwards it, and its reply is
 * compared like any other. The scenarios that set it run with the server's query_cache_type ON
 * and its query_cache_size 0, so the server accepts every value and its own cache stays off.
 */
async function setCacheType(session: Session, value: string): Promise<void> {
  await session.query(`SET SESSION query_cache_type = ${value}`);
}

type WriteRound = [
  string,
  'writer' | 'local',
  /** The table it writes: the other one's results must still be hits. */
  't' | 'u' | 'both',
  (session: Session) => Promise<unknown>,
];

/**
 * A reader on worker 0 caches t and u (text and binary); after each write, by a writer on worker 1
 * or one on the reader's own worker, the written table's results are read from the server and
 * the other's are still hits.
 */
function writeThenRead(rounds: WriteRound[]): (run: Run) => Promise<void> {
  return async (run) => {
    const reader = await run.session('reader', { worker: 0 });
    const writers = {
      writer: await run.session('writer', { worker: 1 }),
      local: await run.session('local writer', { worker: 0 }),
    };
    const readAll = async (): Promise<void> => {
      await reader.query(READ_T);
      await reader.execute(PREP_T, [0]);
      await reader.query(READ_U);
      await reader.execute(PREP_U, [0]);
    };
    await readAll();
    await run.expect({ hits: 0, inserts: 4 }, 'first reads');
    await readAll();
    await run.expect({ hits: 4, inserts: 0 }, 'second reads');
    for (const [name, who, written, write] of rounds) {
      await write(writers[who]);
      await run.expect({ invalidations: 1, invalidations_all: 0 }, name);
      await readAll();
      const stillFresh = written === 'both' ? 0 : 2;
      await run.expect(
        { hits: stillFresh, inserts: 4 - stillFresh },
        `reads after ${name}: only the written table's results are read again`,
      );
      await readAll();
      await run.expect({ hits: 4, inserts: 0 }, `reads again after ${name}`);
    }
  };
}

/** Through the proxy: repeats `sql` (unrecorded) until the second of two runs is a hit. */
async function untilCached(run: Run, session: Session, sql: string): Promise<void> {
  const proxy = run.proxy;
  if (proxy === null) return;
  const deadline = Date.now() + 5000;
  for (;;) {
    await session.raw(sql);
    const before = (await proxy.counters()).get('hits');
    await session.raw(sql);
    if ((await proxy.counters()).get('hits') !== before) break;
    if (Date.now() > deadline) throw new Error(`${sql} was not cached again within 5 s`);
    await sleep(10);
  }
  await run.baseline();
}

describe('query cache: directly and through the proxy, byte for byte', () => {
  let proxy: ProxyHarness;
  /** A second proxy that stores no result over 1 KB. */
  let limited: ProxyHarness;
  let savedLocalInfile = '1';

  before(async () => {
    const client = await connectDirect();
    savedLocalInfile = rowsOf(await client.query('SELECT @@GLOBAL.local_infile'), false)[0]![0]!;
    client.close();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${WARM_DB}`,
      `CREATE DATABASE ${WARM_DB}`,
      `CREATE TABLE ${WARM_DB}.w (id INT PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT INTO ${WARM_DB}.w VALUES (1)`,
      'SET GLOBAL local_infile = 1',
    ]);
    [proxy, limited] = await Promise.all([
      ProxyHarness.start(),
      ProxyHarness.start(['--query-cache-limit', '1K']),
    ]);
  });

  after(async () => {
    const codes = await Promise.all([proxy.stop(), limited.stop()]);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `DROP DATABASE IF EXISTS ${DB2}`,
      `DROP DATABASE IF EXISTS ${WARM_DB}`,
      'DROP DATABASE IF EXISTS `nc_qcache_ї`',
      `DROP USER IF EXISTS '${USER}'@'%'`,
      `SET GLOBAL local_infile = ${savedLocalInfile}`,
    ]);
    assert.deepEqual(codes, [0, 0], 'the proxies exit cleanly');
  });

  const scenario = (ddl: string[], script: (run: Run) => Promise<void>): Promise<void> =>
    differential(proxy, { database: DB, setup: fresh(...ddl) }, script);

  test('repeated reads hit: text and binary protocol, per worker, per capabilities', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      const c = await run.session('C', { worker: 1 });
      const d = await run.session('D', { worker: 0, deprecateEof: true });

      await a.query(READ_T);
      await run.expect({ hits: 0, inserts: 1, not_cached: 0 }, 'first read');
      await a.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 2, inserts: 0, not_cached: 0 }, 'repeated reads');
      await b.query(READ_T);
      await run.expect({ hits: 1, inserts: 0 }, 'another session, same worker and state');
      // One store for every worker: what worker 0 stored is a hit on worker 1.
      await c.query(READ_T);
      await run.expect({ hits: 1, inserts: 0 }, 'a session on the other worker');
      await c.query('SELECT v FROM t WHERE id = 1');
      await c.query('SELECT v FROM t WHERE id = 1');
      await a.query('SELECT v FROM t WHERE id = 1');
      await run.expect({ hits: 2, inserts: 1 }, 'stored on the other worker, hit on both');
      await d.query(READ_T);
      await run.expect({ hits: 0, inserts: 1 }, 'DEPRECATE_EOF is another key');
      await d.query(READ_T);
      await run.expect({ hits: 1, inserts: 0 }, 'repeated with DEPRECATE_EOF');
      await a.query('SELECT v FROM t WHERE id = 2');
      await a.query('SELECT v FROM t WHERE id = 3');
      await a.query('SELECT v FROM t WHERE id = 2');
      await run.expect({ hits: 1, inserts: 2 }, 'other texts are other entries');
      await a.query('SELECT * FROM t WHERE id = 99');
      await a.query('SELECT * FROM t WHERE id = 99');
      await run.expect({ hits: 1, inserts: 1 }, 'an empty result is cached too');

      // Binary protocol: statement text plus parameter values.
      await a.execute(PREP_T, [2]);
      await run.expect({ hits: 0, inserts: 1 }, 'first execution');
      await a.execute(PREP_T, [2]);
      await run.expect({ hits: 1, inserts: 0 }, 'same parameters');
      await a.execute(PREP_T, [4]);
      await run.expect({ hits: 0, inserts: 1 }, 'other parameters');
      await a.execute(PREP_T, ['2']);
      await run.expect({ hits: 0, inserts: 1 }, 'a string parameter is another key');
      // The key is the statement and its parameters, not the statement id nor what the
      // server has seen: another session's first execution hits.
      await b.execute(PREP_T, [4]);
      await run.expect({ hits: 1, inserts: 0 }, 'another session: first execution');
      await b.execute(PREP_T, [4]);
      await run.expect({ hits: 1, inserts: 0 }, 'another session: second execution');
      await a.execute(READ_T);
      await run.expect({ hits: 0, inserts: 1 }, 'binary and text results are separate');
      await a.execute(READ_T);
      await run.expect({ hits: 1, inserts: 0 }, 'binary, no parameters');
      await d.execute(PREP_T, [2]);
      await d.execute(PREP_T, [2]);
      await run.expect({ hits: 1, inserts: 1 }, 'binary with DEPRECATE_EOF');
      const id = await a.prepare('SELECT v FROM t WHERE id = ?');
      await a.command('execute with types', execute(id, [3]));
      await a.command('execute without resending types', executeWithoutTypes(id, 3n));
      await a.command('execute without types, another value', executeWithoutTypes(id, 5n));
      await run.expect({ hits: 1, inserts: 2 }, 'types remembered from the last execution');
      await a.command('execute with a cursor', execute(id, [3], true));
      await a.command('fetch', fetch(id, 10));
      await run.expect({ hits: 0, bypass_uncacheable: 1 }, 'a cursor is not cached');
      // Long data is not in the execute packet: such executions are never keyed by it.
      const byValue = await a.prepare('SELECT id FROM t WHERE v = ?');
      for (const value of ['three', 'four', 'three']) {
        a.client.sendOnly(sendLongData(byValue, 0, Buffer.from(value)));
        await a.command(`execute with long data '${value}'`, execute(byValue, [LONG_DATA]));
      }
      await run.expect({ hits: 0, inserts: 0, bypass_uncacheable: 3 }, 'long data');
      await a.command('execute with a value', execute(byValue, ['four']));
      await a.command('execute with a value again', execute(byValue, ['four']));
      await run.expect({ hits: 1, inserts: 1 }, 'the same statement without long data');
    }));

  test('write then read: single-table writes invalidate what they wrote, and only that', () =>
    scenario(
      [...KV, ...KV2],
      writeThenRead([
        ['UPDATE', 'writer', 't', (s) => s.query("UPDATE t SET v = 'updated' WHERE id = 1")],
        ['INSERT', 'writer', 't', (s) => s.query("INSERT INTO t VALUES (10, 'inserted')")],
        ['DELETE', 'writer', 't', (s) => s.query('DELETE FROM t WHERE id = 2')],
        ['REPLACE', 'writer', 't', (s) => s.query("REPLACE INTO t VALUES (3, 'replaced')")],
        [
          'INSERT ... SELECT',
          'writer',
          't',
          (s) => s.query("INSERT INTO t SELECT id + 100, CONCAT('copy ', w) FROM u"),
        ],
        [
          'INSERT ... ON DUPLICATE KEY UPDATE',
          'writer',
          'u',
          (s) => s.query('INSERT INTO u VALUES (1, 0) ON DUPLICATE KEY UPDATE w = w + 1'),
        ],
        ['a failed INSERT', 'writer', 't', (s) => s.query("INSERT INTO t VALUES (1, 'dup')", 1062)],
        ['UPDATE on the same worker', 'local', 't', (s) => s.query("UPDATE t SET v = 'local'")],
        [
          'prepared UPDATE',
          'writer',
          'u',
          (s) => s.execute('UPDATE u SET w = ? WHERE id = ?', [-1, 2]),
        ],
        [
          'prepared INSERT',
          'local',
          't',
          (s) => s.execute('INSERT INTO t VALUES (?, ?)', [30, 'prepared']),
        ],
      ]),
    ));

  test('write then read: multi-table writes, TRUNCATE, LOAD DATA LOCAL, multi-statements', () =>
    scenario(
      [...KV, ...KV2],
      writeThenRead([
        [
          'multi-table UPDATE of one table',
          'writer',
          'u',
          (s) => s.query('UPDATE t JOIN u ON u.id = t.id SET u.w = u.w * 10'),
        ],
        [
          'multi-table UPDATE with unqualified columns',
          'writer',
          'both',
          (s) => s.query("UPDATE t, u SET v = CONCAT(v, '!'), w = w + 1 WHERE t.id = u.id"),
        ],
        [
          'multi-table DELETE through an alias',
          'writer',
          'u',
          (s) => s.query('DELETE x FROM u AS x JOIN t AS y ON y.id = x.id WHERE y.id = 1'),
        ],
        [
          'multi-table DELETE ... USING',
          'local',
          't',
          (s) => s.query('DELETE FROM t USING t JOIN u ON u.id = t.id WHERE u.id = 3'),
        ],
        ['TRUNCATE', 'writer', 'u', (s) => s.query('TRUNCATE TABLE u')],
        [
          'LOAD DATA LOCAL INFILE',
          'writer',
          't',
          (s) => s.load("LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE t", '20\tloaded\n21\tx\n'),
        ],
        [
          'LOAD DATA LOCAL INFILE on the same worker',
          'local',
          'u',
          (s) => s.load("LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE u", '7\t70\n8\t80\n'),
        ],
        [
          'a multi-statement text',
          'writer',
          'both',
          (s) => s.query("INSERT INTO t VALUES (40, 'multi'); UPDATE u SET w = w + 1 WHERE id = 7"),
        ],
      ]),
    ));

  test('views: reads through a view are invalidated by writes to its base tables', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE other (id INT PRIMARY KEY, x INT)',
        'INSERT INTO other VALUES (1, 1)',
        'CREATE VIEW v AS SELECT t.id, t.v, u.w FROM t JOIN u ON u.id = t.id',
        'CREATE VIEW vv AS SELECT id, v FROM v WHERE id > 1',
        'CREATE VIEW vo AS SELECT * FROM other',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readViews = async (): Promise<void> => {
          await reader.query('SELECT * FROM v ORDER BY id');
          await reader.query('SELECT * FROM vv ORDER BY id');
          await reader.execute('SELECT * FROM v WHERE id >= ? ORDER BY id', [2]);
          await reader.query('SELECT * FROM vo');
        };
        await readViews();
        await run.expect({ hits: 0, inserts: 4 }, 'first reads through views');
        await readViews();
        await run.expect({ hits: 4, inserts: 0 }, 'repeated reads through views');

        await writer.query("UPDATE t SET v = 'changed' WHERE id = 2");
        await readViews();
        await run.expect({ hits: 1, inserts: 3 }, 'after a write to a base table');
        await writer.query('UPDATE u SET w = 99 WHERE id = 3');
        await readViews();
        await run.expect({ hits: 1, inserts: 3 }, 'after a write to the other base table');
        await writer.query("UPDATE v SET v = 'through the view' WHERE id = 3");
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'a write through a view');
        await readViews();
        await run.expect({ hits: 1, inserts: 3 }, 'after a write through the view');
        await writer.query('UPDATE other SET x = 2');
        await readViews();
        await run.expect({ hits: 3, inserts: 1 }, 'a view over another table');
        await readViews();
        await run.expect({ hits: 4, inserts: 0 }, 'all cached again');
      },
    ));

  test('a write text seen before its table became a view writes the view’s base table after', () =>
    scenario([...KV, 'CREATE TABLE w (id INT PRIMARY KEY, v VARCHAR(40))'], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      // Sent twice, the text is kept with what its tables came to then (w's slot alone), and
      // a text of its shape shares that.
      for (const sql of [
        "UPDATE w SET v = 'x' WHERE id = 1",
        "UPDATE w SET v = 'x' WHERE id = 1",
        "UPDATE w SET v = 'y' WHERE id = 2",
      ])
        await a.query(sql);
      await b.query('DROP TABLE w');
      await b.query('CREATE VIEW w AS SELECT id, v FROM t');
      await run.settle();
      await a.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 1, inserts: 1 }, 't cached');
      // The very text, then a new one of its shape: both now write t, through the view.
      await a.query("UPDATE w SET v = 'x' WHERE id = 1");
      await a.query(READ_T);
      await a.query("UPDATE w SET v = 'z' WHERE id = 2");
      await a.query(READ_T);
      await run.expect({ hits: 0, inserts: 2 }, 'each write through the view invalidated t');
    }));

  test('triggers: a write to a table invalidates what its triggers write', () =>
    scenario(
      [
        ...KV,
        'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
        'CREATE TABLE audit2 (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
        "CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO audit (note) VALUES (CONCAT('inserted ', NEW.id))",
        `CREATE TRIGGER t_au AFTER UPDATE ON t FOR EACH ROW BEGIN
           INSERT INTO audit (note) VALUES (CONCAT('updated ', NEW.id));
           INSERT INTO audit2 (note) VALUES (CONCAT(OLD.v, ' -> ', NEW.v));
         END`,
        'CREATE TABLE w (id INT PRIMARY KEY)',
        'INSERT INTO w VALUES (1), (2)',
        `CREATE TRIGGER w_bd BEFORE DELETE ON w FOR EACH ROW BEGIN
           IF OLD.id > 0 THEN INSERT INTO audit2 (note) VALUES (CONCAT('deleted ', OLD.id)); END IF;
         END`,
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readAudit = async (): Promise<void> => {
          await reader.query('SELECT * FROM audit ORDER BY id');
          await reader.execute('SELECT note FROM audit WHERE id >= ? ORDER BY id', [1]);
          await reader.query('SELECT * FROM audit2 ORDER BY id');
        };
        await readAudit();
        await readAudit();
        await run.expect({ hits: 3, inserts: 3 }, 'audit tables cached');

        // Triggers are followed per table, whatever their event: a write to t invalidates what
        // any of t's triggers writes (audit and audit2).
        await writer.query("INSERT INTO t VALUES (6, 'six')");
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'INSERT with a trigger');
        await readAudit();
        await run.expect({ hits: 0, inserts: 3 }, 'the AFTER INSERT trigger wrote audit');
        await readAudit();
        await run.expect({ hits: 3 }, 'cached again');
        await writer.execute('INSERT INTO t VALUES (?, ?)', [7, 'seven']);
        await readAudit();
        await run.expect({ hits: 0, inserts: 3 }, 'a prepared INSERT fires it too');
        await writer.query("UPDATE t SET v = 'SIX' WHERE id = 6");
        await readAudit();
        await run.expect({ hits: 0, inserts: 3 }, 'the AFTER UPDATE block wrote both');
        await readAudit();
        await run.expect({ hits: 3 }, 'cached again');
        // A trigger with flow control is not followed: its table's writes invalidate everything.
        await writer.query('DELETE FROM w WHERE id = 1');
        await run.expect({ invalidations: 0, invalidations_all: 1 }, 'DELETE with an IF trigger');
        await readAudit();
        await run.expect({ hits: 0, inserts: 3 }, 'after the DELETE');
      },
    ));

  test('foreign keys: ON DELETE CASCADE and ON UPDATE SET NULL invalidate the children', () =>
    scenario(
      [
        'CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB',
        `CREATE TABLE child (id INT PRIMARY KEY, parent_id INT,
           FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB`,
        `CREATE TABLE child2 (id INT PRIMARY KEY, parent_id INT NULL,
           FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE SET NULL ON UPDATE SET NULL) ENGINE=InnoDB`,
        `CREATE TABLE grandchild (id INT PRIMARY KEY, child_id INT,
           FOREIGN KEY (child_id) REFERENCES child (id) ON DELETE CASCADE) ENGINE=InnoDB`,
        'CREATE TABLE unrelated (id INT PRIMARY KEY) ENGINE=InnoDB',
        "INSERT INTO parent VALUES (1, 'p1'), (2, 'p2'), (3, 'p3')",
        'INSERT INTO child VALUES (10, 1), (11, 1), (20, 2), (30, 3)',
        'INSERT INTO child2 VALUES (100, 1), (200, 2), (300, 3)',
        'INSERT INTO grandchild VALUES (1000, 10), (2000, 20)',
        'INSERT INTO unrelated VALUES (1)',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readChildren = async (): Promise<void> => {
          await reader.query('SELECT * FROM child ORDER BY id');
          await reader.query('SELECT * FROM child2 ORDER BY id');
          await reader.execute('SELECT * FROM grandchild WHERE id > ? ORDER BY id', [0]);
          await reader.query('SELECT * FROM unrelated');
        };
        await readChildren();
        await readChildren();
        await run.expect({ hits: 4, inserts: 4 }, 'children cached');

        await writer.query('DELETE FROM parent WHERE id = 1');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'DELETE of a parent');
        await readChildren();
        await run.expect({ hits: 1, inserts: 3 }, 'cascaded to child, child2 and grandchild');
        await writer.query('UPDATE parent SET id = 22 WHERE id = 2');
        await readChildren();
        await run.expect({ hits: 1, inserts: 3 }, 'UPDATE cascaded and set NULL');
        await writer.execute('DELETE FROM parent WHERE id = ?', [3]);
        await readChildren();
        await run.expect({ hits: 1, inserts: 3 }, 'a prepared DELETE cascades too');
      },
    ));

  test('MERGE tables read and write their UNION tables; a sequence is never cached', () =>
    scenario(
      [
        'CREATE TABLE t1 (a INT) ENGINE=MyISAM',
        'CREATE TABLE t2 (a INT) ENGINE=MyISAM',
        'INSERT INTO t1 VALUES (1), (2)',
        'INSERT INTO t2 VALUES (10), (20)',
        'CREATE TABLE m3 (a INT) ENGINE=MERGE UNION=(t1, t2) INSERT_METHOD=LAST',
        'CREATE TABLE unrelated (id INT PRIMARY KEY) ENGINE=MyISAM',
        'INSERT INTO unrelated VALUES (1)',
        'CREATE SEQUENCE s',
        'CREATE TABLE numbered (id INT DEFAULT NEXTVAL(s), v INT)',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readAll = async (): Promise<void> => {
          await reader.query('SELECT * FROM t1 ORDER BY a');
          await reader.query('SELECT * FROM t2 ORDER BY a');
          await reader.query('SELECT * FROM m3 ORDER BY a');
          await reader.query('SELECT * FROM unrelated');
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 4, inserts: 4 }, 'UNION tables and the MERGE table cached');

        await writer.query('UPDATE m3 SET a = a + 1 WHERE a < 5');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'UPDATE through MERGE');
        await readAll();
        await run.expect({ hits: 1, inserts: 3 }, 'it wrote t1 (and may have written t2)');
        await writer.query('INSERT INTO m3 VALUES (30)');
        await readAll();
        await run.expect({ hits: 1, inserts: 3 }, 'INSERT through MERGE');
        await writer.query('DELETE FROM t2 WHERE a = 30');
        await readAll();
        await run.expect({ hits: 2, inserts: 2 }, 'a write to t2 changes what m3 reads');
        await writer.execute('DELETE FROM m3 WHERE a = ?', [2]);
        await readAll();
        await run.expect({ hits: 1, inserts: 3 }, 'a prepared DELETE through MERGE');

        // An INSERT may advance a sequence through a column default: never cached.
        await reader.query('SELECT next_not_cached_value FROM s');
        await writer.query('INSERT INTO numbered (v) VALUES (1)');
        await reader.query('SELECT next_not_cached_value FROM s');
        await run.expect({ hits: 0, inserts: 0 }, 'the default advanced the sequence');
      },
    ));

  test('SET GLOBAL invalidates everything: a global setting may change any result', () =>
    scenario(KV, async (run) => {
      const reader = await run.session('reader', { worker: 0 });
      const admin = await run.session('admin', { worker: 1 });
      await reader.query(READ_T);
      await reader.query(READ_T);
      await run.expect({ hits: 1, inserts: 1 }, 'cached');
      // ft_boolean_syntax changes what MATCH ... AGAINST returns; this one changes nothing.
      await admin.query('SET GLOBAL max_connect_errors = @@global.max_connect_errors');
      await run.expect({ invalidations_all: 1 }, 'SET GLOBAL');
      await reader.query(READ_T);
      await run.expect({ hits: 0, inserts: 1 }, 'read again from the server');
    }));

  test('a table an enabled event writes is never served from the cache', () =>
    scenario(
      [
        ...KV,
        'CREATE TABLE ticks (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB',
        // Enabled, first run an hour from now: both sides see the same rows meanwhile.
        'CREATE EVENT tick ON SCHEDULE EVERY 1 HOUR STARTS CURRENT_TIMESTAMP + INTERVAL 1 HOUR DO INSERT INTO ticks VALUES (NULL)',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        await reader.query('SELECT COUNT(*) FROM ticks');
        await reader.query('SELECT COUNT(*) FROM ticks');
        await reader.query(READ_T);
        await reader.query(READ_T);
        await run.expect({ hits: 1, inserts: 1 }, 'only the table no event writes is cached');
      },
    ));

  test('temporary tables: a session’s temporary table is never served to others, nor theirs to it', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await b.query(READ_T);
      await b.execute(PREP_T, [0]);
      await run.expect({ inserts: 2 }, 'B caches the base table');

      await a.query('CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(40))');
      await a.query("INSERT INTO t VALUES (1, 'temporary one'), (9, 'temporary nine')");
      await run.expect({ invalidations: 0, invalidations_all: 0 }, 'writes to a temporary table');
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await a.query(READ_T);
      await run.expect(
        { hits: 0, inserts: 0, bypass_temporary_table: 3 },
        'A reads its temporary table from the server',
      );
      await b.query(READ_T);
      await b.execute(PREP_T, [0]);
      await run.expect({ hits: 2 }, 'B still gets the base table from the cache');
      await a.query("UPDATE t SET v = 'temporary changed' WHERE id = 9");
      await b.query(READ_T);
      await run.expect({ hits: 1, invalidations: 0 }, 'a write to the temporary table');
      await b.query("UPDATE t SET v = 'base changed' WHERE id = 1");
      await b.query(READ_T);
      await a.query(READ_T);
      await run.expect({ inserts: 1, bypass_temporary_table: 1 }, 'B wrote the base table');

      await a.query('DROP TEMPORARY TABLE t');
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'after DROP TEMPORARY TABLE, A sees the base table');
      await a.execute(PREP_T, [0]);
      await a.execute(PREP_T, [0]);
      await run.expect({ hits: 1, inserts: 1 }, 'and its prepared statement reads the base too');

      // DROP TABLE without TEMPORARY drops the temporary table first.
      await a.query('CREATE TEMPORARY TABLE t (id INT)');
      await a.query('INSERT INTO t VALUES (42)');
      await a.query(READ_T);
      await a.query('DROP TABLE t');
      await run.expect({ bypass_temporary_table: 1 }, 'DROP TABLE of a temporary table');
      // Which table DROP TABLE dropped is the server's business: the catalog reloads.
      await run.settle();
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'the base table is still cached');

      // COM_RESET_CONNECTION drops temporary tables.
      await a.query('CREATE TEMPORARY TABLE t (id INT)');
      await a.query(READ_T);
      await a.command('reset connection', Buffer.from([Command.RESET_CONNECTION]));
      await a.query(READ_T);
      await run.expect({ hits: 1, bypass_temporary_table: 1 }, 'after COM_RESET_CONNECTION');
    }));

  for (const end of ['ROLLBACK', 'COMMIT'] as const) {
    test(`own writes in a transaction, then ${end}`, () =>
      scenario([...KV, ...KV2], async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        const c = await run.session('C', { worker: 1 });
        for (const session of [b, c]) {
          await session.query(READ_T);
          await session.execute(PREP_T, [0]);
          await session.query(READ_U);
        }
        // B stores, C (on the other worker) is served what B stored.
        await run.expect({ inserts: 3, hits: 3 }, 'cached before the transaction');

        await a.query('BEGIN');
        await a.query("UPDATE t SET v = 'uncommitted' WHERE id = 1");
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await run.expect({ hits: 0, bypass_own_writes: 2 }, 'A reads its own write');
        await a.query(READ_U);
        await run.expect({ hits: 1 }, 'A reads a table it did not write from the cache');
        for (const session of [b, c]) {
          await session.query(READ_T);
          await session.execute(PREP_T, [0]);
          await session.query(READ_U);
        }
        await run.expect(
          { hits: 2, inserts: 0, stale_fills_refused: 4 },
          'others read the committed value from the server, and it is not stored',
        );
        await b.query(READ_T);
        await run.expect({ hits: 0, stale_fills_refused: 1 }, 'still in flight');

        await a.query(end);
        for (const session of [a, b, c]) {
          await session.query(READ_T);
          await session.execute(PREP_T, [0]);
        }
        await run.expect({ hits: 4, inserts: 2 }, `after ${end}`);
        await a.query(READ_T);
        await c.query(READ_T);
        await run.expect({ hits: 2 }, `cached after ${end}`);
      }));
  }

  test('a connection closed inside a transaction releases the tables it wrote', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      const watcher = await run.session('watcher', { worker: 1 });
      await b.query(READ_T);
      await a.query('BEGIN');
      await a.query("UPDATE t SET v = 'never committed' WHERE id = 1");
      await b.query(READ_T);
      await run.expect({ hits: 0, stale_fills_refused: 1 }, 'in flight');
      a.client.destroy();
      // The proxy hears of the close on its own time: wait until t is cached again.
      await untilCached(run, watcher, 'SELECT id, v FROM t');
      await b.query(READ_T);
      await b.query(READ_T);
      await run.expect({ hits: 1, inserts: 1 }, 'after the connection closed');
    }));

  test('XA transactions: writes are in flight until XA COMMIT or XA ROLLBACK', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await b.query(READ_T);
      await b.query(READ_U);
      await run.baseline();
      await a.query("XA START 'nc1'");
      await a.query("UPDATE t SET v = 'xa' WHERE id = 1");
      await b.query(READ_T);
      await a.query("XA END 'nc1'");
      await a.query("XA PREPARE 'nc1'");
      await b.query(READ_T);
      await b.query(READ_T);
      await b.query(READ_U);
      await run.expect({ hits: 1 }, 'prepared, not committed');
      await a.query("XA COMMIT 'nc1'");
      await b.query(READ_T);
      await b.query(READ_T);
      await run.expect({ hits: 1 }, 'after XA COMMIT');

      await a.query("XA START 'nc2'");
      await a.query('UPDATE u SET w = 0 WHERE id = 1');
      await a.query("XA END 'nc2'");
      await b.query(READ_U);
      await a.query("XA COMMIT 'nc2' ONE PHASE");
      await b.query(READ_U);
      await a.query("XA START 'nc3'");
      await a.query('UPDATE u SET w = -5 WHERE id = 2');
      await a.query("XA END 'nc3'");
      await a.query("XA PREPARE 'nc3'");
      await b.query(READ_U);
      await a.query("XA ROLLBACK 'nc3'");
      await b.query(READ_U);
      await b.query(READ_U);
      await b.query(READ_T);
      // XA COMMIT may publish writes of another session: it invalidates everything.
      await run.expect(
        { hits: 1, invalidations_all: 1, stale_fills_refused: 2 },
        'after XA COMMIT ONE PHASE and XA ROLLBACK',
      );
    }));

  test('pipelined commands: each is answered in order, from the cache where it may be', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await a.query(READ_T);
      await a.query(READ_U);
      await run.baseline();
      await a.pipeline([
        ['READ_T', queryPacket(READ_T)],
        ['READ_U', queryPacket(READ_U)],
        ['update t', queryPacket("UPDATE t SET v = 'pipelined' WHERE id = 1")],
        ['READ_T after the update', queryPacket(READ_T)],
        ['READ_T again', queryPacket(READ_T)],
        ['FOUND_ROWS', queryPacket('SELECT FOUND_ROWS()')],
        ['ping', Buffer.from([Command.PING])],
        ['READ_U again', queryPacket(READ_U)],
      ]);
      await run.expect({ hits: 4, inserts: 1 }, 'pipelined reads');
      await b.pipeline([
        ['B: update u', queryPacket('UPDATE u SET w = w + 1')],
        ['B: READ_U', queryPacket(READ_U)],
      ]);
      await a.pipeline([
        ['READ_U after B', queryPacket(READ_U)],
        ['READ_T', queryPacket(READ_T)],
        ['multi', queryPacket(`${READ_T}; ${READ_U}`)],
      ]);
      // B stored READ_U after its write; A (on the other worker) is served it.
      await run.expect({ hits: 2, inserts: 1 }, 'after a write by another session');
    }));

  test('REPEATABLE READ: a transaction is served only what its snapshot sees', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await a.query(READ_U);
      await run.expect({ inserts: 3 }, 'cached before the transaction');

      await a.query('BEGIN');
      await a.query(READ_T);
      await run.expect({ hits: 0, inserts: 1 }, 'the first read goes to the server');
      await a.query(READ_U);
      await a.execute(PREP_T, [0]);
      await run.expect({ hits: 2 }, 'later reads of unchanged tables hit');

      await b.query("UPDATE t SET v = 'new' WHERE id = 1");
      await b.query(READ_T);
      await b.execute(PREP_T, [0]);
      await run.expect({ hits: 0, inserts: 2 }, 'B caches the new value');
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await run.expect(
        { hits: 0, inserts: 0, stale_hits_refused: 2, stale_fills_refused: 2 },
        'A gets its snapshot from the server and it is not stored',
      );
      await a.query(READ_U);
      await run.expect({ hits: 1 }, 'an unchanged table still hits inside the snapshot');
      await a.query('COMMIT');
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await run.expect({ hits: 2 }, 'after COMMIT A sees the new value, from the cache');

      // START TRANSACTION READ ONLY: a hit carries the session's status flags.
      await a.query('START TRANSACTION READ ONLY');
      await a.query(READ_U);
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await run.expect({ hits: 2 }, 'read-only transaction');
      await a.query('COMMIT');
      // Stored inside the transaction, served outside: the status flags are the session's.
      await b.query(READ_U);
      await run.expect({ hits: 1 }, 'a result stored in a transaction, outside it');

      // WITH CONSISTENT SNAPSHOT takes the snapshot at once.
      await a.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'consistent snapshot: the first read may hit');
      await b.query("UPDATE t SET v = 'newer' WHERE id = 1");
      await a.query(READ_T);
      await b.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 0 }, 'changed after the snapshot');
      await a.query('COMMIT');
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'committed');

      // With DEPRECATE_EOF the status a hit must patch is in the closing OK packet.
      const e = await run.session('E', { worker: 0, deprecateEof: true });
      await e.query(READ_T);
      await e.query(READ_U);
      await e.query('BEGIN');
      await e.query(READ_U);
      await e.query(READ_T);
      await e.query('COMMIT');
      await e.query('SET autocommit = 0');
      await e.query(READ_U);
      await e.query(READ_T);
      await e.query('COMMIT');
      await run.expect({ hits: 2, inserts: 4 }, 'DEPRECATE_EOF hits inside transactions');
    }));

  test('autocommit=0: the first read of each transaction goes to the server', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await b.query(READ_T);
      await b.query(READ_U);
      await a.query('SET autocommit = 0');
      await run.baseline();

      await a.query(READ_T);
      await run.expect({ hits: 0 }, 'the first read starts a transaction');
      await a.query(READ_T);
      await a.query(READ_U);
      await run.expect({ hits: 2 }, 'then reads may hit');
      await b.query("UPDATE t SET v = 'b wrote' WHERE id = 2");
      await b.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 0, inserts: 1 }, 'A keeps its snapshot');
      await a.query('COMMIT');
      await a.query(READ_T);
      await run.expect({ hits: 0 }, 'a new transaction starts at the server');
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'and then hits');

      await a.query("UPDATE t SET v = 'a wrote' WHERE id = 3");
      await a.query(READ_T);
      await b.query(READ_T);
      await b.execute(PREP_T, [0]);
      await run.expect({ hits: 0, bypass_own_writes: 1 }, 'an open write in autocommit=0');
      await a.query('ROLLBACK');
      await a.query(READ_T);
      await b.query(READ_T);
      await a.query("UPDATE t SET v = 'a committed' WHERE id = 3");
      await a.query('COMMIT');
      await b.query(READ_T);
      await b.query(READ_T);
      await a.query('SET autocommit = 1');
      await a.query(READ_T);
      await run.expect({ hits: 3 }, 'after COMMIT and autocommit=1');
    }));

  test('savepoints: ROLLBACK TO SAVEPOINT keeps the transaction and its marks', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await b.query(READ_T);
      await b.query(READ_U);
      await run.baseline();
      await a.query('BEGIN');
      await a.query("UPDATE t SET v = 'kept' WHERE id = 1");
      await a.query('SAVEPOINT sp');
      await a.query('UPDATE u SET w = -1');
      await a.query(READ_U);
      await a.query('ROLLBACK TO SAVEPOINT sp');
      await a.query(READ_U);
      await a.query(READ_T);
      await b.query(READ_T);
      await b.query(READ_U);
      await run.expect({ hits: 0 }, 'nothing written in the transaction is served');
      await a.query('SAVEPOINT sp2');
      await a.query("UPDATE t SET v = 'released' WHERE id = 2");
      await a.query('RELEASE SAVEPOINT sp2');
      await a.query('COMMIT');
      await b.query(READ_T);
      await b.query(READ_U);
      await b.query(READ_T);
      await b.query(READ_U);
      await run.expect({ hits: 2, inserts: 2 }, 'after COMMIT');
    }));

  test('implicit commit: DDL inside a transaction commits its writes', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await b.query(READ_T);
      await a.query('BEGIN');
      await a.query("UPDATE t SET v = 'committed by DDL' WHERE id = 1");
      await b.query(READ_T);
      await run.expect({ hits: 0, inserts: 1, stale_fills_refused: 1 }, 'an open write');
      await a.query('CREATE TABLE x (id INT)');
      await b.query(READ_T);
      await a.query(READ_T);
      await a.query('ROLLBACK');
      await b.query(READ_T);
      await a.query(READ_T);
      await run.settle();

      await a.query('BEGIN');
      await a.query("UPDATE t SET v = 'committed by TRUNCATE' WHERE id = 2");
      await b.query(READ_T);
      await b.query(READ_U);
      await run.expect({ hits: 0, inserts: 1, stale_fills_refused: 1 }, 'another open write');
      await a.query('TRUNCATE TABLE u');
      await b.query(READ_T);
      await b.query(READ_U);
      await run.expect({ hits: 0, inserts: 2 }, 'committed by TRUNCATE');
      await a.query('ROLLBACK');
      await b.query(READ_T);
      await b.query(READ_U);
      await a.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 4, inserts: 0 }, 'nothing was left to roll back');
    }));

  test('locking reads always go to the server', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await b.query(READ_T);
      await run.baseline();
      for (const lock of ['FOR UPDATE', 'LOCK IN SHARE MODE']) {
        await a.query(`${READ_T} ${lock}`);
        await a.query(`${READ_T} ${lock}`);
        await a.execute(`SELECT * FROM t WHERE id >= ? ORDER BY id ${lock}`, [0]);
        await a.execute(`SELECT * FROM t WHERE id >= ? ORDER BY id ${lock}`, [0]);
      }
      await run.expect(
        { hits: 0, inserts: 0, not_cached: 8 },
        'locking reads outside a transaction',
      );

      await a.query('BEGIN');
      await a.query(READ_T);
      await b.query("UPDATE t SET v = 'changed' WHERE id = 4");
      await b.query(READ_T);
      await a.query(`${READ_T} FOR UPDATE`);
      await a.query(READ_T);
      await a.query(`${READ_T} LOCK IN SHARE MODE`);
      await a.query('COMMIT');
      await run.expect({ hits: 0 }, 'the latest rows for the lock, the snapshot otherwise');
      await a.query(READ_T);
      await run.expect({ hits: 1 }, 'after COMMIT');
    }));

  test('SERIALIZABLE and READ UNCOMMITTED sessions bypass the cache', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await b.query(READ_T);
      await b.query(READ_U);
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE');
      await run.baseline();
      await a.query(READ_T);
      await a.query(READ_T);
      await a.execute(PREP_T, [0]);
      await run.expect({ hits: 0, bypass_isolation: 3 }, 'SERIALIZABLE');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query(READ_U);
      await run.expect({ hits: 0 }, 'SERIALIZABLE in a transaction');
      // A's reads took shared locks: B's locking read cannot have them.
      await b.query('SELECT * FROM u WHERE id = 1 FOR UPDATE NOWAIT', 1205);
      await a.query('COMMIT');
      await b.query('SELECT * FROM u WHERE id = 1 FOR UPDATE NOWAIT');

      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
      await b.query('BEGIN');
      await b.query("UPDATE t SET v = 'dirty' WHERE id = 1");
      await a.query(READ_T);
      await a.query(READ_T);
      await b.query('ROLLBACK');
      await a.query(READ_T);
      // B's two locking reads above count as isolation bypasses too.
      await run.expect({ hits: 0, bypass_isolation: 5 }, 'READ UNCOMMITTED');
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await a.query(READ_U);
      await run.expect({ hits: 1 }, 'back to REPEATABLE READ');
    }));

  test('privileges: each user gets the server’s answer, errors included', () =>
    scenario(
      [
        ...KV,
        'CREATE TABLE secret (id INT PRIMARY KEY, s VARCHAR(20))',
        "INSERT INTO secret VALUES (1, 'classified')",
        `CREATE USER '${USER}'@'%' IDENTIFIED BY '${USER_PASSWORD}'`,
        `GRANT SELECT ON ${DB}.t TO '${USER}'@'%'`,
      ],
      async (run) => {
        const root = await run.session('root', { worker: 0 });
        const user = await run.session('user', {
          worker: 0,
          user: USER,
          password: USER_PASSWORD,
        });
        await root.query('SELECT * FROM secret');
        await root.query('SELECT * FROM secret');
        await root.query(READ_T);
        await root.execute('SELECT * FROM secret WHERE id = ?', [1]);
        await root.execute('SELECT * FROM secret WHERE id = ?', [1]);
        await run.expect({ hits: 2, inserts: 3 }, 'root caches the secret');

        await user.query('SELECT * FROM secret', 1142);
        await user.query('SELECT * FROM secret', 1142);
        await user.prepare('SELECT * FROM secret WHERE id = ?', 1142);
        await run.expect({ hits: 0, inserts: 0, bypass_reply: 2 }, 'the user is refused');
        await user.query(READ_T);
        await user.query(READ_T);
        await user.execute(PREP_T, [0]);
        await user.execute(PREP_T, [0]);
        await run.expect({ hits: 2, inserts: 2 }, 'what the user may read is cached for it');

        await root.query(`REVOKE SELECT ON ${DB}.t FROM '${USER}'@'%'`);
        await run.expect({ invalidations_all: 1 }, 'REVOKE');
        await user.query(READ_T, 1142);
        await user.execute(PREP_T, [0], 1142);
        await run.expect({ hits: 0 }, 'after REVOKE the user is refused');
        await root.query(READ_T);
        await root.query(READ_T);

        await root.query(`GRANT SELECT ON ${DB}.secret TO '${USER}'@'%'`);
        await user.query('SELECT * FROM secret');
        await user.query('SELECT * FROM secret');
        await run.expect({ hits: 2, inserts: 2 }, 'after GRANT');
        await user.query(READ_T, 1142);
      },
    ));

  test('character sets: each session gets the bytes of its own character set', () =>
    scenario(
      [
        'CREATE TABLE cs (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4)',
        "INSERT INTO cs VALUES (1, 'café'), (2, 'naïve'), (3, 'plain')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        const read = 'SELECT * FROM cs ORDER BY id';
        // The same bytes mean 'café' in utf8mb4 and 'cafÃ©' in latin1.
        const byText = queryPacket("SELECT id FROM cs WHERE v = 'café'");
        await a.query(read);
        await a.command('by text (utf8mb4)', byText);
        await a.execute('SELECT v FROM cs WHERE id = ?', [1]);
        await a.query('SET NAMES latin1');
        await a.query(read);
        await a.command('by text (latin1)', byText);
        await a.execute('SELECT v FROM cs WHERE id = ?', [1]);
        await run.expect({ hits: 0, inserts: 6 }, 'each character set is its own entry');
        await a.query(read);
        await a.command('by text (latin1) again', byText);
        await a.execute('SELECT v FROM cs WHERE id = ?', [1]);
        await run.expect({ hits: 3 }, 'latin1 hits');
        await b.query(read);
        await b.query('SET NAMES latin1');
        await b.query(read);
        await run.expect({ hits: 2 }, 'another session, both character sets');
        await a.query('SET NAMES utf8mb4');
        await a.query(read);
        await a.command('by text (utf8mb4) again', byText);
        await run.expect({ hits: 2 }, 'back to utf8mb4');
        await a.query('SET character_set_results = binary');
        await a.query(read);
        await a.query('SET character_set_results = utf8mb4');
        await a.query('SET collation_connection = utf8mb4_bin');
        await a.query("SELECT id FROM cs WHERE v = 'CAFÉ'");
        await a.query('SET collation_connection = utf8mb4_general_ci');
        await a.query("SELECT id FROM cs WHERE v = 'CAFÉ'");
        await run.expect({ hits: 0 }, 'results charset and collation');
        // A multi-byte character set whose bytes may look like quotes: never cached.
        await a.query('SET NAMES gbk');
        await a.query(read);
        await a.query(read);
        await run.expect({ hits: 0, bypass_session_state: 2 }, 'gbk is not cached');
        await a.query("UPDATE cs SET v = 'plain!' WHERE id = 3");
        await run.expect({ invalidations_all: 1 }, 'its writes invalidate everything');
        await a.query('SET NAMES utf8mb4');
        await a.query(read);
        await b.query(read);
      },
    ));

  test('non-ASCII table names: cached for utf8 clients, invalidated through metadata, never stale for latin1 ones', () =>
    scenario(
      [
        'CREATE TABLE `t_é` (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO `t_é` VALUES (1, 'one'), (2, 'two')",
        // What a latin1 client means by the bytes of `t_é` in UTF-8.
        'CREATE TABLE `t_Ã©` (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO `t_Ã©` VALUES (1, 'other')",
        'CREATE TABLE `таблица` (id INT PRIMARY KEY, w INT) ENGINE=InnoDB',
        'INSERT INTO `таблица` VALUES (1, 10), (2, 20)',
        'CREATE TABLE `дочь` (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES `таблица` (id) ON DELETE CASCADE) ENGINE=InnoDB',
        'INSERT INTO `дочь` VALUES (1, 1), (2, 2)',
        'CREATE VIEW `вид` AS SELECT id, v FROM `t_é`',
        'CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB',
        'CREATE TABLE `журнал` (n INT) ENGINE=InnoDB',
        'CREATE TRIGGER t_logged AFTER INSERT ON t FOR EACH ROW INSERT INTO `журнал` VALUES (NEW.id)',
        'DROP DATABASE IF EXISTS `nc_qcache_ї`',
        'CREATE DATABASE `nc_qcache_ї`',
        'CREATE TABLE `nc_qcache_ї`.`t$ї` (id INT PRIMARY KEY) ENGINE=InnoDB',
        'INSERT INTO `nc_qcache_ї`.`t$ї` VALUES (1)',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const reads = [
          'SELECT * FROM `t_é` ORDER BY id',
          'SELECT * FROM `t_Ã©` ORDER BY id',
          'SELECT * FROM `таблица` ORDER BY id',
          'SELECT * FROM `дочь` ORDER BY id',
          'SELECT * FROM `вид` ORDER BY id',
          'SELECT * FROM `журнал` ORDER BY n',
        ];
        const readAll = async (): Promise<void> => {
          for (const read of reads) await a.query(read);
        };
        await readAll();
        await run.expect({ inserts: 6, hits: 0 }, 'first reads');
        await readAll();
        await run.expect({ inserts: 0, hits: 6 }, 'repeated reads hit');

        await b.query("UPDATE `t_é` SET v = 'uno' WHERE id = 1");
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'UPDATE of `t_é`');
        await readAll();
        await run.expect({ inserts: 2, hits: 4 }, 'the table and its view are read again');
        await b.query('DELETE FROM `таблица` WHERE id = 2');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'DELETE with a cascade');
        await readAll();
        await run.expect({ inserts: 2, hits: 4 }, 'the parent and its cascaded child');
        await b.query('INSERT INTO t VALUES (7)');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'INSERT firing a trigger');
        await readAll();
        await run.expect({ inserts: 1, hits: 5 }, 'the table the trigger writes');

        // A current schema outside ASCII, and names in it unqualified.
        await a.query('USE `nc_qcache_ї`');
        await a.query('SELECT * FROM `t$ї` ORDER BY id');
        await a.query('SELECT * FROM `t$ї` ORDER BY id');
        await run.expect({ inserts: 1, hits: 1 }, 'unqualified, in a non-ASCII schema');
        await b.query('INSERT INTO `nc_qcache_ї`.`t$ї` VALUES (2)');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'qualified INSERT');
        await a.query('SELECT * FROM `t$ї` ORDER BY id');
        await a.query(`USE ${DB}`);

        // A latin1 client: é is one byte, and the two bytes of é in UTF-8 name `t_Ã©`.
        const latin1 = await run.session('latin1', { worker: 0 });
        await latin1.query('SET NAMES latin1');
        const inLatin1 = (sql: string): Buffer =>
          Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'latin1')]);
        const utf8Bytes = Buffer.from('é', 'utf8').toString('latin1');
        await readAll();
        await run.baseline();
        for (let round = 0; round < 2; round++) {
          await latin1.command('latin1 reads `t_é`', inLatin1('SELECT * FROM `t_é` ORDER BY id'));
          await latin1.command(
            'latin1 reads `t_Ã©`',
            inLatin1(`SELECT * FROM \`t_${utf8Bytes}\` ORDER BY id`),
          );
        }
        await run.expect({ inserts: 0, hits: 0 }, 'latin1 reads of non-ASCII names are not cached');
        await readAll();
        await latin1.command(
          'latin1 updates `t_Ã©`',
          inLatin1(`UPDATE \`t_${utf8Bytes}\` SET v = 'changed' WHERE id = 1`),
        );
        // Resolved as `t_é`, it would leave `t_Ã©`'s result stale.
        await readAll();
        await latin1.command(
          'latin1 inserts into `t_é`',
          inLatin1("INSERT INTO `t_é` VALUES (3, 'trois')"),
        );
        await readAll();
        await latin1.command(
          'latin1 reads `t_é` again',
          inLatin1('SELECT * FROM `t_é` ORDER BY id'),
        );
      },
    ));

  test('SQL PREPARE / EXECUTE: an EXECUTE without USING is the SELECT it prepared', () =>
    scenario(
      [
        ...KV,
        `CREATE DATABASE ${DB2}`,
        `CREATE TABLE ${DB2}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
        `INSERT INTO ${DB2}.t VALUES (1, 'elsewhere')`,
        "CREATE PROCEDURE reprepare() PREPARE s FROM 'SELECT v FROM t ORDER BY id'",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        await a.query(`PREPARE s FROM '${READ_T}'`);
        await a.query('EXECUTE s');
        await a.query('EXECUTE s');
        await run.expect({ inserts: 1, hits: 1 }, 'EXECUTE is stored, then hits');
        await a.query(READ_T);
        await run.expect({ inserts: 0, hits: 1 }, 'the SELECT it prepared shares its result');
        await a.query('SELECT v FROM t WHERE id = 2');
        await a.query('prepare S2 from "SELECT v FROM t WHERE id = 2"');
        await a.query('EXECUTE s2');
        await run.expect({ inserts: 1, hits: 1 }, 'and the other way round');

        await b.query("UPDATE t SET v = 'zwei' WHERE id = 2");
        await a.query('EXECUTE s2');
        await a.query('EXECUTE s');
        await run.expect({ inserts: 2, hits: 0 }, 'a write invalidates them');

        // Prepared again: the name now stands for another text.
        await a.query("PREPARE s FROM 'SELECT id FROM t ORDER BY id'");
        await a.query('EXECUTE s');
        await a.query('EXECUTE s');
        await run.expect({ inserts: 1, hits: 1 }, 'prepared again');
        // Prepared in another schema: its tables are that schema's.
        await a.query(`PREPARE s3 FROM '${READ_T}'`);
        await a.query(`USE ${DB2}`);
        await a.query(READ_T);
        await a.query(READ_T);
        await a.query('EXECUTE s3');
        await a.query('EXECUTE s3');
        await run.expect({ inserts: 1, hits: 1 }, 'not the other schema’s result');
        await a.query(`USE ${DB}`);

        // The text or the parameters only the server knows: never answered.
        const c = await run.session('C', { worker: 0 });
        await c.query(`SET @text = '${READ_T}'`);
        await c.query('PREPARE s4 FROM @text');
        await c.query('EXECUTE s4');
        await c.query('EXECUTE s4');
        const d = await run.session('D', { worker: 0 });
        await d.query("PREPARE s5 FROM 'SELECT * FROM t WHERE id = ?'");
        await d.query('SET @id = 1');
        await d.query('EXECUTE s5 USING @id');
        await d.query('EXECUTE s5 USING @id');
        await run.expect({ hits: 0 }, 'FROM @var, USING @var');
        // EXECUTE ... USING of a SELECT the proxy saw prepared runs that SELECT and nothing else
        // (no procedure, no DDL): the session's other reads are still answered from the cache.
        await d.query('SELECT v FROM t WHERE id = 1');
        await d.query('SELECT v FROM t WHERE id = 1');
        await run.expect({ inserts: 1, hits: 1 }, 'after EXECUTE ... USING, reads still hit');
        // A PREPARE that fails drops the statement of that name. (An EXECUTE of a name not known
        // to be a SELECT may run a procedure, which may create temporary tables: from here on,
        // nothing of this session is cached.)
        await a.query("PREPARE s FROM 'SELECT * FROM no_such_table'", 1146);
        await a.query('EXECUTE s', 1243);
        await a.query('DEALLOCATE PREPARE s2');
        await a.query('EXECUTE s2', 1243);
        await run.expect({ hits: 0 }, 'dropped statements');

        // A procedure may prepare statements too (and once it ran, nothing of the session is
        // cached: it may have created temporary tables).
        await a.query(`PREPARE s FROM '${READ_T}'`);
        await a.query('EXECUTE s');
        await a.query('CALL reprepare()');
        await a.query('EXECUTE s');
        await a.query('EXECUTE s');

        await a.query(READ_T);
      },
    ));

  test('SQL PREPARE / EXECUTE of a write: it writes its tables, and the session stays cached', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await a.query("PREPARE w FROM 'UPDATE t SET v = ? WHERE id = 1'");
      await a.query("PREPARE add_u FROM 'INSERT INTO u VALUES (4, 40)'");
      for (const session of [a, b]) {
        await session.query(READ_T);
        await session.query(READ_U);
      }
      await run.baseline();
      await a.query("SET @v = 'uno'");
      await a.query('EXECUTE w USING @v');
      await run.expect({ invalidations: 1, invalidations_all: 0 }, 'EXECUTE ... USING writes t');
      // t read again on both workers (not stale), u still served: also in the session that
      // executed it, whose reads an EXECUTE of an unknown statement would leave uncached.
      for (const session of [a, b]) {
        await session.query(READ_T);
        await session.query(READ_T);
        await session.query(READ_U);
      }
      await run.expect({ inserts: 1, hits: 5 }, 'after the write');
      await a.query('EXECUTE add_u');
      await run.expect({ invalidations: 1, invalidations_all: 0 }, 'EXECUTE writes u');
      await a.query(READ_U);
      await a.query(READ_U);
      await a.query(READ_T);
      await run.expect({ inserts: 1, hits: 2 }, 'u stored again, t served');
    }));

  test('a temporary table gone (dropped unseen, renamed, in one text): a write to the table of that name is a write', () =>
    scenario([...KV, 'CREATE PROCEDURE drop_t() DROP TEMPORARY TABLE t'], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      for (const unseen of [
        'CALL drop_t()',
        'EXECUTE IMMEDIATE "DROP TEMPORARY TABLE t"',
        'ALTER TABLE t RENAME TO t_renamed',
      ]) {
        await a.query('CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(40))');
        await a.query(unseen);
        await b.query(READ_T);
        await b.query(READ_T);
        await run.baseline();
        // The base table now: B's result is stale.
        await a.query(`UPDATE t SET v = '${unseen.slice(0, 12)}' WHERE id = 1`);
        await run.expect({ invalidations: 1 }, `a write after ${unseen}`);
        await b.query(READ_T);
        await a.query(READ_T);
      }
      // Dropped and the base table written in one text.
      await a.query('CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(40))');
      await b.query(READ_T);
      await b.query(READ_T);
      await a.query("DROP TEMPORARY TABLE t; UPDATE t SET v = 'in one text' WHERE id = 1");
      await b.query(READ_T);
    }));

  test('a procedure whose only DDL is temporary tables’: its names are read from the server, the rest stays cached', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE scratch (id INT PRIMARY KEY, v VARCHAR(40))',
        "INSERT INTO scratch VALUES (1, 'base')",
        `CREATE PROCEDURE fill_scratch() BEGIN
           CREATE TEMPORARY TABLE scratch (id INT PRIMARY KEY, v VARCHAR(40));
           INSERT INTO scratch VALUES (1, 'temporary');
         END`,
        // Through another procedure, which writes u too.
        'CREATE PROCEDURE fill_and_count() BEGIN CALL fill_scratch(); UPDATE u SET w = w + 1 WHERE id = 1; END',
        'CREATE PROCEDURE drop_scratch() DROP TEMPORARY TABLE IF EXISTS scratch',
        // A temporary table no base table shares a name with.
        'CREATE PROCEDURE pick(k INT) BEGIN CREATE TEMPORARY TABLE IF NOT EXISTS picked (id INT); INSERT INTO picked VALUES (k); END',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const readScratch = 'SELECT * FROM scratch ORDER BY id';
        for (const [index, call] of ['CALL fill_scratch()', 'CALL fill_and_count()'].entries()) {
          for (const session of [a, b]) {
            for (const sql of [readScratch, READ_T, READ_U]) {
              await session.query(sql);
              await session.query(sql);
            }
          }
          await run.baseline();
          await a.query(call);
          // It writes scratch (the base table, as far as anyone can tell), and u the second time:
          // no metadata reload, no "everything".
          await run.expect({ invalidations: 1, invalidations_all: 0 }, call);
          // A's scratch is its temporary table now; B's is the base table.
          await a.query(readScratch);
          await b.query(readScratch);
          await b.query(readScratch);
          await run.expect({ inserts: 1, hits: 1 }, `scratch read after ${call}`);
          // A's other reads are still served.
          await a.query(READ_T);
          await a.query(READ_U);
          await run.expect({ hits: 2 - index, inserts: index }, `A's reads after ${call}`);
          await a.query('CALL drop_scratch()');
          // The base table again, written by A: B's result is stale.
          await a.query(`UPDATE scratch SET v = 'after ${index}' WHERE id = 1`);
          await b.query(readScratch);
          await a.query(readScratch);
        }
        await a.query(READ_T);
        await run.baseline();
        await a.query('CALL pick(1)');
        await a.query('CALL pick(2)');
        await run.expect({ invalidations: 2, invalidations_all: 0 }, 'a write of its own table');
        await a.query(READ_T);
        await a.query('SELECT * FROM picked ORDER BY id');
        await a.query('SELECT * FROM picked ORDER BY id');
        await run.expect({ hits: 1, inserts: 0 }, 'its reads of picked go to the server');
        // A session's first statement: its current database is not known yet, every procedure
        // of the name is looked at.
        const c = await run.session('C', { worker: 0 });
        await c.query('CALL pick(3)');
        await c.query(READ_T);
        await c.query('SELECT * FROM picked ORDER BY id');
        await run.expect({ hits: 1, invalidations_all: 0 }, 'CALL before the session is probed');
      },
    ));

  test('a multi-statement text that changes the current database before it writes', () =>
    scenario(
      [
        ...KV,
        `CREATE DATABASE ${DB2}`,
        `CREATE TABLE ${DB2}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
        `INSERT INTO ${DB2}.t VALUES (1, 'elsewhere')`,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const readOther = `SELECT * FROM ${DB2}.t ORDER BY id`;
        for (const [index, text] of [
          `USE ${DB2}; UPDATE t SET v = 'moved' WHERE id = 1`,
          `UPDATE t SET v = 'here' WHERE id = 1; USE ${DB2}; DELETE FROM t WHERE id = 1; USE ${DB}`,
        ].entries()) {
          await b.query(readOther);
          await b.query(readOther);
          await b.query(READ_T);
          await b.query(READ_T);
          await a.query(text);
          await b.query(readOther);
          await b.query(READ_T);
          await a.query(READ_T);
          if (index === 0) await a.query(`USE ${DB}`);
        }
      },
    ));

  test('a temporary table created by a block, or by a statement after a routine’s body in one text', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const temporaryT = 'CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(40))';
      for (const [index, text] of [
        `BEGIN NOT ATOMIC ${temporaryT}; END`,
        `CREATE PROCEDURE made_first() SELECT 1; ${temporaryT}`,
        `CREATE PROCEDURE made_second() BEGIN SELECT 1; END; ${temporaryT}`,
      ].entries()) {
        const b = await run.session(`B${index}`, { worker: 0 });
        await b.query(READ_T);
        await b.query(READ_T);
        await a.query(text);
        // A's t is its empty temporary table now.
        await a.query(READ_T);
        await a.query('DROP TEMPORARY TABLE t');
      }
    }));

  test('a procedure replaced after a trigger’s body in one text: its CALL writes what its new body says', () =>
    scenario(
      [...KV, ...KV2, 'CREATE PROCEDURE p2() UPDATE u SET w = w + 1 WHERE id = 1'],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        // The session's database known: the trigger's table is not in a system schema.
        await a.query(READ_U);
        await a.query(
          "CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW SET @x = 1; CREATE OR REPLACE PROCEDURE p2() UPDATE t SET v = 'via p2' WHERE id = 1",
        );
        await b.query(READ_T);
        await b.query(READ_T);
        await a.query('CALL p2()');
        await b.query(READ_T);
      },
    ));

  test('time zones: TIMESTAMP columns in each session’s time zone', () =>
    scenario(
      [
        'CREATE TABLE ts (id INT PRIMARY KEY, at TIMESTAMP NULL, d DATETIME)',
        "INSERT INTO ts VALUES (1, '2024-01-01 00:00:00', '2024-01-01 00:00:00'), (2, '2024-06-30 23:30:00', NULL)",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const read = 'SELECT id, at, d, UNIX_TIMESTAMP(at) FROM ts ORDER BY id';
        const prepared = 'SELECT at FROM ts WHERE id = ?';
        await a.query("SET time_zone = '+00:00'");
        await a.query(read);
        await a.execute(prepared, [2]);
        await a.query("SET time_zone = '+05:00'");
        await a.query(read);
        await a.execute(prepared, [2]);
        await a.query(read);
        await a.execute(prepared, [2]);
        await run.expect({ hits: 2, inserts: 4 }, 'one entry per time zone');
        await a.query("SET time_zone = '+00:00'");
        await a.query(read);
        await a.execute(prepared, [2]);
        await run.expect({ hits: 2, inserts: 0 }, 'back to +00:00');
        await a.query("SET @@session.time_zone = '-03:30'");
        await a.query(read);
        await a.query("SELECT id FROM ts WHERE at = '2024-01-01 00:00:00'");
        await a.query("SET time_zone = '+00:00'");
        await a.query("SELECT id FROM ts WHERE at = '2024-01-01 00:00:00'");
        await run.expect({ hits: 0, inserts: 3 }, 'literals are read in the session’s zone');
      },
    ));

  test('session variables in the key: sql_mode, sql_select_limit, div_precision_increment...', () =>
    scenario(
      [
        ...KV,
        'CREATE TABLE c (id INT PRIMARY KEY, ch CHAR(10), d DATE)',
        "INSERT INTO c VALUES (1, 'ab', '2024-03-05'), (2, 'cd', '2024-12-31')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        // [the change, its undoing, a query whose result it changes]
        const changes: Array<[string, string, string]> = [
          [
            "SET sql_mode = CONCAT(@@sql_mode, ',PAD_CHAR_TO_FULL_LENGTH')",
            'SET sql_mode = DEFAULT',
            'SELECT id, ch FROM c ORDER BY id',
          ],
          [
            "SET sql_mode = 'ANSI_QUOTES'",
            'SET sql_mode = DEFAULT',
            'SELECT "ch" FROM c ORDER BY id',
          ],
          [
            "SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
            'SET sql_mode = DEFAULT',
            "SELECT 'a\\\\tb' AS s, id FROM c ORDER BY id",
          ],
          ['SET sql_select_limit = 2', 'SET sql_select_limit = DEFAULT', READ_T],
          [
            'SET div_precision_increment = 8',
            'SET div_precision_increment = DEFAULT',
            'SELECT id / 3 FROM t ORDER BY id',
          ],
          [
            "SET lc_time_names = 'de_DE'",
            'SET lc_time_names = DEFAULT',
            "SELECT DATE_FORMAT(d, '%W %e %M') FROM c ORDER BY id",
          ],
          [
            'SET default_week_format = 3',
            'SET default_week_format = DEFAULT',
            'SELECT WEEK(d) FROM c ORDER BY id',
          ],
        ];
        for (const [change, undo, query] of changes) {
          await a.query(query);
          await a.query(change);
          await a.query(query);
          await a.query(query);
          await b.query(query);
          await a.query(undo);
          await a.query(query);
          await run.expect({ hits: 3, inserts: 2 }, change);
        }
      },
    ));

  test('schemas: the same table name in two databases, USE and COM_INIT_DB', () =>
    scenario(
      [
        ...KV,
        `CREATE DATABASE ${DB2}`,
        `CREATE TABLE ${DB2}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
        `INSERT INTO ${DB2}.t VALUES (1, 'other database')`,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1, database: DB2 });
        const c = await run.session('C', { worker: 0, database: null });
        // A prepared statement keeps the schema it was prepared in: prepare again after a change.
        await a.query(READ_T);
        await a.query(`USE ${DB2}`);
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await a.command(`init db ${DB}`, initDb(DB));
        a.closeStatement(PREP_T);
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await run.expect({ hits: 1, inserts: 4 }, 'one entry per schema');
        await a.query(`SELECT * FROM ${DB2}.t ORDER BY id`);
        await c.query(`SELECT * FROM ${DB2}.t ORDER BY id`);
        await c.query(READ_T, 1046);
        await run.expect(
          { hits: 0, inserts: 2 },
          'qualified names: the current schema is in the key',
        );

        await b.query("UPDATE t SET v = 'changed in the other database'");
        await a.command(`init db ${DB2}`, initDb(DB2));
        a.closeStatement(PREP_T);
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await a.query(`SELECT * FROM ${DB2}.t ORDER BY id`);
        await run.expect({ hits: 0, inserts: 3 }, `after a write to ${DB2}.t`);
        await a.query(`USE ${DB}`);
        a.closeStatement(PREP_T);
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await run.expect(
          { hits: 2, inserts: 0 },
          `${DB}.t was not written (a new statement's first execution hits too)`,
        );
        await a.command('init db of a missing database', initDb('nc_qcache_missing'), 1049);
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'a failed COM_INIT_DB keeps the schema');
      },
    ));

  test('non-deterministic functions, variables and system schemas are not cached', () =>
    scenario(
      [
        ...KV,
        'CREATE VIEW v_rand AS SELECT id, RAND() AS r FROM t',
        'CREATE VIEW v_now AS SELECT id, NOW(6) AS n FROM t',
        'CREATE SEQUENCE s',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        // Deterministic results of non-deterministic statements: compared byte for byte.
        const statements = [
          "SELECT id, NOW() > '2000-01-01', SYSDATE() > '2000-01-01' FROM t ORDER BY id",
          'SELECT id, RAND() < 1, LENGTH(UUID()), UUID_SHORT() > 0 FROM t ORDER BY id',
          'SELECT id, CONNECTION_ID() > 0, LAST_INSERT_ID() >= 0 FROM t ORDER BY id',
          'SELECT id, CURRENT_USER() IS NOT NULL, @@hostname IS NOT NULL FROM t ORDER BY id',
          'SELECT v FROM t WHERE id = @nothing',
          "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'nc_qcache'",
          "SELECT COUNT(*) FROM mysql.db WHERE Db = 'nc_qcache'",
          'SELECT COUNT(*) FROM v_rand',
          'SELECT COUNT(*) FROM v_now',
          'SELECT id, CURDATE() > 0, UNIX_TIMESTAMP() > 0 FROM t ORDER BY id',
        ];
        for (const sql of statements) {
          await a.query(sql);
          await a.query(sql);
        }
        await a.execute('SELECT id, RAND() < 1 FROM t WHERE id > ?', [0]);
        await a.execute('SELECT id, RAND() < 1 FROM t WHERE id > ?', [0]);
        await run.expect(
          { hits: 0, inserts: 0, not_cached: statements.length * 2 + 2 },
          'nothing cached',
        );
        const twice = async (session1: Session, session2: Session, sql: string): Promise<void> => {
          const first = await session1.rows(sql);
          const second = await session2.rows(sql);
          run.check(
            JSON.stringify(first) !== JSON.stringify(second),
            `${sql} gave the same rows twice: ${JSON.stringify(first)}`,
          );
        };
        await twice(a, a, 'SELECT RAND() FROM t');
        await twice(a, a, 'SELECT UUID() FROM t');
        await twice(a, a, 'SELECT NOW(6), SLEEP(0.002) FROM t LIMIT 1');
        await twice(a, b, 'SELECT CONNECTION_ID() FROM t LIMIT 1');
        await twice(a, a, 'SELECT * FROM v_rand');
        await twice(a, a, 'SELECT /*!100000 RAND(), */ 1 FROM t');
        await twice(a, a, 'SELECT NEXTVAL(s) FROM t LIMIT 1');
        await run.expect({ hits: 0, inserts: 0 }, 'values that change between reads');
        await a.query('SELECT * FROM s');
        await a.query('SELECT NEXTVAL(s)');
        await a.query('SELECT * FROM s');
        await a.query('SELECT SETVAL(s, 5000)');
        await a.query('SELECT * FROM s');
        await a.query('SELECT * FROM s');
      },
    ));

  test('results beyond --query-cache-limit are not stored', () =>
    differential(
      limited,
      {
        database: DB,
        setup: fresh(
          'CREATE TABLE big (id INT PRIMARY KEY, payload TEXT)',
          "INSERT INTO big VALUES (1, 'small'), (2, REPEAT('x', 3000))",
        ),
      },
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('SELECT * FROM big WHERE id = 1');
        await a.query('SELECT * FROM big WHERE id = 1');
        await a.execute('SELECT * FROM big WHERE id = ?', [1]);
        await a.execute('SELECT * FROM big WHERE id = ?', [1]);
        await run.expect({ hits: 2, inserts: 2, too_large: 0 }, 'small results are cached');
        await a.query('SELECT * FROM big WHERE id = 2');
        await a.query('SELECT * FROM big WHERE id = 2');
        await a.execute('SELECT * FROM big WHERE id = ?', [2]);
        await a.execute('SELECT * FROM big WHERE id = ?', [2]);
        await a.query('SELECT * FROM big ORDER BY id');
        await run.expect(
          { hits: 0, inserts: 0, too_large: 5, not_cached: 5 },
          'results over 1K are not',
        );
        await a.query("UPDATE big SET payload = 'now small' WHERE id = 2");
        await a.query('SELECT * FROM big WHERE id = 2');
        await a.query('SELECT * FROM big WHERE id = 2');
        await run.expect({ hits: 1, inserts: 1 }, 'once it fits');
      },
    ));

  test('DDL: ALTER, DROP and CREATE, RENAME are never answered from the old table', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        `CREATE TABLE p (id INT PRIMARY KEY, v VARCHAR(10)) PARTITION BY RANGE (id)
           (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN MAXVALUE)`,
        'CREATE TABLE q (id INT PRIMARY KEY, v VARCHAR(10))',
        "INSERT INTO p VALUES (1, 'p0 row'), (200, 'p1 row')",
        "INSERT INTO q VALUES (5, 'q row')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const byId = 'SELECT * FROM t WHERE id = ?';
        await a.query(READ_T);
        await a.execute(byId, [1]);
        await a.query(READ_U);
        await a.query(READ_T);
        await a.execute(byId, [1]);
        await a.query(READ_U);
        await run.expect({ hits: 3, inserts: 3 }, 'cached');

        // Right after DDL the catalog reloads: whether these reads are stored depends on how
        // fast, so the counts below start after a settle, from the second read on.
        await b.query('ALTER TABLE t ADD COLUMN extra INT DEFAULT 7');
        await a.query(READ_T);
        await a.execute(byId, [1]);
        await run.expect({ hits: 0 }, 'after ALTER TABLE');
        // The server re-prepared the statement (and said so once): prepare it afresh.
        a.closeStatement(byId);
        await run.settle();
        await a.query(READ_T);
        await a.execute(byId, [1]);
        await run.baseline();
        await a.query(READ_T);
        await a.execute(byId, [1]);
        await a.query(READ_U);
        await run.expect({ hits: 3, inserts: 0 }, 'the new shape is cached');

        await b.query('DROP TABLE t');
        await a.query(READ_T, 1146);
        await a.execute(byId, [1], 1146);
        await b.query('CREATE TABLE t (id INT PRIMARY KEY, other VARCHAR(10), n DOUBLE)');
        await b.query("INSERT INTO t VALUES (1, 'recreated', 1.5)");
        await a.query(READ_T);
        await a.execute(byId, [1]);
        a.closeStatement(byId);
        await run.settle();
        await a.query(READ_T);
        await run.baseline();
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'the re-created table is cached');

        await b.query('CREATE TABLE t_new (id INT PRIMARY KEY, v VARCHAR(10))');
        await b.query("INSERT INTO t_new VALUES (7, 'swapped in')");
        await b.query('RENAME TABLE t TO t_old, t_new TO t');
        await a.query(READ_T);
        await a.execute(byId, [7]);
        await b.query('ALTER TABLE u RENAME TO u_renamed');
        await a.query(READ_U, 1146);
        await a.query('SELECT * FROM u_renamed ORDER BY id');
        await b.query('CREATE TABLE u (id INT PRIMARY KEY, w INT)');
        await a.query(READ_U);
        await run.settle();
        await a.query(READ_T);
        await run.baseline();
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'after RENAME');

        const readPartitions = async (): Promise<void> => {
          await a.query('SELECT * FROM p ORDER BY id');
          await a.query('SELECT * FROM q ORDER BY id');
        };
        await readPartitions();
        await readPartitions();
        await run.expect({ hits: 2, inserts: 2 }, 'a partitioned table and another');
        await b.query('ALTER TABLE p EXCHANGE PARTITION p0 WITH TABLE q');
        await readPartitions();
        await run.expect({ hits: 0 }, 'after EXCHANGE PARTITION both changed');
      },
    ));

  test('a statement calling stored functions invalidates what their bodies write, or everything when that is untold', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
        'CREATE SEQUENCE ticket',
        `CREATE DATABASE ${DB2}`,
        `CREATE TABLE ${DB2}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
        `INSERT INTO ${DB2}.t VALUES (1, 'other database')`,
        `CREATE FUNCTION logged(x VARCHAR(60)) RETURNS VARCHAR(60) NOT DETERMINISTIC MODIFIES SQL DATA
         BEGIN INSERT INTO audit (note) VALUES (x); RETURN UPPER(x); END`,
        // Writes through another function.
        'CREATE FUNCTION relogged(x VARCHAR(60)) RETURNS VARCHAR(60) RETURN logged(CONCAT(x, "!"))',
        'CREATE FUNCTION doubled(x INT) RETURNS INT DETERMINISTIC RETURN x * 2',
        // A sequence's writer: what it writes is not told.
        'CREATE FUNCTION untold() RETURNS BIGINT RETURN NEXTVAL(ticket)',
        // Its UPDATE calls a function: it writes t and, through the function, audit.
        "CREATE PROCEDURE bump() UPDATE t SET v = CONCAT(v, '+') WHERE logged('bump') IS NOT NULL",
        'CREATE PROCEDURE add_audit(IN n VARCHAR(60)) INSERT INTO audit (note) VALUES (n)',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readAll = async (): Promise<void> => {
          await reader.query(READ_T);
          await reader.query(READ_U);
          await reader.query('SELECT * FROM audit ORDER BY id');
          await reader.execute('SELECT note FROM audit WHERE id > ? ORDER BY id', [0]);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 4, inserts: 4 }, 'cached');
        // A read makes the proxy learn the writer's current database, for the names its UPDATE
        // writes.
        await writer.query(READ_U);
        await run.expect({ hits: 1 }, 'the writer reads');
        // Each writes audit (and t, where it says so): the other tables stay cached.
        const writes: Array<[string, () => Promise<unknown>, number]> = [
          ['CALL of a procedure whose UPDATE calls one', () => writer.query('CALL bump()'), 1],
          [
            'CALL with a stored function as its argument',
            () => writer.query("CALL add_audit(logged('called'))"),
            2,
          ],
          [
            'a stored function in an UPDATE',
            () => writer.query('UPDATE t SET v = logged(v) WHERE id = 1'),
            1,
          ],
          [
            'a stored function in a SELECT',
            () => writer.query("SELECT logged('from a select') FROM u WHERE id = 1"),
            2,
          ],
          ['a stored function in DO', () => writer.query("DO logged('do')"), 2],
          ['a stored function in SET', () => writer.query("SET @r = logged('set')"), 2],
          [
            'a stored function in a prepared SELECT',
            () => writer.execute('SELECT logged(?) FROM u WHERE id = 1', ['prepared']),
            2,
          ],
          [
            'a stored function calling another, qualified',
            () => writer.query(`SELECT ${DB}.relogged('twice removed')`),
            2,
          ],
          [
            'a stored function in a reader’s own SELECT',
            () => reader.query("SELECT logged('reader') FROM u WHERE id = 2"),
            2,
          ],
        ];
        for (const [name, write, hits] of writes) {
          await write();
          await run.expect({ invalidations_all: 0 }, name);
          await readAll();
          await run.expect({ hits }, `after ${name}`);
          await readAll();
          await run.expect({ hits: 4 }, `cached again after ${name}`);
        }
        // Writes nothing: every read still hits.
        await writer.query('SELECT doubled(w) FROM u ORDER BY id');
        await reader.query('SELECT doubled(w) FROM u ORDER BY id');
        await readAll();
        await run.expect({ hits: 4, invalidations: 0, invalidations_all: 0 }, 'after doubled()');
        // What it writes is not told: everything.
        await writer.query('SELECT untold()');
        await run.expect({ invalidations_all: 1 }, 'untold()');
        await readAll();
        await run.expect({ hits: 0 }, 'after untold()');
        // Sent without the probe, after something that may have changed the current database
        // (it did): which t it writes cannot be told, and the other database's t is read fresh.
        const READ_T2 = `SELECT * FROM ${DB2}.t ORDER BY id`;
        await reader.query(READ_T2);
        await reader.query(READ_T2);
        await writer.command(`init db ${DB2}`, initDb(DB2));
        await run.baseline();
        await writer.query(`UPDATE t SET v = ${DB}.logged(v) WHERE id = 1`);
        await run.expect({ invalidations: 0, invalidations_all: 1 }, 'UPDATE after COM_INIT_DB');
        await reader.query(READ_T2);
      },
    ));

  test('a statement calling a function leaves the current database known, for the next call', () =>
    scenario(
      [
        ...KV,
        ...LOGGED,
        // Another database's function of the same name writes what it does not tell.
        `CREATE DATABASE ${DB2}`,
        `CREATE SEQUENCE ${DB2}.ticket`,
        `CREATE FUNCTION ${DB2}.logged(x VARCHAR(60)) RETURNS BIGINT RETURN NEXTVAL(ticket)`,
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readAll = async (): Promise<void> => {
          await reader.query(READ_T);
          await reader.query('SELECT * FROM audit ORDER BY id');
        };
        await readAll();
        await readAll();
        // The writer's read lets the proxy learn its current database.
        await writer.query(READ_T);
        await run.expect({ hits: 3, inserts: 2 }, 'cached');
        // A SELECT waits for the probe; a SET goes without it, after the SELECT's call.
        await writer.query("SELECT logged('once')");
        await writer.query("SET @r = logged('twice')");
        await run.expect({ invalidations: 2, invalidations_all: 0 }, 'this database’s logged()');
        await readAll();
        await run.expect({ hits: 1, inserts: 1 }, 'after them: audit read again');
      },
    ));

  test('a write whose trigger calls a stored function invalidates what the function writes', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        ...LOGGED,
        'CREATE TABLE notes (id INT PRIMARY KEY, v VARCHAR(60))',
        'CREATE TRIGGER notes_bi BEFORE INSERT ON notes FOR EACH ROW SET NEW.v = logged(NEW.v)',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const readAll = async (): Promise<void> => {
          await reader.query(READ_T);
          await reader.query(READ_U);
          await reader.query('SELECT * FROM audit ORDER BY id');
          await reader.query('SELECT * FROM notes ORDER BY id');
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 4, inserts: 4 }, 'cached');
        await writer.query("INSERT INTO notes VALUES (1, 'first')");
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'INSERT INTO notes');
        await readAll();
        await run.expect({ hits: 2, inserts: 2 }, 'after it: audit and notes read again');
      },
    ));

  test('a CALL invalidates what its procedure writes, through what it calls and triggers, or everything when that is untold', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
        'CREATE TABLE logged (id INT PRIMARY KEY)',
        "CREATE TRIGGER logged_ai AFTER INSERT ON logged FOR EACH ROW INSERT INTO audit (note) VALUES ('logged')",
        `CREATE PROCEDURE bump_t(n INT) BEGIN
           IF n > 0 THEN UPDATE t SET v = CONCAT(v, '+') WHERE id = n; END IF;
         END`,
        'CREATE PROCEDURE bump_both() BEGIN CALL bump_t(1); UPDATE u SET w = w + 1 WHERE id = 1; END',
        'CREATE PROCEDURE log_one(n INT) INSERT INTO logged VALUES (n)',
        'CREATE PROCEDURE reads_only() SELECT COUNT(*) FROM t',
        'CREATE PROCEDURE untold() BEGIN UPDATE t SET v = v; SET @@global.max_connections = @@global.max_connections; END',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const READ_AUDIT = 'SELECT * FROM audit ORDER BY id';
        const readAll = async (): Promise<void> => {
          await reader.query(READ_T);
          await reader.query(READ_U);
          await reader.query(READ_AUDIT);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 3, inserts: 3 }, 'cached');
        // The writer's first statement: its current database is not yet known to the proxy.
        await writer.query('CALL bump_t(2)');
        await run.expect({ invalidations: 1, invalidations_all: 0 }, 'CALL bump_t(2)');
        await readAll();
        await run.expect({ hits: 2, inserts: 1 }, 'after bump_t: t read again, u and audit hit');
        await writer.query('CALL bump_both()');
        await readAll();
        await run.expect({ hits: 1, inserts: 2 }, 'after bump_both: t and u read again');
        await writer.query('CALL log_one(7)');
        await readAll();
        await run.expect({ hits: 2, inserts: 1 }, 'after log_one: audit read again (trigger)');
        await writer.query('CALL reads_only()');
        await run.expect({ invalidations: 0, invalidations_all: 0 }, 'CALL reads_only()');
        await readAll();
        await run.expect({ hits: 3 }, 'after reads_only: everything hits');
        await writer.query('CALL untold()');
        await run.expect({ invalidations_all: 1 }, 'CALL untold()');
        await readAll();
        await run.expect({ hits: 0, inserts: 3 }, 'after untold: everything read again');
      },
    ));

  test('a CALL that redefines a view is followed, after its procedure ran no DDL before', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE VIEW vw AS SELECT id, v AS x FROM t',
        'CREATE PROCEDURE quiet() SELECT COUNT(*) FROM t',
      ],
      async (run) => {
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 1 });
        const READ_VIEW = 'SELECT * FROM vw ORDER BY id';
        await reader.query(READ_VIEW);
        await reader.query(READ_VIEW);
        await run.expect({ hits: 1, inserts: 1 }, 'the view over t, cached');
        // Runs no DDL and writes nothing: the metadata stays, and nothing is invalidated.
        await writer.query('CALL quiet()');
        await run.expect({ invalidations: 0, invalidations_all: 0 }, 'CALL quiet()');
        await reader.query(READ_VIEW);
        await reader.query(READ_VIEW);
        await run.expect({ hits: 2 }, 'the view over t, still cached');
        // The same procedure, replaced by one that redefines the view over u.
        await writer.query(
          'CREATE OR REPLACE PROCEDURE quiet() CREATE OR REPLACE VIEW vw AS SELECT id, w AS x FROM u',
        );
        // Reads on both workers wait for the reload that DDL starts: both know the new body.
        await reader.query(READ_T);
        await writer.query(READ_T);
        await run.baseline();
        await writer.query('CALL quiet()');
        await reader.query(READ_VIEW);
        await reader.query(READ_VIEW);
        await run.expect({ hits: 1, inserts: 1 }, 'the view over u, cached');
        // Its result depends on u now: a write to u must reach it.
        await writer.query('UPDATE u SET w = w + 1 WHERE id = 1');
        await reader.query(READ_VIEW);
        await run.expect({ hits: 0 }, 'after a write to u');
      },
    ));

  test('a temporary table made where the text does not show it (a stored function, a trigger): the session reads it, not the cache', () =>
    scenario(
      [
        ...KV,
        `CREATE FUNCTION shadow() RETURNS INT MODIFIES SQL DATA
         BEGIN CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT PRIMARY KEY, v VARCHAR(40)); RETURN 1; END`,
        'CREATE PROCEDURE echo(n INT) SELECT n',
        'CREATE PROCEDURE via_function() SET @made = shadow()',
        'CREATE TABLE maker (id INT)',
        `CREATE TRIGGER maker_ai AFTER INSERT ON maker FOR EACH ROW
         CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT PRIMARY KEY, v VARCHAR(40))`,
        'CREATE PROCEDURE fills_maker() INSERT INTO maker VALUES (2)',
        'CREATE VIEW shadow_view AS SELECT shadow() AS made',
        'CREATE PROCEDURE reads_view() SELECT made FROM shadow_view',
      ],
      async (run) => {
        const other = await run.session('other', { worker: 0 });
        // A function called by a statement makes a temporary t in this session. The procedure
        // runs no DDL, but its argument makes one; so
        // does the other procedure's body, through the same function; so does a trigger, fired
        // by a plain INSERT or by a procedure's; so does a view calling it, read by a SELECT, by a
        // procedure, or by a subquery among a CALL's arguments.
        for (const call of [
          'SELECT shadow()',
          'DO shadow() + shadow()',
          'CALL echo(shadow())',
          'CALL via_function()',
          'INSERT INTO maker VALUES (1)',
          'SELECT 1; INSERT INTO maker VALUES (3)',
          'CALL fills_maker()',
          'SELECT made FROM shadow_view',
          'CALL reads_view()',
          'CALL echo((SELECT made FROM shadow_view))',
        ]) {
          const caller = await run.session(call, { worker: 0 });
          // Before it: the base table, cached (its result served to this session).
          await caller.query(READ_T);
          await caller.query(READ_T);
          await run.baseline();
          await caller.query(call);
          await caller.query(READ_T);
          await caller.query(READ_T);
          await run.expect({ hits: 0 }, `${call}: after it, the session's own temporary t`);
          await other.query(READ_T);
          await other.query(READ_T);
          await run.expect({ hits: 1 }, `${call}: another session reads the base table, cached`);
        }
      },
    ));

  test('a view redefined to call a function that makes a table: a procedure reading it is judged again', () =>
    scenario(
      [
        ...KV,
        `CREATE FUNCTION shadow() RETURNS INT MODIFIES SQL DATA
         BEGIN CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT PRIMARY KEY, v VARCHAR(40)); RETURN 1; END`,
        'CREATE VIEW plain_view AS SELECT 1 AS made',
        'CREATE PROCEDURE reads_view() SELECT made FROM plain_view',
      ],
      async (run) => {
        const caller = await run.session('caller', { worker: 0 });
        await caller.query(READ_T);
        await caller.query(READ_T);
        await caller.query('CALL reads_view()');
        await caller.query(READ_T);
        await run.expect({ hits: 2, inserts: 1 }, 'the procedure makes no table: still served');
        // DDL of a view reads the routines' rows no more, but judges them again by the views.
        // (Another session's: the text names the function, which would hide the caller's tables.)
        // Its read lets the proxy learn its current database, for the view's name.
        const definer = await run.session('definer', { worker: 1 });
        await definer.query(READ_T);
        await definer.query('CREATE OR REPLACE VIEW plain_view AS SELECT shadow() AS made');
        await caller.query(READ_T);
        await caller.query(READ_T);
        await run.baseline();
        await caller.query('CALL reads_view()');
        await caller.query(READ_T);
        await caller.query(READ_T);
        await run.expect({ hits: 0 }, 'now it may: the session reads its own temporary t');
      },
    ));

  test('SQL_NO_CACHE and SQL_CACHE', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      await a.query('SELECT SQL_NO_CACHE * FROM t ORDER BY id');
      await a.query('SELECT SQL_NO_CACHE * FROM t ORDER BY id');
      await a.execute('SELECT SQL_NO_CACHE * FROM t WHERE id > ?', [1]);
      await a.execute('SELECT SQL_NO_CACHE * FROM t WHERE id > ?', [1]);
      await run.expect({ hits: 0, inserts: 0, not_cached: 4 }, 'SQL_NO_CACHE');
      await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
      await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
      await a.query(READ_T);
      await a.query('SELECT SQL_NO_CACHE * FROM t ORDER BY id');
      await run.expect({ hits: 1, inserts: 2, not_cached: 1 }, 'SQL_CACHE with the cache ON');
    }));

  test('query_cache_type DEMAND: only SELECT SQL_CACHE is cached', () =>
    withServerQueryCache({ type: 'ON', size: 0 }, () =>
      scenario(KV, async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        await setCacheType(a, 'DEMAND');
        await a.query(READ_T);
        await a.query(READ_T);
        await a.execute(PREP_T, [0]);
        await a.execute(PREP_T, [0]);
        await run.expect({ hits: 0, inserts: 0, bypass_not_requested: 4 }, 'DEMAND, no SQL_CACHE');
        await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
        await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
        await a.execute('SELECT SQL_CACHE id, v FROM t WHERE id >= ? ORDER BY id', [0]);
        await a.execute('SELECT SQL_CACHE id, v FROM t WHERE id >= ? ORDER BY id', [0]);
        await run.expect({ hits: 2, inserts: 2 }, 'DEMAND with SQL_CACHE');
        await b.query(READ_T);
        await b.query(READ_T);
        await run.expect({ hits: 1, inserts: 1 }, 'another session keeps the default (ON)');
        await setCacheType(a, 'OFF');
        await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
        await a.query(READ_T);
        await run.expect({ hits: 0, bypass_not_requested: 2 }, 'OFF');
        await setCacheType(a, 'ON');
        await a.query(READ_T);
        await a.query('SELECT SQL_CACHE * FROM t ORDER BY id');
        await run.expect({ hits: 2 }, 'ON again');
      }),
    ));

  test('query_cache_type DEMAND: a view that says SQL_CACHE asks for its readers', () =>
    withServerQueryCache({ type: 'ON', size: 0 }, () =>
      scenario(KV, async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('CREATE VIEW vc AS SELECT SQL_CACHE id, v FROM t');
        await a.query('CREATE VIEW vn AS SELECT id FROM vc WHERE id > 1');
        await a.query('CREATE VIEW vp AS SELECT id, v FROM t');
        await setCacheType(a, 'DEMAND');
        await untilCached(run, a, 'SELECT * FROM vc ORDER BY id');
        await untilCached(run, a, 'SELECT * FROM vn ORDER BY id');
        await a.query('SELECT * FROM vc ORDER BY id');
        await a.query('SELECT * FROM vn ORDER BY id');
        await run.expect({ hits: 2 }, 'views that say SQL_CACHE, directly and through a view');
        await a.query('SELECT * FROM vp ORDER BY id');
        await a.query('SELECT * FROM vp ORDER BY id');
        await a.query('SELECT vp.id FROM vp JOIN t USING (id) ORDER BY vp.id');
        await run.expect({ hits: 0, inserts: 0, bypass_not_requested: 3 }, 'a plain view');
        await a.query("UPDATE t SET v = 'changed' WHERE id = 2");
        await a.query('SELECT * FROM vn ORDER BY id');
        await a.query('SELECT * FROM vc ORDER BY id');
        await run.expect({ hits: 0, inserts: 2 }, 'invalidated by a write to the table');
      }),
    ));

  test('RESET QUERY CACHE empties every worker’s cache', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      for (const session of [a, b, a, b]) {
        await session.query(READ_T);
        await session.execute(PREP_T, [0]);
      }
      await run.expect({ hits: 6, inserts: 2 }, 'stored through A, served through both');
      await a.query('RESET QUERY CACHE');
      await run.expect({ invalidations_all: 1 }, 'RESET QUERY CACHE');
      // The other worker reads first: nothing is left for it either.
      for (const session of [b, a]) {
        await session.query(READ_T);
        await session.execute(PREP_T, [0]);
      }
      await run.expect({ hits: 2, inserts: 2 }, 'nothing left for either worker');
      await a.query(READ_T);
      await b.query(READ_T);
      await run.expect({ hits: 2 }, 'cached again');
      await b.query('FLUSH QUERY CACHE');
      await a.query(READ_T);
      await b.query(READ_T);
    }));

  test('comments: leading comments share an entry, executable comments do not', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      await a.query(`/* trace-id 1 */ ${READ_T}`);
      await a.query(`/* trace-id 2 */ ${READ_T}`);
      await a.query(`-- trace-id 3\n${READ_T}`);
      await a.query(`# trace-id 4\n${READ_T}`);
      await a.query(`${READ_T} /* trailing */`);
      await a.query(`${READ_T};`);
      await a.query(READ_T);
      await run.expect({ hits: 6, inserts: 1 }, 'comments around the statement');
      await a.query('SELECT /*!100000 1, */ 2 FROM t');
      await a.query('SELECT 2 FROM t');
      await a.query('SELECT /*!100000 1, */ 2 FROM t');
      await a.query('SELECT /*!999999 1, */ 2 FROM t');
      await a.query('SELECT /*M!100000 1, */ 2 FROM t');
      await a.query('SELECT /*M!999999 1, */ 2 FROM t');
      await a.query('SELECT 2 FROM t');
      await run.expect({ hits: 2, inserts: 5 }, 'executable comments are part of the key');
      await a.query('SELECT /* inner */ 2 FROM t');
      await a.query("SELECT '/* not a comment */' FROM t");
      await a.query("SELECT '/* not a comment */' FROM t");
      await a.query("SELECT '-- not a comment' FROM t");
      await run.expect({ hits: 1 }, 'comment-like strings');
    }));

  test('the session probe leaves FOUND_ROWS() and warnings’ row numbers as the client left them', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      // DDL, then a statement the probe runs before: FOUND_ROWS() is still the DDL's.
      await a.query('CREATE TABLE probe_t AS SELECT 1 AS c');
      await a.query('SHOW CREATE TABLE probe_t');
      await a.query('DROP TABLE probe_t');
      await a.query('SELECT hex(concat(FOUND_ROWS()))');
      // A SELECT's count survives a state change and a write the probe runs before.
      for (const rows of [3, 1500]) {
        await a.query(
          `SET STATEMENT max_recursive_iterations = 2000 FOR WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ${rows}) SELECT n FROM r`,
        );
        await a.query('SET @probe_x = 1');
        await a.query('UPDATE t SET v = v WHERE id = 1');
        await a.query('SELECT FOUND_ROWS()');
      }
      await a.query('SET @probe_x = 2');
      await a.prepare('SELECT * FROM t WHERE id = ?');
      await a.query('SELECT FOUND_ROWS()');
      // A CALL's argument cut to fit, right after DDL: its warning names the server's row.
      await a.query("SET sql_mode = ''");
      await a.query('CREATE PROCEDURE probe_p(x CHAR(2)) BEGIN END');
      await a.queryThenDiagnostics("CALL probe_p('abcdef')");
      await a.query('SET @probe_y = 3');
      await a.queryThenDiagnostics("CALL probe_p('abcdef')");
      // Routines' DDL does not set that row number back: nor may the probe before it.
      await a.query('SET @probe_y = 4');
      await a.query('DROP PROCEDURE probe_p');
      await a.query('CREATE PROCEDURE probe_p(x CHAR(2)) BEGIN END');
      await a.queryThenDiagnostics("CALL probe_p('abcdef')");
      await a.query('DROP PROCEDURE probe_p');
    }));

  test('the proxy’s own statements stay out of the session’s slow query log', async () => {
    const admin = await connectDirect();
    const [saved] = rowsOf(
      await admin.query('SELECT @@global.log_output, @@global.slow_query_log'),
      admin.deprecateEof,
    );
    await admin.query("SET GLOBAL log_output = 'TABLE', GLOBAL slow_query_log = 1");
    try {
      await scenario(KV, async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('SET long_query_time = 0');
        await a.query('SELECT * FROM t WHERE id = 1');
        await a.query('SET @probe_x = 1');
        // The probe, then FOUND_ROWS() put back, before the write.
        await a.query('UPDATE t SET v = v WHERE id = 1');
        await a.query('SET long_query_time = 10');
        await a.query(
          'SELECT sql_text, rows_sent FROM mysql.slow_log WHERE thread_id = CONNECTION_ID()',
        );
      });
    } finally {
      await admin.query(
        `SET GLOBAL log_output = '${saved![0]}', GLOBAL slow_query_log = ${saved![1]}`,
      );
      admin.close();
    }
  });

  test('a text misread under a multi-byte character set cannot hide a write', () =>
    // probe_w is created by the setup's session: one that creates a routine with a block is
    // taken to have run several statements, and reads from the server from then on.
    scenario(
      [
        ...KV,
        "CREATE FUNCTION probe_w() RETURNS INT MODIFIES SQL DATA BEGIN UPDATE t SET v = CONCAT(v, '+') WHERE id = 1; RETURN 1; END",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        // 0x83 0x5C is one sjis character; read byte by byte, 0x5C escapes the quote after it and
        // the call to probe_w() looks like part of the string.
        const misread = (verb: string): Buffer =>
          Buffer.concat([
            Buffer.from([Command.QUERY]),
            Buffer.from(`${verb} @probe_s = '`, 'latin1'),
            Buffer.from([0x83, 0x5c]),
            Buffer.from("', @probe_t = probe_w()", 'latin1'),
          ]);
        for (const verb of ['SET', 'SELECT']) {
          await untilCached(run, a, READ_T);
          await a.query('SET NAMES sjis');
          await a.command(
            `${verb} with an sjis character ending in 0x5C, then a write`,
            misread(verb),
          );
          await a.query('SET NAMES utf8mb4');
          await a.query(READ_T);
        }
        await a.query('DROP FUNCTION probe_w');
      },
    ));

  test('warnings from before a hit are gone after it, through statements that read no table', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      await a.query(READ_T);
      await run.baseline();
      // The server keeps its warning list through statements that use no table; the hit, which
      // reads one, emptied the client's.
      for (const between of ['SET @nc_w = 1', 'DO 1', 'BEGIN', 'COMMIT']) {
        await a.queryThenDiagnostics("SELECT CAST('7x' AS SIGNED)");
        await a.queryThenDiagnostics(READ_T);
        await a.queryThenDiagnostics(between);
        await a.queryThenDiagnostics('SHOW WARNINGS');
        await a.queryThenDiagnostics("SELECT CAST('8x' AS SIGNED)");
        await a.queryThenDiagnostics(READ_T);
        await a.queryThenDiagnostics(between);
        await a.queryThenDiagnostics('SHOW COUNT(*) WARNINGS');
        await a.queryThenDiagnostics('SELECT FOUND_ROWS()');
      }
      // A warning raised after the hit, by a statement that reads no table, stays.
      await a.queryThenDiagnostics(READ_T);
      await a.queryThenDiagnostics("SET @nc_w = CAST('9x' AS SIGNED)");
      await a.queryThenDiagnostics('SHOW WARNINGS');
      // One read is a miss: the session's key changes with its first user variable.
      await run.expect({ hits: 8, inserts: 1 }, 'the reads after the first are hits');
    }));

  test('FOUND_ROWS(), ROW_COUNT() and SHOW WARNINGS after a hit are the server’s', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const limit2 = `${READ_T} LIMIT 2`;
      await a.query(limit2);
      await a.queryThenDiagnostics(limit2);
      await run.expect({ hits: 1 }, 'a hit');
      await a.query('SELECT FOUND_ROWS()');
      await a.query(`${READ_T} LIMIT 3`);
      await a.queryThenDiagnostics(limit2);
      await a.query('SELECT FOUND_ROWS(), ROW_COUNT()');
      await a.queryThenDiagnostics(limit2);
      await a.query('SELECT ROW_COUNT()');
      await a.queryThenDiagnostics(limit2);
      await a.query('SHOW WARNINGS');
      await a.queryThenDiagnostics(limit2);
      await a.query('SHOW COUNT(*) WARNINGS');
      await a.queryThenDiagnostics(limit2);
      await a.query('SELECT @@warning_count, @@error_count');
      await a.queryThenDiagnostics(limit2);
      await a.query('GET DIAGNOSTICS @rows = ROW_COUNT, @n = NUMBER');
      await a.query('SELECT @rows, @n');
      await a.execute('SELECT * FROM t WHERE id > ?', [3]);
      await a.record(
        'execute again',
        await a.client.command(execute(a.statementId('SELECT * FROM t WHERE id > ?'), [3])),
        undefined,
        false,
      );
      await a.query('SELECT FOUND_ROWS()');
      await run.expect({ hits: 7 }, 'hits before diagnostics');

      await a.query('SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1');
      await a.query('SELECT FOUND_ROWS()');
      await a.query('SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1');
      await a.queryThenDiagnostics(limit2);
      await a.query('SELECT FOUND_ROWS()');
      await a.queryThenDiagnostics('UPDATE t SET v = v WHERE id < 3');
      await a.query('SELECT ROW_COUNT()');
      await a.query("UPDATE t SET v = 'x' WHERE id < 3");
      await a.query(limit2);
      await a.queryThenDiagnostics(limit2);
      await a.query('SELECT ROW_COUNT()');

      // Warnings: such results are never stored, so SHOW WARNINGS always follows the server's.
      await a.queryThenDiagnostics('SELECT id, CAST(v AS SIGNED) FROM t ORDER BY id');
      await a.query('SHOW WARNINGS');
      await a.queryThenDiagnostics('SELECT id, CAST(v AS SIGNED) FROM t ORDER BY id');
      await a.query('SHOW WARNINGS');
      await a.execute('SELECT id, CAST(v AS SIGNED) FROM t WHERE id > ?', [0]);
      await a.query('SHOW WARNINGS');
      await run.expect({ hits: 2, inserts: 1, bypass_reply: 3 }, 'warnings are not cached');
      await a.query(READ_T);
      await a.queryThenDiagnostics(READ_T);
      await a.query('SHOW WARNINGS');
      await run.expect({ hits: 1 }, 'SHOW WARNINGS after a hit');
    }));

  test('SHOW STATUS: Qcache_* are the proxy’s counters, with LIKE and WHERE', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      await a.query(READ_T);
      await a.query(READ_T);
      await a.query(READ_T);
      const deprecateEof = a.client.deprecateEof;
      const shown = async (sql: string): Promise<Array<Array<string | null>>> => {
        const packets = await a.client.query(sql);
        await a.record(sql, maskStatusValues(packets, deprecateEof));
        return rowsOf(packets, deprecateEof);
      };
      const counters = await run.proxy?.counters();
      const hits = String(counters?.get('hits'));
      for (const sql of [
        "SHOW STATUS LIKE 'Qcache_hits'",
        "SHOW GLOBAL STATUS LIKE 'Qcache_hits'",
        "SHOW SESSION STATUS LIKE 'qcache_hits'",
        "SHOW STATUS WHERE Variable_name = 'Qcache_hits'",
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Qcache_hits', 'Qcache_inserts')",
      ]) {
        const rows = await shown(sql);
        run.check(rows[0]?.[0] === 'Qcache_hits', `${sql}: ${JSON.stringify(rows)}`);
        if (run.isProxy)
          run.check(rows[0]?.[1] === hits, `${sql}: hits ${rows[0]?.[1]} vs ${hits}`);
      }
      await shown("SHOW STATUS LIKE 'Qcache_no_such_counter'");
      await a.query('SHOW STATUS LIKE', 1064);
      // Without a filter the proxy adds its own rows: not the server's bytes, checked here.
      const all = await a.rows("SHOW GLOBAL STATUS LIKE 'Qcache%'");
      const names = all.map((row) => row[0]);
      for (const name of ['Qcache_hits', 'Qcache_inserts', 'Qcache_not_cached']) {
        run.check(names.includes(name), `${name} missing from ${names.join(', ')}`);
      }
      if (run.isProxy) {
        for (const name of ['Qcache_invalidations', 'Qcache_bypass_own_writes']) {
          run.check(names.includes(name), `${name} missing from ${names.join(', ')}`);
        }
      }
      const hitsRow = all.find((row) => row[0] === 'Qcache_hits');
      if (run.isProxy) run.check(hitsRow?.[1] === hits, `Qcache_hits ${hitsRow?.[1]} vs ${hits}`);
    }));

  // --- what the proxy gets wrong ---------------------------------------------------------------
  // Each of these fails through the proxy today: a minimal reproduction of one bug, kept failing
  // until the proxy is fixed (see the comments for what the server does).

  test('a prepared statement reads the schema it was prepared in, whatever the current one', () =>
    scenario(
      [
        'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40))',
        "INSERT INTO t VALUES (1, 'from nc_qcache')",
        `CREATE DATABASE ${DB2}`,
        `CREATE TABLE ${DB2}.t (id INT PRIMARY KEY, v VARCHAR(40))`,
        `INSERT INTO ${DB2}.t VALUES (1, 'from nc_qcache2')`,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0, database: DB2 });
        const c = await run.session('C', { worker: 1 });
        const sql = 'SELECT v FROM t WHERE id = ?';
        await a.prepare(sql);
        await a.command(`init db ${DB2}`, initDb(DB2));
        await a.execute(sql, [1]);
        await a.execute(sql, [1]);
        // A's statement still reads nc_qcache.t: a write there must reach it.
        await c.query("UPDATE t SET v = 'changed in nc_qcache' WHERE id = 1");
        await a.execute(sql, [1]);
        // B prepares the same text in nc_qcache2: its own table, which A must not be served.
        await b.execute(sql, [1]);
        await b.execute(sql, [1]);
        await a.execute(sql, [1]);
      },
    ));

  test('SET TRANSACTION ISOLATION LEVEL for the next transaction is honoured', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      const c = await run.session('C', { worker: 0 });
      // A READ COMMITTED session whose next transaction is REPEATABLE READ.
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await c.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await a.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await a.query('BEGIN');
      await a.query(READ_T);
      await b.query("UPDATE t SET v = 'new' WHERE id = 1");
      // C, READ COMMITTED too, caches the new value under the same session state as A's.
      await c.query(READ_T);
      const snapshot = await a.query(READ_T);
      if (!run.isProxy) run.check(firstRow(a, snapshot)[1] === 'one', 'the snapshot premise');
      await a.query('COMMIT');

      // A REPEATABLE READ session whose next transaction is SERIALIZABLE: reads take locks.
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await b.query(READ_U);
      await a.query('SET TRANSACTION ISOLATION LEVEL SERIALIZABLE');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query(READ_U);
      await b.query('SELECT * FROM u WHERE id = 1 FOR UPDATE NOWAIT', 1205);
      await a.query('COMMIT');

      // A SERIALIZABLE transaction stays so when SET SESSION changes the level of the next one.
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE');
      await a.query('BEGIN');
      await a.query(READ_T);
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await a.query(READ_U);
      await b.query('SELECT * FROM u WHERE id = 2 FOR UPDATE NOWAIT', 1205);
      await a.query('COMMIT');
    }));

  test('a locking read does not take the snapshot: the next plain read must', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await b.query(READ_U);
      await a.query('BEGIN');
      await a.query('SELECT * FROM t WHERE id = 1 FOR UPDATE');
      await a.query(READ_U);
      await b.query('UPDATE u SET w = 99 WHERE id = 1');
      const last = await a.query(READ_U);
      // Directly, A's first plain read took the snapshot: it still sees the old value.
      if (!run.isProxy) run.check(firstRow(a, last)[1] === '10', 'the snapshot premise');
      await a.query('COMMIT');
    }));

  test('FOUND_ROWS() and SHOW WARNINGS after a hit describe the hit, not a later re-run', () =>
    scenario(
      [
        'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40))',
        "INSERT INTO t VALUES (1, '1'), (2, '2'), (3, '3')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        await a.query('SELECT * FROM t');
        await a.query('SELECT * FROM t');
        await b.query("INSERT INTO t VALUES (4, 'four')");
        await a.query('SELECT FOUND_ROWS()');

        await a.query('SELECT id, CAST(v AS SIGNED) FROM t WHERE id < 4');
        await a.query('SELECT id, CAST(v AS SIGNED) FROM t WHERE id < 4');
        await b.query("UPDATE t SET v = 'x' WHERE id = 1");
        await a.query('SHOW WARNINGS');

        const sql = 'SELECT * FROM t WHERE id >= ?';
        await a.execute(sql, [2]);
        await a.query('SELECT * FROM t WHERE id = 1');
        await a.execute(sql, [2]);
        a.closeStatement(sql);
        await a.query('SELECT FOUND_ROWS()');

        // COM_PING sets ROW_COUNT() to 0; a replay of the hit after it sets it back to -1.
        await a.query('SELECT * FROM t WHERE id = 1');
        await a.query('SELECT ROW_COUNT()');
      },
    ));

  test('a temporary table renamed to a base table’s name shadows it', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE t2 (id INT PRIMARY KEY, v VARCHAR(40))',
        "INSERT INTO t2 VALUES (1, 'base t2')",
        'CREATE TABLE t3 (id INT PRIMARY KEY, v VARCHAR(40))',
        "INSERT INTO t3 VALUES (1, 'base t3')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        await a.query('CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v VARCHAR(40))');
        await a.query("INSERT INTO tmp VALUES (7, 'temporary')");
        await a.query('ALTER TABLE tmp RENAME TO t2');
        await a.query('CREATE TEMPORARY TABLE tmp3 (id INT PRIMARY KEY, v VARCHAR(40))');
        await a.query("INSERT INTO tmp3 VALUES (8, 'temporary')");
        await a.query('RENAME TABLE tmp3 TO t3');
        await run.settle();
        await b.query('SELECT * FROM t2');
        await b.query('SELECT * FROM t3');
        // A's t2 and t3 are its temporary tables now.
        await a.query('SELECT * FROM t2');
        await a.query('SELECT * FROM t3');
      },
    ));

  test('a text of data statements only (a batch of writes) invalidates what it writes, and its session is still served', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await a.query(READ_U);
      await b.query(READ_T);
      await b.query(READ_T);
      await run.expect({ hits: 1 }, 't cached');
      // As a driver batches them (Connector/J with allowMultiQueries, mysqli_multi_query).
      await a.query(
        "UPDATE t SET v = 'uno' WHERE id = 1; UPDATE t SET v = 'dos' WHERE id = 2; SELECT * FROM u WHERE id = 1",
      );
      await run.expect({ invalidations: 1, invalidations_all: 0 }, 'the batch writes t');
      await b.query(READ_T);
      await a.query(READ_U);
      await a.query(READ_T);
      await a.query(READ_T);
      await run.expect({ hits: 3, bypass_temporary_table: 0 }, 'the batch’s session served');
      // Nor does a batch prepare anything: what the session prepared before is still known.
      await a.query("PREPARE w FROM 'UPDATE u SET w = w + 1 WHERE id = 2'");
      await a.query("UPDATE t SET v = 'tres' WHERE id = 3; DELETE FROM t WHERE id = 5");
      await a.query('EXECUTE w');
      await run.expect({ invalidations_all: 0 }, 'EXECUTE of a write prepared before a batch');
      // A text that may make a table still leaves its session reading from the server.
      await a.query('UPDATE u SET w = w + 1 WHERE id = 1; CREATE TEMPORARY TABLE t (id INT)');
      await a.query(READ_T);
      await a.query(READ_U);
      await run.expect({ hits: 0 }, 'after a temporary table in a text');
    }));

  test('a text of SETs (a connection’s init command): the probe reads what it set, and its session is still served', () =>
    scenario(
      [
        ...KV,
        ...KV2,
        'CREATE TABLE stamps (id INT PRIMARY KEY, at TIMESTAMP NULL) ENGINE=InnoDB',
        "INSERT INTO stamps VALUES (1, '2026-01-01 00:00:00')",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        // As PDO's MYSQL_ATTR_INIT_COMMAND or a pool's connection hook sends it.
        await a.query("SET NAMES utf8mb4; SET time_zone = '+00:00'");
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect({ hits: 1, bypass_temporary_table: 0 }, 'served after the init command');
        await a.query('SELECT at FROM stamps');
        await a.query('SELECT at FROM stamps');
        await run.expect({ hits: 1 }, 'stamps read at +00:00');
        // The probe reads the zone the text set: what was stored at +00:00 is not served now.
        await a.query("SET time_zone = '+05:00'; SET @x = 1");
        await a.query('SELECT at FROM stamps');
        await a.query('SELECT at FROM stamps');
        await run.expect({ hits: 1, bypass_temporary_table: 0 }, 'stamps read at +05:00');
        // autocommit off in the text: its write stays uncommitted, and what another session reads
        // meanwhile (the old row) is not served after the COMMIT.
        await a.query("SET autocommit = 0; UPDATE t SET v = 'cero' WHERE id = 1");
        await b.query(READ_T);
        await b.query(READ_T);
        await a.query('COMMIT');
        await b.query(READ_T);
        await a.query('SET autocommit = 1');
        await a.query(READ_T);
        await a.query(READ_T);
        // B's reads while the write was open were not stored; A's own zone keys its results apart.
        await run.expect(
          { stale_fills_refused: 2, inserts: 2, hits: 1 },
          'autocommit off in a text, then COMMIT',
        );
        // SET TRANSACTION is for the next transaction only, which the probe cannot read back:
        // such a text still leaves its session reading from the server.
        await a.query('SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET @y = 2');
        await a.query(READ_U);
        await a.query(READ_U);
        await run.expect({ hits: 0, bypass_temporary_table: 2 }, 'after SET TRANSACTION in a text');
      },
    ));

  test('point reads are invalidated by row: a write to one row of t leaves reads of its other rows served', () =>
    scenario(
      [
        ...KV,
        'CREATE VIEW v_t AS SELECT id, v FROM t',
        ...NO_POINT_WRITES,
        'CREATE TABLE counted (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const rows = [
          'SELECT v FROM t WHERE id = 1',
          'SELECT v FROM t WHERE id = 2',
          'SELECT v FROM t WHERE id = 04',
          'SELECT v FROM t WHERE id = 9',
          READ_T,
          'SELECT * FROM v_t WHERE id = 3',
        ];
        for (const sql of rows) await b.query(sql);
        for (const sql of rows) await b.query(sql);
        await run.expect({ hits: 6 }, 'all cached');
        // A write to row 1 makes reads of row 1, and every read not bounded to one row, stale.
        await a.query("UPDATE t SET v = 'uno' WHERE id = 1");
        for (const sql of rows) await b.query(sql);
        await run.expect({ hits: 3, invalidations: 1, invalidations_all: 0 }, 'rows 2, 4 and 9');
        await a.query('DELETE FROM t WHERE id = 2');
        await b.query('SELECT v FROM t WHERE id = 2');
        await b.query('SELECT v FROM t WHERE id = 1');
        await a.query("INSERT INTO t (id, v) VALUES (2, 'dos')");
        await b.query('SELECT v FROM t WHERE id = 2');
        await b.query('SELECT v FROM t WHERE id = 1');
        // Leading zeros: the same row.
        await a.query("UPDATE t SET v = 'cuatro' WHERE id = 0004");
        await b.query('SELECT v FROM t WHERE id = 04');
        await run.expect({ hits: 2 }, 'row 1 served while rows 2 and 4 were written');
        // Writes that are no point writes make every read of t stale: one that moves a row to
        // another value, one bounded by another column, a view's.
        await b.query('SELECT v FROM t WHERE id = 9');
        await a.query('UPDATE t SET id = 9 WHERE id = 1');
        await b.query('SELECT v FROM t WHERE id = 9');
        await b.query('SELECT v FROM t WHERE id = 3');
        await a.query("UPDATE t SET v = 'tres' WHERE v = 'three'");
        await b.query('SELECT v FROM t WHERE id = 3');
        await b.query('SELECT * FROM v_t WHERE id = 5');
        await a.query("UPDATE v_t SET v = 'cinco' WHERE id = 5");
        await b.query('SELECT * FROM v_t WHERE id = 5');
        await b.query('SELECT v FROM t WHERE id = 5');
        // A value beyond the column's range is clamped by a server not in strict mode: the row
        // lands at the range's end, which a read of that value must see.
        await b.query('SELECT v FROM t WHERE id = 2147483647');
        await a.query("SET SESSION sql_mode = ''");
        await a.query("INSERT INTO t (id, v) VALUES (99999999999, 'big')");
        await b.query('SELECT v FROM t WHERE id = 2147483647');
        // 0 into an AUTO_INCREMENT column inserts the next value, not 0.
        await b.query('SELECT v FROM counted WHERE id = 1');
        await a.query("INSERT INTO counted (id, v) VALUES (0, 'next')");
        await b.query('SELECT v FROM counted WHERE id = 1');
        // A trigger may change the key it inserts under; a cascade writes another table.
        await b.query('SELECT v FROM lifted WHERE id = 101');
        await a.query("INSERT INTO lifted (id, v) VALUES (1, 'lifted')");
        await b.query('SELECT v FROM lifted WHERE id = 101');
        await b.query('SELECT pid FROM child WHERE id = 1');
        await a.query('DELETE FROM parent WHERE id = 1');
        await b.query('SELECT pid FROM child WHERE id = 1');
        // A transaction reads its own write to a row, and another session the committed row.
        await b.query('SELECT v FROM t WHERE id = 4');
        await a.query('BEGIN');
        await a.query("UPDATE t SET v = 'mine' WHERE id = 4");
        await a.query('SELECT v FROM t WHERE id = 4');
        await b.query('SELECT v FROM t WHERE id = 4');
        await b.query('SELECT v FROM t WHERE id = 4');
        await a.query('COMMIT');
        await b.query('SELECT v FROM t WHERE id = 4');
        await a.query('SELECT v FROM t WHERE id = 4');
      },
    ));

  test('prepared point reads are invalidated by the row their parameter binds', () =>
    scenario(
      [
        'CREATE TABLE n (id INT PRIMARY KEY, k INT, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO n VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three'), (4, 40, 'four')",
        'CREATE TABLE counted (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO counted VALUES (1, 'one'), (2, 'two')",
        ...NO_POINT_WRITES,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const ROW = 'SELECT k, v FROM n WHERE id = ?';
        const SET_K = 'UPDATE n SET k = ? WHERE id = ?';
        const rows = async (): Promise<void> => {
          for (const id of [1, 2, 3, 4]) await b.execute(ROW, [id]);
        };
        await rows();
        await rows();
        await run.expect({ hits: 4 }, 'all cached');
        // The second parameter binds the row: the first (3) is the new k, and names row 3. A
        // write read at the wrong parameter would leave row 1 served stale.
        await a.execute(SET_K, [3, 1]);
        await rows();
        await run.expect({ hits: 3, invalidations: 1, invalidations_all: 0 }, 'rows 2 to 4');
        // Rows written by text are rows read by executions, and the other way round.
        await b.query('SELECT k, v FROM n WHERE id = 3');
        await b.query('SELECT k, v FROM n WHERE id = 3');
        await a.query('UPDATE n SET k = 31 WHERE id = 2');
        await a.execute(SET_K, [32, 3]);
        await b.query('SELECT k, v FROM n WHERE id = 3');
        await rows();
        await run.expect({ hits: 3 }, 'the text hit once, then rows 1 and 4');
        // The same row, bound as other types: a string of digits, a double, a 4-byte integer.
        await b.execute(ROW, ['0004']);
        await b.execute(ROW, [2.5]);
        await b.command(`execute ${ROW} [LONG 4]`, executeLong(b.statementId(ROW), 4));
        await b.command(`execute ${ROW} [LONG 4]`, executeLong(b.statementId(ROW), 4));
        await a.execute('UPDATE n SET v = ? WHERE id = ?', ['cuatro', '4']);
        await b.execute(ROW, ['0004']);
        await b.command(`execute ${ROW} [LONG 4]`, executeLong(b.statementId(ROW), 4));
        await a.execute(SET_K, [44, 4.0]);
        await b.command(`execute ${ROW} [LONG 4]`, executeLong(b.statementId(ROW), 4));
        // DELETE and INSERT of a row by parameter.
        await a.execute('DELETE FROM n WHERE id = ?', [2]);
        await b.execute(ROW, [2]);
        await a.execute('INSERT INTO n (id, k, v) VALUES (?, ?, ?)', [2, 22, 'dos']);
        await b.execute(ROW, [2]);
        await b.execute(ROW, [1]);
        // No row bound: NULL, or 0, into AUTO_INCREMENT takes the next value.
        const COUNTED = 'SELECT v FROM counted WHERE id = ?';
        await b.execute(COUNTED, [3]);
        await b.execute(COUNTED, [4]);
        await a.execute('INSERT INTO counted (id, v) VALUES (?, ?)', [null, 'null']);
        await b.execute(COUNTED, [3]);
        await b.execute(COUNTED, [4]);
        await a.execute('INSERT INTO counted (id, v) VALUES (?, ?)', [0, 'zero']);
        await b.execute(COUNTED, [4]);
        // A value beyond the column's range is clamped by a server not in strict mode.
        await b.execute(ROW, [2147483647]);
        await a.query("SET SESSION sql_mode = ''");
        await a.execute('INSERT INTO n (id, k, v) VALUES (?, ?, ?)', [99999999999, 0, 'big']);
        await b.execute(ROW, [2147483647]);
        // A trigger may change the key it inserts under; a cascade writes another table.
        await b.execute('SELECT v FROM lifted WHERE id = ?', [101]);
        await a.execute('INSERT INTO lifted (id, v) VALUES (?, ?)', [1, 'lifted']);
        await b.execute('SELECT v FROM lifted WHERE id = ?', [101]);
        await b.execute('SELECT pid FROM child WHERE id = ?', [1]);
        await a.execute('DELETE FROM parent WHERE id = ?', [1]);
        await b.execute('SELECT pid FROM child WHERE id = ?', [1]);
        // A transaction reads its own write to a row; another session, the committed row.
        await b.execute(ROW, [3]);
        await a.query('BEGIN');
        await a.execute(SET_K, [-3, 3]);
        await a.execute(ROW, [3]);
        await b.execute(ROW, [3]);
        await a.query('COMMIT');
        await b.execute(ROW, [3]);
        await a.execute(ROW, [3]);
      },
    ));

  test('a join: a table bounded by its key in the WHERE depends on those rows, the others on every row', () =>
    scenario(
      [
        'CREATE TABLE c (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO c VALUES (1, 'ann'), (2, 'bob')",
        'CREATE TABLE o (id INT PRIMARY KEY, cid INT, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO o VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 2, 'd')",
        'CREATE VIEW v_o AS SELECT id, cid, v FROM o',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const reads = [
          'SELECT o.v, c.name FROM o JOIN c ON c.id = o.cid WHERE o.id = 1',
          "SELECT x.v, y.name FROM o AS x LEFT JOIN c y ON y.id = x.cid WHERE x.id = '3'",
          'SELECT o.v, c.name FROM c, o WHERE o.id = 4 AND c.id = o.cid',
          'SELECT o.v, c.name FROM o JOIN c ON c.id = o.cid WHERE o.id IN (1, 9) ORDER BY o.id',
          'SELECT o.v, w.v FROM o JOIN v_o w ON w.cid = o.cid WHERE o.id = 1 AND w.id = 2',
        ];
        const readAll = async (): Promise<void> => {
          for (const sql of reads) await b.query(sql);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 5 }, 'all cached');
        // Row 2 of o: read only through the view (the last read).
        await a.query("UPDATE o SET v = 'B' WHERE id = 2");
        await readAll();
        await run.expect({ hits: 4, invalidations_all: 0 }, 'all but the read through the view');
        await a.query("UPDATE o SET v = 'A' WHERE id = 1");
        await readAll();
        await run.expect({ hits: 2 }, 'the reads of row 3 and row 4 still served');
        // A row of o added: a join that found its rows of o stays served; the IN list read
        // found one of its keys (a join may repeat a row), and the view reads o whole.
        await a.query("INSERT INTO o VALUES (9, 2, 'i')");
        await readAll();
        await run.expect({ hits: 3 }, 'all but the IN list and the view');
        // c is bounded by no conjunct: every write of it is a write of every join's c.
        await a.query("UPDATE c SET name = 'Ann' WHERE id = 2");
        await readAll();
        await run.expect({ hits: 1 }, 'only the join that reads no c');
        // A self-join, named twice: neither name bounds its rows.
        const SELF =
          'SELECT p.v, q.v FROM o p JOIN o q ON q.cid = p.cid WHERE p.id = 3 AND q.id = 4';
        // The same, one name qualified: q reads every row of o with p's cid.
        const SPELT = `SELECT p.v, q.v FROM ${run.database}.o p JOIN o q ON q.cid = p.cid WHERE p.id = 3 ORDER BY q.id`;
        for (const sql of [SELF, SELF, SPELT, SPELT]) await b.query(sql);
        await a.query("UPDATE o SET v = 'e' WHERE id = 9");
        await b.query(SELF);
        await b.query(SPELT);
        await run.expect({ hits: 2 }, 'the self-joins: read again after a write of another row');
        // Prepared: bounded by the statement's own literals only.
        const PREPARED =
          'SELECT o.v, c.name FROM o JOIN c ON c.id = o.cid WHERE o.id = ? AND c.id = 2';
        await b.execute(PREPARED, [3]);
        await b.execute(PREPARED, [3]);
        await a.query("UPDATE c SET name = 'Bob' WHERE id = 1");
        await b.execute(PREPARED, [3]);
        await a.query("UPDATE o SET v = 'x' WHERE id = 1");
        await b.execute(PREPARED, [3]);
        await run.expect({ hits: 2 }, 'c bounded by its literal, o by nothing');
      },
    ));

  test('a quoted id is the number it spells: reads and writes bounded by it are kept by row', () =>
    scenario(
      [
        ...KV,
        "INSERT INTO t VALUES (53, 'fifty-three')",
        'CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB',
        'INSERT INTO c VALUES (1, 1), (2, 2)',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        // As PHP's PDO sends a bound id with its prepares emulated; and the same rows unquoted.
        const reads = [
          "SELECT v FROM t WHERE id = '1'",
          "SELECT v FROM t WHERE id = '2'",
          "SELECT v FROM t WHERE id = '03'",
          'SELECT v FROM t WHERE id = 4',
          "SELECT v FROM t WHERE id IN ('4', '5') ORDER BY id",
          "SELECT v FROM t WHERE id = '53'",
        ];
        const readAll = async (): Promise<void> => {
          for (const sql of reads) await b.query(sql);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 6 }, 'all cached');
        await a.query("UPDATE t SET v = 'uno' WHERE id = '1'");
        await readAll();
        await run.expect({ hits: 5, invalidations_all: 0 }, 'all but row 1');
        await a.query('DELETE FROM t WHERE id = 3');
        await a.query("UPDATE t SET v = 'cuatro' WHERE id IN ('4')");
        await readAll();
        await run.expect({ hits: 3 }, 'rows 1, 2 and 53');
        // Texts of the shape read before, with their own values: 0061 is row 61.
        await b.query("SELECT v FROM t WHERE id = '0061'");
        await a.query("INSERT INTO t (id, v) VALUES ('61', 'sixty-one')");
        await b.query("SELECT v FROM t WHERE id = '0061'");
        await b.query("SELECT v FROM t WHERE id = '2'");
        await run.expect({ hits: 1 }, 'row 61 added; row 2 still served');
        // Not the number it looks like: X'35' is 53 to a number, a string with a space is read
        // as its leading digits: writes of the table.
        await a.query("UPDATE t SET v = 'hex' WHERE id = X'35'");
        await b.query("SELECT v FROM t WHERE id = '53'");
        await b.query("SELECT v FROM t WHERE id = '2'");
        await a.query("SET SESSION sql_mode = ''");
        await a.query("UPDATE t SET v = 'spaced' WHERE id = '2 '");
        await b.query("SELECT v FROM t WHERE id = '2'");
        await b.query("SELECT v FROM t WHERE id = '53'");
        // '0' into AUTO_INCREMENT takes the next value, as 0 does.
        await b.query("SELECT v FROM c WHERE id = '3'");
        await a.query("INSERT INTO c (id, v) VALUES ('0', 3)");
        await b.query("SELECT v FROM c WHERE id = '3'");
        await run.expect({ hits: 0 }, 'each read fresh after a write it could not tell apart');
      },
    ));

  test('a primary key of two columns: reads and writes bounded by both are kept by row, by text and prepared', () =>
    scenario(
      [
        // The key's order (tenant, id) is not the table's: rows are named in the key's order.
        'CREATE TABLE pairs (id INT, v VARCHAR(20), tenant SMALLINT UNSIGNED, PRIMARY KEY (tenant, id)) ENGINE=InnoDB',
        "INSERT INTO pairs VALUES (1, 'a', 1), (2, 'b', 1), (1, 'c', 2), (2, 'd', 2), (3, 'e', 2)",
        'CREATE TABLE shifted (a INT, b INT, v INT, PRIMARY KEY (a, b)) ENGINE=InnoDB',
        'CREATE TRIGGER shift BEFORE UPDATE ON shifted FOR EACH ROW SET NEW.b = NEW.b + NEW.v',
        'INSERT INTO shifted VALUES (1, 1, 0), (1, 2, 0)',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const pair = (tenant: number, id: number): string =>
          `SELECT v FROM pairs WHERE tenant = ${tenant} AND id = ${id}`;
        const reads = [
          pair(1, 1),
          pair(1, 2),
          'SELECT v FROM pairs WHERE id = 1 AND tenant = 2',
          pair(2, 2),
          'SELECT id, v FROM pairs WHERE tenant = 2 ORDER BY id',
        ];
        const readAll = async (): Promise<void> => {
          for (const sql of reads) await b.query(sql);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 5 }, 'all cached');
        // Row (1, 2) is not row (2, 1): a write to one leaves the other served.
        await a.query("UPDATE pairs SET v = 'x' WHERE id = 2 AND tenant = 1");
        await readAll();
        await run.expect({ hits: 3, invalidations: 1, invalidations_all: 0 }, 'all but (1, 2)');
        await a.query('DELETE FROM pairs WHERE tenant = 2 AND id = 2');
        await readAll();
        await run.expect({ hits: 3 }, 'all but (2, 2) and the prefix');
        await a.query("INSERT INTO pairs (tenant, id, v) VALUES (2, 2, 'dd')");
        await a.query(
          "INSERT INTO pairs (tenant, id, v) VALUES (1, 1, 'up') ON DUPLICATE KEY UPDATE v = 'up'",
        );
        await a.query("REPLACE INTO pairs (tenant, id, v) VALUES (1, 2, 'rep')");
        await readAll();
        await run.expect({ hits: 1 }, 'only (2, 1): the rest were written, or read no row');
        // Not bounded by both columns: a write of every row of the table.
        await a.query("UPDATE pairs SET v = 'p' WHERE tenant = 1");
        await readAll();
        await run.expect({ hits: 0 }, 'a write bounded by a prefix of the key');
        // Moving a row: the read of where it lands (read before as no row) is fresh.
        await b.query(pair(2, 9));
        await b.query(pair(2, 9));
        await a.query('UPDATE pairs SET id = 9 WHERE tenant = 2 AND id = 3');
        await b.query(pair(2, 9));
        // A trigger that sets a key column moves the row it was given.
        await b.query('SELECT v FROM shifted WHERE a = 1 AND b = 3');
        await b.query('SELECT v FROM shifted WHERE a = 1 AND b = 3');
        await a.query('UPDATE shifted SET v = 2 WHERE a = 1 AND b = 1');
        await b.query('SELECT v FROM shifted WHERE a = 1 AND b = 3');
        await run.expect({ hits: 2 }, 'each read once before its row moved, none after');

        // Prepared: parameters in another order than the key's, and text and executions alike.
        const ROW = 'SELECT v FROM pairs WHERE tenant = ? AND id = ?';
        const keys: Array<[number, number]> = [
          [1, 1],
          [1, 2],
          [2, 1],
          [2, 2],
        ];
        const rows = async (): Promise<void> => {
          for (const key of keys) await b.execute(ROW, key);
        };
        await rows();
        await rows();
        await run.expect({ hits: 4 }, 'prepared, all cached');
        await a.execute('UPDATE pairs SET v = ? WHERE id = ? AND tenant = ?', ['y', 2, 1]);
        await rows();
        await run.expect({ hits: 3, invalidations: 1, invalidations_all: 0 }, 'all but (1, 2)');
        await a.query("UPDATE pairs SET v = 'z' WHERE tenant = 2 AND id = 1");
        await rows();
        await run.expect({ hits: 3 }, 'a text took the row of the execution bound to it');
        await b.query(pair(1, 1));
        await b.query(pair(1, 1));
        await a.execute('DELETE FROM pairs WHERE tenant = ? AND id = ?', [1, 1]);
        await b.query(pair(1, 1));
        await rows();
        await run.expect({ hits: 4 }, 'an execution took the row of the text bound to it only');
        // A literal beside a parameter: the row they name together.
        const TENANT_2 = 'SELECT v FROM pairs WHERE tenant = 2 AND id = ?';
        await b.execute(TENANT_2, [2]);
        await b.execute(TENANT_2, [2]);
        await b.execute(TENANT_2, [1]);
        await a.execute('UPDATE pairs SET v = ? WHERE tenant = 2 AND id = ?', ['w', 2]);
        await b.execute(TENANT_2, [2]);
        await b.execute(TENANT_2, [1]);
        await b.execute(ROW, [2, 2]);
        await b.execute(ROW, [2, 1]);
        await run.expect({ hits: 3, invalidations_all: 0 }, 'a literal and a parameter: one row');
      },
    ));

  test('a key of strings: each row kept by its value, whatever spelling its collation calls the same', () =>
    scenario(
      [
        'CREATE TABLE s (id VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO s VALUES ('abc', 'a'), ('xyz', 'x'), ('a-b', 'dash'), ('ab', 'plain'), ('\u00c9ta', 'eta'), ('5', 'five'), ('05', 'oh-five'), ('q', 'q')",
        'CREATE TABLE c (code CHAR(8) CHARACTER SET latin1 PRIMARY KEY, v INT) ENGINE=InnoDB',
        "INSERT INTO c VALUES ('k1', 1), ('k2', 2)",
        // Roman takes i for j and u for v: its keys are no point keys.
        'CREATE TABLE r (id VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_roman_ci PRIMARY KEY, v INT) ENGINE=InnoDB',
        "INSERT INTO r VALUES ('iu', 1), ('ab', 2)",
        'CREATE TABLE tagged (tenant INT, slug VARCHAR(30), v INT, PRIMARY KEY (tenant, slug)) ENGINE=InnoDB',
        "INSERT INTO tagged VALUES (1, 'hello-world', 1), (1, 'other', 2), (2, 'hello-world', 3)",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const reads = [
          "SELECT v FROM s WHERE id = 'abc'",
          "SELECT v FROM s WHERE id = 'ABC'",
          "SELECT v FROM s WHERE id = 'xyz'",
          "SELECT v FROM s WHERE id = 'a-b'",
          "SELECT v FROM s WHERE id IN ('abc', 'Q') ORDER BY id",
          "SELECT v FROM s WHERE id = 'eta'",
        ];
        const readAll = async (): Promise<void> => {
          for (const sql of reads) await b.query(sql);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 6 }, 'all cached');
        // One row by another spelling: its reads, and no other.
        await a.query("UPDATE s SET v = 'A' WHERE id = 'Abc'");
        await readAll();
        await run.expect({ hits: 3, invalidations_all: 0 }, "all but row 'abc''s three");
        // 'a-b' and 'ab' are two rows here, one name to the cache: a write of one reads both again.
        await a.query("UPDATE s SET v = 'P' WHERE id = 'ab'");
        await readAll();
        await run.expect({ hits: 5 }, "all but 'a-b', which shares 'ab''s name");
        // A value outside ASCII is no row's name: '\u00e9ta' is 'eta' here, a write of the table.
        await a.query("UPDATE s SET v = 'E' WHERE id = '\u00e9ta'");
        await readAll();
        await run.expect({ hits: 0 }, 'every read fresh after a write it cannot tell apart');
        // A number compared with strings compares as a number: '5' and '05' are both 5 (the
        // other keys, no numbers, are errors in a strict sql_mode).
        await a.query("SET SESSION sql_mode = ''");
        await b.query("SELECT v FROM s WHERE id = '05'");
        await b.query("SELECT v FROM s WHERE id = '05'");
        await a.query("UPDATE s SET v = 'n' WHERE id = 5");
        await b.query("SELECT v FROM s WHERE id = '05'");
        await run.expect({ hits: 1 }, "'05' read again after a write by the number 5");
        // A new row by a spelling of its own, and an upsert.
        await b.query("SELECT v FROM s WHERE id = 'new'");
        await b.query("SELECT v FROM s WHERE id = 'xyz'");
        await a.query("INSERT INTO s (id, v) VALUES ('NEW', 'n')");
        await a.query("REPLACE INTO s (id, v) VALUES ('Xyz', 'X')");
        await b.query("SELECT v FROM s WHERE id = 'new'");
        await b.query("SELECT v FROM s WHERE id = 'xyz'");
        await run.expect({ hits: 0 }, 'the added row and the replaced one');
        // A value longer than the column is cut short where sql_mode lets it: no row's name.
        await b.query("SELECT v FROM s WHERE id = 'aaaaaaaaaaaaaaaaaaaa'");
        await a.query("REPLACE INTO s (id, v) VALUES ('aaaaaaaaaaaaaaaaaaaaZZZ', 'cut')");
        await b.query("SELECT v FROM s WHERE id = 'aaaaaaaaaaaaaaaaaaaa'");
        await run.expect({ hits: 0 }, 'the row the cut value landed on');

        // CHAR, latin1, PAD SPACE: 'K1 ' is 'k1'; a spaced value is no row's name.
        for (const code of ['k1', 'k2', 'k1', 'k2'])
          await b.query(`SELECT v FROM c WHERE code = '${code}'`);
        await a.query("UPDATE c SET v = 10 WHERE code = 'K1'");
        await b.query("SELECT v FROM c WHERE code = 'k1'");
        await b.query("SELECT v FROM c WHERE code = 'k2'");
        await run.expect({ hits: 3 }, "'k2' still served");
        await a.query("UPDATE c SET v = 20 WHERE code = 'K2 '");
        await b.query("SELECT v FROM c WHERE code = 'k2'");
        await run.expect({ hits: 0 }, "a write by 'K2 ' read again");

        // A collation that calls other letters the same: not kept by row.
        await b.query("SELECT v FROM r WHERE id = 'iu'");
        await b.query("SELECT v FROM r WHERE id = 'iu'");
        await a.query("UPDATE r SET v = 9 WHERE id = 'jv'");
        await b.query("SELECT v FROM r WHERE id = 'iu'");
        await run.expect({ hits: 1 }, "'iu' read again after a write of 'jv'");

        // Prepared: a string parameter names its row; a number does not.
        const ROW = 'SELECT v FROM s WHERE id = ?';
        for (const id of ['abc', 'xyz', 'abc', 'xyz']) await b.execute(ROW, [id]);
        await run.expect({ hits: 2 }, 'prepared, cached');
        await a.execute('UPDATE s SET v = ? WHERE id = ?', ['A2', 'ABC']);
        await b.execute(ROW, ['abc']);
        await b.execute(ROW, ['xyz']);
        await run.expect({ hits: 1, invalidations_all: 0 }, "all but 'abc'");
        await a.query("UPDATE s SET v = 'x2' WHERE id = 'XYZ'");
        await b.execute(ROW, ['xyz']);
        await b.execute(ROW, ['abc']);
        await run.expect({ hits: 1 }, "a text took the row of the executions of 'xyz'");
        // A number names no row: an execution by one is bounded to none (it warns, and is not
        // cached), and a write by one is a write of the table.
        await a.execute('UPDATE s SET v = ? WHERE id = ?', ['n2', 5]);
        await b.execute(ROW, ['abc']);
        await run.expect({ hits: 0 }, "'abc' read again after a write by the number 5");
        // A prepared IN list: each string's row; a result that found fewer rows than values
        // (spellings of one row count apart) depends on rows added too.
        const LIST = 'SELECT id, v FROM s WHERE id IN (?, ?) ORDER BY id';
        const lists: Param[][] = [
          ['abc', 'xyz'],
          ['abc', 'nope'],
          ['abc', 'ABC'],
        ];
        for (const list of [...lists, ...lists]) await b.execute(LIST, list);
        await run.expect({ hits: 3 }, 'the lists, cached');
        await a.query("UPDATE s SET v = 'x3' WHERE id = 'XYZ'");
        for (const list of lists) await b.execute(LIST, list);
        await run.expect({ hits: 2 }, "all but the list with 'xyz'");
        await a.query("INSERT INTO s VALUES ('Nope', 'added')");
        for (const list of lists) await b.execute(LIST, list);
        await run.expect({ hits: 1 }, 'the list that found both its rows still served');

        // A key of an integer and a string, by text and prepared, in any order.
        const TAG = 'SELECT v FROM tagged WHERE slug = ? AND tenant = ?';
        const tags = async (): Promise<void> => {
          await b.query("SELECT v FROM tagged WHERE tenant = 1 AND slug = 'Hello-World'");
          await b.execute(TAG, ['other', 1]);
          await b.execute(TAG, ['hello-world', 2]);
        };
        await tags();
        await tags();
        await run.expect({ hits: 3 }, 'cached');
        await a.execute('UPDATE tagged SET v = ? WHERE tenant = ? AND slug = ?', [
          10,
          1,
          'HELLO-world',
        ]);
        await tags();
        await run.expect({ hits: 2, invalidations_all: 0 }, 'all but (1, hello-world)');
        await a.query("DELETE FROM tagged WHERE slug = 'hello-world' AND tenant = 2");
        await tags();
        await run.expect({ hits: 2 }, 'all but (2, hello-world)');
      },
    ));

  test('a key of bytes: each row kept by its bytes, by hex literal, quoted string or parameter', () => {
    const U1 = '0123456789abcdef0123456789abcdef';
    const U2 = 'fedcba9876543210fedcba9876543210';
    const U3 = '00000000000000000000000000000000';
    const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
    return scenario(
      [
        'CREATE TABLE u (id BINARY(16) PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        `INSERT INTO u VALUES (X'${U1}', 'one'), (X'${U2}', 'two'), (X'${U3}', 'zero')`,
        'CREATE TABLE vb (id VARBINARY(8) PRIMARY KEY, v INT) ENGINE=InnoDB',
        "INSERT INTO vb VALUES ('ab', 1), ('AB', 2), ('ab\\0', 3), ('a-b', 4), ('5', 5)",
        'CREATE TABLE tu (tenant INT, id BINARY(4), v INT, PRIMARY KEY (tenant, id)) ENGINE=InnoDB',
        "INSERT INTO tu VALUES (1, 'ab', 1), (1, 'cd', 2), (2, 'ab', 3)",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        // Every spelling of a value reads its row: X'…', x'…' and 0x… alike.
        const reads = [
          `SELECT v FROM u WHERE id = X'${U1}'`,
          `SELECT v FROM u WHERE id = 0x${U1.toUpperCase()}`,
          `SELECT v FROM u WHERE id = x'${U2}'`,
          `SELECT v FROM u WHERE id IN (X'${U2}', X'${U3}') ORDER BY id`,
        ];
        const readAll = async (): Promise<void> => {
          for (const sql of reads) await b.query(sql);
        };
        await readAll();
        await readAll();
        await run.expect({ hits: 4 }, 'all cached');
        await a.query(`UPDATE u SET v = 'uno' WHERE id = 0x${U1}`);
        await readAll();
        await run.expect({ hits: 2, invalidations_all: 0 }, 'all but the two reads of U1');
        await a.query(`DELETE FROM u WHERE id = X'${U3}'`);
        await readAll();
        await run.expect({ hits: 3 }, 'all but the list with U3');
        // A value no row of the column holds: longer than 16 bytes (cut short where sql_mode
        // lets it, so no row's name), or a number: the whole table.
        await a.query("SET SESSION sql_mode = ''");
        await a.query(`UPDATE u SET v = 'long' WHERE id = X'${U1}00'`);
        await readAll();
        await run.expect({ hits: 0 }, 'every read of u after a write of no row it can name');
        await a.query(`UPDATE u SET v = 'n' WHERE id = 5`);
        await readAll();
        await run.expect({ hits: 0 }, 'every read of u after a write by a number');
        // Prepared: a parameter's bytes name the row, a literal's alike.
        const ROW = 'SELECT v FROM u WHERE id = ?';
        for (const id of [U1, U2, U1, U2]) await b.execute(ROW, [bytes(id)]);
        await run.expect({ hits: 2 }, 'prepared, cached');
        await a.execute('UPDATE u SET v = ? WHERE id = ?', ['ONE', bytes(U1)]);
        await b.execute(ROW, [bytes(U1)]);
        await b.execute(ROW, [bytes(U2)]);
        await run.expect({ hits: 1, invalidations_all: 0 }, 'all but U1');
        await a.query(`UPDATE u SET v = 'TWO' WHERE id = X'${U2}'`);
        await b.execute(ROW, [bytes(U2)]);
        await b.execute(ROW, [bytes(U1)]);
        await run.expect({ hits: 1 }, 'a text took the row of the executions of U2');
        // A row added where a read found none: the BINARY column pads 'x' to 16 bytes.
        const padded = `78${'00'.repeat(15)}`;
        await b.query(`SELECT v FROM u WHERE id = X'${padded}'`);
        await b.execute(ROW, [bytes(padded)]);
        await a.query("INSERT INTO u VALUES ('x', 'padded')");
        await b.query(`SELECT v FROM u WHERE id = X'${padded}'`);
        await b.execute(ROW, [bytes(padded)]);
        await run.expect({ hits: 0 }, 'the row stored by a shorter value, padded');
        await a.execute('REPLACE INTO u (id, v) VALUES (?, ?)', [Buffer.from('x'), 'again']);
        await b.execute(ROW, [bytes(padded)]);
        await run.expect({ hits: 0 }, 'a prepared write of the shorter value');

        // VARBINARY: bytes exactly; no letter case, no pad, no punctuation dropped.
        const vreads = ["'ab'", "'AB'", "'a-b'", "X'616200'", "'5'"].map(
          (value) => `SELECT v FROM vb WHERE id = ${value}`,
        );
        const vreadAll = async (): Promise<void> => {
          for (const sql of vreads) await b.query(sql);
        };
        await vreadAll();
        await vreadAll();
        await run.expect({ hits: 5 }, 'vb cached');
        await a.query("UPDATE vb SET v = 10 WHERE id = 'ab'");
        await vreadAll();
        await run.expect({ hits: 4, invalidations_all: 0 }, "all but 'ab'");
        await a.query('UPDATE vb SET v = 11 WHERE id = 0x6162');
        await a.query("UPDATE vb SET v = 12 WHERE id = 'a-b'");
        await vreadAll();
        await run.expect({ hits: 3 }, "all but 'ab' and 'a-b'");
        // A number compares as a number: '5' and '05' are both 5, no row's name.
        await a.query('UPDATE vb SET v = 13 WHERE id = 5');
        await vreadAll();
        await run.expect({ hits: 0 }, 'every read of vb after a write by a number');
        // A prepared IN list of bytes, one of them a row not there yet.
        const LIST = 'SELECT id, v FROM vb WHERE id IN (?, ?) ORDER BY id';
        const lists: Param[][] = [
          [Buffer.from('ab'), Buffer.from('AB')],
          [Buffer.from('ab'), Buffer.from('new')],
        ];
        for (const list of [...lists, ...lists]) await b.execute(LIST, list);
        await run.expect({ hits: 2 }, 'the lists, cached');
        await a.query("UPDATE vb SET v = 14 WHERE id = 'AB'");
        for (const list of lists) await b.execute(LIST, list);
        await run.expect({ hits: 1 }, "all but the list with 'AB'");
        await a.execute('INSERT INTO vb (id, v) VALUES (?, ?)', [Buffer.from('new'), 15]);
        for (const list of lists) await b.execute(LIST, list);
        await run.expect({ hits: 1 }, 'the list that found both its rows still served');

        // A key of an integer and bytes, in any order.
        const TU = 'SELECT v FROM tu WHERE id = ? AND tenant = ?';
        const tus = async (): Promise<void> => {
          await b.query("SELECT v FROM tu WHERE tenant = 1 AND id = X'61620000'");
          await b.execute(TU, [Buffer.from('cd\0\0'), 1]);
          await b.execute(TU, [Buffer.from('ab\0\0'), 2]);
        };
        await tus();
        await tus();
        await run.expect({ hits: 3 }, 'tu cached');
        await a.execute('UPDATE tu SET v = ? WHERE tenant = ? AND id = ?', [
          10,
          1,
          Buffer.from('ab'),
        ]);
        await tus();
        await run.expect({ hits: 2, invalidations_all: 0 }, "all but (1, 'ab')");
        await a.query("DELETE FROM tu WHERE id = 'ab' AND tenant = 2");
        await tus();
        await run.expect({ hits: 2 }, "all but (2, 'ab')");
      },
    );
  });

  test('reads and writes bounded by an IN list of keys: their rows, not the table', () =>
    scenario([...KV], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      const all = [1, 2, 3, 4, 5].map((id) => `SELECT v FROM t WHERE id = ${id}`);
      all.push(READ_T);
      const readAll = async (): Promise<void> => {
        for (const sql of all) await b.query(sql);
      };
      await readAll();
      await readAll();
      await run.expect({ hits: 6 }, 'all cached');
      await a.query("UPDATE t SET v = 'x' WHERE id IN (1, 3)");
      await readAll();
      await run.expect({ hits: 3, invalidations: 1 }, 'rows 2, 4 and 5 served');
      await a.query('DELETE FROM t WHERE id IN (2, 9) AND v > 0');
      await readAll();
      await run.expect({ hits: 4 }, 'rows 1, 3, 4 and 5 served');
      // Prepared, its other condition a parameter: the literals bound it.
      await a.execute('UPDATE t SET v = ? WHERE id IN (4, 5)', ['y']);
      await readAll();
      await run.expect({ hits: 3 }, 'rows 1, 2 and 3 served');
      // A value no row of an INT column can have: a write of the table.
      await a.query("UPDATE t SET v = 'z' WHERE id IN (1, 99999999999)");
      await readAll();
      await run.expect({ hits: 0 }, 'every read of t again');
      // Reads of an IN list depend on its rows, and on rows added unless each of its keys'
      // rows was found.
      const lists = [
        'SELECT id, v FROM t WHERE id IN (1, 3) ORDER BY id',
        'SELECT id, v FROM t WHERE id IN (4, 5, 4)',
        'SELECT id, v FROM t WHERE id IN (1, 99999999999)',
        'SELECT id, v FROM t WHERE id IN (3, 4) AND id = 3',
        // Row 9 is not there: a row found, one not.
        'SELECT id, v FROM t WHERE id IN (3, 9)',
        // A comment: no statement shape, its values taken from its own classification.
        'SELECT /* unshaped */ id, v FROM t WHERE id IN (4, 5)',
      ];
      const readLists = async (): Promise<void> => {
        for (const sql of lists) await b.query(sql);
      };
      await readLists();
      await readLists();
      await run.expect({ hits: 6 }, 'IN lists cached');
      await a.query("UPDATE t SET v = 'w' WHERE id = 1");
      await readLists();
      await run.expect({ hits: 4 }, 'the lists without row 1 served');
      await a.query("UPDATE t SET v = 'q' WHERE id = 5");
      await readLists();
      await run.expect({ hits: 3 }, 'the lists without row 5 served');
      // One row with its key marks its row: the lists without it are served.
      await a.query("INSERT INTO t (id, v) VALUES (6, 'six')");
      await readLists();
      await run.expect({ hits: 5 }, 'row 6 added');
      await a.query("INSERT INTO t (id, v) VALUES (7, 'seven'), (9, 'nine')");
      await readLists();
      await run.expect({ hits: 3 }, 'rows added: the lists that found every key served');
      // Prepared, a parameter beside the list.
      const PREPARED_LIST = 'SELECT id, v FROM t WHERE id IN (2, 3) AND v <> ?';
      await b.execute(PREPARED_LIST, ['none']);
      await b.execute(PREPARED_LIST, ['none']);
      await a.query("UPDATE t SET v = 'r' WHERE id = 3");
      await b.execute(PREPARED_LIST, ['none']);
      await a.query("UPDATE t SET v = 's' WHERE id = 4");
      await b.execute(PREPARED_LIST, ['none']);
      await run.expect({ hits: 2 }, 'the prepared list: row 3 written, then row 4');
    }));

  test('prepared IN lists of placeholders: each execution reads and writes its own rows', () =>
    scenario([...KV], async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      const LIST = 'SELECT id, v FROM t WHERE id IN (?, ?) ORDER BY id';
      const lists = [
        [1, 2],
        [3, 4],
        [5, 5],
        [2, 9],
      ];
      const readLists = async (): Promise<void> => {
        for (const ids of lists) await b.execute(LIST, ids);
      };
      await readLists();
      await readLists();
      await run.expect({ hits: 4 }, 'each execution cached');
      // The last parameter names row 4: a list bounded by its first value only would leave
      // [3, 4] served stale.
      await a.execute('UPDATE t SET v = ? WHERE id IN (?, ?)', ['x', 1, 4]);
      await readLists();
      await run.expect({ hits: 2, invalidations_all: 0 }, 'the lists without rows 1 and 4');
      await a.execute('DELETE FROM t WHERE id IN (?, ?, ?)', [5, 7, 8]);
      await readLists();
      await run.expect({ hits: 3 }, 'the lists without row 5 served');
      // [2, 9] found one of its keys; [5, 5] none now: each depends on rows added too, and row
      // 9's own slot is marked by its key.
      await a.execute('INSERT INTO t (id, v) VALUES (?, ?)', [9, 'nine']);
      await readLists();
      await run.expect({ hits: 3 }, 'the lists without row 9 served');
      await a.execute('INSERT INTO t (id, v) VALUES (?, ?)', [5, 'five again']);
      await readLists();
      await run.expect({ hits: 3 }, 'the list of row 5 read again');
      // A literal beside the placeholders: the execution writes the literal's row and its own.
      await a.execute('UPDATE t SET v = ? WHERE id IN (1, ?)', ['y', 3]);
      await readLists();
      await run.expect({ hits: 2, invalidations_all: 0 }, 'the lists without rows 1 and 3');
      // Read beside a literal, likewise: its rows are the literal's and its parameter's.
      const MIXED = 'SELECT id, v FROM t WHERE id IN (2, ?) ORDER BY id';
      await b.execute(MIXED, [3]);
      await b.execute(MIXED, [3]);
      await a.execute('UPDATE t SET v = ? WHERE id = ?', ['z', 4]);
      await b.execute(MIXED, [3]);
      await a.execute('UPDATE t SET v = ? WHERE id = ?', ['w', 3]);
      await b.execute(MIXED, [3]);
      await a.execute('UPDATE t SET v = ? WHERE id = ?', ['v', 2]);
      await b.execute(MIXED, [3]);
      await run.expect({ hits: 2 }, 'the mixed list: read again after a write of row 3, of row 2');
    }));

  test('INSERTs that only add rows leave the point reads that found their row served', () =>
    scenario(
      [
        ...KV,
        'CREATE VIEW v_t AS SELECT id, v FROM t',
        'CREATE TABLE counted (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO counted VALUES (1, 'one'), (2, 'two')",
        ...NO_POINT_WRITES,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const found = [
          'SELECT v FROM t WHERE id = 1',
          'SELECT v FROM t WHERE id = 2',
          'SELECT v FROM counted WHERE id = 1',
        ];
        // Reads that found no row, or an aggregate's row over none, and reads of many rows.
        const notFound = [
          'SELECT v FROM t WHERE id = 6',
          'SELECT v FROM t WHERE id = 7',
          'SELECT COUNT(*) FROM t WHERE id = 8',
          'SELECT v FROM counted WHERE id = 3',
          'SELECT * FROM v_t WHERE id = 11',
        ];
        const others = [READ_T, 'SELECT COUNT(*) FROM counted'];
        const all = [...found, ...notFound, ...others];
        for (const sql of all) await b.query(sql);
        for (const sql of all) await b.query(sql);
        await run.expect({ hits: all.length }, 'all cached');
        // Several rows with their keys, a row whose key AUTO_INCREMENT gives: none was there,
        // so none changes a row a read found.
        await a.query("INSERT INTO t (id, v) VALUES (6, 'six'), (8, 'eight'), (11, 'eleven')");
        await a.query("INSERT INTO counted (v) VALUES ('three')");
        for (const sql of all) await b.query(sql);
        await run.expect(
          { hits: found.length, inserts: notFound.length + others.length },
          'the rows found are served; the others read again',
        );
        // A prepared INSERT binding no key (NULL: the next AUTO_INCREMENT value).
        const COUNTED = 'SELECT v FROM counted WHERE id = ?';
        await b.execute(COUNTED, [2]);
        await b.execute(COUNTED, [4]);
        await a.execute('INSERT INTO counted (id, v) VALUES (?, ?)', [null, 'four']);
        await b.execute(COUNTED, [2]);
        await b.execute(COUNTED, [4]);
        await run.expect({ hits: 1 }, 'the prepared read of row 2 served after it');
        // Through a view: a write of the table.
        await b.query('SELECT v FROM t WHERE id = 1');
        await a.query("INSERT INTO v_t (id, v) VALUES (12, 'twelve')");
        await b.query('SELECT v FROM t WHERE id = 1');
        await run.expect({ hits: 1 }, 'row 1 read again after the write through the view');
        // A BEFORE trigger that sets the key picks where each row lands: still only added rows,
        // and the read of row 101, which found none, is read again.
        await b.query('SELECT v FROM lifted WHERE id = 101');
        await a.query("INSERT INTO lifted (id, v) VALUES (1, 'lifted'), (2, 'too')");
        await b.query('SELECT v FROM lifted WHERE id = 101');
        // Found now, it stays served while more rows are added, wherever the trigger puts them.
        await a.query("INSERT INTO lifted (id, v) VALUES (3, 'three'), (4, 'four')");
        await b.query('SELECT v FROM lifted WHERE id = 101');
        await run.expect({ hits: 1 }, 'lifted row 101 served after rows were added');
        // The writer's transaction reads the rows it added, whichever they are, before anyone
        // else: none of its reads of the table is served or stored until it ends.
        await b.query('SELECT v FROM t WHERE id = 3');
        await a.query('BEGIN');
        await a.query('SELECT v FROM t WHERE id = 3');
        await a.query("INSERT INTO t (v, id) VALUES ('nine', 9), ('ten', 10)");
        await a.query('SELECT v FROM t WHERE id = 9');
        await a.query('SELECT v FROM t WHERE id = 9');
        await a.query('SELECT v FROM t WHERE id = 3');
        await run.expect({ bypass_own_writes: 3 }, 'A reads t from the server after its INSERT');
        // Another session: row 3 served; the missing row 9 read, but not stored while rows may
        // be being added.
        await b.query('SELECT v FROM t WHERE id = 9');
        await b.query('SELECT v FROM t WHERE id = 3');
        await run.expect(
          { hits: 1, stale_fills_refused: 1, bypass_own_writes: 0 },
          'B while the INSERT is uncommitted',
        );
        await a.query('ROLLBACK');
        await b.query('SELECT v FROM t WHERE id = 9');
        await a.query('SELECT v FROM t WHERE id = 9');
        await a.query('SELECT v FROM t WHERE id = 3');
      },
    ));

  test('upserts (REPLACE, ON DUPLICATE KEY UPDATE) write their row where the key is the only unique one', () =>
    scenario(
      [
        ...KV,
        // Another unique key: an upsert may collide on it, and change any row.
        'CREATE TABLE named (id INT PRIMARY KEY, name VARCHAR(20) UNIQUE, n INT) ENGINE=InnoDB',
        "INSERT INTO named VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)",
        // A long UNIQUE key, which InnoDB holds as a plain index over a hidden hash column.
        'CREATE TABLE hashed (id INT PRIMARY KEY, doc TEXT, UNIQUE (doc)) ENGINE=InnoDB',
        "INSERT INTO hashed VALUES (1, 'x'), (2, 'y')",
        ...NO_POINT_WRITES,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const reads = [
          'SELECT v FROM t WHERE id = 1',
          'SELECT v FROM t WHERE id = 2',
          'SELECT v FROM t WHERE id = 7',
          'SELECT v FROM t WHERE id = 30',
          READ_T,
        ];
        for (const sql of reads) await b.query(sql);
        for (const sql of reads) await b.query(sql);
        await run.expect({ hits: reads.length }, 'all cached');
        // Row 1 is there: the upsert updates it, and only it.
        await a.query("INSERT INTO t (id, v) VALUES (1, 'uno') ON DUPLICATE KEY UPDATE v = 'uno'");
        for (const sql of reads) await b.query(sql);
        await run.expect({ hits: 3, invalidations_all: 0 }, 'rows 2, 7 and 30 served');
        // Row 7 is not: REPLACE adds it, which its read that found none must see.
        await a.query("REPLACE INTO t (id, v) VALUES (7, 'siete')");
        await b.query('SELECT v FROM t WHERE id = 7');
        await b.query('SELECT v FROM t WHERE id = 2');
        await b.query('SELECT v FROM t WHERE id = 1');
        await run.expect({ hits: 2 }, 'rows 2 and 1 served after REPLACE of row 7');
        // Prepared, the row its parameter binds.
        await a.execute(
          'INSERT INTO t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)',
          [2, 'dos'],
        );
        await b.query('SELECT v FROM t WHERE id = 2');
        await b.query('SELECT v FROM t WHERE id = 1');
        await run.expect({ hits: 1 }, 'row 1 served after the prepared upsert of row 2');
        // Several rows: the rows of their keys, text and prepared.
        const some = [1, 2, 4, 5].map((id) => `SELECT v FROM t WHERE id = ${id}`);
        for (const sql of some) await b.query(sql);
        await run.expect({ hits: 2 }, 'rows 1 and 2 served, rows 4 and 5 stored');
        await a.query(
          "INSERT INTO t (id, v) VALUES (1, 'un'), (8, CONCAT('hu', 'it')) ON DUPLICATE KEY UPDATE v = VALUES(v)",
        );
        await a.execute('REPLACE INTO t (v, id) VALUES (?, ?), (?, ?)', ['deux', 2, 'neuf', 9]);
        for (const sql of some) await b.query(sql);
        await run.expect({ hits: 2 }, 'rows 4 and 5 served after upserts of rows 1, 2, 8 and 9');
        // The SET form.
        await a.query("INSERT INTO t SET id = 5, v = 'cinq' ON DUPLICATE KEY UPDATE v = 'cinq'");
        await b.query('SELECT v FROM t WHERE id = 5');
        await b.query('SELECT v FROM t WHERE id = 4');
        await run.expect({ hits: 1 }, 'row 4 served after the SET form upserted row 5');
        // A row whose key AUTO_INCREMENT or an expression gives bounds nothing: the table.
        await b.query('SELECT v FROM t WHERE id = 10');
        await a.query("REPLACE INTO t (id, v) VALUES (9, 'nine'), (3 + 7, 'ten')");
        await b.query('SELECT v FROM t WHERE id = 10');
        await b.query('SELECT v FROM t WHERE id = 4');
        await run.expect({ hits: 0 }, 'rows 10 and 4 read again');
        // An upsert that assigns the key moves the row: a write of the table.
        await a.query("INSERT INTO t (id, v) VALUES (3, 'x') ON DUPLICATE KEY UPDATE id = 30");
        await b.query('SELECT v FROM t WHERE id = 30');
        await b.query('SELECT v FROM t WHERE id = 1');
        await run.expect({ hits: 0 }, 'every read of t again after the key moved');
        // Colliding on another unique key: row 2 ('b') is updated, row 1 ('a') replaced.
        const named = [
          'SELECT name, n FROM named WHERE id = 1',
          'SELECT name, n FROM named WHERE id = 2',
        ];
        for (const sql of named) await b.query(sql);
        for (const sql of named) await b.query(sql);
        await a.query(
          "INSERT INTO named (id, name, n) VALUES (9, 'b', 0) ON DUPLICATE KEY UPDATE n = n + 1",
        );
        await b.query('SELECT name, n FROM named WHERE id = 2');
        await a.query("REPLACE INTO named (id, name, n) VALUES (8, 'a', 5)");
        await b.query('SELECT name, n FROM named WHERE id = 1');
        await b.query('SELECT doc FROM hashed WHERE id = 1');
        await b.query('SELECT doc FROM hashed WHERE id = 1');
        await a.query("REPLACE INTO hashed (id, doc) VALUES (5, 'x')");
        await b.query('SELECT doc FROM hashed WHERE id = 1');
        // REPLACE of a parent deletes it first: its children cascade.
        await b.query('SELECT pid FROM child WHERE id = 1');
        await b.query('SELECT pid FROM child WHERE id = 1');
        await a.query('REPLACE INTO parent (id) VALUES (1)');
        await b.query('SELECT pid FROM child WHERE id = 1');
        await run.expect({ hits: 4 }, 'each read again after the write that changed its row');
      },
    ));

  test('a point write to a table with triggers or cascades: its rows, and what those write whole', () =>
    scenario(
      [
        'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, row_id INT, v VARCHAR(20)) ENGINE=InnoDB',
        'CREATE TABLE tracked (id INT PRIMARY KEY, v VARCHAR(20), changes INT DEFAULT 0) ENGINE=InnoDB',
        "INSERT INTO tracked (id, v) VALUES (1, 'one'), (2, 'two')",
        'CREATE TRIGGER tracked_audit AFTER UPDATE ON tracked FOR EACH ROW INSERT INTO audit (row_id, v) VALUES (NEW.id, NEW.v)',
        // A BEFORE trigger that sets another column: the row stays where it is.
        'CREATE TRIGGER tracked_count BEFORE UPDATE ON tracked FOR EACH ROW SET NEW.changes = OLD.changes + 1',
        'CREATE TRIGGER tracked_added AFTER INSERT ON tracked FOR EACH ROW INSERT INTO audit (row_id, v) VALUES (NEW.id, NEW.v)',
        // One that sets the key: the row moves.
        'CREATE TABLE shifted (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO shifted VALUES (1, 'one'), (2, 'two')",
        'CREATE TRIGGER shift BEFORE UPDATE ON shifted FOR EACH ROW SET NEW.id = NEW.id + 10',
        // A foreign key to itself: deleting a row deletes others.
        'CREATE TABLE staff (id INT PRIMARY KEY, boss INT, FOREIGN KEY (boss) REFERENCES staff (id) ON DELETE CASCADE) ENGINE=InnoDB',
        'INSERT INTO staff VALUES (1, NULL), (2, 1), (3, 2), (4, NULL)',
        ...NO_POINT_WRITES,
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        const tracked = (id: number): string => `SELECT v, changes FROM tracked WHERE id = ${id}`;
        const AUDIT = 'SELECT row_id, v FROM audit ORDER BY id';
        const reads = [
          tracked(1),
          tracked(2),
          tracked(3),
          AUDIT,
          'SELECT v FROM shifted WHERE id = 11',
          'SELECT v FROM shifted WHERE id = 2',
          'SELECT boss FROM staff WHERE id = 3',
          'SELECT boss FROM staff WHERE id = 4',
          'SELECT id FROM parent WHERE id = 2',
          'SELECT pid FROM child WHERE id = 1',
        ];
        for (const sql of reads) await b.query(sql);
        for (const sql of reads) await b.query(sql);
        await run.expect({ hits: reads.length }, 'all cached');
        // Row 1 and what its trigger writes (the audit table, whole); row 2 stays served.
        await a.query("UPDATE tracked SET v = 'uno' WHERE id = 1");
        for (const sql of [tracked(1), AUDIT, tracked(2)]) await b.query(sql);
        await run.expect({ hits: 1, invalidations_all: 0 }, 'row 2 served');
        await a.execute('UPDATE tracked SET v = ? WHERE id = ?', ['dos', 2]);
        for (const sql of [tracked(2), AUDIT, tracked(1)]) await b.query(sql);
        await run.expect({ hits: 1 }, 'row 1 served after the prepared write of row 2');
        // Rows added (an INSERT that only adds rows) and the audit table: row 3, which was not
        // there, is read again; row 1 stays served.
        await a.query("INSERT INTO tracked (id, v) VALUES (3, 'three'), (4, 'four')");
        for (const sql of [tracked(3), AUDIT, tracked(1)]) await b.query(sql);
        await run.expect({ hits: 1 }, 'row 1 served after rows were added');
        // The key moved by the trigger: row 11 is new, the table written.
        await a.query("UPDATE shifted SET v = 'moved' WHERE id = 1");
        await b.query('SELECT v FROM shifted WHERE id = 11');
        await b.query('SELECT v FROM shifted WHERE id = 2');
        // Rows 2 and 3 cascade from row 1: the table written.
        await a.query('DELETE FROM staff WHERE id = 1');
        await b.query('SELECT boss FROM staff WHERE id = 3');
        await b.query('SELECT boss FROM staff WHERE id = 4');
        await run.expect({ hits: 0 }, 'shifted and staff read again');
        // A parent's row and its children's table: the parent's other rows stay served.
        await a.query('DELETE FROM parent WHERE id = 1');
        await b.query('SELECT pid FROM child WHERE id = 1');
        await b.query('SELECT id FROM parent WHERE id = 2');
        await run.expect({ hits: 1 }, 'parent row 2 served, the child read again');
      },
    ));

  test('LOCK TABLES (alone or in a text of several): a table that is not locked is refused, even when cached', () =>
    scenario([...KV, ...KV2], async (run) => {
      const a = await run.session('A', { worker: 0 });
      await a.query(READ_T);
      await a.query(READ_U);
      await a.query('SELECT * FROM t AS x ORDER BY id');
      await a.query('LOCK TABLES t READ');
      await a.query(READ_T);
      await a.query(READ_U, 1100);
      await a.query('SELECT * FROM t AS x ORDER BY id', 1100);
      await a.query('UNLOCK TABLES');
      await a.query(READ_U);
      // Locked by one statement of a text of several.
      await a.query('SELECT 1; LOCK TABLES t READ');
      await a.query(READ_T);
      await a.query(READ_U, 1100);
      // BEGIN releases the locks: it must reach the server.
      await a.query('BEGIN');
      await a.query(READ_U);
      await a.query('COMMIT');
    }));

  test('a stored function called through a view writes what the proxy does not see', () =>
    scenario(
      [
        'CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(60))',
        `CREATE FUNCTION logit() RETURNS INT NOT DETERMINISTIC MODIFIES SQL DATA
         BEGIN INSERT INTO audit (note) VALUES ('through a view'); RETURN 1; END`,
        'CREATE VIEW v_log AS SELECT logit() AS x',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('SELECT * FROM audit');
        await a.query('SELECT * FROM audit');
        await run.expect({ hits: 1 }, 'audit cached');
        await a.query('SELECT * FROM v_log');
        await a.query('SELECT * FROM audit');
      },
    ));

  test('a view over a stored function that writes nothing: its reads write nothing and are never stored', () =>
    scenario(
      [
        ...KV,
        'CREATE TABLE names (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB',
        "INSERT INTO names VALUES (1, 'uno'), (2, 'dos')",
        `CREATE FUNCTION name_of(x INT) RETURNS VARCHAR(20) READS SQL DATA
         RETURN (SELECT name FROM names WHERE id = x)`,
        'CREATE VIEW v_named AS SELECT id, name_of(id) AS name FROM t WHERE id <= 2',
        'CREATE VIEW v_over_named AS SELECT name FROM v_named',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 't cached');
        // Reading the view runs name_of(), which writes nothing: what is stored stays, and the
        // session's own reads are still served.
        await a.query('SELECT * FROM v_named ORDER BY id');
        await a.query(READ_T);
        await run.expect(
          { hits: 1, invalidations_all: 0, bypass_unknown_table: 1 },
          'a read of the view',
        );
        // What name_of() reads is not in the view's definition: its results are never stored,
        // read directly or through another view, so a change to names shows at once.
        await a.query('SELECT * FROM v_named ORDER BY id');
        await a.query('SELECT * FROM v_over_named ORDER BY name');
        await b.query("UPDATE names SET name = 'one' WHERE id = 1");
        await a.query('SELECT * FROM v_named ORDER BY id');
        await a.query('SELECT * FROM v_over_named ORDER BY name');
        await run.expect({ hits: 0, inserts: 0, bypass_unknown_table: 4 }, 'never stored');
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'the session still served');
      },
    ));

  test('a view over a stored function that sets a session variable changes the session’s results', () =>
    scenario(
      [
        'CREATE TABLE ts (id INT PRIMARY KEY, at TIMESTAMP NULL)',
        "INSERT INTO ts VALUES (1, '2024-01-01 00:00:00')",
        `CREATE FUNCTION shift_zone() RETURNS INT NO SQL
         BEGIN SET @@session.time_zone = '+05:00'; RETURN 1; END`,
        'CREATE VIEW v_shift AS SELECT shift_zone() AS x',
        'CREATE VIEW v_shifted_rows AS SELECT id, shift_zone() AS x FROM ts',
        'CREATE VIEW v_checked AS SELECT id, at FROM ts WHERE shift_zone() = 1 WITH CHECK OPTION',
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        await a.query("SET time_zone = '+00:00'");
        await b.query("SET time_zone = '+00:00'");
        await a.query('SELECT * FROM ts');
        await a.query('SELECT * FROM ts');
        await run.expect({ hits: 1 }, 'ts cached');
        await a.query('SELECT * FROM v_shift');
        await run.expect({ invalidations_all: 0 }, 'a read of the view writes nothing');
        // The function moved the session to +05:00: the result stored under +00:00 is not its.
        await a.query('SELECT * FROM ts');
        await a.query('SELECT @@time_zone');
        // A write through such a view runs the function too: a DELETE whose WHERE reads x, an
        // INSERT checked against the view's WHERE. What the session reads after either belongs
        // to +05:00, not to B's +00:00.
        for (const write of [
          'DELETE FROM v_shifted_rows WHERE x = 0',
          "INSERT INTO v_checked (id, at) VALUES (2, '2024-06-01 00:00:00')",
        ]) {
          await a.query("SET time_zone = '+00:00'");
          await a.query(write);
          await a.query('SELECT * FROM ts');
          await b.query('SELECT * FROM ts');
          await b.query('SELECT * FROM ts');
        }
      },
    ));

  test('a trigger that sets a session variable changes the session’s results', () =>
    scenario(
      [
        'CREATE TABLE ts (id INT PRIMARY KEY, at TIMESTAMP NULL)',
        "INSERT INTO ts VALUES (1, '2024-01-01 00:00:00')",
        'CREATE TABLE log (id INT)',
        "CREATE TRIGGER log_ai AFTER INSERT ON log FOR EACH ROW SET @@session.time_zone = '+05:00'",
      ],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query("SET time_zone = '+00:00'");
        await a.query('SELECT * FROM ts');
        await a.query('SELECT * FROM ts');
        await a.query('INSERT INTO log VALUES (1)');
        await a.query('SELECT @@time_zone');
        await a.query('SELECT * FROM ts');
      },
    ));

  test('a prepared statement the server re-prepared after ALTER: METADATA_CHANGED is said once', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      const byId = 'SELECT * FROM t WHERE id = ?';
      await a.execute(byId, [1]);
      await a.execute(byId, [1]);
      await b.query('ALTER TABLE t ADD COLUMN extra INT DEFAULT 7');
      await run.settle();
      // The server re-prepares the statement and sets SERVER_STATUS_METADATA_CHANGED, this once.
      await a.execute(byId, [1]);
      await a.execute(byId, [1]);
    }));

  test('a TIME turned into a DATETIME takes today’s date: its result changes with the date', () =>
    scenario(
      ['CREATE TABLE tm (id INT PRIMARY KEY, t TIME)', "INSERT INTO tm VALUES (1, '10:00:00')"],
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const read = 'SELECT id, CAST(t AS DATETIME), TIMESTAMP(t) FROM tm';
        await a.query(read);
        await a.query(read);
        // SET timestamp moves the session's date, as midnight moves everyone's.
        await a.query("SET timestamp = UNIX_TIMESTAMP('2001-02-03 04:05:06')");
        await a.query(read);
        await a.query('SET timestamp = DEFAULT');
      },
    ));

  test('session variables outside the key: max_join_size refuses what the cache would serve', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await a.query(READ_T);
      await b.query('SET SESSION max_join_size = 2');
      await b.query(READ_T, 1104);
      await b.query('SET SESSION max_join_size = DEFAULT, sql_big_selects = 1');
      await b.query(READ_T);
    }));

  test('COM_RESET_CONNECTION resets query_cache_type', () =>
    withServerQueryCache({ type: 'ON', size: 0 }, () =>
      scenario(KV, async (run) => {
        const a = await run.session('A', { worker: 0 });
        await setCacheType(a, 'DEMAND');
        await a.command('reset connection', Buffer.from([Command.RESET_CONNECTION]));
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect({ hits: 1, bypass_not_requested: 0 }, 'after COM_RESET_CONNECTION');
      }),
    ));

  test('counters: bypass reasons as documented, queries_in_cache after RESET QUERY CACHE', () =>
    scenario(KV, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      await a.query('SELECT SQL_NO_CACHE * FROM t');
      await run.expect({ bypass_not_requested: 1 }, 'SQL_NO_CACHE (Bypass.NOT_REQUESTED)');
      await a.query('SELECT * FROM t FOR UPDATE');
      await run.expect({ bypass_isolation: 1 }, 'a locking read (Bypass.ISOLATION)');
      await a.query(READ_T);
      await b.query(READ_T);
      await a.query('RESET QUERY CACHE');
      await run.expectValue('queries_in_cache', 0, 'right after RESET QUERY CACHE');
    }));
});
