/**
 * The two Node drivers users reach MariaDB with, run through the real proxy. Every answer is
 * compared with the same command sent straight to the backend: a relay must be invisible.
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection as MariaConnection, ConnectionConfig as MariaConfig } from 'mariadb';
import mysql from 'mysql2/promise';
import type {
  Connection as MysqlConnection,
  ConnectionOptions as MysqlConfig,
} from 'mysql2/promise';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const DB = 'nc_drivers';
const OTHER_USER = 'nc_other';
const OTHER_PASSWORD = 'pw1';
const ED_USER = 'nc_ed';
const ED_PASSWORD = 'pw2';
const INFILE_LINES = 10_000;
const BIG_RESULT_ROWS = 50_000;

let proxy: ProxyProcess;
let admin: MariaConnection;
let savedLocalInfile: unknown;
let workDir: string;
let infilePath: string;
let edInstalledHere = false;
let edUnavailable: string | null = null;

interface Endpoint {
  host: string;
  port: number;
}
const direct: Endpoint = { host: BACKEND_HOST, port: BACKEND_PORT };
const viaProxy = (): Endpoint => ({ host: proxy.host, port: proxy.port });

function mariaConfig(at: Endpoint, extra: MariaConfig = {}): MariaConfig {
  return {
    host: at.host,
    port: at.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
    connectTimeout: 5000,
    ...extra,
  };
}

function mysqlConfig(at: Endpoint, extra: MysqlConfig = {}): MysqlConfig {
  return {
    host: at.host,
    port: at.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
    connectTimeout: 5000,
    ...extra,
  };
}

/** What a driver error tells the application: the server's errno, SQLSTATE and words. */
interface ServerError {
  errno: number;
  sqlState: string;
  message: string;
}

/** What mysql2's query() and execute() bind. */
type MysqlQueryValues = Parameters<MysqlConnection['query']>[1];
type MysqlValues = Parameters<MysqlConnection['execute']>[1];

async function serverError(promise: Promise<unknown>): Promise<ServerError> {
  try {
    await promise;
  } catch (error) {
    const e = error as { errno?: number; sqlState?: string; sqlMessage?: string; message: string };
    return { errno: e.errno ?? -1, sqlState: e.sqlState ?? '', message: e.sqlMessage ?? e.message };
  }
  assert.fail('expected the command to fail');
}

const letter = (k: number): string => String.fromCharCode(65 + (k % 26));

/** Rows for comparison: drivers attach metadata to result arrays that differs per connection. */
function plain(value: unknown): unknown {
  return Array.isArray(value) ? value.map(plain) : value;
}

/** Values of every common type, as an application would bind them. */
const typedRow = {
  id: 1,
  i: -2147483648,
  bi: 9007199254740993n,
  d: 3.141592653589793,
  dc: '12345678901234567890.0123456789',
  s: 'héllo wörld 👋',
  e: '',
  // Longer than 64 KiB, so the row is bigger than what the proxy inspects of a packet.
  t: 'abcdefghij'.repeat(7000),
  b: Buffer.from(Array.from({ length: 256 }, (_, k) => k)),
  dt: new Date(2024, 1, 29, 12, 34, 56, 789),
  bo: true,
  n: null,
};
const typedColumns = Object.keys(typedRow);
const typedInsert = `INSERT INTO typed_%s (${typedColumns.join(', ')}) VALUES (${typedColumns.map(() => '?').join(', ')})`;

