/**
 * The statement classifier, table-driven: every case states the kind, the tables read and
 * written (in any order), whether the statement writes everything, and whether it is cacheable
 * and why not. Every cacheability rule has cases on both sides.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  classify,
  classifyAll,
  type ClassifyOptions,
  type StatementInfo,
  type StatementKind,
  type TableRef,
} from '../../src/sql/statement-classifier.ts';
import { KeyKind, keyValueOf } from '../../src/sql/point-access.ts';
import { writesProgramTables } from '../../src/sql/table-ref.ts';

const DEFAULTS: ClassifyOptions = { ansiQuotes: false, lowerCaseTableNames: 0 };

interface Case {
  sql: string;
  kind: StatementKind;
  reads?: string[];
  writes?: string[];
  /** writesEverything; false when omitted. */
  everything?: boolean;
  /** null: cacheable. */
  reason: string | null;
  options?: Partial<ClassifyOptions>;
}

function name(table: TableRef): string {
  return table.schema === null ? table.name : `${table.schema}.${table.name}`;
}

function summary(info: StatementInfo): object {
  return {
    kind: info.kind,
    reads: info.reads.map(name).sort(),
    writes: info.writes.map(name).sort(),
    writesEverything: info.writesEverything,
    cacheable: info.cacheable,
    reason: info.notCacheableReason,
  };
}

function expected(c: Case): object {
  return {
    kind: c.kind,
    reads: [...(c.reads ?? [])].sort(),
    writes: [...(c.writes ?? [])].sort(),
    writesEverything: c.everything ?? false,
    cacheable: c.reason === null,
    reason: c.reason,
  };
}

function run(title: string, cases: Case[]): void {
  describe(title, () => {
    for (const c of cases) {
      test(c.sql.replace(/\s+/g, ' '), () => {
        const info = classify(c.sql, { ...DEFAULTS, ...c.options });
        assert.deepEqual(summary(info), expected(c));
      });
    }
  });
}

const NOT_SELECT = 'not a SELECT';
const NO_TABLES = 'no tables';

