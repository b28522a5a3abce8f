/**
 * The classifier against the server's own query cache, on throwaway MariaDB servers started with
 * query_cache_type=1 (the shared test server keeps its cache off, and a session cannot turn it on
 * when it is off globally, so nothing here touches that server).
 *
 * - Tables read: the server registers each cached query under every table it depends on and
 *   drops it when one of them changes. Changing the test tables one at a time and watching the
 *   query leave the cache gives the server's exact dependency set, unaffected by the optimiser
 *   (EXPLAIN would omit eliminated tables and constant subqueries). Views expand to their base
 *   tables, which is the caller's job: the test expands the classifier's view names itself.
 * - Cacheability: the server's verdict is whether running the statement inserted a result into
 *   its cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import { classify, serverVersionNumber } from '../../src/sql/statement-classifier.ts';
import type { ClassifyOptions, TableRef } from '../../src/sql/statement-classifier.ts';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';

const QUERY_CACHE = { query_cache_type: 1, query_cache_size: '16M' };

const SETUP = [
  'CREATE DATABASE qc',
  'CREATE DATABASE qc2',
  'USE qc',
  ...['t1', 't2', 't3', 't4', 'qc2.t1'].flatMap((table) => [
    `CREATE TABLE ${table} (id INT PRIMARY KEY, a INT, n INT NOT NULL DEFAULT 0, s VARCHAR(20), d DATETIME, j TEXT)`,
    `INSERT INTO ${table} (id, a, s, d, j) VALUES (1, 1, 'x', '2024-01-02 03:04:05', '[1,2]'), (2, 2, 'y', '2024-02-03 04:05:06', '[3]')`,
  ]),
  'CREATE TABLE tv (id INT PRIMARY KEY, a INT, n INT NOT NULL DEFAULT 0) WITH SYSTEM VERSIONING',
  'INSERT INTO tv (id, a) VALUES (1, 1), (2, 2)',
  'CREATE VIEW v1 AS SELECT t1.id, t2.a FROM t1 JOIN t2 USING (id)',
  'CREATE VIEW v2 AS SELECT v1.id, t3.s FROM v1 JOIN t3 USING (id)',
  'CREATE SEQUENCE s1',
  'CREATE FUNCTION f1(x INT) RETURNS INT DETERMINISTIC RETURN x + 1',
];

/** The base tables whose changes the dependency probe tries, as schema.name. */
const BASE_TABLES = ['qc.t1', 'qc.t2', 'qc.t3', 'qc.t4', 'qc.tv', 'qc2.t1'];

/** What each view reads, one level down. */
const VIEWS: Record<string, string[]> = {
  'qc.v1': ['qc.t1', 'qc.t2'],
  'qc.v2': ['qc.v1', 'qc.t3'],
};

type Connection = Awaited<ReturnType<typeof mariadb.createConnection>>;

async function statusValue(connection: Connection, name: string): Promise<number> {
  const rows = await connection.query<Array<{ Value: string }>>(
    `SHOW GLOBAL STATUS LIKE '${name}'`,
  );
  return Number(rows[0]?.Value);
}

/** Did running `sql` put a result in the server's query cache? */
async function serverCaches(connection: Connection, sql: string): Promise<boolean> {
  await connection.query('RESET QUERY CACHE');
  const before = await statusValue(connection, 'Qcache_inserts');
  await connection.query(sql);
  return (await statusValue(connection, 'Qcache_inserts')) > before;
}

/** The base tables whose change drops the cached result of `sql`. */
async function serverDependencies(
  connection: Connection,
  sql: string,
  tables: readonly string[],
): Promise<string[]> {
  const dependencies: string[] = [];
  for (const table of tables) {
    await connection.query('RESET QUERY CACHE');
    await connection.query(sql);
    assert.equal(await statusValue(connection, 'Qcache_queries_in_cache'), 1, `cached: ${sql}`);
    await connection.query(`UPDATE ${table} SET n = n + 1`);
    if ((await statusValue(connection, 'Qcache_queries_in_cache')) === 0) {
      dependencies.push(table);
    }
  }
  return dependencies.sort();
}