before(async () => {
  admin = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    multipleStatements: true,
  });
  const [row] = await admin.query<{ v: unknown }[]>('SELECT @@GLOBAL.local_infile AS v');
  savedLocalInfile = row!.v;
  await admin.query('SET GLOBAL local_infile = 1');
  await admin.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}; USE ${DB}`);
  await admin.query(`
    CREATE TABLE kv (id INT PRIMARY KEY, v VARCHAR(50) NOT NULL);
    INSERT INTO kv VALUES (1, 'one'), (2, 'two'), (3, 'three');
    CREATE PROCEDURE two_results(IN n INT)
    BEGIN
      SELECT id, v FROM kv WHERE id <= n ORDER BY id;
      SELECT COUNT(*) AS total, n AS asked FROM kv;
    END`);
  for (const driver of ['mariadb', 'mysql2']) {
    await admin.query(`
      CREATE TABLE typed_${driver} (
        id INT PRIMARY KEY, i INT, bi BIGINT, d DOUBLE, dc DECIMAL(30, 10),
        s VARCHAR(100) CHARACTER SET utf8mb4, e VARCHAR(10), t MEDIUMTEXT, b BLOB,
        dt DATETIME(3), bo BOOLEAN, n INT NULL);
      CREATE TABLE tx_${driver} (id INT PRIMARY KEY, note VARCHAR(20));
      CREATE TABLE infile_${driver}_proxy (id INT PRIMARY KEY, name VARCHAR(64), amount DECIMAL(10, 2));
      CREATE TABLE infile_${driver}_direct LIKE infile_${driver}_proxy`);
  }
  for (const host of ['127.0.0.1', '%']) {
    await admin.query(`DROP USER IF EXISTS '${OTHER_USER}'@'${host}'`);
    await admin.query(`CREATE USER '${OTHER_USER}'@'${host}' IDENTIFIED BY '${OTHER_PASSWORD}'`);
    await admin.query(`GRANT ALL ON ${DB}.* TO '${OTHER_USER}'@'${host}'`);
  }

  try {
    await admin.query("INSTALL SONAME 'auth_ed25519'");
    edInstalledHere = true;
  } catch (error) {
    const message = (error as Error).message;
    if (!/already installed|already exists/i.test(message))
      edUnavailable = `ed25519 plugin not available: ${message}`;
  }
  if (edUnavailable === null) {
    await admin.query(`DROP USER IF EXISTS '${ED_USER}'@'127.0.0.1', '${ED_USER}'@'%'`);
    for (const host of ['127.0.0.1', '%']) {
      await admin.query(
        `CREATE USER '${ED_USER}'@'${host}' IDENTIFIED VIA ed25519 USING PASSWORD('${ED_PASSWORD}')`,
      );
    }
  }

  workDir = await mkdtemp(join(tmpdir(), 'nc-drivers-'));
  infilePath = join(workDir, 'rows.tsv');
  const lines: string[] = [];
  for (let k = 1; k <= INFILE_LINES; k++)
    lines.push(`${k}\tname-${k}-${'y'.repeat(k % 40)}\t${(k * 0.25).toFixed(2)}\n`);
  await writeFile(infilePath, lines.join(''));

  proxy = await startProxyProcess({ workers: 2 });
});

after(async () => {
  const code = await proxy?.stop();
  if (admin !== undefined) {
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`DROP USER IF EXISTS '${OTHER_USER}'@'127.0.0.1', '${OTHER_USER}'@'%'`);
    if (edUnavailable === null)
      await admin.query(`DROP USER IF EXISTS '${ED_USER}'@'127.0.0.1', '${ED_USER}'@'%'`);
    if (edInstalledHere) await admin.query("UNINSTALL SONAME 'auth_ed25519'");
    await admin.query('SET GLOBAL local_infile = ?', [savedLocalInfile]);
    await admin.end();
  }
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  assert.equal(code, 0, `proxy exit code; its log:\n${proxy?.log()}`);
});

describe('mariadb driver', () => {
  let p: MariaConnection;
  let d: MariaConnection;

  before(async () => {
    const extra: MariaConfig = { multipleStatements: true, permitLocalInfile: true };
    [p, d] = await Promise.all([
      mariadb.createConnection(mariaConfig(viaProxy(), extra)),
      mariadb.createConnection(mariaConfig(direct, extra)),
    ]);
  });

  after(async () => {
    await Promise.all([p?.end(), d?.end()]);
  });

  /** Runs one query through the proxy and directly; returns the proxy's answer once both agree. */
  async function same(sql: string, values?: unknown[]): Promise<unknown> {
    const [fromProxy, fromBackend] = await Promise.all([
      p.query<unknown>(sql, values),
      d.query<unknown>(sql, values),
    ]);
    assert.deepStrictEqual(plain(fromProxy), plain(fromBackend), sql);
    return fromProxy;
  }

  test('connects and runs simple queries', async () => {
    assert.deepStrictEqual(plain(await same("SELECT 1 AS one, 'two' AS two, NULL AS nothing")), [
      { one: 1, two: 'two', nothing: null },
    ]);
    assert.deepStrictEqual(plain(await same('SELECT id, v FROM kv ORDER BY id')), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
      { id: 3, v: 'three' },
    ]);
    const [who] = (await same('SELECT DATABASE() AS db, CURRENT_USER() AS u')) as {
      db: string;
      u: string;
    }[];
    assert.equal(who!.db, DB);
    assert.ok(who!.u.startsWith(`${BACKEND_USER}@`), who!.u);
  });

  test('a pool of 8 connections runs 200 concurrent queries', async () => {
    const pool = mariadb.createPool({ ...mariaConfig(viaProxy()), connectionLimit: 8 });
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, k) =>
          pool.query('SELECT ? AS k, REPEAT(?, ?) AS s, CONNECTION_ID() AS cid', [
            k,
            letter(k),
            k * 37,
          ]),
        ),
      );
      const connectionIds = new Set<unknown>();
      results.forEach((rows: { k: number; s: string; cid: unknown }[], k) => {
        assert.equal(rows.length, 1);
        assert.equal(Number(rows[0]!.k), k);
        assert.equal(rows[0]!.s, letter(k).repeat(k * 37));
        connectionIds.add(rows[0]!.cid);
      });
      assert.ok(
        connectionIds.size > 1 && connectionIds.size <= 8,
        `used ${connectionIds.size} backend connections`,
      );
    } finally {
      await pool.end();
    }
  });

  test('prepared statements bind and return every common type', async () => {
    await p.execute<unknown>(typedInsert.replace('%s', 'mariadb'), Object.values(typedRow));
    const select = 'SELECT * FROM typed_mariadb WHERE id = ? AND i = ?';
    const [viaExecute, directExecute] = await Promise.all([
      p.execute<unknown>(select, [typedRow.id, typedRow.i]),
      d.execute<unknown>(select, [typedRow.id, typedRow.i]),
    ]);
    assert.deepStrictEqual(plain(viaExecute), plain(directExecute));
    const [row] = viaExecute as Record<string, unknown>[];
    assert.deepStrictEqual({ ...row, bo: Boolean(row!['bo']) }, typedRow);

    // prepare once, execute several times, as a statement cache does.
    const statement = await p.prepare('SELECT ? AS a, ? AS b, ? AS c, ? AS d FROM DUAL');
    try {
      const inputs: unknown[][] = [
        [1, 'x', null, 2.5],
        [-7n, '', Buffer.from('bin'), 'ünï'],
        [0, 'long'.repeat(5000), 1e300, -0.5],
      ];
      for (const input of inputs) {
        const [fromProxy, fromBackend] = await Promise.all([
          statement.execute<unknown>(input),
          d.execute<unknown>('SELECT ? AS a, ? AS b, ? AS c, ? AS d FROM DUAL', input),
        ]);
        assert.deepStrictEqual(plain(fromProxy), plain(fromBackend));
      }
    } finally {
      statement.close();
    }
    // COM_STMT_CLOSE gets no reply: the next command's reply must still find its way.
    assert.deepStrictEqual(plain(await same('SELECT 42 AS still_usable')), [{ still_usable: 42 }]);
  });

  test('multiple statements return several result sets', async () => {
    const results = (await same(
      "SELECT 1 AS a; DO 0; SELECT v FROM kv ORDER BY id; SET @z := 5; SELECT @z AS z, 'x' AS y",
    )) as unknown[];
    assert.equal(results.length, 5);
    assert.deepStrictEqual(plain(results[4]), [{ z: 5n, y: 'x' }]);
    // An error in the middle ends the reply; the statements after it are not run.
    const [viaProxyError, directError] = await Promise.all([
      serverError(p.query<unknown>('SELECT 1; SELECT * FROM no_such_table; SELECT 2')),
      serverError(d.query<unknown>('SELECT 1; SELECT * FROM no_such_table; SELECT 2')),
    ]);
    assert.deepStrictEqual(viaProxyError, directError);
    assert.equal(viaProxyError.errno, 1146);
    await same('SELECT 3 AS after_error');
  });

  test('CALL of a procedure returning two result sets', async () => {
    const results = (await same('CALL two_results(2)')) as unknown[];
    assert.deepStrictEqual(plain(results[0]), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ]);
    assert.deepStrictEqual(plain(results[1]), [{ total: 3n, asked: 2 }]);
    const [viaExecute, directExecute] = await Promise.all([
      p.execute<unknown>('CALL two_results(?)', [3]),
      d.execute<unknown>('CALL two_results(?)', [3]),
    ]);
    assert.deepStrictEqual(plain(viaExecute), plain(directExecute));
    assert.equal((viaExecute as unknown[][])[0]!.length, 3);
  });

  test('transactions: rollback discards, commit keeps', async () => {
    await p.beginTransaction();
    await p.query<unknown>("INSERT INTO tx_mariadb VALUES (1, 'rolled back')");
    // Another connection must not see uncommitted work: the proxy did not autocommit it.
    assert.deepStrictEqual(plain(await d.query<unknown>('SELECT * FROM tx_mariadb')), []);
    await p.rollback();
    assert.deepStrictEqual(plain(await same('SELECT * FROM tx_mariadb')), []);

    await p.beginTransaction();
    await p.query<unknown>("INSERT INTO tx_mariadb VALUES (2, 'committed')");
    await p.commit();
    assert.deepStrictEqual(plain(await d.query<unknown>('SELECT * FROM tx_mariadb')), [
      { id: 2, note: 'committed' },
    ]);
  });

  test('changeUser switches the authenticated user', async () => {
    const config = { user: OTHER_USER, password: OTHER_PASSWORD, database: DB };
    const [conn, ref] = await Promise.all([
      mariadb.createConnection(mariaConfig(viaProxy())),
      mariadb.createConnection(mariaConfig(direct)),
    ]);
    try {
      await Promise.all([conn.changeUser(config), ref.changeUser(config)]);
      const sql = 'SELECT CURRENT_USER() AS cu, USER() AS u, DATABASE() AS db';
      const [mine, theirs] = await Promise.all([conn.query<unknown>(sql), ref.query<unknown>(sql)]);
      assert.deepStrictEqual(plain(mine), plain(theirs));
      assert.ok((mine as { cu: string }[])[0]!.cu.startsWith(`${OTHER_USER}@`));
      // And back to the original user.
      await Promise.all([
        conn.changeUser({ user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB }),
        ref.changeUser({ user: BACKEND_USER, password: BACKEND_PASSWORD, database: DB }),
      ]);
      const [back, refBack] = await Promise.all([
        conn.query<{ cu: string }[]>(sql),
        ref.query<unknown>(sql),
      ]);
      assert.deepStrictEqual(plain(back), plain(refBack));
      assert.ok(back[0]!.cu.startsWith(`${BACKEND_USER}@`));
    } finally {
      await Promise.all([conn.end(), ref.end()]);
    }
  });

  test("changeUser with a wrong password fails with the server's own error", async () => {
    const [conn, ref] = await Promise.all([
      mariadb.createConnection(mariaConfig(viaProxy())),
      mariadb.createConnection(mariaConfig(direct)),
    ]);
    try {
      const config = { user: OTHER_USER, password: 'wrong' };
      const [mine, theirs] = await Promise.all([
        serverError(conn.changeUser(config)),
        serverError(ref.changeUser(config)),
      ]);
      assert.deepStrictEqual(mine, theirs);
      assert.equal(mine.errno, 1045);
      assert.equal(mine.sqlState, '28000');
    } finally {
      // This driver gives up the connection after a failed changeUser; end() may find it closed.
      await Promise.allSettled([conn.end(), ref.end()]);
    }
  });

  test('reset() forgets session state (COM_RESET_CONNECTION)', async () => {
    const conn = await mariadb.createConnection(mariaConfig(viaProxy()));
    try {
      await conn.query<unknown>('SET @kept = 5');
      await conn.query<unknown>('CREATE TEMPORARY TABLE tmp_reset (x INT)');
      assert.deepStrictEqual(plain(await conn.query<unknown>('SELECT @kept AS v')), [{ v: 5n }]);
      await conn.reset();
      assert.deepStrictEqual(plain(await conn.query<unknown>('SELECT @kept AS v')), [{ v: null }]);
      const error = await serverError(conn.query<unknown>('SELECT * FROM tmp_reset'));
      assert.equal(error.errno, 1146);
      assert.deepStrictEqual(plain(await conn.query<unknown>('SELECT DATABASE() AS db')), [
        { db: DB },
      ]);
    } finally {
      await conn.end();
    }
  });

  test('ping', async () => {
    await p.ping();
    await p.ping();
    assert.deepStrictEqual(plain(await same('SELECT 1 AS after_ping')), [{ after_ping: 1 }]);
  });

  test(`LOAD DATA LOCAL INFILE of ${INFILE_LINES} lines`, async () => {
    const load = (table: string): string =>
      `LOAD DATA LOCAL INFILE ${p.escape(infilePath)} INTO TABLE ${table} FIELDS TERMINATED BY '\\t'`;
    const [viaProxyResult, directResult] = await Promise.all([
      p.query<unknown>(load('infile_mariadb_proxy')),
      d.query<unknown>(load('infile_mariadb_direct')),
    ]);
    assert.deepStrictEqual(viaProxyResult, directResult);
    assert.equal((viaProxyResult as { affectedRows: number }).affectedRows, INFILE_LINES);
    const [loaded, reference] = await Promise.all([
      d.query<unknown>('SELECT * FROM infile_mariadb_proxy ORDER BY id'),
      d.query<unknown>('SELECT * FROM infile_mariadb_direct ORDER BY id'),
    ]);
    assert.equal((loaded as unknown[]).length, INFILE_LINES);
    assert.deepStrictEqual(plain(loaded), plain(reference));
  });

  test(`a result of ${BIG_RESULT_ROWS} rows, text and binary`, async () => {
    const sql = `SELECT seq AS id, CONCAT('row-', seq) AS label, seq * 1.5 AS x FROM seq_1_to_${BIG_RESULT_ROWS}`;
    const rows = (await same(sql)) as { id: bigint }[];
    assert.equal(rows.length, BIG_RESULT_ROWS);
    assert.equal(rows.at(-1)!.id, BigInt(BIG_RESULT_ROWS));
    const [viaExecute, directExecute] = await Promise.all([
      p.execute<unknown>(`${sql} WHERE seq > ?`, [0]),
      d.execute<unknown>(`${sql} WHERE seq > ?`, [0]),
    ]);
    assert.equal((viaExecute as unknown[]).length, BIG_RESULT_ROWS);
    assert.deepStrictEqual(plain(viaExecute), plain(directExecute));
  });

  test('backend errors arrive unchanged and the connection stays usable', async () => {
    const cases: [string, number, string][] = [
      ['SELEC 1', 1064, '42000'],
      ['SELECT * FROM no_such_table', 1146, '42S02'],
      ["INSERT INTO kv VALUES (1, 'again')", 1062, '23000'],
    ];
    for (const [sql, errno, sqlState] of cases) {
      const [mine, theirs] = await Promise.all([
        serverError(p.query<unknown>(sql)),
        serverError(d.query<unknown>(sql)),
      ]);
      assert.deepStrictEqual(mine, theirs, sql);
      assert.equal(mine.errno, errno, sql);
      assert.equal(mine.sqlState, sqlState, sql);
      const [fromExecute, directExecute] = await Promise.all([
        serverError(p.execute<unknown>(sql)),
        serverError(d.execute<unknown>(sql)),
      ]);
      assert.deepStrictEqual(fromExecute, directExecute, sql);
      assert.equal(fromExecute.errno, errno, sql);
      assert.deepStrictEqual(plain(await same('SELECT COUNT(*) AS n FROM kv')), [{ n: 3n }]);
    }
  });

  test('pipelined queries on one connection get their own results, in order', async () => {
    const sql = 'SELECT ? AS k, REPEAT(?, ?) AS s';
    const params = (k: number): unknown[] => [
      k,
      String.fromCharCode(97 + (k % 26)),
      (k * 7919) % 100_000,
    ];
    const [fromProxy, fromBackend] = await Promise.all([
      Promise.all(
        Array.from({ length: 50 }, (_, k) => p.query<{ k: number; s: string }[]>(sql, params(k))),
      ),
      Promise.all(Array.from({ length: 50 }, (_, k) => d.query<unknown>(sql, params(k)))),
    ]);
    assert.deepStrictEqual(plain(fromProxy), plain(fromBackend));
    fromProxy.forEach((rows, k) => {
      assert.equal(Number(rows[0]!.k), k);
      assert.equal(rows[0]!.s.length, (k * 7919) % 100_000);
    });

    // A failing query in the middle of a pipeline fails alone.
    const settled = await Promise.allSettled(
      Array.from({ length: 20 }, (_, k) =>
        p.query<{ k: number }[]>(k === 10 ? 'SELECT * FROM no_such_table' : 'SELECT ? AS k', [k]),
      ),
    );
    settled.forEach((outcome, k) => {
      if (k === 10) {
        assert.ok(outcome.status === 'rejected', `query ${k} should fail`);
        assert.equal((outcome.reason as { errno: number }).errno, 1146);
      } else {
        assert.ok(
          outcome.status === 'fulfilled',
          `query ${k} failed: ${String(outcome.status === 'rejected' && outcome.reason)}`,
        );
        assert.equal(Number(outcome.value[0]!.k), k);
      }
    });
  });

  test('a wrong password is refused exactly as the server refuses it', async () => {
    const config = (at: Endpoint): MariaConfig =>
      mariaConfig(at, { user: OTHER_USER, password: 'wrong' });
    const [mine, theirs] = await Promise.all([
      serverError(mariadb.createConnection(config(viaProxy()))),
      serverError(mariadb.createConnection(config(direct))),
    ]);
    assert.deepStrictEqual(mine, theirs);
    assert.equal(mine.errno, 1045);
    assert.equal(mine.sqlState, '28000');
    // The right password works.
    const conn = await mariadb.createConnection(
      mariaConfig(viaProxy(), { user: OTHER_USER, password: OTHER_PASSWORD }),
    );
    await conn.end();
  });

  test('ed25519 authentication (an auth switch to client_ed25519)', async (t) => {
    if (edUnavailable !== null) {
      t.skip(edUnavailable);
      return;
    }
    const config = (at: Endpoint): MariaConfig =>
      mariaConfig(at, { user: ED_USER, password: ED_PASSWORD, database: '' });
    const conn = await mariadb.createConnection(config(viaProxy()));
    try {
      const [row] = await conn.query<{ cu: string }[]>('SELECT CURRENT_USER() AS cu');
      assert.ok(row!.cu.startsWith(`${ED_USER}@`), row!.cu);
    } finally {
      await conn.end();
    }
  });

  test('a wrong ed25519 password is refused exactly as the server refuses it', async (t) => {
    if (edUnavailable !== null) {
      t.skip(edUnavailable);
      return;
    }
    const config = (at: Endpoint): MariaConfig =>
      mariaConfig(at, { user: ED_USER, password: 'nope', database: '' });
    const [mine, theirs] = await Promise.all([
      serverError(mariadb.createConnection(config(viaProxy()))),
      serverError(mariadb.createConnection(config(direct))),
    ]);
    assert.deepStrictEqual(mine, theirs);
    assert.equal(mine.errno, 1045);
    assert.equal(mine.sqlState, '28000');
  });
});

describe('mysql2 driver', () => {
  let p: MysqlConnection;
  let d: MysqlConnection;

  before(async () => {
    const extra: MysqlConfig = {
      multipleStatements: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
    };
    [p, d] = await Promise.all([
      mysql.createConnection(mysqlConfig(viaProxy(), extra)),
      mysql.createConnection(mysqlConfig(direct, extra)),
    ]);
  });

  after(async () => {
    await Promise.all([p?.end(), d?.end()]);
  });

  async function same(sql: string, values?: MysqlQueryValues): Promise<unknown> {
    const [[fromProxy], [fromBackend]] = await Promise.all([
      p.query(sql, values),
      d.query(sql, values),
    ]);
    assert.deepStrictEqual(fromProxy, fromBackend, sql);
    return fromProxy;
  }

  async function sameExecute(sql: string, values?: MysqlValues): Promise<unknown> {
    const [[fromProxy], [fromBackend]] = await Promise.all([
      p.execute(sql, values),
      d.execute(sql, values),
    ]);
    assert.deepStrictEqual(fromProxy, fromBackend, sql);
    return fromProxy;
  }

  test('connects and runs simple queries', async () => {
    assert.deepStrictEqual(await same("SELECT 1 AS one, 'two' AS two, NULL AS nothing"), [
      { one: 1, two: 'two', nothing: null },
    ]);
    assert.deepStrictEqual(await same('SELECT id, v FROM kv ORDER BY id'), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
      { id: 3, v: 'three' },
    ]);
  });

  test('a pool of 8 connections runs 200 concurrent queries', async () => {
    const pool = mysql.createPool({ ...mysqlConfig(viaProxy()), connectionLimit: 8 });
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, k) =>
          pool.query('SELECT ? AS k, REPEAT(?, ?) AS s, CONNECTION_ID() AS cid', [
            k,
            letter(k),
            k * 37,
          ]),
        ),
      );
      const connectionIds = new Set<unknown>();
      results.forEach(([rows], k) => {
        const row = (rows as { k: number; s: string; cid: unknown }[])[0]!;
        assert.equal(Number(row.k), k);
        assert.equal(row.s, letter(k).repeat(k * 37));
        connectionIds.add(row.cid);
      });
      assert.ok(
        connectionIds.size > 1 && connectionIds.size <= 8,
        `used ${connectionIds.size} backend connections`,
      );
    } finally {
      await pool.end();
    }
  });

  test('execute (binary protocol) binds and returns every common type', async () => {
    // mysql2 binds BigInt and booleans as strings/numbers of its own choosing; these are its types.
    const values = { ...typedRow, bi: typedRow.bi.toString(), bo: 1 };
    await p.execute(typedInsert.replace('%s', 'mysql2'), Object.values(values));
    const rows = (await sameExecute('SELECT * FROM typed_mysql2 WHERE id = ? AND i = ?', [
      typedRow.id,
      typedRow.i,
    ])) as Record<string, unknown>[];
    assert.deepStrictEqual({ ...rows[0] }, values);
    assert.deepStrictEqual(await same('SELECT * FROM typed_mysql2'), rows);

    for (const input of [
      [1, 'x', null, 2.5],
      [-7, '', Buffer.from('bin'), 'ünï'],
      [0, 'long'.repeat(5000), 1e300, -0.5],
    ]) {
      await sameExecute('SELECT ? AS a, ? AS b, ? AS c, ? AS d FROM DUAL', input);
    }
  });

  test('multiple statements return several result sets', async () => {
    const results = (await same(
      "SELECT 1 AS a; DO 0; SELECT v FROM kv ORDER BY id; SET @z := 5; SELECT @z AS z, 'x' AS y",
    )) as unknown[];
    assert.equal(results.length, 5);
    assert.deepStrictEqual(results[4], [{ z: '5', y: 'x' }]);
    const [mine, theirs] = await Promise.all([
      serverError(p.query('SELECT 1; SELECT * FROM no_such_table; SELECT 2')),
      serverError(d.query('SELECT 1; SELECT * FROM no_such_table; SELECT 2')),
    ]);
    assert.deepStrictEqual(mine, theirs);
    assert.equal(mine.errno, 1146);
    await same('SELECT 3 AS after_error');
  });

  test('CALL of a procedure returning two result sets', async () => {
    const results = (await same('CALL two_results(2)')) as unknown[];
    assert.deepStrictEqual(results[0], [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ]);
    assert.deepStrictEqual(results[1], [{ total: '3', asked: 2 }]);
    const viaExecute = (await sameExecute('CALL two_results(?)', [3])) as unknown[][];
    assert.equal(viaExecute[0]!.length, 3);
  });

  test('transactions: rollback discards, commit keeps', async () => {
    await p.beginTransaction();
    await p.query("INSERT INTO tx_mysql2 VALUES (1, 'rolled back')");
    assert.deepStrictEqual((await d.query('SELECT * FROM tx_mysql2'))[0], []);
    await p.rollback();
    assert.deepStrictEqual(await same('SELECT * FROM tx_mysql2'), []);

    await p.beginTransaction();
    await p.query("INSERT INTO tx_mysql2 VALUES (2, 'committed')");
    await p.commit();
    assert.deepStrictEqual((await d.query('SELECT * FROM tx_mysql2'))[0], [
      { id: 2, note: 'committed' },
    ]);
  });

  test('changeUser switches the authenticated user', async () => {
    const config = { user: OTHER_USER, password: OTHER_PASSWORD, database: DB };
    const [conn, ref] = await Promise.all([
      mysql.createConnection(mysqlConfig(viaProxy())),
      mysql.createConnection(mysqlConfig(direct)),
    ]);
    try {
      await Promise.all([conn.changeUser(config), ref.changeUser(config)]);
      const sql = 'SELECT CURRENT_USER() AS cu, USER() AS u, DATABASE() AS db';
      const [[mine], [theirs]] = await Promise.all([conn.query(sql), ref.query(sql)]);
      assert.deepStrictEqual(mine, theirs);
      assert.ok((mine as { cu: string }[])[0]!.cu.startsWith(`${OTHER_USER}@`));
    } finally {
      await Promise.all([conn.end(), ref.end()]);
    }
  });

  test("changeUser with a wrong password fails with the server's error and keeps the session", async () => {
    const [conn, ref] = await Promise.all([
      mysql.createConnection(mysqlConfig(viaProxy())),
      mysql.createConnection(mysqlConfig(direct)),
    ]);
    try {
      const config = { user: OTHER_USER, password: 'wrong' };
      const [mine, theirs] = await Promise.all([
        serverError(conn.changeUser(config)),
        serverError(ref.changeUser(config)),
      ]);
      assert.deepStrictEqual(mine, theirs);
      assert.equal(mine.errno, 1045);
      assert.equal(mine.sqlState, '28000');
      // The server keeps the connection, still authenticated as before; this driver goes on using it.
      const sql = 'SELECT CURRENT_USER() AS cu, DATABASE() AS db';
      const [[after], [reference]] = await Promise.all([conn.query(sql), ref.query(sql)]);
      assert.deepStrictEqual(after, reference);
      const [row] = after as { cu: string; db: string }[];
      assert.ok(row!.cu.startsWith(`${BACKEND_USER}@`), row!.cu);
    } finally {
      await Promise.allSettled([conn.end(), ref.end()]);
    }
  });

  test('ping', async () => {
    await p.ping();
    assert.deepStrictEqual(await same('SELECT 1 AS after_ping'), [{ after_ping: 1 }]);
  });

  test(`LOAD DATA LOCAL INFILE of ${INFILE_LINES} lines`, async () => {
    const load = (conn: MysqlConnection, table: string) =>
      conn.query({
        sql: `LOAD DATA LOCAL INFILE ${conn.escape(infilePath)} INTO TABLE ${table} FIELDS TERMINATED BY '\\t'`,
        infileStreamFactory: (path: string) => createReadStream(path),
      });
    const [[mine], [theirs]] = await Promise.all([
      load(p, 'infile_mysql2_proxy'),
      load(d, 'infile_mysql2_direct'),
    ]);
    assert.deepStrictEqual(mine, theirs);
    assert.equal((mine as { affectedRows: number }).affectedRows, INFILE_LINES);
    const [[loaded], [reference]] = await Promise.all([
      d.query('SELECT * FROM infile_mysql2_proxy ORDER BY id'),
      d.query('SELECT * FROM infile_mysql2_direct ORDER BY id'),
    ]);
    assert.equal((loaded as unknown[]).length, INFILE_LINES);
    assert.deepStrictEqual(loaded, reference);
  });

  test(`a result of ${BIG_RESULT_ROWS} rows, text and binary`, async () => {
    const sql = `SELECT seq AS id, CONCAT('row-', seq) AS label, seq * 1.5 AS x FROM seq_1_to_${BIG_RESULT_ROWS}`;
    const rows = (await same(sql)) as { id: unknown }[];
    assert.equal(rows.length, BIG_RESULT_ROWS);
    const binary = (await sameExecute(`${sql} WHERE seq > ?`, [0])) as unknown[];
    assert.equal(binary.length, BIG_RESULT_ROWS);
  });

  test('backend errors arrive unchanged and the connection stays usable', async () => {
    const cases: [string, number, string][] = [
      ['SELEC 1', 1064, '42000'],
      ['SELECT * FROM no_such_table', 1146, '42S02'],
      ["INSERT INTO kv VALUES (1, 'again')", 1062, '23000'],
    ];
    for (const [sql, errno, sqlState] of cases) {
      const [mine, theirs] = await Promise.all([
        serverError(p.query(sql)),
        serverError(d.query(sql)),
      ]);
      assert.deepStrictEqual(mine, theirs, sql);
      assert.equal(mine.errno, errno, sql);
      assert.equal(mine.sqlState, sqlState, sql);
      const [fromExecute, directExecute] = await Promise.all([
        serverError(p.execute(sql)),
        serverError(d.execute(sql)),
      ]);
      assert.deepStrictEqual(fromExecute, directExecute, sql);
      assert.equal(fromExecute.errno, errno, sql);
      assert.deepStrictEqual(await same('SELECT COUNT(*) AS n FROM kv'), [{ n: '3' }]);
    }
  });

  test('a wrong password is refused exactly as the server refuses it', async () => {
    const config = (at: Endpoint): MysqlConfig =>
      mysqlConfig(at, { user: OTHER_USER, password: 'wrong' });
    const [mine, theirs] = await Promise.all([
      serverError(mysql.createConnection(config(viaProxy()))),
      serverError(mysql.createConnection(config(direct))),
    ]);
    assert.deepStrictEqual(mine, theirs);
    assert.equal(mine.errno, 1045);
    assert.equal(mine.sqlState, '28000');
  });
});