run('SELECT: tables and joins', [
  { sql: 'SELECT c FROM sbtest1 WHERE id=5016', kind: 'select', reads: ['sbtest1'], reason: null },
  { sql: 'SELECT c FROM sbtest1 WHERE id=?', kind: 'select', reads: ['sbtest1'], reason: null },
  {
    sql: 'SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5013 AND 5112 ORDER BY c',
    kind: 'select',
    reads: ['sbtest1'],
    reason: null,
  },
  {
    sql: 'SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?',
    kind: 'select',
    reads: ['sbtest1'],
    reason: null,
  },
  {
    sql: 'select * from t1, t2 where t1.a = t2.a',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 INNER JOIN t2 ON t1.id = t2.id',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 LEFT OUTER JOIN t2 USING (id)',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 RIGHT JOIN t2 ON t1.a = t2.a',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  { sql: 'SELECT * FROM t1 CROSS JOIN t2', kind: 'select', reads: ['t1', 't2'], reason: null },
  { sql: 'SELECT * FROM t1 NATURAL JOIN t2', kind: 'select', reads: ['t1', 't2'], reason: null },
  {
    sql: 'SELECT * FROM t1 NATURAL LEFT OUTER JOIN t2',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 STRAIGHT_JOIN t2 ON t1.a = t2.a',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  { sql: 'SELECT STRAIGHT_JOIN * FROM t1, t2', kind: 'select', reads: ['t1', 't2'], reason: null },
  {
    sql: 'SELECT * FROM t1 JOIN t2 JOIN t3 ON t2.a = t3.a ON t1.a = t2.a',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM (t1, t2) JOIN t3 ON t1.a = t3.a',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 LEFT JOIN (t2 JOIN t3 ON t2.b = t3.b) ON t1.a = t2.a, t4',
    kind: 'select',
    reads: ['t1', 't2', 't3', 't4'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 AS a JOIN t1 AS b ON a.parent = b.id',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT a.x FROM db1.t1 a, db2.t2 b',
    kind: 'select',
    reads: ['db1.t1', 'db2.t2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM `my db`.`odd``name`',
    kind: 'select',
    reads: ['my db.odd`name'],
    reason: null,
  },
  { sql: 'SELECT * FROM `select`', kind: 'select', reads: ['select'], reason: null },
  {
    sql: 'SELECT * FROM status, user, data',
    kind: 'select',
    reads: ['status', 'user', 'data'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 USE INDEX (i1) IGNORE INDEX FOR ORDER BY (i2) WHERE a = 1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 FORCE INDEX (PRIMARY), t2',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 x USE KEY (a), IGNORE KEY (b) JOIN t2 y',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  { sql: 'SELECT * FROM t1 PARTITION (p0, p1) AS x', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT t.from, t.order, t.1col FROM t1 AS t',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: 'SELECT t1.*, t2.a FROM t1, t2', kind: 'select', reads: ['t1', 't2'], reason: null },
  { sql: 'SELECT a AS `an alias`, b bee FROM t1 t', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT HIGH_PRIORITY SQL_BUFFER_RESULT SQL_SMALL_RESULT a FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: '  select\n*\nfrom\tt1  ', kind: 'select', reads: ['t1'], reason: null },
]);

run('SELECT: subqueries, derived tables, set operations', [
  {
    sql: '(SELECT a FROM t1) UNION (SELECT a FROM t2) ORDER BY a LIMIT 10',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 UNION ALL SELECT a FROM t2 UNION DISTINCT SELECT a FROM t3',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 INTERSECT SELECT a FROM t2',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 EXCEPT ALL SELECT a FROM t2',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  { sql: '((SELECT a FROM t1))', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT (SELECT MAX(b) FROM t2 WHERE t2.a = t1.a) AS m FROM t1',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a) AND b > ALL (SELECT b FROM t3)',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 WHERE a = ANY (SELECT a FROM db.t2)',
    kind: 'select',
    reads: ['t1', 'db.t2'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 WHERE a IN (SELECT a FROM t2 WHERE b IN (SELECT b FROM t3))',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT d.a FROM (SELECT a FROM t1 WHERE b = 2) AS d',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM (SELECT 1, 2 FROM t1) AS d (x, y)',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM ((SELECT a FROM t1) UNION (SELECT a FROM t2)) u JOIN t3 ON u.a = t3.a',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM (SELECT * FROM (SELECT * FROM t1) a) b',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT a, COUNT(*) FROM t1 GROUP BY a HAVING COUNT(*) > (SELECT COUNT(*) FROM t2) ORDER BY (SELECT 1 FROM t3 LIMIT 1)',
    kind: 'select',
    reads: ['t1', 't2', 't3'],
    reason: null,
  },
  {
    sql: 'SELECT a FROM t1 WHERE a = ((SELECT a FROM t2 LIMIT 1) + 1)',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT IF((SELECT COUNT(*) FROM t2) > 0, 1, 2) FROM t1',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT COUNT(*) FROM t1 WHERE (a, b) IN ((1, 2), (3, 4))',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 WHERE a = 1 GROUP BY b WITH ROLLUP',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 ORDER BY a LIMIT 10 OFFSET 5',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: 'SELECT * FROM t1 LIMIT 5, 10', kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT * FROM t1 LIMIT ROWS EXAMINED 1000', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT * FROM t1 ORDER BY a OFFSET 1 ROWS FETCH FIRST 2 ROWS WITH TIES',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), RANK() OVER w FROM t1 WINDOW w AS (ORDER BY a)',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT GROUP_CONCAT(DISTINCT a ORDER BY b SEPARATOR ',') FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT EXTRACT(YEAR FROM d), SUBSTRING(s FROM 2 FOR 3), TRIM(LEADING 'x' FROM s), POSITION('a' IN s) FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT CAST(a AS DECIMAL(10,2)), CONVERT(s USING utf8mb4), CONVERT(a, CHAR(3)) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    // d may be a TIME column: made a date, it takes today's date, so it changes at midnight.
    sql: 'SELECT CAST(d AS DATETIME(6)) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function CAST to a date',
  },
  {
    sql: "SELECT CAST('2024-01-02' AS DATE), TIMESTAMP('2024-01-02 03:04:05') FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT TIMESTAMP(t) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function TIMESTAMP to a date',
  },
  {
    sql: 'SELECT CONVERT(t, DATE) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function CONVERT to a date',
  },
  {
    sql: 'SELECT LEFT(s, 2), RIGHT(s, 2) FROM t1 LEFT JOIN t2 ON LEFT(t1.s, 1) = RIGHT(t2.s, 1)',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: "SELECT CASE WHEN a > 1 THEN 'x' ELSE 'y' END FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT IF(a, 1, 2), IFNULL(b, 0), COALESCE(c, d), NULLIF(a, b) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT JSON_EXTRACT(j, '$.a'), JSON_OBJECT('k', a), JSON_ARRAYAGG(a) FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM t1, JSON_TABLE(t1.j, '$[*]' COLUMNS (x INT PATH '$', NESTED PATH '$.n[*]' COLUMNS (y INT PATH '$'))) AS jt",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (x INT PATH '$')) jt",
    kind: 'select',
    reason: NO_TABLES,
  },
  {
    sql: 'SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY a) OVER (PARTITION BY b) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM t1 WHERE MATCH (s) AGAINST ('word' IN BOOLEAN MODE)",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT a FROM t1 WHERE b BETWEEN 1 AND 10 AND c LIKE 'x%' ESCAPE '!' AND d REGEXP '^a' AND e IS NOT NULL",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM t1 WHERE d > DATE '2020-01-01' AND ts < TIMESTAMP '2021-01-01 00:00:00'",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT _utf8mb4'x' COLLATE utf8mb4_bin, _binary 'y', N'z' FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT 1 FROM t1 WHERE a = .5 OR b = 1e3 OR c = 0x1F OR d = x'1F' OR e = b'01' OR f = -1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT ROW(1, 2) = ROW(a, b), DATE_ADD(d, INTERVAL 1 DAY) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT a FROM t1 WHERE b = 'it''s' AND c = \"dq \\\" str\" AND e = '#x -- y /* z */'",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: 'SELECT COUNT (*) FROM t1', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT VERSION(), CHARSET(s), MD5(s), SHA2(s, 256), CRC32(s) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: 'VALUES (1, 2), (3, 4)', kind: 'select', reason: NO_TABLES },
  { sql: 'SELECT * FROM (VALUES (1), (2)) AS v', kind: 'select', reason: NO_TABLES },
  {
    sql: 'SELECT * FROM t1 WHERE a IN (VALUES (1), (2))',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
]);

run('SELECT: common table expressions', [
  {
    sql: 'WITH c AS (SELECT * FROM t2) SELECT * FROM c',
    kind: 'select',
    reads: ['t2'],
    reason: null,
  },
  {
    sql: 'WITH c AS (SELECT * FROM t2) SELECT * FROM c, t1',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  {
    sql: 'WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r',
    kind: 'select',
    reason: NO_TABLES,
  },
  {
    sql: 'WITH RECURSIVE r AS (SELECT id FROM t1 WHERE parent IS NULL UNION ALL SELECT t1.id FROM t1 JOIN r ON t1.parent = r.id) SELECT * FROM r',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'WITH RECURSIVE a AS (SELECT 1 FROM b), b AS (SELECT 1 FROM a) SELECT * FROM a, t9',
    kind: 'select',
    reads: ['t9'],
    reason: null,
  },
  {
    sql: 'WITH a AS (SELECT * FROM t1), b AS (SELECT * FROM a JOIN t2) SELECT * FROM b',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
  // A CTE only shadows inside its own statement part: the outer c is a table.
  {
    sql: 'SELECT * FROM c WHERE x IN (WITH c AS (SELECT a FROM t1) SELECT a FROM c)',
    kind: 'select',
    reads: ['c', 't1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM (WITH c AS (SELECT a FROM t1) SELECT * FROM c) d, c',
    kind: 'select',
    reads: ['c', 't1'],
    reason: null,
  },
  // Not recursive: inside its own definition the name is the table.
  {
    sql: 'WITH t1 AS (SELECT * FROM t1) SELECT * FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  // A qualified name is never a CTE.
  {
    sql: 'WITH t1 AS (SELECT 1) SELECT * FROM t1, db.t1',
    kind: 'select',
    reads: ['db.t1'],
    reason: null,
  },
  {
    sql: 'WITH c AS (SELECT * FROM t2) SELECT * FROM c UNION SELECT * FROM t3',
    kind: 'select',
    reads: ['t2', 't3'],
    reason: null,
  },
  {
    sql: 'WITH c (x) AS (SELECT a FROM t1) SELECT x FROM c',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'WITH RECURSIVE r AS (SELECT id FROM t1 UNION SELECT id FROM r) CYCLE id RESTRICT SELECT * FROM r',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'WITH c AS (SELECT NOW() AS n FROM t1) SELECT * FROM c',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function NOW',
  },
]);

run('SELECT: letter case of names', [
  {
    sql: 'SELECT * FROM Db.T1',
    kind: 'select',
    reads: ['Db.T1'],
    reason: null,
    options: { lowerCaseTableNames: 0 },
  },
  {
    sql: 'SELECT * FROM Db.T1',
    kind: 'select',
    reads: ['db.t1'],
    reason: null,
    options: { lowerCaseTableNames: 1 },
  },
  {
    sql: 'SELECT * FROM Db.T1',
    kind: 'select',
    reads: ['db.t1'],
    reason: null,
    options: { lowerCaseTableNames: 2 },
  },
  { sql: 'SELECT * FROM T1 JOIN t1 USING (a)', kind: 'select', reads: ['T1', 't1'], reason: null },
  {
    sql: 'SELECT * FROM T1 JOIN t1 USING (a)',
    kind: 'select',
    reads: ['t1'],
    reason: null,
    options: { lowerCaseTableNames: 1 },
  },
  {
    sql: 'WITH C AS (SELECT * FROM t2) SELECT * FROM c',
    kind: 'select',
    reads: ['t2'],
    reason: null,
    options: { lowerCaseTableNames: 1 },
  },
  // With case-sensitive names a differently spelt CTE may be a table: reading it too is safe.
  {
    sql: 'WITH C AS (SELECT * FROM t2) SELECT * FROM c',
    kind: 'select',
    reads: ['c', 't2'],
    reason: null,
  },
  {
    sql: 'SELECT "a" FROM "t1"',
    kind: 'select',
    reads: ['t1'],
    reason: null,
    options: { ansiQuotes: true },
  },
  {
    sql: "SELECT 'a\\' FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
    options: { noBackslashEscapes: true },
  },
]);

run('cacheability: statement forms', [
  { sql: 'SELECT SQL_NO_CACHE * FROM t1', kind: 'select', reads: ['t1'], reason: 'SQL_NO_CACHE' },
  { sql: 'SELECT SQL_CACHE * FROM t1', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT /*! SQL_NO_CACHE */ * FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'SQL_NO_CACHE',
  },
  { sql: 'SELECT /* SQL_NO_CACHE */ * FROM t1', kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT a INTO @x FROM t1 LIMIT 1', kind: 'select', reads: ['t1'], reason: 'INTO' },
  { sql: 'SELECT a FROM t1 LIMIT 1 INTO @x', kind: 'select', reads: ['t1'], reason: 'INTO' },
  {
    sql: "SELECT a FROM t1 INTO OUTFILE '/tmp/x' CHARACTER SET utf8 FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n'",
    kind: 'select',
    reads: ['t1'],
    reason: 'INTO',
  },
  { sql: "SELECT * FROM t1 INTO DUMPFILE '/tmp/x'", kind: 'select', reads: ['t1'], reason: 'INTO' },
  { sql: "SELECT a FROM t1 WHERE s = 'INTO'", kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT * FROM t1 WHERE id = 1 FOR UPDATE',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 LOCK IN SHARE MODE',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  { sql: 'SELECT * FROM t1 FOR SHARE', kind: 'select', reads: ['t1'], reason: 'locking read' },
  {
    sql: 'SELECT * FROM t1 FOR UPDATE NOWAIT',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 FOR UPDATE SKIP LOCKED',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 LIMIT 1 FOR UPDATE WAIT 5',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 WHERE a IN (SELECT a FROM t2 FOR UPDATE)',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: 'locking read',
  },
  {
    sql: "SELECT * FROM t1 WHERE note = 'FOR UPDATE'",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 PROCEDURE ANALYSE()',
    kind: 'select',
    reads: ['t1'],
    reason: 'PROCEDURE',
  },
  {
    sql: 'SELECT * FROM t1 PROCEDURE ANALYSE(10, 2000)',
    kind: 'select',
    reads: ['t1'],
    reason: 'PROCEDURE',
  },
  {
    sql: 'SELECT SQL_CALC_FOUND_ROWS * FROM t1 LIMIT 10',
    kind: 'select',
    reads: ['t1'],
    reason: 'SQL_CALC_FOUND_ROWS',
  },
  { sql: 'SELECT 1', kind: 'select', reason: NO_TABLES },
  { sql: 'SELECT 1 FROM DUAL', kind: 'select', reason: NO_TABLES },
  { sql: 'SELECT 1 + 1 AS two', kind: 'select', reason: NO_TABLES },
  { sql: 'SELECT 1 FROM t1', kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT * FROM t1 FOR SYSTEM_TIME ALL', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: "SELECT * FROM t1 FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01 00:00:00' AS h WHERE a = 1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM t1 FOR SYSTEM_TIME BETWEEN '2000-01-01' AND '2030-01-01' h",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT * FROM t1 FOR SYSTEM_TIME FROM TIMESTAMP '2000-01-01' TO TIMESTAMP '2030-01-01'",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 FOR SYSTEM_TIME AS OF TRANSACTION 123',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 FOR SYSTEM_TIME AS OF NOW() - INTERVAL 1 DAY',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function NOW',
  },
  {
    sql: 'SELECT * FROM t1 FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function CURRENT_TIMESTAMP',
  },
  {
    sql: 'SELECT * FROM t1 FOR SYSTEM_TIME AS OF @t',
    kind: 'select',
    reads: ['t1'],
    reason: 'user variable',
  },
]);

/** Non-deterministic built-ins: `SELECT <call> FROM t1` is refused, naming the function. */
const NON_DETERMINISTIC_CALLS: Array<[string, string]> = [
  ['NOW()', 'NOW'],
  ['now(6)', 'NOW'],
  ['CURRENT_TIMESTAMP', 'CURRENT_TIMESTAMP'],
  ['CURRENT_TIMESTAMP()', 'CURRENT_TIMESTAMP'],
  ['CURDATE()', 'CURDATE'],
  ['CURRENT_DATE', 'CURRENT_DATE'],
  ['CURTIME()', 'CURTIME'],
  ['CURRENT_TIME', 'CURRENT_TIME'],
  ['LOCALTIME', 'LOCALTIME'],
  ['LOCALTIMESTAMP()', 'LOCALTIMESTAMP'],
  ['SYSDATE()', 'SYSDATE'],
  ['UTC_DATE()', 'UTC_DATE'],
  ['UTC_TIME', 'UTC_TIME'],
  ['UTC_TIMESTAMP()', 'UTC_TIMESTAMP'],
  ['UNIX_TIMESTAMP()', 'UNIX_TIMESTAMP'],
  ['RAND()', 'RAND'],
  ['RAND(1)', 'RAND'],
  ['UUID()', 'UUID'],
  ['UUID_SHORT()', 'UUID_SHORT'],
  ['SYS_GUID()', 'SYS_GUID'],
  ['RANDOM_BYTES(8)', 'RANDOM_BYTES'],
  ['CONNECTION_ID()', 'CONNECTION_ID'],
  ['LAST_INSERT_ID()', 'LAST_INSERT_ID'],
  ['FOUND_ROWS()', 'FOUND_ROWS'],
  ['ROW_COUNT()', 'ROW_COUNT'],
  ['DATABASE()', 'DATABASE'],
  ['SCHEMA()', 'SCHEMA'],
  ['USER()', 'USER'],
  ['CURRENT_USER', 'CURRENT_USER'],
  ['CURRENT_USER()', 'CURRENT_USER'],
  ['SESSION_USER()', 'SESSION_USER'],
  ['SYSTEM_USER()', 'SYSTEM_USER'],
  ['CURRENT_ROLE', 'CURRENT_ROLE'],
  ['BENCHMARK(10, MD5(a))', 'BENCHMARK'],
  ['SLEEP(0)', 'SLEEP'],
  ["GET_LOCK('x', 0)", 'GET_LOCK'],
  ["RELEASE_LOCK('x')", 'RELEASE_LOCK'],
  ['RELEASE_ALL_LOCKS()', 'RELEASE_ALL_LOCKS'],
  ["IS_FREE_LOCK('x')", 'IS_FREE_LOCK'],
  ["IS_USED_LOCK('x')", 'IS_USED_LOCK'],
  ["LOAD_FILE('/etc/hostname')", 'LOAD_FILE'],
  ["MASTER_POS_WAIT('f', 4)", 'MASTER_POS_WAIT'],
  ["MASTER_GTID_WAIT('0-1-1')", 'MASTER_GTID_WAIT'],
  ["PASSWORD('x')", 'PASSWORD'],
  ["ENCRYPT('x')", 'ENCRYPT'],
  ["DES_ENCRYPT('x')", 'DES_ENCRYPT'],
  ["CONVERT_TZ(d, '+00:00', 'Europe/Paris')", 'CONVERT_TZ'],
  ['ROWNUM()', 'ROWNUM'],
];

run(
  'cacheability: non-deterministic functions',
  NON_DETERMINISTIC_CALLS.map(([call, name]) => ({
    sql: `SELECT ${call} FROM t1`,
    kind: 'select' as const,
    reads: ['t1'],
    reason: `non-deterministic function ${name}`,
  })),
);

run('cacheability: deterministic functions and look-alikes', [
  {
    sql: "SELECT UNIX_TIMESTAMP(d), UNIX_TIMESTAMP('2020-01-01') FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: "SELECT FROM_UNIXTIME(1), DATE_FORMAT(d, '%Y'), WEEK(d) FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  { sql: 'SELECT now, `current_date`, user FROM t1', kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT t1.now, t1.rand FROM t1', kind: 'select', reads: ['t1'], reason: null },
  { sql: "SELECT 'NOW()' FROM t1", kind: 'select', reads: ['t1'], reason: null },
  {
    sql: "SELECT AES_ENCRYPT(s, 'k'), COMPRESS(s), OLD_PASSWORD('x') FROM t1",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT DEFAULT(a), COLLATION(s), COERCIBILITY(s) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
  {
    sql: 'SELECT * FROM t1 ORDER BY RAND()',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function RAND',
  },
  {
    sql: 'SELECT * FROM t1 WHERE d < NOW() - INTERVAL 1 DAY',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function NOW',
  },
  {
    sql: 'SELECT (SELECT NOW()) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'non-deterministic function NOW',
  },
]);

run('cacheability: sequences', [
  {
    sql: 'SELECT NEXTVAL(s1)',
    kind: 'select',
    writes: ['s1'],
    reason: 'non-deterministic function NEXTVAL',
  },
  {
    sql: 'SELECT NEXT VALUE FOR db.s1',
    kind: 'select',
    writes: ['db.s1'],
    reason: 'non-deterministic function NEXT VALUE FOR',
  },
  {
    sql: 'SELECT SETVAL(s1, 100)',
    kind: 'select',
    writes: ['s1'],
    reason: 'non-deterministic function SETVAL',
  },
  {
    sql: 'SELECT LASTVAL(s1) FROM t1',
    kind: 'select',
    reads: ['s1', 't1'],
    reason: 'non-deterministic function LASTVAL',
  },
  {
    sql: 'SELECT PREVIOUS VALUE FOR s1',
    kind: 'select',
    reads: ['s1'],
    reason: 'non-deterministic function PREVIOUS VALUE FOR',
  },
  {
    sql: 'INSERT INTO t1 VALUES (NEXT VALUE FOR s1)',
    kind: 'insert',
    writes: ['t1', 's1'],
    reason: NOT_SELECT,
  },
]);

run('cacheability: stored functions and UDFs', [
  {
    sql: 'SELECT my_func(a) FROM t1',
    kind: 'select',
    reads: ['t1'],
    everything: true,
    reason: 'stored function or UDF my_func',
  },
  {
    sql: 'SELECT db.f(a) FROM t1',
    kind: 'select',
    reads: ['t1'],
    everything: true,
    reason: 'stored function or UDF db.f',
  },
  {
    sql: 'SELECT `f`(1) FROM t1',
    kind: 'select',
    reads: ['t1'],
    everything: true,
    reason: 'stored function or UDF `f`',
  },
  {
    sql: 'SELECT * FROM t1 WHERE a = f2(1)',
    kind: 'select',
    reads: ['t1'],
    everything: true,
    reason: 'stored function or UDF f2',
  },
  {
    sql: 'SELECT data(1) FROM t1',
    kind: 'select',
    reads: ['t1'],
    everything: true,
    reason: 'stored function or UDF data',
  },
  {
    sql: 'SELECT ABS(a), CONCAT(a, b), LENGTH(s) FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
]);

run('cacheability: variables', [
  { sql: 'SELECT * FROM t1 WHERE a = @x', kind: 'select', reads: ['t1'], reason: 'user variable' },
  { sql: "SELECT @'x', @`y` FROM t1", kind: 'select', reads: ['t1'], reason: 'user variable' },
  { sql: 'SELECT @r := a FROM t1', kind: 'select', reads: ['t1'], reason: 'user variable' },
  { sql: "SELECT * FROM t1 WHERE email = 'a@b.c'", kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT @@version FROM t1', kind: 'select', reads: ['t1'], reason: 'system variable' },
  {
    sql: 'SELECT @@session.sql_mode, @@GLOBAL.max_connections FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'system variable',
  },
  {
    sql: 'SELECT * FROM t1 LIMIT @@sql_select_limit',
    kind: 'select',
    reads: ['t1'],
    reason: 'system variable',
  },
]);

run('cacheability: system schemas', [
  {
    sql: 'SELECT * FROM mysql.user',
    kind: 'select',
    reads: ['mysql.user'],
    reason: 'system schema mysql',
  },
  {
    sql: 'SELECT * FROM INFORMATION_SCHEMA.TABLES',
    kind: 'select',
    reads: ['INFORMATION_SCHEMA.TABLES'],
    reason: 'system schema INFORMATION_SCHEMA',
  },
  {
    sql: 'SELECT * FROM performance_schema.threads',
    kind: 'select',
    reads: ['performance_schema.threads'],
    reason: 'system schema performance_schema',
  },
  {
    sql: 'SELECT * FROM sys.version',
    kind: 'select',
    reads: ['sys.version'],
    reason: 'system schema sys',
  },
  {
    sql: 'SELECT * FROM t1 WHERE a = (SELECT COUNT(*) FROM mysql.db)',
    kind: 'select',
    reads: ['t1', 'mysql.db'],
    reason: 'system schema mysql',
  },
  { sql: 'SELECT * FROM mysqldb.user', kind: 'select', reads: ['mysqldb.user'], reason: null },
  {
    sql: "SELECT * FROM t1 WHERE schema_name = 'mysql'",
    kind: 'select',
    reads: ['t1'],
    reason: null,
  },
]);

run('INSERT and REPLACE', [
  {
    sql: "INSERT INTO sbtest1 (id, k, c, pad) VALUES (4979, 4978, '3931-7756', '2424-1')",
    kind: 'insert',
    writes: ['sbtest1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a, b) VALUES (1, 2), (3, 4)',
    kind: 'insert',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'INSERT t1 VALUE (1)', kind: 'insert', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'INSERT LOW_PRIORITY IGNORE INTO db.t1 SET a = 1, b = 2',
    kind: 'insert',
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 SELECT * FROM t2 WHERE a > 1',
    kind: 'insert',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a) SELECT a + 1 FROM t1',
    kind: 'insert',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (SELECT * FROM t2)',
    kind: 'insert',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a) + 1',
    kind: 'insert',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a) SELECT a FROM t2 JOIN t3 USING (id) ON DUPLICATE KEY UPDATE b = t2.b',
    kind: 'insert',
    reads: ['t2', 't3'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a) VALUES ((SELECT MAX(a) FROM t2))',
    kind: 'insert',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 VALUES (NOW(), RAND(), @x)',
    kind: 'insert',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 VALUES (my_func(1))',
    kind: 'insert',
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 (a) VALUES (1) RETURNING id, a',
    kind: 'insert',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'INSERT INTO t1 PARTITION (p0) (a) VALUES (1)',
    kind: 'insert',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'INSERT DELAYED INTO t1 VALUES (1)', kind: 'insert', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'INSERT INTO t1 WITH c AS (SELECT a FROM t2) SELECT * FROM c',
    kind: 'insert',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'REPLACE INTO t1 VALUES (1)', kind: 'replace', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'REPLACE t1 SELECT * FROM t2',
    kind: 'replace',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'REPLACE LOW_PRIORITY INTO `db`.`t 1` SET a = 1',
    kind: 'replace',
    writes: ['db.t 1'],
    reason: NOT_SELECT,
  },
]);

run('UPDATE', [
  {
    sql: 'UPDATE sbtest1 SET k=k+1 WHERE id=5041',
    kind: 'update',
    reads: ['sbtest1'],
    writes: ['sbtest1'],
    reason: NOT_SELECT,
  },
  {
    sql: "UPDATE sbtest1 SET c='3931-7756-5932' WHERE id=5048",
    kind: 'update',
    reads: ['sbtest1'],
    writes: ['sbtest1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE LOW_PRIORITY IGNORE t1 SET a = 1 ORDER BY b LIMIT 10',
    kind: 'update',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 SET a = (SELECT MAX(b) FROM t2)',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 SET a = 1 WHERE id IN (SELECT id FROM t2)',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 JOIN t2 ON t1.id = t2.id SET t1.a = t2.a',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 a, t2 b SET a.x = 1, b.y = 2 WHERE a.id = b.id',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1, t2 SET x = 1 WHERE t1.id = t2.id',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE db.t1 JOIN db.t2 USING (id) SET db.t1.a = 1',
    kind: 'update',
    reads: ['db.t1', 'db.t2'],
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 JOIN (SELECT id FROM t2) d ON t1.id = d.id SET t1.a = 1',
    kind: 'update',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "UPDATE t1 FOR PORTION OF p FROM '2020-01-01' TO '2021-01-01' SET a = 1",
    kind: 'update',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'UPDATE t1 SET a = f(a)',
    kind: 'update',
    reads: ['t1'],
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'WITH c AS (SELECT * FROM t1) UPDATE c SET a = 1',
    kind: 'update',
    reads: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
]);

run('DELETE', [
  {
    sql: 'DELETE FROM sbtest1 WHERE id=4979',
    kind: 'delete',
    reads: ['sbtest1'],
    writes: ['sbtest1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE LOW_PRIORITY QUICK IGNORE FROM t1 WHERE a = 1 ORDER BY b LIMIT 1',
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE t1, t2 FROM t1 JOIN t2 ON t1.id = t2.id WHERE t1.a = 1',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE t1 FROM t1 JOIN t2 ON t1.id = t2.id',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE a FROM t1 AS a JOIN t2 AS b ON a.id = b.id',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE FROM t1 USING t1 JOIN t2 ON t1.id = t2.id',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE FROM t1.*, t2.* USING t1, t2, t3 WHERE t1.id = t2.id AND t2.id = t3.id',
    kind: 'delete',
    reads: ['t1', 't2', 't3'],
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE t1.* FROM t1, t2 WHERE t1.id = t2.id',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE db.t1 FROM db.t1, db.t2',
    kind: 'delete',
    reads: ['db.t1', 'db.t2'],
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE FROM t1 WHERE id IN (SELECT id FROM t2)',
    kind: 'delete',
    reads: ['t1', 't2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE FROM t1 WHERE a = 1 RETURNING id',
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'DELETE FROM db.t1 PARTITION (p1) WHERE a = 1',
    kind: 'delete',
    reads: ['db.t1'],
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "DELETE HISTORY FROM t1 BEFORE SYSTEM_TIME '2020-01-01 00:00:00'",
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "DELETE FROM t1 FOR PORTION OF p FROM '2020-01-01' TO '2021-01-01' WHERE a = 1",
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
]);

run('TRUNCATE and LOAD', [
  { sql: 'TRUNCATE TABLE t1', kind: 'truncate', writes: ['t1'], reason: NOT_SELECT },
  { sql: 'TRUNCATE db.t1', kind: 'truncate', writes: ['db.t1'], reason: NOT_SELECT },
  {
    sql: "LOAD DATA LOCAL INFILE '/tmp/x.csv' INTO TABLE t1 FIELDS TERMINATED BY ','",
    kind: 'load',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "LOAD DATA INFILE 'x' REPLACE INTO TABLE db.t1 (a, @b) SET c = UPPER(@b)",
    kind: 'load',
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "LOAD XML LOCAL INFILE 'x.xml' INTO TABLE t1 ROWS IDENTIFIED BY '<row>'",
    kind: 'load',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'LOAD INDEX INTO CACHE t1', kind: 'other', reason: NOT_SELECT },
]);

run('DDL', [
  {
    sql: "CREATE TABLE t1 (id INT PRIMARY KEY, s VARCHAR(10) DEFAULT 'x')",
    kind: 'ddl',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE TABLE IF NOT EXISTS db.t1 LIKE db.t2',
    kind: 'ddl',
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE TABLE t1 AS SELECT * FROM t2',
    kind: 'ddl',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE TABLE t1 (a INT) ENGINE=InnoDB SELECT a FROM t2',
    kind: 'ddl',
    reads: ['t2'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'CREATE OR REPLACE TABLE t1 (a INT)', kind: 'ddl', writes: ['t1'], reason: NOT_SELECT },
  { sql: 'CREATE TEMPORARY TABLE tmp (a INT)', kind: 'ddl', writes: ['tmp'], reason: NOT_SELECT },
  {
    sql: 'CREATE TABLE t1 (a INT) PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)',
    kind: 'ddl',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'ALTER TABLE t1 ADD COLUMN b INT', kind: 'ddl', writes: ['t1'], reason: NOT_SELECT },
  { sql: 'ALTER TABLE t1 RENAME TO t2', kind: 'ddl', writes: ['t1', 't2'], reason: NOT_SELECT },
  {
    sql: 'ALTER TABLE t1 RENAME COLUMN a TO b, RENAME INDEX i TO j',
    kind: 'ddl',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'ALTER ONLINE TABLE db.t1 ENGINE=InnoDB',
    kind: 'ddl',
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'ALTER TABLE t1 EXCHANGE PARTITION p0 WITH TABLE t2',
    kind: 'ddl',
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  { sql: 'DROP TABLE t1', kind: 'ddl', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'DROP TABLE IF EXISTS t1, db.t2 CASCADE',
    kind: 'ddl',
    writes: ['t1', 'db.t2'],
    reason: NOT_SELECT,
  },
  { sql: 'DROP TEMPORARY TABLE IF EXISTS tmp', kind: 'ddl', writes: ['tmp'], reason: NOT_SELECT },
  {
    sql: 'RENAME TABLE a TO b, c TO d',
    kind: 'ddl',
    writes: ['a', 'b', 'c', 'd'],
    reason: NOT_SELECT,
  },
  { sql: 'RENAME TABLE db.a TO db2.a', kind: 'ddl', writes: ['db.a', 'db2.a'], reason: NOT_SELECT },
  { sql: 'CREATE INDEX i ON t1 (a)', kind: 'ddl', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'CREATE UNIQUE INDEX i USING BTREE ON db.t1 (a, b)',
    kind: 'ddl',
    writes: ['db.t1'],
    reason: NOT_SELECT,
  },
  { sql: 'DROP INDEX i ON t1', kind: 'ddl', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'CREATE VIEW v AS SELECT * FROM t1',
    kind: 'ddl',
    reads: ['t1'],
    writes: ['v'],
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW v (a) AS SELECT a FROM t1 WITH CHECK OPTION',
    kind: 'ddl',
    reads: ['t1'],
    writes: ['v'],
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'ALTER VIEW v AS SELECT 1', kind: 'ddl', everything: true, reason: NOT_SELECT },
  {
    sql: 'DROP VIEW IF EXISTS v1, v2',
    kind: 'ddl',
    writes: ['v1', 'v2'],
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE TRIGGER tr BEFORE INSERT ON t1 FOR EACH ROW SET NEW.a = 1',
    kind: 'ddl',
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'DROP TRIGGER IF EXISTS tr', kind: 'ddl', everything: true, reason: NOT_SELECT },
  {
    sql: 'CREATE PROCEDURE p() BEGIN UPDATE t1 SET a = 1; END',
    kind: 'ddl',
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE FUNCTION f() RETURNS INT RETURN 1',
    kind: 'ddl',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'DROP PROCEDURE IF EXISTS p', kind: 'ddl', everything: true, reason: NOT_SELECT },
  { sql: 'CREATE DATABASE db', kind: 'ddl', everything: true, reason: NOT_SELECT },
  { sql: 'DROP DATABASE db', kind: 'ddl', everything: true, reason: NOT_SELECT },
  { sql: 'DROP SCHEMA IF EXISTS db', kind: 'ddl', everything: true, reason: NOT_SELECT },
  {
    sql: 'ALTER DATABASE db CHARACTER SET utf8mb4',
    kind: 'ddl',
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'CREATE SEQUENCE s1 START WITH 10 INCREMENT BY 5',
    kind: 'ddl',
    writes: ['s1'],
    reason: NOT_SELECT,
  },
  { sql: 'ALTER SEQUENCE s1 RESTART WITH 1', kind: 'ddl', writes: ['s1'], reason: NOT_SELECT },
  { sql: 'DROP SEQUENCE IF EXISTS s1, s2', kind: 'ddl', writes: ['s1', 's2'], reason: NOT_SELECT },
  {
    sql: 'CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t1',
    kind: 'ddl',
    everything: true,
    reason: NOT_SELECT,
  },
]);

run('transactions', [
  { sql: 'BEGIN', kind: 'begin', reason: NOT_SELECT },
  { sql: 'begin work', kind: 'begin', reason: NOT_SELECT },
  { sql: 'START TRANSACTION', kind: 'begin', reason: NOT_SELECT },
  { sql: 'START TRANSACTION READ ONLY', kind: 'begin', reason: NOT_SELECT },
  {
    sql: 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE',
    kind: 'begin',
    reason: NOT_SELECT,
  },
  { sql: 'COMMIT', kind: 'commit', reason: NOT_SELECT },
  { sql: 'COMMIT WORK AND NO CHAIN NO RELEASE', kind: 'commit', reason: NOT_SELECT },
  { sql: 'ROLLBACK', kind: 'rollback', reason: NOT_SELECT },
  { sql: 'ROLLBACK WORK AND CHAIN', kind: 'rollback', reason: NOT_SELECT },
  { sql: 'ROLLBACK TO SAVEPOINT sp1', kind: 'savepoint', reason: NOT_SELECT },
  { sql: 'ROLLBACK WORK TO sp1', kind: 'savepoint', reason: NOT_SELECT },
  { sql: 'SAVEPOINT sp1', kind: 'savepoint', reason: NOT_SELECT },
  { sql: 'RELEASE SAVEPOINT sp1', kind: 'savepoint', reason: NOT_SELECT },
  { sql: "XA START 'x'", kind: 'xa', reason: NOT_SELECT },
  { sql: "XA END 'x'", kind: 'xa', reason: NOT_SELECT },
  { sql: "XA PREPARE 'x'", kind: 'xa', reason: NOT_SELECT },
  { sql: "XA COMMIT 'x' ONE PHASE", kind: 'xa', reason: NOT_SELECT },
  { sql: "XA ROLLBACK 'x'", kind: 'xa', reason: NOT_SELECT },
  { sql: 'XA RECOVER', kind: 'xa', reason: NOT_SELECT },
  { sql: 'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE', kind: 'set', reason: NOT_SELECT },
  { sql: 'SET SESSION TRANSACTION READ ONLY', kind: 'set', reason: NOT_SELECT },
  {
    sql: 'BEGIN NOT ATOMIC UPDATE t1 SET a = 1; END',
    kind: 'other',
    everything: true,
    reason: NOT_SELECT,
  },
  // sql_mode=ORACLE: an anonymous block.
  {
    sql: 'BEGIN INSERT INTO t1 VALUES (1); END',
    kind: 'other',
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'lbl: BEGIN DELETE FROM t1; END lbl',
    kind: 'other',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'IF 1 THEN DELETE FROM t1; END IF', kind: 'other', everything: true, reason: NOT_SELECT },
]);

run('session statements', [
  { sql: 'SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci', kind: 'set', reason: NOT_SELECT },
  { sql: 'SET CHARACTER SET utf8', kind: 'set', reason: NOT_SELECT },
  { sql: 'SET @x = 1', kind: 'set', reason: NOT_SELECT },
  {
    sql: 'SET @x := (SELECT MAX(a) FROM t1), @y = 2',
    kind: 'set',
    reads: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: "SET SESSION sql_mode = 'ANSI_QUOTES', time_zone = '+00:00'",
    kind: 'set',
    reason: NOT_SELECT,
  },
  { sql: "SET @@session.time_zone = 'Europe/Paris'", kind: 'set', reason: NOT_SELECT },
  { sql: 'SET sql_select_limit = DEFAULT', kind: 'set', reason: NOT_SELECT },
  // A global setting may change every session's results (ft_boolean_syntax): it writes everything.
  { sql: 'SET GLOBAL max_connections = 200', kind: 'set', everything: true, reason: NOT_SELECT },
  {
    sql: 'SET @@global.ft_boolean_syntax = \'@ -><()~*:""&|\'',
    kind: 'set',
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'SET @x = 1, GLOBAL sql_mode = DEFAULT',
    kind: 'set',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'SET @x = my_func(1)', kind: 'set', everything: true, reason: NOT_SELECT },
  { sql: 'USE db', kind: 'use', reason: NOT_SELECT },
  { sql: 'USE `my db`', kind: 'use', reason: NOT_SELECT },
  { sql: 'SHOW TABLES', kind: 'show', reason: NOT_SELECT },
  { sql: 'SHOW CREATE TABLE t1', kind: 'show', reason: NOT_SELECT },
  { sql: "SHOW GLOBAL STATUS LIKE 'Qcache%'", kind: 'show', reason: NOT_SELECT },
  {
    sql: "SHOW TABLES WHERE f(Tables_in_db) = 'x'",
    kind: 'show',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'DESCRIBE t1', kind: 'show', reason: NOT_SELECT },
  { sql: 'DESC db.t1 a', kind: 'show', reason: NOT_SELECT },
  { sql: 'EXPLAIN SELECT * FROM t1 JOIN t2 USING (id)', kind: 'show', reason: NOT_SELECT },
  { sql: 'EXPLAIN FORMAT=JSON SELECT * FROM t1', kind: 'show', reason: NOT_SELECT },
  { sql: 'EXPLAIN EXTENDED UPDATE t1 SET a = 1', kind: 'show', reason: NOT_SELECT },
  {
    sql: 'EXPLAIN PARTITIONS INSERT INTO t1 (a, b) SELECT a, b FROM t2',
    kind: 'show',
    reason: NOT_SELECT,
  },
  { sql: 'EXPLAIN SELECT f(a) FROM t1', kind: 'show', everything: true, reason: NOT_SELECT },
  { sql: 'DESCRIBE SELECT * FROM t1', kind: 'show', reason: NOT_SELECT },
  { sql: "HELP 'SELECT'", kind: 'show', reason: NOT_SELECT },
  { sql: 'ANALYZE SELECT * FROM t1', kind: 'select', reads: ['t1'], reason: 'ANALYZE' },
  {
    sql: 'ANALYZE FORMAT=JSON UPDATE t1 SET a = 1',
    kind: 'update',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  { sql: 'ANALYZE TABLE t1', kind: 'other', reason: NOT_SELECT },
  {
    sql: 'SET STATEMENT max_statement_time=10 FOR SELECT * FROM t1',
    kind: 'select',
    reads: ['t1'],
    reason: 'SET STATEMENT',
  },
  {
    sql: 'SET STATEMENT sql_mode = DEFAULT, foreign_key_checks = 0 FOR DELETE FROM t1',
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    reason: NOT_SELECT,
  },
]);

run('statements whose writes the text does not tell', [
  { sql: 'CALL p(1)', kind: 'call', everything: true, reason: NOT_SELECT },
  { sql: 'EXECUTE stmt USING @a', kind: 'execute', everything: true, reason: NOT_SELECT },
  {
    sql: "EXECUTE IMMEDIATE 'DELETE FROM t1'",
    kind: 'execute',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: "PREPARE stmt FROM 'DELETE FROM t1'", kind: 'prepare', reason: NOT_SELECT },
  { sql: 'DEALLOCATE PREPARE stmt', kind: 'prepare', reason: NOT_SELECT },
  { sql: 'DROP PREPARE stmt', kind: 'prepare', reason: NOT_SELECT },
  { sql: "GRANT SELECT ON db.* TO 'u'@'h'", kind: 'grant', everything: true, reason: NOT_SELECT },
  {
    sql: 'REVOKE ALL PRIVILEGES ON *.* FROM u',
    kind: 'grant',
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: "CREATE USER 'u'@'%' IDENTIFIED BY 'p'",
    kind: 'grant',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'DROP USER IF EXISTS u', kind: 'grant', everything: true, reason: NOT_SELECT },
  { sql: 'RENAME USER a TO b', kind: 'grant', everything: true, reason: NOT_SELECT },
  { sql: "ALTER USER u IDENTIFIED BY 'x'", kind: 'grant', everything: true, reason: NOT_SELECT },
  {
    sql: "SET PASSWORD FOR u = PASSWORD('x')",
    kind: 'grant',
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'SET ROLE r', kind: 'grant', everything: true, reason: NOT_SELECT },
  { sql: 'SET DEFAULT ROLE r FOR u', kind: 'grant', everything: true, reason: NOT_SELECT },
  { sql: 'CREATE ROLE r', kind: 'grant', everything: true, reason: NOT_SELECT },
  { sql: 'FLUSH TABLES', kind: 'flush', everything: true, reason: NOT_SELECT },
  // The server's FLUSH QUERY CACHE only defragments: no result changes.
  { sql: 'FLUSH QUERY CACHE', kind: 'flush', reason: NOT_SELECT },
  { sql: 'FLUSH STATUS', kind: 'flush', reason: NOT_SELECT },
  { sql: 'RESET QUERY CACHE', kind: 'flush', everything: true, reason: NOT_SELECT },
  { sql: 'LOCK TABLES t1 READ', kind: 'lock', reads: ['t1'], reason: NOT_SELECT },
  {
    sql: 'LOCK TABLES t1 WRITE, t2 READ',
    kind: 'lock',
    reads: ['t1', 't2'],
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  {
    sql: 'LOCK TABLE t1 AS a READ LOCAL, db.t2 LOW_PRIORITY WRITE',
    kind: 'lock',
    reads: ['t1', 'db.t2'],
    writes: ['db.t2'],
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'UNLOCK TABLES', kind: 'unlock', reason: NOT_SELECT },
  { sql: 'HANDLER t1 OPEN AS h', kind: 'other', reads: ['t1'], reason: NOT_SELECT },
  { sql: 'HANDLER h READ `PRIMARY` FIRST WHERE a > 1', kind: 'other', reason: NOT_SELECT },
  { sql: 'HANDLER h CLOSE', kind: 'other', reason: NOT_SELECT },
  { sql: 'DO 1', kind: 'other', reason: NOT_SELECT },
  { sql: "DO SLEEP(0), GET_LOCK('x', 1)", kind: 'other', reason: NOT_SELECT },
  { sql: 'DO (SELECT COUNT(*) FROM t1)', kind: 'other', reads: ['t1'], reason: NOT_SELECT },
  { sql: 'DO my_func()', kind: 'other', everything: true, reason: NOT_SELECT },
  { sql: 'KILL QUERY 5', kind: 'other', reason: NOT_SELECT },
  { sql: 'CHECK TABLE t1', kind: 'other', reason: NOT_SELECT },
  { sql: 'CHECKSUM TABLE t1', kind: 'other', reason: NOT_SELECT },
  { sql: 'OPTIMIZE TABLE t1', kind: 'other', writes: ['t1'], reason: NOT_SELECT },
  {
    sql: 'REPAIR NO_WRITE_TO_BINLOG TABLE t1, t2',
    kind: 'other',
    writes: ['t1', 't2'],
    reason: NOT_SELECT,
  },
  { sql: "INSTALL SONAME 'ha_example'", kind: 'other', everything: true, reason: NOT_SELECT },
  { sql: 'SHUTDOWN', kind: 'other', everything: true, reason: NOT_SELECT },
  { sql: 'START SLAVE', kind: 'other', everything: true, reason: NOT_SELECT },
  { sql: 'FROBNICATE ALL THE THINGS', kind: 'other', everything: true, reason: NOT_SELECT },
]);

run('unparsable statements', [
  { sql: 'SELECT * FROM', kind: 'select', reason: 'unparsable' },
  { sql: 'SELECT * FROM t1 WHERE (a = 1', kind: 'select', reads: ['t1'], reason: 'unparsable' },
  { sql: "SELECT 'unterminated FROM t1", kind: 'select', reason: 'unparsable' },
  { sql: 'SELECT * FROM t1 JOIN JOIN t2', kind: 'select', reads: ['t1'], reason: 'unparsable' },
  { sql: 'SELECT f(1) FROM WHERE', kind: 'select', everything: true, reason: 'unparsable' },
  { sql: 'SHOW FROBS', kind: 'show', reason: NOT_SELECT },
  { sql: 'UPDATE SET a = 1', kind: 'update', everything: true, reason: NOT_SELECT },
  {
    sql: "DELETE FROM t1 WHERE a = 'unterminated",
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: 'INSERT INTO VALUES (1)', kind: 'insert', everything: true, reason: NOT_SELECT },
  {
    sql: 'WITH c AS (SELECT 1) FROBNICATE',
    kind: 'select',
    everything: true,
    reason: 'unparsable',
  },
  { sql: '', kind: 'other', reason: 'empty statement' },
  { sql: '/* only a comment */', kind: 'other', reason: 'empty statement' },
  { sql: ';', kind: 'other', reason: 'empty statement' },
]);

run('executable and versioned comments', [
  { sql: '/*!40001 SELECT * FROM t1 */', kind: 'select', reads: ['t1'], reason: null },
  { sql: 'SELECT * FROM t1 /*!50700 FOR UPDATE */', kind: 'select', reads: ['t1'], reason: null },
  {
    sql: 'SELECT * FROM t1 /*M!50700 FOR UPDATE */',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 /*!40101 FOR UPDATE */',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
  },
  {
    sql: 'SELECT * FROM t1 /*!100000 FOR UPDATE */',
    kind: 'select',
    reads: ['t1'],
    reason: 'locking read',
    options: { serverVersion: 101119 },
  },
  {
    sql: 'SELECT * FROM t1 /*!110000 FOR UPDATE */',
    kind: 'select',
    reads: ['t1'],
    reason: null,
    options: { serverVersion: 101119 },
  },
  {
    sql: 'SELECT * FROM t1 /*!100000 WHERE 1 */',
    kind: 'select',
    reads: ['t1'],
    reason: 'versioned comment, server version unknown',
  },
  {
    sql: 'DELETE FROM t1 /*!100000 WHERE 1 */',
    kind: 'delete',
    reads: ['t1'],
    writes: ['t1'],
    everything: true,
    reason: NOT_SELECT,
  },
  { sql: '/*!40101 SET NAMES utf8 */', kind: 'set', reason: NOT_SELECT },
  {
    sql: '/*!40000 ALTER TABLE t1 DISABLE KEYS */',
    kind: 'ddl',
    writes: ['t1'],
    reason: NOT_SELECT,
  },
  {
    sql: 'SELECT /*!STRAIGHT_JOIN*/ a FROM t1, t2',
    kind: 'select',
    reads: ['t1', 't2'],
    reason: null,
  },
]);

describe('other fields', () => {
  const info = (sql: string, options: Partial<ClassifyOptions> = {}): StatementInfo =>
    classify(sql, { ...DEFAULTS, ...options });

  test('sqlCache', () => {
    assert.equal(info('SELECT * FROM t1').sqlCache, 'default');
    assert.equal(info('SELECT SQL_CACHE * FROM t1').sqlCache, 'SQL_CACHE');
    assert.equal(info('SELECT SQL_NO_CACHE * FROM t1').sqlCache, 'SQL_NO_CACHE');
    assert.equal(
      info('SELECT * FROM t1 WHERE a IN (SELECT SQL_NO_CACHE a FROM t2)').sqlCache,
      'SQL_NO_CACHE',
    );
  });

  test('lockingRead', () => {
    assert.equal(info('SELECT * FROM t1 FOR UPDATE').lockingRead, true);
    assert.equal(info('SELECT * FROM t1 LOCK IN SHARE MODE').lockingRead, true);
    assert.equal(info('INSERT INTO t2 SELECT * FROM t1 FOR UPDATE').lockingRead, true);
    assert.equal(info('SELECT * FROM t1').lockingRead, false);
  });

  const commits: Array<[string, boolean]> = [
    ['CREATE TABLE t1 (a INT)', true],
    ['CREATE TEMPORARY TABLE t1 (a INT)', false],
    ['DROP TABLE t1', true],
    ['DROP TEMPORARY TABLE t1', false],
    ['ALTER TABLE t1 ADD b INT', true],
    ['TRUNCATE t1', true],
    ['RENAME TABLE a TO b', true],
    ['CREATE INDEX i ON t1 (a)', true],
    ['CREATE VIEW v AS SELECT 1', true],
    ['CREATE DATABASE d', true],
    ['BEGIN', true],
    ['START TRANSACTION', true],
    ['LOCK TABLES t1 READ', true],
    ['UNLOCK TABLES', true],
    ["GRANT ALL ON *.* TO 'u'", true],
    ['DROP USER u', true],
    ["SET PASSWORD = PASSWORD('x')", true],
    ['FLUSH PRIVILEGES', true],
    ['RESET QUERY CACHE', true],
    ['ANALYZE TABLE t1', true],
    ['OPTIMIZE TABLE t1', true],
    ['CHECK TABLE t1', true],
    ['SET autocommit = 1', true],
    ['SET @@autocommit = ON', true],
    ['SET SESSION autocommit = TRUE', true],
    ['SET autocommit = 0', false],
    ['SET autocommit = OFF', false],
    ['SET GLOBAL autocommit = 1', false],
    ['SET @@global.autocommit = 1', false],
    ['SET ROLE r', false],
    ['COMMIT', false],
    ['ROLLBACK', false],
    ['SAVEPOINT s', false],
    ["XA START 'x'", false],
    ['SELECT * FROM t1', false],
    ['INSERT INTO t1 VALUES (1)', false],
    ['UPDATE t1 SET a = 1', false],
    ['DELETE FROM t1', false],
    ["LOAD DATA INFILE 'f' INTO TABLE t1", false],
    ['SET NAMES utf8', false],
    ['USE db', false],
    ['SHOW TABLES', false],
  ];
  for (const [sql, commit] of commits) {
    test(`implicitCommit ${commit}: ${sql}`, () => assert.equal(info(sql).implicitCommit, commit));
  }

  test('temporary', () => {
    assert.equal(info('CREATE TEMPORARY TABLE t (a INT)').temporary, true);
    assert.equal(info('DROP TEMPORARY TABLE t').temporary, true);
    assert.equal(info('CREATE TABLE t (a INT)').temporary, false);
  });

  test('unknownFunctions', () => {
    assert.deepEqual(info('SELECT f(a), db.g(b), f(c), NOW() FROM t1').unknownFunctions, [
      'f',
      'db.g',
    ]);
    assert.deepEqual(info('SELECT ABS(a) FROM t1').unknownFunctions, []);
  });

  test('routineCalls: the unknown functions by name, as the server looks them up', () => {
    assert.deepEqual(info('SELECT db.f(a), `G`(b), h(c), ABS(d) FROM t1').routineCalls, [
      { schema: 'db', name: 'f' },
      { schema: null, name: 'G' },
      { schema: null, name: 'h' },
    ]);
    assert.deepEqual(info('SET @x = f(1), @y = f(2)').routineCalls, [{ schema: null, name: 'f' }]);
    assert.deepEqual(info('EXPLAIN SELECT f(1)').routineCalls, [{ schema: null, name: 'f' }]);
    // A name that is no routine's: unreadable.
    assert.equal(info('SELECT a.b.c(1)').routineCalls, null);
    assert.equal(info('SELECT 1; SELECT f(1)').routineCalls, null);
    // Gathered by the sweep of a statement that did not parse, qualified too.
    assert.deepEqual(info('SELECT db.f(1) FROM t WHERE').routineCalls, [
      { schema: 'db', name: 'f' },
    ]);
  });

  const functionOnlyWrites: Array<[string, boolean]> = [
    ["SELECT f('a') FROM t1", false],
    ["DO f('a')", false],
    ['UPDATE t1 SET a = f(a)', false],
    // Writes it cannot tell besides: a CALL, a sequence, a text that did not parse.
    ['CALL p(f(1))', true],
    ['SELECT f(1), NEXTVAL(s)', false],
    ['UPDATE t1 SET a = f(a) WHERE id = (', true],
    ['SELECT ABS(1)', false],
  ];
  for (const [sql, untold] of functionOnlyWrites) {
    test(`writesEverythingWithoutFunctions ${untold}: ${sql}`, () =>
      assert.equal(info(sql).writesEverythingWithoutFunctions, untold));
  }

  const ddlObjects: Array<[string, string | null]> = [
    ['CREATE TABLE t (a INT)', 'table'],
    ['CREATE OR REPLACE TABLE db.t SELECT 1 AS a', 'table'],
    ['ALTER TABLE t ADD COLUMN b INT', 'table'],
    ['DROP TABLE IF EXISTS t, u', 'table'],
    ['RENAME TABLE t TO u', 'table'],
    ['CREATE UNIQUE INDEX i ON t (a)', 'index'],
    ['DROP INDEX i ON t', 'index'],
    ['CREATE SEQUENCE s', 'sequence'],
    ['ALTER SEQUENCE s RESTART', 'sequence'],
    ['DROP SEQUENCE s', 'sequence'],
    ['CREATE VIEW v AS SELECT a FROM t', 'view'],
    ['DROP VIEW v', 'view'],
    ['CREATE TRIGGER g AFTER INSERT ON t FOR EACH ROW SET @x = 1', 'trigger'],
    // DDL whose effects the text does not show may change stored routines and events.
    ['CREATE PROCEDURE p() SELECT 1', null],
    ['CREATE OR REPLACE FUNCTION f() RETURNS INT RETURN 1', null],
    ['DROP PROCEDURE p', null],
    ['ALTER EVENT e DISABLE', null],
    ['CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t', null],
    ['DROP DATABASE db', null],
    ['DROP TRIGGER g', null],
    ['CREATE PACKAGE pk AS FUNCTION f() RETURNS INT; END', null],
    ['CREATE TABLE', null],
    ['RENAME USER a TO b', null],
    ['INSERT INTO t VALUES (1)', null],
    ['CREATE TABLE t (a INT); CREATE PROCEDURE p() SELECT 1', null],
  ];
  for (const [sql, object] of ddlObjects) {
    test(`ddlObject ${object}: ${sql}`, () => assert.equal(info(sql).ddlObject, object));
  }
});

describe('cache key text', () => {
  const key = (sql: string): string => classify(sql, DEFAULTS).keyText;

  test('a trace-id comment does not change the key, an executable comment does', () => {
    const plain = key('SELECT c FROM sbtest1 WHERE id=1');
    assert.equal(key('/* trace-id=4bf92f35 */ SELECT c FROM sbtest1 WHERE id=1'), plain);
    assert.equal(key("SELECT c FROM sbtest1 WHERE id=1 /*traceparent='00-4b-00'*/"), plain);
    assert.equal(key('SELECT c FROM sbtest1 WHERE id=1 -- app=billing'), plain);
    assert.equal(key('SELECT c FROM sbtest1 WHERE id=1;'), plain);
    assert.notEqual(key('/*! SELECT c FROM sbtest1 WHERE id=1 */'), plain);
    assert.notEqual(key('SELECT /*! SQL_NO_CACHE */ c FROM sbtest1 WHERE id=1'), plain);
    assert.notEqual(key('SELECT c FROM sbtest1 WHERE /* x */ id=1'), plain);
  });

  test('whitespace and case inside the statement are kept', () => {
    assert.equal(key('SELECT  c FROM t1'), 'SELECT  c FROM t1');
    assert.equal(key('select C from T1'), 'select C from T1');
  });
});

describe('several statements in one text', () => {
  test('classify() combines them and never caches', () => {
    const info = classify(
      'SELECT a FROM t1; INSERT INTO t2 VALUES (1); SELECT b FROM t3 FOR UPDATE',
      DEFAULTS,
    );
    assert.equal(info.multiStatement, true);
    assert.equal(info.kind, 'other');
    assert.equal(info.cacheable, false);
    assert.equal(info.notCacheableReason, 'multi-statement');
    assert.deepEqual(info.reads.map(name).sort(), ['t1', 't3']);
    assert.deepEqual(info.writes.map(name), ['t2']);
    assert.equal(info.lockingRead, true);
    assert.equal(info.writesEverything, false);
  });

  test('classifyAll() describes each, with its own key', () => {
    const all = classifyAll(
      '/* t */ SELECT a FROM t1; SELECT 2 FROM t2 -- x\n; CALL p()',
      DEFAULTS,
    );
    assert.deepEqual(
      all.map((info) => [info.kind, info.keyText, info.cacheable, info.writesEverything]),
      [
        ['select', 'SELECT a FROM t1', true, false],
        ['select', 'SELECT 2 FROM t2', true, false],
        ['call', 'CALL p()', false, true],
      ],
    );
    assert.equal(classify('/* t */ SELECT a FROM t1; CALL p()', DEFAULTS).writesEverything, true);
  });

  test('after a USE, or a SET where the rest may read otherwise, the writes are untold', () => {
    for (const [sql, untold] of [
      ['USE d2; UPDATE t1 SET a = 1', true],
      ['UPDATE t1 SET a = 1; USE d2', false],
      ["SET @a = 1; UPDATE t1 SET a = 'x'", false],
      ['SET sql_mode = ANSI_QUOTES; UPDATE "t1" SET a = 1', true],
      ["SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'a\\'; UPDATE t1 SET a = 1", true],
      ["SET NAMES sjis; UPDATE t1 SET a = 'é'", true],
      ['UPDATE t1 SET a = "x"; SET @a = 1', false],
    ] as const) {
      const info = classify(sql, DEFAULTS);
      assert.equal(info.writesEverything, untold, sql);
      assert.equal(info.writesEverythingWithoutFunctions, untold, sql);
    }
  });

  test('a text of data statements only: SELECT, INSERT, REPLACE, UPDATE, DELETE that tell their writes', () => {
    for (const [sql, dataOnly] of [
      ['UPDATE t1 SET a = 1 WHERE id = 1; UPDATE t1 SET a = 2 WHERE id = 2', true],
      [
        'INSERT INTO t1 VALUES (1); REPLACE INTO t2 VALUES (2); DELETE FROM t3; SELECT a FROM t1',
        true,
      ],
      ['SELECT a FROM t1 FOR UPDATE; SELECT 1', true],
      ['SELECT a FROM t1', true],
      // Anything else may make a table, lock one, prepare, or change the session's state.
      ['INSERT INTO t1 VALUES (1); CREATE TEMPORARY TABLE t2 (a INT)', false],
      ['UPDATE t1 SET a = 1; LOCK TABLES t1 READ', false],
      ['UPDATE t1 SET a = 1; CALL p()', false],
      ["UPDATE t1 SET a = 1; PREPARE s FROM 'SELECT 1'", false],
      ['UPDATE t1 SET a = 1; SET @a = 1', false],
      ['BEGIN; UPDATE t1 SET a = 1; COMMIT', false],
      ['USE d2; UPDATE t1 SET a = 1', false],
      // A stored function may do any of that; a statement not understood may be anything.
      ['UPDATE t1 SET a = f(1); SELECT 1', false],
      ['SELECT f(1)', false],
      ['UPDATE t1 SET a = 1; UPDATE t1 SET WHERE', false],
      ['BEGIN NOT ATOMIC UPDATE t1 SET a = 1; END', false],
      ['CREATE PROCEDURE p() BEGIN SELECT 1; END', false],
    ] as const) {
      assert.equal(classify(sql, DEFAULTS).dataOnly, dataOnly, sql);
    }
  });

  test('a followable text: data statements and SETs the probe reads back, as an init command', () => {
    for (const [sql, followable, dataOnly] of [
      ["SET NAMES utf8mb4; SET time_zone = '+00:00'", true, false],
      ['SET autocommit = 0; UPDATE t1 SET a = 1 WHERE id = 1', true, false],
      ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT 1', true, false],
      ['SET @a = (SELECT MAX(a) FROM t1); SET @b = 2', true, false],
      ['UPDATE t1 SET a = 1; DELETE FROM t2', true, true],
      ['SET @a = 1', true, false],
      // SET TRANSACTION is for the next transaction only: the probe cannot read it back.
      ['SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; SET @a = 1', false, false],
      // The proxy follows query_cache_type from the statement itself.
      ['SET SESSION query_cache_type = 0; SET @a = 1', false, false],
      ['SET @a = 1, query_cache_type = OFF; SELECT 1', false, false],
      // A stored function may do anything; so may SET PASSWORD or SET ROLE (not a plain SET).
      ['SET @a = f(1); SET @b = 2', false, false],
      ["SET PASSWORD = PASSWORD('x'); SET @a = 1", false, false],
      ['SET ROLE r1; SET @a = 1', false, false],
      // Anything else may make a table, lock one, prepare, or change the current database.
      ['SET @a = 1; CREATE TEMPORARY TABLE t2 (a INT)', false, false],
      ['SET @a = 1; LOCK TABLES t1 READ', false, false],
      ["SET @a = 1; PREPARE s FROM 'SELECT 1'", false, false],
      ['SET @a = 1; USE d2', false, false],
      ['BEGIN; SET @a = 1', false, false],
      // A SET that may change how the rest of the text reads (a double quote after it).
      ['SET sql_mode = \'ANSI_QUOTES\'; SELECT "a" FROM t1', false, false],
    ] as const) {
      const info = classify(sql, DEFAULTS);
      assert.equal(info.followable, followable, sql);
      assert.equal(info.dataOnly, dataOnly, sql);
    }
  });

  test('a stored program or a block with semicolons inside is taken as several statements', () => {
    for (const [sql, several] of [
      ['CREATE PROCEDURE p() SELECT 1', false],
      ['CREATE PROCEDURE p() SELECT 1;;', false],
      ['CREATE PROCEDURE p() BEGIN SELECT 1; END', true],
      ['CREATE PROCEDURE p() SELECT 1; CREATE TEMPORARY TABLE t (a INT)', true],
      ['CREATE TRIGGER g AFTER INSERT ON t FOR EACH ROW SET @x = 1', false],
      ['BEGIN NOT ATOMIC SELECT 1; END', true],
      ['IF 1 THEN SELECT 1; END IF', true],
      ["CREATE PROCEDURE p() SELECT ';'", false],
    ] as const) {
      assert.equal(classify(sql, DEFAULTS).multiStatement, several, sql);
    }
  });

  test('semicolons in strings, identifiers and comments do not split', () => {
    assert.equal(classifyAll("SELECT ';' FROM t1", DEFAULTS).length, 1);
    assert.equal(classifyAll('SELECT `a;b` FROM t1 /* ; */ -- ;', DEFAULTS).length, 1);
    assert.equal(classify('SELECT a FROM t1;;  ', DEFAULTS).multiStatement, false);
    assert.equal(classify("SELECT ';' FROM t1; SELECT 1", DEFAULTS).multiStatement, true);
  });

  test('BEGIN ends at its semicolon, a block does not', () => {
    assert.deepEqual(
      classifyAll('BEGIN; UPDATE t1 SET a = 1; COMMIT', DEFAULTS).map((info) => info.kind),
      ['begin', 'update', 'commit'],
    );
    assert.deepEqual(
      classifyAll('BEGIN WORK; COMMIT', DEFAULTS).map((info) => info.kind),
      ['begin', 'commit'],
    );
    const block = classifyAll('BEGIN UPDATE t1 SET a = 1; END; SELECT 1', DEFAULTS);
    assert.equal(block.length, 1);
    assert.equal(block[0]!.writesEverything, true);
  });

  test('a stored program keeps its semicolons', () => {
    const all = classifyAll(
      'CREATE PROCEDURE p() BEGIN SELECT 1; DELETE FROM t1; END; DROP TABLE t9',
      DEFAULTS,
    );
    assert.equal(all.length, 1);
    assert.equal(all[0]!.writesEverything, true);
    // A table named like a routine kind does not count as one.
    assert.equal(classifyAll('CREATE TABLE event (a INT); DROP TABLE t9', DEFAULTS).length, 2);
  });

  test('an empty text is one empty statement', () => {
    const all = classifyAll('  ', DEFAULTS);
    assert.equal(all.length, 1);
    assert.equal(all[0]!.notCacheableReason, 'empty statement');
  });
});

describe('point access: the rows a statement is bounded to by one column’s value', () => {
  /**
   * [column, value] of each candidate (`?N` for the Nth parameter), and the assigned columns;
   * null for no point access.
   */
  const pointOf = (sql: string): [Array<[string, string]>, string[]] | null => {
    const point = classify(sql, DEFAULTS).point;
    return point === null
      ? null
      : [
          point.candidates.map((candidate) => [
            candidate.column,
            candidate.value ?? `?${candidate.parameter}`,
          ]),
          point.assigned,
        ];
  };

  test('a join: each qualified conjunct bounds the table it names, by name or alias', () => {
    const joinOf = (sql: string): unknown => {
      const point = classify(sql, DEFAULTS).point;
      return point === null
        ? null
        : [
            point.joined,
            point.candidates.map((candidate) => [
              candidate.table,
              candidate.column,
              candidate.value,
            ]),
            point.rowPerMatch,
          ];
    };
    const tu = [
      { schema: null, name: 't' },
      { schema: null, name: 'u' },
    ];
    for (const [sql, expected] of [
      ['SELECT c FROM t JOIN u ON u.id = t.id WHERE t.id = 5', [tu, [[0, 'id', '5']], true]],
      ['SELECT c FROM t, u WHERE t.id = 5 AND u.id = t.k', [tu, [[0, 'id', '5']], true]],
      [
        'SELECT * FROM t AS x LEFT OUTER JOIN u y USING (id) WHERE y.id = 5 AND x.k IN (1, 2)',
        [
          tu,
          [
            [1, 'id', '5'],
            [0, 'k', '1'],
            [0, 'k', '2'],
          ],
          false,
        ],
      ],
      [
        "SELECT * FROM db.T NATURAL RIGHT JOIN u STRAIGHT_JOIN v ON v.a = u.a WHERE t.id = '7' AND v.id = 8",
        [
          [{ schema: 'db', name: 't' }, ...tu.slice(1), { schema: null, name: 'v' }],
          [
            [0, 'id', "'7"],
            [2, 'id', '8'],
          ],
          true,
        ],
      ],
      [
        'SELECT COUNT(*) FROM t INNER JOIN u ON u.id = t.id AND u.z BETWEEN 1 AND 3 CROSS JOIN w WHERE u.id = 9',
        [[...tu, { schema: null, name: 'w' }], [[1, 'id', '9']], false],
      ],
    ] as const) {
      assert.deepEqual(joinOf(sql), expected, sql);
    }
  });

  test('reads and writes bounded by a top-level `column = integer`', () => {
    for (const [sql, expected] of [
      ['SELECT c FROM sbtest1 WHERE id=100301', [[['id', '100301']], []]],
      ['SELECT c FROM sbtest1 WHERE id = 007 LIMIT 1', [[['id', '7']], []]],
      // A quoted string: a quote, then its characters (keyValueOf tells what row it names).
      ["SELECT c FROM sbtest1 WHERE id = '007'", [[['id', "'007"]], []]],
      ['SELECT c FROM sbtest1 WHERE id = "12"', [[['id', "'12"]], []]],
      ["DELETE FROM t WHERE id = '5'", [[['id', "'5"]], []]],
      ["SELECT c FROM t WHERE id = ''", [[['id', "'"]], []]],
      ["SELECT c FROM t WHERE id = '-5'", [[['id', "'-5"]], []]],
      ["SELECT c FROM t WHERE name = 'Ab-c_1.x:Y'", [[['name', "'Ab-c_1.x:Y"]], []]],
      ["SELECT c FROM t WHERE id = '1234567890123456'", [[['id', "'1234567890123456"]], []]],
      // A hex literal: `x`, then its digits in lowercase, an odd number of 0x's given a leading
      // zero as the server reads it (keyValueOf: only a column of bytes takes it).
      ["SELECT c FROM t WHERE id = X'0aFF'", [[['id', 'x0aff']], []]],
      ["SELECT c FROM t WHERE id = x''", [[['id', 'x']], []]],
      ['SELECT c FROM t WHERE id = 0x5', [[['id', 'x05']], []]],
      ['SELECT c FROM t WHERE id = 0xABcd', [[['id', 'xabcd']], []]],
      [
        "INSERT INTO t (id, v) VALUES (X'00ff', 1)",
        [
          [
            ['id', 'x00ff'],
            ['v', '1'],
          ],
          [],
        ],
      ],
      ['SELECT c FROM t AS x WHERE x.id = 5 AND k > 3 ORDER BY c', [[['id', '5']], []]],
      ['SELECT c FROM t x WHERE k > 3 && x.id = 5 GROUP BY c', [[['id', '5']], []]],
      ['SELECT c FROM db.t WHERE `id` = 5 FOR UPDATE', [[['id', '5']], []]],
      [
        'SELECT c FROM t WHERE a = 1 AND b = 2',
        [
          [
            ['a', '1'],
            ['b', '2'],
          ],
          [],
        ],
      ],
      ['UPDATE sbtest1 SET k=k+1 WHERE id=100804', [[['id', '100804']], ['k']]],
      [
        "UPDATE t SET c = 'a', t.d = CONCAT(c, 'b') WHERE id = 5 LIMIT 1",
        [[['id', '5']], ['c', 'd']],
      ],
      ['UPDATE LOW_PRIORITY IGNORE t SET id = 9 WHERE id = 5', [[['id', '5']], ['id']]],
      ['DELETE FROM sbtest1 WHERE id=99572', [[['id', '99572']], []]],
      ['DELETE QUICK FROM t WHERE id = 5 ORDER BY id LIMIT 1', [[['id', '5']], []]],
      [
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (99572, 99553, '196', '66')",
        [
          [
            ['id', '99572'],
            ['k', '99553'],
            ['c', "'196"],
            ['pad', "'66"],
          ],
          [],
        ],
      ],
      [
        'INSERT IGNORE INTO t (v, id) VALUE (1, 0005) RETURNING id',
        [
          [
            ['v', '1'],
            ['id', '5'],
          ],
          [],
        ],
      ],
      ['INSERT INTO t (id, v) VALUES (CONCAT(1, 2), 1)', [[['v', '1']], []]],
      // The SET form: a value alone is a candidate, an expression is not.
      [
        "INSERT INTO t SET id = 5, v = 'a'",
        [
          [
            ['id', '5'],
            ['v', "'a"],
          ],
          [],
        ],
      ],
      ['INSERT LOW_PRIORITY t SET t.k = 7 + 1, id = 0009 RETURNING id', [[['id', '9']], []]],
      // A prepared statement's parameters: which one binds the value, counted over the text.
      ['SELECT c FROM sbtest1 WHERE id=?', [[['id', '?0']], []]],
      ['SELECT c FROM t WHERE k > ? AND id = ? LIMIT ?', [[['id', '?1']], []]],
      ["SELECT c FROM t WHERE c = '?' AND id = ? /* ? */", [[['id', '?0']], []]],
      ['UPDATE sbtest1 SET c=? WHERE id=?', [[['id', '?1']], ['c']]],
      ['DELETE FROM sbtest1 WHERE id=?', [[['id', '?0']], []]],
      [
        'INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)',
        [
          [
            ['id', '?0'],
            ['k', '?1'],
            ['c', '?2'],
            ['pad', '?3'],
          ],
          [],
        ],
      ],
      ['INSERT INTO t (c, id) VALUES (CONCAT(?, ?), ?)', [[['id', '?2']], []]],
    ] as const) {
      assert.deepEqual(pointOf(sql), expected, sql);
    }
  });

  test('the row a value names: an integer column’s number, a string column’s folded string, a column of bytes’ hex', () => {
    const int = 2 ** 31 - 1;
    const { INTEGER, TEXT, BYTES, FIXED_BYTES } = KeyKind;
    for (const [value, kind, max, expected] of [
      ['5', INTEGER, int, '5'],
      ["'007", INTEGER, int, '7'],
      ["'", INTEGER, int, null],
      ["'-5", INTEGER, int, null],
      ["'5.0", INTEGER, int, null],
      ["'abc", INTEGER, int, null],
      ["'1234567890123456", INTEGER, Number.MAX_SAFE_INTEGER, null],
      ['128', INTEGER, 127, null],
      // A hex literal is a number to an integer column (X'35' is 53), bytes to a string column.
      ['x35', INTEGER, int, null],
      ['x35', TEXT, 20, null],
      // A number compared with strings compares as a number ('5', '05' and '5.0' are all 5).
      ['5', TEXT, 20, null],
      ["'5", TEXT, 20, '5'],
      ["'05", TEXT, 20, '05'],
      ["'Ab-C_1.x:Y", TEXT, 20, 'abc1xy'],
      ["'", TEXT, 20, ''],
      // Longer than the column: an INSERT of it would store it cut short.
      ["'abcde", TEXT, 5, 'abcde'],
      ["'abcdef", TEXT, 5, null],
      // Bytes: exact (no case folded, nothing dropped), in hex; a number compares as a number.
      ["'Ab-1", BYTES, 10, '41622d31'],
      ["'ab", BYTES, 10, '6162'],
      ['x6162', BYTES, 10, '6162'],
      ['x', BYTES, 10, ''],
      ['5', BYTES, 10, null],
      ["'abc", BYTES, 2, null],
      ['x616263', BYTES, 2, null],
      // BINARY(n) stores a shorter value padded with zero bytes.
      ["'ab", FIXED_BYTES, 4, '61620000'],
      ['x61620000', FIXED_BYTES, 4, '61620000'],
      ['x6162000000', FIXED_BYTES, 4, null],
    ] as const) {
      assert.equal(keyValueOf(value, kind, max), expected, `${value} (kind ${kind})`);
    }
  });

  test('anything else is bounded to no value', () => {
    for (const sql of [
      // Not a plain conjunction, or not a plain comparison with a plain integer.
      'SELECT c FROM t WHERE id = 5 OR k = 3',
      'SELECT c FROM t WHERE id = 5 XOR k = 3',
      'SELECT c FROM t WHERE id = 5 || k = 3',
      'SELECT c FROM t WHERE k BETWEEN 1 AND 3 AND id = 5',
      'SELECT c FROM t WHERE CASE WHEN a THEN 1 END AND id = 5',
      'SELECT c FROM t WHERE @a := 1 AND id = 5',
      'SELECT c FROM t WHERE id = 5 + 1',
      'SELECT c FROM t WHERE id = 5 IS TRUE',
      'SELECT c FROM t WHERE NOT id = 5',
      'SELECT c FROM t WHERE (id = 5)',
      'SELECT c FROM t WHERE id = 5.0',
      'SELECT c FROM t WHERE id = 5e0',
      // A string of other characters than key-text.ts names rows by, with a prefix other than
      // X, or a hex literal the server refuses (an odd number of digits in X'…').
      "SELECT c FROM t WHERE id = '5 '",
      "SELECT c FROM t WHERE id = 'a b'",
      "SELECT c FROM t WHERE id = 'café'",
      "SELECT c FROM t WHERE id = 'it''s'",
      "SELECT c FROM t WHERE id = 'a\\_'",
      "SELECT c FROM t WHERE id = 'a@b'",
      `SELECT c FROM t WHERE id = '${'a'.repeat(256)}'`,
      "SELECT c FROM t WHERE id = X'355'",
      "SELECT c FROM t WHERE id = X'3G'",
      `SELECT c FROM t WHERE id = X'${'ab'.repeat(256)}'`,
      'SELECT c FROM t WHERE id = 0x',
      "SELECT c FROM t WHERE id = _latin1'5'",
      "SELECT c FROM t WHERE id = N'5'",
      "SELECT c FROM t WHERE id = '5' '6'",
      'SELECT c FROM t WHERE id = -5',
      'SELECT c FROM t WHERE id <=> 5',
      'SELECT c FROM t WHERE id = ? + 1',
      'SELECT c FROM t WHERE id = -?',
      'SELECT c FROM t WHERE id = ? OR k = ?',
      'SELECT c FROM t WHERE id = 1234567890123456',
      'SELECT c FROM t WHERE u.id = 5',
      // A subquery; a join whose conjuncts name no one table, or whose FROM is not plain.
      'SELECT (SELECT 1 FROM u) FROM t WHERE id = 5',
      'SELECT c FROM t JOIN u ON u.id = t.id WHERE id = 5',
      'SELECT c FROM t a JOIN t b ON a.id = b.id WHERE a.id = 5',
      // Aliases swapped with the names: `c` is both the first table's alias and the second's name.
      'SELECT * FROM o c JOIN c o ON o.id = c.cid WHERE c.id = 5',
      'SELECT c FROM t JOIN (u, v) ON u.id = t.id WHERE t.id = 5',
      'SELECT c FROM t JOIN u FORCE INDEX (k) ON u.id = t.id WHERE t.id = 5',
      'SELECT c FROM t JOIN u ON u.id = t.id WHERE t.id = 5 OR u.id = 6',
      'SELECT c FROM t JOIN (SELECT 1 AS id) d ON d.id = t.id WHERE t.id = 5',
      'SELECT c FROM t WHERE id = 5 AND k IN (SELECT k FROM t)',
      'SELECT c FROM t WHERE id = 5 UNION SELECT c FROM t WHERE id = 6',
      'SELECT c FROM t PARTITION (p0) WHERE id = 5',
      'SELECT c FROM t FORCE INDEX (k) WHERE id = 5',
      'WITH x AS (SELECT 1) SELECT c FROM t WHERE id = 5',
      // Writes of several rows or tables, or of what cannot be bounded.
      'UPDATE t SET v = 1',
      'UPDATE t, u SET t.v = 1 WHERE t.id = 5',
      'UPDATE t JOIN u ON u.id = t.id SET t.v = 1 WHERE t.id = 5',
      'UPDATE t SET v = f(1) WHERE id = 5',
      'DELETE t FROM t WHERE id = 5',
      'DELETE FROM t USING t JOIN u WHERE t.id = 5',
      'INSERT INTO t (id, v) VALUES (5, 1), (6, 2)',
      'INSERT INTO t VALUES (5, 1)',
      'INSERT INTO t (id, v) SELECT 5, 1',
      // Several statements, or one the classifier could not read.
      'UPDATE t SET v = 1 WHERE id = 5; SELECT 1',
      'SELECT c FROM t WHERE id = 5 AND',
    ]) {
      assert.equal(pointOf(sql), null, sql);
    }
  });

  test('bounded by `column IN (integer, …)`: each value a candidate', () => {
    for (const [sql, expected] of [
      [
        'SELECT c FROM t WHERE id IN (1, 2)',
        [
          [
            ['id', '1'],
            ['id', '2'],
          ],
          [],
        ],
      ],
      [
        'DELETE FROM t WHERE id IN (1, 2, 03)',
        [
          [
            ['id', '1'],
            ['id', '2'],
            ['id', '3'],
          ],
          [],
        ],
      ],
      [
        'UPDATE t SET c = 1 WHERE k = 5 AND t.id IN (7)',
        [
          [
            ['k', '5'],
            ['id', '7'],
          ],
          ['c'],
        ],
      ],
    ] as const) {
      assert.deepEqual(pointOf(sql), expected, sql);
      assert.equal(classify(sql, DEFAULTS).point?.inList, true, sql);
    }
    assert.equal(classify('SELECT c FROM t WHERE id = 1', DEFAULTS).point?.inList, false);
    // Placeholders: each execution binds the list's values, counted across the whole text.
    for (const [sql, expected] of [
      [
        'SELECT c FROM t WHERE c <> ? AND id IN (?, ?, ?)',
        [
          ['id', '?1'],
          ['id', '?2'],
          ['id', '?3'],
        ],
      ],
      [
        'DELETE FROM t WHERE id IN (1, ?)',
        [
          ['id', '1'],
          ['id', '?0'],
        ],
      ],
    ] as const) {
      assert.deepEqual(pointOf(sql)?.[0], expected, sql);
      assert.equal(classify(sql, DEFAULTS).point?.inList, true, sql);
    }
    for (const sql of [
      // An expression, NOT IN, a list cut short or not closed where the conjunct ends.
      'DELETE FROM t WHERE id IN (1, 2 + 1)',
      'DELETE FROM t WHERE id NOT IN (1, 2)',
      'DELETE FROM t WHERE id IN (1, )',
      'DELETE FROM t WHERE id IN (1, 2) + 0',
      `DELETE FROM t WHERE id IN (${Array.from({ length: 300 }, (_, i) => i + 1).join(', ')})`,
    ]) {
      assert.equal(pointOf(sql), null, sql);
    }
  });

  test('upserts: REPLACE and ON DUPLICATE KEY UPDATE, with the columns the update assigns', () => {
    for (const [sql, expected] of [
      [
        'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE v = 2',
        [
          [
            ['id', '5'],
            ['v', '1'],
          ],
          ['v'],
        ],
      ],
      [
        'INSERT t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v), t.w = (w + 1) RETURNING id',
        [
          [
            ['id', '?0'],
            ['v', '?1'],
          ],
          ['v', 'w'],
        ],
      ],
      [
        'INSERT INTO t (id) VALUES (5) ON DUPLICATE KEY UPDATE id = id + 10',
        [[['id', '5']], ['id']],
      ],
      [
        "REPLACE INTO t (id, v) VALUES (5, 'a')",
        [
          [
            ['id', '5'],
            ['v', "'a"],
          ],
          [],
        ],
      ],
      [
        "REPLACE LOW_PRIORITY t (v, id) VALUES ('a', ?)",
        [
          [
            ['v', "'a"],
            ['id', '?0'],
          ],
          [],
        ],
      ],
      [
        "REPLACE INTO t SET v = 'a', id = 5",
        [
          [
            ['v', "'a"],
            ['id', '5'],
          ],
          [],
        ],
      ],
      [
        'INSERT INTO t SET id = ?, v = ? ON DUPLICATE KEY UPDATE v = VALUES(v)',
        [
          [
            ['id', '?0'],
            ['v', '?1'],
          ],
          ['v'],
        ],
      ],
    ] as const) {
      assert.deepEqual(pointOf(sql), expected, sql);
      const point = classify(sql, DEFAULTS).point!;
      assert.equal(point.upsert, true, sql);
      assert.equal(point.insert, true, sql);
    }
    // Several rows: the union of their keys, as an IN list; a column only where each row has one.
    for (const [sql, expected] of [
      [
        "REPLACE INTO t (id, v) VALUES (5, 'a'), (6, 'b')",
        [
          ['id', '5'],
          ['id', '6'],
          ['v', "'a"],
          ['v', "'b"],
        ],
      ],
      [
        'INSERT INTO t (v, id) VALUES (1, ?), (NULL, ?), (3, ?) ON DUPLICATE KEY UPDATE v = v + 1',
        [
          ['id', '?0'],
          ['id', '?1'],
          ['id', '?2'],
        ],
      ],
    ] as const) {
      assert.deepEqual(pointOf(sql)?.[0], expected, sql);
      assert.equal(classify(sql, DEFAULTS).point?.inList, true, sql);
    }
    for (const sql of [
      // A row's key not a plain integer (nor `v`'s strings, with their spaces); a row of the
      // wrong length; rows of a plain INSERT, which only adds rows.
      "REPLACE INTO t (id, v) VALUES (5, 'a a'), (NULL, 'b b')",
      "REPLACE INTO t (id, v) VALUES (5, 'a a'), (2 + 4, 'b b')",
      "REPLACE INTO t (id, v) VALUES (5, 'a'), (6)",
      "REPLACE INTO t (id, v) VALUES (5, 'a'),",
      "INSERT INTO t (id, v) VALUES (5, 'a'), (6, 'b')",
    ]) {
      assert.equal(pointOf(sql), null, sql);
    }
    for (const sql of [
      'INSERT INTO t (id, v) VALUES (5, 1)',
      'UPDATE t SET v = 1 WHERE id = 5',
      'DELETE FROM t WHERE id = 5',
      'SELECT v FROM t WHERE id = 5',
    ]) {
      assert.equal(classify(sql, DEFAULTS).point?.upsert, false, sql);
    }
    for (const sql of [
      // No column list, a subquery, an update clause cut short or unreadable.
      "REPLACE INTO t VALUES (5, 'a')",
      "REPLACE INTO t (id, v) SELECT 5, 'a'",
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE v = (SELECT 2)',
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE',
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE v =',
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE v = 2,',
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE UPDATE v = 2',
      'INSERT INTO t (id, v) VALUES (5, 1) ON DUPLICATE KEY UPDATE u.v = 2',
      'INSERT INTO t SET id = 5, ON DUPLICATE KEY UPDATE v = 2',
      'INSERT INTO t SET u.id = 5 ON DUPLICATE KEY UPDATE v = 2',
      'INSERT INTO t SET id = 5 ON DUPLICATE KEY v = 2',
    ]) {
      assert.equal(pointOf(sql), null, sql);
    }
  });

  test('a point SELECT returns one row per matching row unless it aggregates or groups', () => {
    for (const [sql, expected] of [
      ['SELECT c FROM t WHERE id = 5', true],
      ['SELECT DISTINCT c, pad FROM t WHERE id = 5 AND k > 3 ORDER BY c LIMIT 1', true],
      ['SELECT * FROM t AS x WHERE x.id = 5', true],
      // An aggregate answers one row over no row; HAVING can turn that around.
      ['SELECT COUNT(*) FROM t WHERE id = 5', false],
      ['SELECT MAX(c) FROM t WHERE id = 5 HAVING MAX(c) IS NULL', false],
      ['SELECT c FROM t WHERE id = 5 GROUP BY c', false],
      ['SELECT c, ROW_NUMBER() OVER w FROM t WHERE id = 5 WINDOW w AS (ORDER BY c)', false],
      // Any call in the select list counts, aggregate or not.
      ['SELECT CONCAT(c, pad) FROM t WHERE id = 5', false],
    ] as const) {
      assert.equal(classify(sql, DEFAULTS).point?.rowPerMatch, expected, sql);
    }
    assert.equal(classify('UPDATE t SET c = 1 WHERE id = 5', DEFAULTS).point?.rowPerMatch, false);
  });
});

describe('SELECTs whose result rows are rows read from their table', () => {
  // A result with a row then shows InnoDB read one, and took the transaction's snapshot.
  test('one SELECT of one table, no aggregate, group, derived table, join, subquery or set operation', () => {
    for (const [sql, expected] of [
      ['SELECT c FROM t WHERE id = 5', true],
      ['SELECT * FROM t ORDER BY id', true],
      ['SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100', true],
      ['SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c', true],
      ['SELECT a.c FROM t AS a WHERE a.id IN (1, 2) LIMIT 1', true],
      ['SELECT c FROM db.t FORCE INDEX (PRIMARY) WHERE (id = 1 OR id = 2)', true],
      // Its result may have no row: what the reply shows, not the statement, says it read one.
      ['SELECT * FROM t WHERE 1=0', true],
      // An aggregate answers a row over no row read.
      ['SELECT COUNT(*) FROM t WHERE 1=0', false],
      ['SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100', false],
      ['SELECT c FROM t GROUP BY c', false],
      ['SELECT c FROM t HAVING c > 0', false],
      ['SELECT CONCAT(c, pad) FROM t', false],
      ['SELECT * FROM (SELECT 1 AS one) AS d', false],
      ['SELECT * FROM (SELECT * FROM t) AS d', false],
      ['SELECT c FROM t WHERE id = 1 UNION SELECT 2', false],
      ['SELECT c FROM t WHERE id = 1 EXCEPT SELECT c FROM t WHERE id = 2', false],
      ['SELECT c FROM t INTERSECT SELECT c FROM t', false],
      ['SELECT a.c FROM t a JOIN u b ON a.id = b.id', false],
      ['SELECT c FROM t WHERE id IN (SELECT id FROM u)', false],
      ['SELECT c FROM t LEFT JOIN (SELECT 1 AS one) AS d ON 1=0', true],
      ['SELECT c FROM t RIGHT JOIN (SELECT 1 AS one) AS d ON 1=0', false],
      ['SELECT 1 FROM DUAL LEFT JOIN t ON 1=0', false],
      [
        "SELECT c FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) AS j LEFT JOIN t ON 1=0",
        false,
      ],
      ['SELECT 1', false],
      ['UPDATE t SET c = 1 WHERE id = 5', false],
      ['SELECT c FROM t; SELECT c FROM t', false],
    ] as const) {
      assert.equal(classify(sql, DEFAULTS).rowsReadFromTable, expected, sql);
    }
  });
});

describe('INSERTs that only add rows', () => {
  test('INSERT in all its forms, but no ON DUPLICATE KEY UPDATE, REPLACE or untold writes', () => {
    for (const [sql, expected] of [
      ["INSERT INTO t (id, v) VALUES (1, 'a'), (2, 'b')", true],
      ["INSERT INTO t (v) VALUES ('a')", true],
      ["INSERT IGNORE INTO t SET v = 'a'", true],
      ['INSERT INTO t (id, v) SELECT id + 10, v FROM u WHERE id < 3', true],
      ["INSERT LOW_PRIORITY t VALUES (NULL, 'a') RETURNING id", true],
      ["INSERT INTO t (id, v) VALUES (1, 'a') ON DUPLICATE KEY UPDATE v = 'b'", false],
      ["REPLACE INTO t (id, v) VALUES (1, 'a')", false],
      // A column named like the clause's word: taken as the clause (no harm, a table write).
      ['INSERT INTO t (duplicate) VALUES (1)', false],
      // A stored function may write anything; two statements; a statement that is no INSERT.
      ["INSERT INTO t (v) VALUES (f('a'))", false],
      ["INSERT INTO t (v) VALUES ('a'); INSERT INTO u (w) VALUES (1)", false],
      ["UPDATE t SET v = 'a' WHERE id = 1", false],
      ["INSERT INTO t (v) VALUES ('a') /*!999999 , ('b') */", false],
    ] as const) {
      assert.equal(classify(sql, DEFAULTS).addsRowsOnly, expected, sql);
    }
  });
});

describe('robustness', () => {
  const WRITING_KINDS = new Set<StatementKind>([
    'insert',
    'replace',
    'update',
    'delete',
    'truncate',
    'load',
    'ddl',
    'call',
    'execute',
    'grant',
    'flush',
  ]);

  /** The invariants the cache relies on, whatever the text. */
  function checkInvariants(sql: string): void {
    for (const info of [classify(sql, DEFAULTS), ...classifyAll(sql, DEFAULTS)]) {
      if (WRITING_KINDS.has(info.kind)) {
        assert.ok(info.writes.length > 0 || info.writesEverything, `${info.kind} writes: ${sql}`);
      }
      if (info.cacheable) {
        assert.equal(info.kind, 'select', sql);
        assert.ok(info.reads.length > 0, sql);
        assert.equal(info.writesEverything, false, sql);
        assert.deepEqual(info.writes, [], sql);
        assert.equal(info.multiStatement, false, sql);
      }
      assert.equal(info.cacheable, info.notCacheableReason === null, sql);
    }
  }

  /** A small deterministic generator (LCG), so that failures reproduce. */
  function generator(seed: number): (n: number) => number {
    let state = seed >>> 0;
    return (n) => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state % n;
    };
  }

  const STARTS = [
    'SELECT',
    'WITH c AS (SELECT 1)',
    'INSERT INTO',
    'REPLACE',
    'UPDATE',
    'DELETE',
    'DELETE FROM',
    'TRUNCATE',
    'LOAD DATA INFILE',
    'CREATE TABLE',
    'CREATE VIEW',
    'ALTER TABLE',
    'DROP TABLE',
    'RENAME TABLE',
    'LOCK TABLES',
    'SET',
    'CALL',
    'EXPLAIN',
    'BEGIN',
    '(',
    'DO',
    'GRANT',
  ];
  const PIECES = [
    '*',
    't1',
    'db.t2',
    '`q t`',
    'a',
    'b.c',
    '1',
    "'s'",
    '"d"',
    '@x',
    '@@y',
    '?',
    '(',
    ')',
    ',',
    '=',
    '+',
    '-',
    '--',
    '-- c\n',
    '#c\n',
    '/* c */',
    '/*! ',
    ' */',
    '/*!50700 x */',
    ';',
    'FROM',
    'WHERE',
    'JOIN',
    'LEFT',
    'ON',
    'USING',
    'AS',
    'SET',
    'VALUES',
    'SELECT',
    'UNION',
    'ORDER BY',
    'GROUP BY',
    'LIMIT',
    'FOR UPDATE',
    'INTO',
    'IN',
    'EXISTS',
    'NOW()',
    'f(1)',
    'COUNT(*)',
    'LEFT(a, 1)',
    'NEXT VALUE FOR s',
    'CASE',
    'WHEN',
    'THEN',
    'END',
    'DUAL',
    'WITH',
    'RECURSIVE',
    'TO',
    'WRITE',
    'READ',
    'PARTITION',
    'FOR SYSTEM_TIME',
    'ALL',
    'TABLE',
    'IF',
  ];

  test('random token soup never throws and keeps the invariants', () => {
    const next = generator(20_240_601);
    for (let round = 0; round < 4000; round++) {
      const parts = [STARTS[next(STARTS.length)]!];
      const length = 1 + next(14);
      for (let i = 0; i < length; i++) parts.push(PIECES[next(PIECES.length)]!);
      checkInvariants(parts.join(next(4) === 0 ? '' : ' '));
    }
  });

  test('every prefix of well-formed statements keeps the invariants', () => {
    const statements = [
      'WITH RECURSIVE r AS (SELECT id FROM t1 UNION SELECT t2.id FROM t2 JOIN r ON t2.p = r.id) SELECT * FROM r FOR UPDATE',
      "INSERT INTO db.t1 (a, b) SELECT a, (SELECT MAX(b) FROM t3) FROM t2 WHERE c = 'x;y' ON DUPLICATE KEY UPDATE a = VALUES(a)",
      'UPDATE t1 a JOIN (SELECT id FROM t2) d ON a.id = d.id SET a.x = 1, a.y = f(2) WHERE a.z IN (SELECT z FROM t3)',
      'DELETE t1, t2 FROM t1 JOIN t2 USING (id) WHERE t1.a > (SELECT AVG(a) FROM t3)',
      "SELECT /*! STRAIGHT_JOIN */ a, NOW() FROM t1 FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01' -- x",
      'CREATE TABLE t9 (a INT, b VARCHAR(3)) ENGINE=InnoDB AS SELECT a, b FROM t1 UNION SELECT a, b FROM t2',
      'LOCK TABLES t1 READ, t2 AS x WRITE',
    ];
    for (const sql of statements) {
      for (let end = 0; end <= sql.length; end++) checkInvariants(sql.slice(0, end));
    }
  });
});

describe('writes of the tables stored programs live in', () => {
  const writesThem = (sql: string, schema: string | null = 'test'): boolean =>
    writesProgramTables(classify(sql, DEFAULTS).writes, schema);

  for (const sql of [
    'ALTER TABLE mysql.proc DROP security_type',
    'RENAME TABLE mysql.proc TO proc_backup',
    'CREATE TABLE mysql.proc LIKE proc_backup',
    'DROP TABLE mysql.proc',
    "UPDATE mysql.proc SET body = 'x' WHERE name = 'p'",
    'INSERT INTO mysql.event SELECT * FROM saved_events',
    "DELETE FROM MYSQL.FUNC WHERE name = 'f'",
  ]) {
    test(`${sql}: written`, () => assert.equal(writesThem(sql), true));
  }
  test('an unqualified name in the mysql schema: written', () =>
    assert.equal(writesThem("DELETE FROM proc WHERE name = 'p'", 'mysql'), true));
  for (const sql of [
    'CREATE PROCEDURE p() SET @x = 1',
    "DELETE FROM proc WHERE name = 'p'",
    'UPDATE mysql.user SET password_expired = 1',
    'SELECT * FROM mysql.proc',
  ]) {
    test(`${sql}: not written`, () => assert.equal(writesThem(sql), false));
  }
});