/** The classifier's reads as base tables: current schema filled in, views expanded. */
function classifierDependencies(reads: TableRef[], schema: string): string[] {
  const out = new Set<string>();
  const visit = (name: string): void => {
    const view = VIEWS[name];
    if (view === undefined) out.add(name);
    else view.forEach(visit);
  };
  for (const table of reads) visit(`${table.schema ?? schema}.${table.name}`);
  return [...out].sort();
}

/** SELECTs over real tables that the server caches, so that it can tell their dependencies. */
const READ_QUERIES = [
  'SELECT * FROM t1',
  'SELECT * FROM t1 JOIN t2 USING (id)',
  'SELECT * FROM t1, t2 WHERE t1.id = t2.id',
  'SELECT t1.id FROM t1 NATURAL JOIN t2',
  'SELECT * FROM t1 LEFT JOIN t2 ON t1.id = t2.id LEFT JOIN t3 ON t3.id = t2.id',
  'SELECT t1.id FROM t1 STRAIGHT_JOIN t2 ON t1.id = t2.id',
  'SELECT * FROM t1 CROSS JOIN t4 AS x',
  'SELECT (SELECT MAX(a) FROM t2) AS m FROM t1',
  'SELECT * FROM t1 WHERE id IN (SELECT id FROM t2 WHERE a IN (SELECT a FROM t3))',
  'SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t4 WHERE t4.id = t1.id)',
  'SELECT * FROM t1 WHERE a = (SELECT MIN(a) FROM t2) OR a > ALL (SELECT a FROM t3)',
  'SELECT * FROM (SELECT id FROM t2) AS d JOIN t3 USING (id)',
  'SELECT * FROM (SELECT * FROM (SELECT id FROM t4) a) b',
  'SELECT a FROM t1 UNION SELECT a FROM t2',
  '(SELECT a FROM t1) UNION ALL (SELECT a FROM t3) ORDER BY a',
  'SELECT a FROM t1 INTERSECT SELECT a FROM t2',
  'SELECT a FROM t1 EXCEPT SELECT a FROM t4',
  'WITH c AS (SELECT * FROM t2) SELECT * FROM c JOIN t1 USING (id)',
  'WITH RECURSIVE r (x) AS (SELECT 1 FROM t3 WHERE id = 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3) SELECT * FROM r',
  'WITH a AS (SELECT id FROM t1), b AS (SELECT id FROM a JOIN t2 USING (id)) SELECT * FROM b',
  'WITH t1 AS (SELECT id FROM t4) SELECT * FROM t1',
  'SELECT * FROM v1',
  'SELECT * FROM v2 WHERE id > 0',
  'SELECT * FROM v1 JOIN t4 USING (id)',
  'SELECT * FROM t1 WHERE a = (SELECT COUNT(*) FROM v1)',
  'SELECT * FROM qc2.t1 JOIN t1 USING (id)',
  'SELECT * FROM `qc2`.`t1` AS `x`',
  'SELECT * FROM tv FOR SYSTEM_TIME ALL',
  "SELECT * FROM t1, JSON_TABLE(t1.j, '$[*]' COLUMNS (x INT PATH '$')) AS jt",
  'SELECT * FROM t1 FORCE INDEX (PRIMARY) WHERE id IN (1, 2) ORDER BY a LIMIT 1 OFFSET 0',
  'SELECT /*!STRAIGHT_JOIN*/ t1.id FROM t1, t2',
  '/* trace-id=42 */ SELECT * FROM t3 -- done',
  'SELECT a, COUNT(*) FROM t1 GROUP BY a HAVING COUNT(*) < (SELECT COUNT(*) FROM t2)',
  'SELECT id, ROW_NUMBER() OVER (PARTITION BY a ORDER BY id) FROM t2',
];

/** Statements with the server's verdict expected to match the classifier's. */
const VERDICT_STATEMENTS = [
  // Cached by both.
  'SELECT * FROM t1',
  'SELECT SQL_CACHE * FROM t1',
  'select * from t1 where id = 1',
  '/* c */ SELECT * FROM t1',
  'SELECT * FROM t1 -- trailing',
  '/*!40001 SELECT * FROM t1 */',
  'SELECT * FROM v2',
  'WITH c AS (SELECT * FROM t2) SELECT * FROM c',
  'SELECT * FROM (SELECT * FROM t2) d',
  'SELECT a FROM t1 UNION SELECT a FROM t2',
  '(SELECT a FROM t1) UNION (SELECT a FROM t2)',
  'SELECT * FROM t1 WHERE a IN (SELECT a FROM t2)',
  'SELECT * FROM tv FOR SYSTEM_TIME ALL',
  "SELECT * FROM tv FOR SYSTEM_TIME AS OF TIMESTAMP '2030-01-01 00:00:00'",
  "SELECT * FROM tv FOR SYSTEM_TIME BETWEEN '2000-01-01' AND '2030-01-01'",
  'SELECT * FROM t1 LIMIT ROWS EXAMINED 100',
  'SELECT * FROM t1 WHERE id = 1 LIMIT 1',
  'SELECT COUNT(*) FROM t1 GROUP BY a WITH ROLLUP',
  "SELECT * FROM t1 WHERE s = _utf8mb4'x' COLLATE utf8mb4_bin",
  'SELECT now, `current_date` FROM (SELECT 1 AS now, 2 AS `current_date` FROM t1) d',
  // Refused by both.
  'SELECT SQL_NO_CACHE * FROM t1',
  'SELECT * FROM t1 FOR UPDATE',
  'SELECT * FROM t1 LOCK IN SHARE MODE',
  'SELECT * FROM t1 FOR UPDATE SKIP LOCKED',
  'SELECT a FROM t1 LIMIT 1 INTO @x',
  'SELECT * FROM t1 PROCEDURE ANALYSE()',
  'SELECT * FROM t1 WHERE a = @x',
  'SELECT @@version FROM t1',
  'SELECT @@session.sql_mode FROM t1',
  'SELECT * FROM mysql.user',
  'SELECT * FROM information_schema.tables LIMIT 1',
  'SELECT * FROM performance_schema.threads LIMIT 1',
  'SELECT * FROM sys.version',
  'SELECT * FROM t1 WHERE a = (SELECT COUNT(*) FROM mysql.db)',
  'SELECT f1(a) FROM t1',
  'SELECT qc.f1(a) FROM t1',
  'SELECT NEXTVAL(s1) FROM t1',
  'SELECT LASTVAL(s1) FROM t1',
  'SELECT NEXT VALUE FOR s1 FROM t1',
  'SELECT * FROM tv FOR SYSTEM_TIME AS OF NOW()',
  'SELECT * FROM t1 ORDER BY RAND()',
  'SELECT * FROM t1 WHERE d < NOW() - INTERVAL 1 DAY',
  'SELECT 1',
  'SELECT 1 FROM DUAL',
  'VALUES (1), (2)',
  "SELECT * FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (x INT PATH '$')) j",
  'WITH RECURSIVE r (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3) SELECT * FROM r',
  'SHOW TABLES',
  'DESCRIBE t1',
  'EXPLAIN SELECT * FROM t1',
  'DO 1',
];

/** Built-ins that the server caches: each must be in the classifier's deterministic list. */
const DETERMINISTIC_CALLS = [
  'ABS(a)',
  'ACOS(0.5)',
  'ADDDATE(d, 1)',
  "ADDTIME(d, '01:00:00')",
  "AES_ENCRYPT(s, 'k')",
  'ASCII(s)',
  'AVG(a)',
  'BIN(a)',
  'BIT_AND(a)',
  'BIT_COUNT(a)',
  'BIT_LENGTH(s)',
  'CAST(a AS CHAR)',
  'CEIL(1.5)',
  'CHAR(65)',
  'CHAR_LENGTH(s)',
  'CHARSET(s)',
  'COALESCE(a, 1)',
  'COERCIBILITY(s)',
  'COLLATION(s)',
  'COMPRESS(s)',
  "CONCAT(s, 'x')",
  "CONCAT_WS(',', s, s)",
  'CONV(a, 10, 2)',
  'CONVERT(s USING utf8mb4)',
  'COUNT(*)',
  'CRC32(s)',
  'DATE(d)',
  'DATE_ADD(d, INTERVAL 1 DAY)',
  "DATE_FORMAT(d, '%Y')",
  'DATEDIFF(d, d)',
  'DAYNAME(d)',
  'DAYOFWEEK(d)',
  'DEFAULT(a)',
  'DEGREES(1)',
  "ELT(1, 'a')",
  'EXP(1)',
  'EXTRACT(YEAR FROM d)',
  "FIELD(s, 'x')",
  "FIND_IN_SET(s, 'x,y')",
  'FLOOR(1.5)',
  'FORMAT(a, 2)',
  'FROM_BASE64(TO_BASE64(s))',
  'FROM_DAYS(738000)',
  'FROM_UNIXTIME(1)',
  "GET_FORMAT(DATE, 'USA')",
  'GREATEST(a, 1)',
  'GROUP_CONCAT(s)',
  'HEX(s)',
  'HOUR(d)',
  'IF(a, 1, 2)',
  'IFNULL(a, 0)',
  "INET_ATON('1.2.3.4')",
  "INSERT(s, 1, 1, 'z')",
  "INSTR(s, 'x')",
  'INTERVAL(a, 1, 2)',
  'ISNULL(a)',
  'JSON_ARRAYAGG(a)',
  "JSON_EXTRACT(j, '$[0]')",
  "JSON_OBJECT('k', a)",
  'JSON_VALID(j)',
  'LAST_DAY(d)',
  'LCASE(s)',
  'LEAST(a, 1)',
  'LEFT(s, 1)',
  'LENGTH(s)',
  "LOCATE('x', s)",
  'LOG(2)',
  'LOWER(s)',
  "LPAD(s, 3, '-')",
  'LTRIM(s)',
  'MAKEDATE(2024, 1)',
  'MAX(a)',
  'MD5(s)',
  'MID(s, 1, 1)',
  'MIN(a)',
  'MOD(a, 2)',
  'MONTHNAME(d)',
  "NAME_CONST('n', 1)",
  'NULLIF(a, 1)',
  'NVL(a, 0)',
  'OCT(a)',
  "OLD_PASSWORD('x')",
  'ORD(s)',
  'PI()',
  "POSITION('x' IN s)",
  'POW(a, 2)',
  'QUARTER(d)',
  'QUOTE(s)',
  "REGEXP_REPLACE(s, 'x', 'y')",
  'REPEAT(s, 2)',
  "REPLACE(s, 'x', 'y')",
  'REVERSE(s)',
  'RIGHT(s, 1)',
  'ROUND(1.5)',
  "RPAD(s, 3, '-')",
  'SEC_TO_TIME(1)',
  'SHA1(s)',
  'SHA2(s, 256)',
  'SIGN(a)',
  'SOUNDEX(s)',
  'SPACE(2)',
  'SQRT(a)',
  'STD(a)',
  "STR_TO_DATE('2024-01-01', '%Y-%m-%d')",
  "STRCMP(s, 'x')",
  'SUBSTR(s, 1)',
  "SUBSTRING_INDEX(s, 'x', 1)",
  'SUM(a)',
  "TIME_FORMAT(d, '%H')",
  'TIME_TO_SEC(d)',
  'TIMESTAMPDIFF(DAY, d, d)',
  'TO_DAYS(d)',
  'TRIM(s)',
  'TRUNCATE(1.55, 1)',
  'UCASE(s)',
  'UNHEX(HEX(s))',
  'UNIX_TIMESTAMP(d)',
  'UPPER(s)',
  'VARIANCE(a)',
  'VERSION()',
  'WEEK(d)',
  'WEEKDAY(d)',
  'WEIGHT_STRING(s)',
  'YEAR(d)',
  'YEARWEEK(d)',
];

/** Built-ins that the server refuses to cache. */
const NON_DETERMINISTIC_CALLS = [
  'NOW()',
  'CURRENT_TIMESTAMP',
  'CURRENT_TIMESTAMP()',
  'CURDATE()',
  'CURRENT_DATE',
  'CURTIME()',
  'CURRENT_TIME',
  'LOCALTIME',
  'LOCALTIMESTAMP()',
  'SYSDATE()',
  'UTC_DATE()',
  'UTC_TIME()',
  'UTC_TIMESTAMP()',
  'UNIX_TIMESTAMP()',
  'RAND()',
  'RAND(1)',
  'UUID()',
  'UUID_SHORT()',
  'SYS_GUID()',
  'RANDOM_BYTES(4)',
  'CONNECTION_ID()',
  'LAST_INSERT_ID()',
  'FOUND_ROWS()',
  'ROW_COUNT()',
  'DATABASE()',
  'SCHEMA()',
  'USER()',
  'CURRENT_USER',
  'CURRENT_USER()',
  'SESSION_USER()',
  'SYSTEM_USER()',
  'CURRENT_ROLE',
  'BENCHMARK(1, 1)',
  'SLEEP(0)',
  "GET_LOCK('qc', 0)",
  "RELEASE_LOCK('qc')",
  'RELEASE_ALL_LOCKS()',
  "IS_FREE_LOCK('qc')",
  "IS_USED_LOCK('qc')",
  "LOAD_FILE('/etc/hostname')",
  "MASTER_POS_WAIT('f', 4, 0)",
  "MASTER_GTID_WAIT('', 0)",
  "ENCRYPT('x')",
  "DES_ENCRYPT('x')",
  'ROWNUM()',
];

/**
 * Cached by the server, refused by the classifier on purpose: PASSWORD() depends on the session's
 * old_passwords, CONVERT_TZ() on the time zone tables, and a proxy cannot replay the found-rows
 * count that SQL_CALC_FOUND_ROWS leaves for FOUND_ROWS().
 */
const DELIBERATELY_REFUSED = [
  "SELECT PASSWORD('x') FROM t1",
  "SELECT CONVERT_TZ(d, '+00:00', '+01:00') FROM t1",
  'SELECT SQL_CALC_FOUND_ROWS * FROM t1 LIMIT 1',
];

describe('classifier against the server query cache', () => {
  let server: EphemeralServer;
  let caseFolding: EphemeralServer;
  let connection: Connection;
  let options: ClassifyOptions;

  before(async () => {
    // One after the other: two mariadb-install-db running at once can collide in the shared
    // temp directory and fail.
    server = await startEphemeralServer({ serverOptions: QUERY_CACHE });
    caseFolding = await startEphemeralServer({
      serverOptions: { ...QUERY_CACHE, lower_case_table_names: 1 },
    });
    connection = await mariadb.createConnection({
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      // SELECT * over joins returns columns of the same name.
      checkDuplicate: false,
    });
    for (const statement of SETUP) await connection.query(statement);
    const [row] = await connection.query<Array<{ v: string }>>('SELECT VERSION() AS v');
    const version = serverVersionNumber(row?.v ?? '');
    assert.ok(version !== null);
    options = { ansiQuotes: false, lowerCaseTableNames: 0, serverVersion: version };
  });

  after(async () => {
    await connection?.end();
    await Promise.all([server?.stop(), caseFolding?.stop()]);
  });

  test('tables read are the tables the server makes the result depend on', async () => {
    const mismatches: string[] = [];
    for (const sql of READ_QUERIES) {
      const info = classify(sql, options);
      assert.ok(info.cacheable, `classifier caches ${sql}: ${info.notCacheableReason}`);
      const ours = classifierDependencies(info.reads, 'qc');
      const theirs = await serverDependencies(connection, sql, BASE_TABLES);
      if (ours.join() !== theirs.join()) {
        mismatches.push(
          `${sql}\n  classifier ${ours.join(', ')}\n  server     ${theirs.join(', ')}`,
        );
      }
    }
    assert.deepEqual(mismatches, []);
  });

  test('cacheability matches the server for statement forms', async () => {
    const mismatches: string[] = [];
    for (const sql of VERDICT_STATEMENTS) {
      const ours = classify(sql, options);
      const theirs = await serverCaches(connection, sql);
      if (ours.cacheable !== theirs) {
        mismatches.push(
          `${sql}: server ${theirs}, classifier ${ours.cacheable} (${ours.notCacheableReason})`,
        );
      }
    }
    assert.deepEqual(mismatches, []);
  });

  test('cacheability matches the server for built-in functions', async () => {
    const mismatches: string[] = [];
    const calls = [
      ...DETERMINISTIC_CALLS.map((call) => [call, true] as const),
      ...NON_DETERMINISTIC_CALLS.map((call) => [call, false] as const),
    ];
    for (const [call, cached] of calls) {
      const sql = `SELECT ${call} FROM t1`;
      const ours = classify(sql, options);
      const theirs = await serverCaches(connection, sql);
      if (ours.cacheable !== theirs || theirs !== cached) {
        mismatches.push(
          `${sql}: server ${theirs}, classifier ${ours.cacheable} (${ours.notCacheableReason})`,
        );
      }
    }
    assert.deepEqual(mismatches, []);
  });

  test('the deliberate differences are still differences', async () => {
    for (const sql of DELIBERATELY_REFUSED) {
      assert.equal(await serverCaches(connection, sql), true, `server caches ${sql}`);
      assert.equal(classify(sql, options).cacheable, false, `classifier refuses ${sql}`);
    }
  });

  test('letter case: names differ by case with lower_case_table_names=0, not with 1', async () => {
    await connection.query('CREATE TABLE qc.Mixed LIKE qc.t1');
    await connection.query('CREATE TABLE qc.mixed LIKE qc.t1');
    await connection.query('INSERT INTO qc.Mixed SELECT * FROM qc.t1');
    await connection.query('INSERT INTO qc.mixed SELECT * FROM qc.t1');
    const sql = 'SELECT * FROM Mixed';
    const info = classify(sql, options);
    assert.deepEqual(classifierDependencies(info.reads, 'qc'), ['qc.Mixed']);
    assert.deepEqual(await serverDependencies(connection, sql, ['qc.Mixed', 'qc.mixed']), [
      'qc.Mixed',
    ]);

    const folding = await mariadb.createConnection({
      host: caseFolding.host,
      port: caseFolding.port,
      user: caseFolding.user,
      password: caseFolding.password,
      checkDuplicate: false,
    });
    try {
      await folding.query('CREATE DATABASE Qc');
      await folding.query('CREATE TABLE Qc.Mixed (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0)');
      await folding.query('CREATE TABLE Qc.Other (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0)');
      await folding.query('INSERT INTO Qc.Mixed (id) VALUES (1)');
      await folding.query('INSERT INTO Qc.Other (id) VALUES (1)');
      const folded = 'SELECT * FROM QC.MIXED JOIN qc.mixed AS m USING (id)';
      const ours = classify(folded, { ...options, lowerCaseTableNames: 1 });
      assert.deepEqual(classifierDependencies(ours.reads, 'qc'), ['qc.mixed']);
      assert.deepEqual(await serverDependencies(folding, folded, ['qc.mixed', 'qc.other']), [
        'qc.mixed',
      ]);
    } finally {
      await folding.end();
    }
  });
});
