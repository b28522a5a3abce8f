/**
 * The facts the proxy acts on besides caching (StatementInfo.control, readsDiagnostics,
 * readsFoundRows), table-driven: each one with comments around and inside the statement,
 * executable comments whose version is below and above the server's (10.11.19 here), MySQL-only
 * versions MariaDB never runs, odd spacing and letter case, and look-alikes that are not it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classify } from '../../src/sql/statement-classifier.ts';
import type { ClassifyOptions, StatementControl } from '../../src/sql/statement-classifier.ts';

const OPTIONS: ClassifyOptions = {
  ansiQuotes: false,
  lowerCaseTableNames: 0,
  serverVersion: 101119,
};

function controlOf(sql: string, options: Partial<ClassifyOptions> = {}): StatementControl | null {
  return classify(sql, { ...OPTIONS, ...options }).control;
}

const showStatus = (
  scope: 'global' | 'session',
  like: string | null = null,
  where = false,
): StatementControl => ({ kind: 'show-status', scope, like, where });

const setType = (
  scope: 'global' | 'session',
  value: 0 | 1 | 2 | 'default' | null,
): StatementControl => ({ kind: 'set-query-cache-type', scope, value });

const CONTROLS: Array<[string, StatementControl | null]> = [
  // SHOW STATUS, as mariadb-admin extended-status and clients send it.
  ['SHOW STATUS', showStatus('session')],
  ['show   global\n\tstatus', showStatus('global')],
  ['SHOW /*!50002 GLOBAL */ STATUS', showStatus('global')],
  ['SHOW /*!100000 GLOBAL */ STATUS', showStatus('global')],
  ['SHOW /*!999999 GLOBAL */ STATUS', showStatus('session')],
  ['SHOW /*!50700 GLOBAL */ STATUS', showStatus('session')],
  ['SHOW /*M!100000 GLOBAL */ STATUS', showStatus('global')],
  ['SHOW /* not run */ SESSION STATUS', showStatus('session')],
  ['/* app */ SHOW LOCAL STATUS;', showStatus('session')],
  ["SHOW STATUS LIKE 'Qcache%'", showStatus('session', 'Qcache%')],
  ["SHOW GLOBAL STATUS LIKE 'Qcache\\_hits' -- trailing", showStatus('global', 'Qcache\\_hits')],
  ["SHOW STATUS LIKE 'it''s'", showStatus('session', "it's")],
  ['SHOW STATUS LIKE "Qcache%"', showStatus('session', 'Qcache%')],
  ["SHOW STATUS WHERE Variable_name = 'Qcache_hits'", showStatus('session', null, true)],
  ["SHOW STATUS LIKE CONCAT('Q', '%')", showStatus('session', null, true)],
  ['SHOW VARIABLES', null],
  ['SHOW GLOBAL VARIABLES LIKE "query_cache%"', null],
  ['SHOW SLAVE STATUS', null],
  ['SHOW ENGINE INNODB STATUS', null],
  // Reads of information_schema's status tables.
  ['SELECT * FROM information_schema.GLOBAL_STATUS', { kind: 'status-table' }],
  [
    "select variable_value from INFORMATION_SCHEMA.session_status where variable_name = 'QCACHE_HITS'",
    { kind: 'status-table' },
  ],
  ['SELECT * FROM information_schema.GLOBAL_VARIABLES', null],
  // Reads of the proxy's own tables: only SELECT * FROM nicecache.<name> is plain.
  ['SELECT * FROM nicecache.digests', { kind: 'nicecache-table', name: 'digests', plain: true }],
  [
    'select  *  from `NICECACHE`.`Digests` ;',
    { kind: 'nicecache-table', name: 'digests', plain: true },
  ],
  [
    'SELECT digest FROM nicecache.digests',
    { kind: 'nicecache-table', name: 'digests', plain: false },
  ],
  [
    'SELECT * FROM nicecache.digests JOIN t',
    { kind: 'nicecache-table', name: 'digests', plain: false },
  ],
  ['SELECT * FROM nicecache_digests', null],
  // SET query_cache_type, every spelling.
  ['SET query_cache_type = 1', setType('session', 1)],
  ['SET SESSION query_cache_type=DEMAND', setType('session', 2)],
  ['set local QUERY_CACHE_TYPE := off', setType('session', 0)],
  ["SET @@session.query_cache_type = 'ON'", setType('session', 1)],
  ['SET @@query_cache_type = 2', setType('session', 2)],
  ['SET @@global.query_cache_type = 0', setType('global', 0)],
  ['SET GLOBAL query_cache_type = ON', setType('global', 1)],
  ['/* app */ SET /*!40101 SESSION */ query_cache_type = ON', setType('session', 1)],
  ['SET query_cache_type = DEFAULT', setType('session', 'default')],
  ['SET query_cache_type = @saved', setType('session', null)],
  ["SET sql_mode = '', query_cache_type = 0", setType('session', 0)],
  ['SET GLOBAL max_connections = 10, query_cache_type = 0', setType('global', 0)],
  ['SET GLOBAL max_connections = 10, SESSION query_cache_type = 0', setType('session', 0)],
  ['SET query_cache_size = 0', null],
  ['SET @query_cache_type = 1', null],
  ['SET STATEMENT query_cache_type = 0 FOR SELECT 1', null],
  // SET TRANSACTION without a scope is for the next transaction only.
  ['SET TRANSACTION ISOLATION LEVEL SERIALIZABLE', { kind: 'set-transaction' }],
  ['/* x */ set  transaction read only', { kind: 'set-transaction' }],
  ['SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE', null],
  // RESET QUERY CACHE and FLUSH.
  ['RESET QUERY CACHE', { kind: 'reset-query-cache' }],
  ['reset  query\ncache;', { kind: 'reset-query-cache' }],
  ['/*!40000 RESET QUERY CACHE */', { kind: 'reset-query-cache' }],
  ['RESET MASTER', null],
  ['FLUSH STATUS', { kind: 'flush', status: true, dataUnchanged: true }],
  ['FLUSH LOCAL STATUS', { kind: 'flush', status: true, dataUnchanged: true }],
  ['FLUSH TABLES, STATUS', { kind: 'flush', status: true, dataUnchanged: false }],
  ['flush status, query  cache', { kind: 'flush', status: true, dataUnchanged: true }],
  ['FLUSH PRIVILEGES', { kind: 'flush', status: false, dataUnchanged: false }],
  ['FLUSH TABLE t', { kind: 'flush', status: false, dataUnchanged: false }],
  ['FLUSH QUERY CACHE', { kind: 'flush', status: false, dataUnchanged: true }],
  ['FLUSH TABLES', { kind: 'flush', status: false, dataUnchanged: false }],
  // XA COMMIT, consistent snapshots, DROP.
  ["XA COMMIT 'x'", { kind: 'xa-commit' }],
  ["/* tm */ xa  commit 'x' ONE PHASE", { kind: 'xa-commit' }],
  ["XA ROLLBACK 'x'", null],
  ['START TRANSACTION WITH CONSISTENT SNAPSHOT', { kind: 'consistent-snapshot' }],
  [
    'START TRANSACTION READ ONLY, WITH /* c */ CONSISTENT SNAPSHOT',
    { kind: 'consistent-snapshot' },
  ],
  // Transactions the proxy may begin and end itself: exactly the plain forms.
  ['START TRANSACTION', { kind: 'begin', access: null }],
  ['BEGIN', { kind: 'begin', access: null }],
  ['begin work', { kind: 'begin', access: null }],
  ['/*!START TRANSACTION*/ READ ONLY', { kind: 'begin', access: 'read-only' }],
  ['START TRANSACTION READ WRITE', { kind: 'begin', access: 'read-write' }],
  ['START TRANSACTION READ ONLY, READ ONLY', { kind: 'begin', access: 'read-only' }],
  ['START TRANSACTION READ ONLY, READ WRITE', null],
  ['START TRANSACTION READ ONLY,', null],
  ['START TRANSACTION READ', null],
  ['COMMIT', { kind: 'end-transaction' }],
  ['commit work and no chain no release', { kind: 'end-transaction' }],
  ['ROLLBACK NO RELEASE', { kind: 'end-transaction' }],
  ['COMMIT AND CHAIN', null],
  ['COMMIT RELEASE', null],
  ['ROLLBACK WORK AND CHAIN', null],
  ['ROLLBACK TO SAVEPOINT a', null],
  ['BEGIN NOT ATOMIC SELECT 1; END', null],
  ['DROP TABLE t', { kind: 'drop' }],
  ['/* x */ drop temporary table if exists t', { kind: 'drop' }],
  ['SELECT 1', null],
  // SQL prepared statements: names are compared without regard to case.
  [
    "PREPARE s FROM 'SELECT * FROM t WHERE v = ''a'''",
    { kind: 'sql-prepare', name: 's', text: "SELECT * FROM t WHERE v = 'a'" },
  ],
  [
    '/* c */ prepare `Stmt 1` from "SELECT \\"x\\""',
    { kind: 'sql-prepare', name: 'stmt 1', text: 'SELECT "x"' },
  ],
  ['PREPARE s FROM @q', { kind: 'sql-prepare', name: 's', text: null }],
  ["PREPARE s FROM 'SELECT ' 'x'", { kind: 'sql-prepare', name: 's', text: null }],
  ["PREPARE s FROM _latin1'SELECT 1'", { kind: 'sql-prepare', name: 's', text: null }],
  ["PREPARE `é` FROM 'SELECT 1'", { kind: 'sql-prepare', name: null, text: 'SELECT 1' }],
  ['EXECUTE S', { kind: 'sql-execute', name: 's', using: false }],
  ['execute s using @a, 1', { kind: 'sql-execute', name: 's', using: true }],
  ["EXECUTE IMMEDIATE 'SELECT 1'", null],
  ['DEALLOCATE PREPARE s', { kind: 'sql-deallocate', name: 's' }],
  ['DROP PREPARE S', { kind: 'sql-deallocate', name: 's' }],
  // CALL: the procedure as a table name is read (its name's case kept: the catalog lowers it).
  ['CALL p(1)', { kind: 'call', procedure: { schema: null, name: 'p' } }],
  ['/* c */ call Db.`My Proc`', { kind: 'call', procedure: { schema: 'Db', name: 'My Proc' } }],
  ['CALL select()', { kind: 'call', procedure: null }],
  ['CALL p((SELECT x FROM v))', { kind: 'call', procedure: null }],
  // Several statements: the proxy acts on a control statement only when it is alone.
  ['SELECT 1; RESET QUERY CACHE', null],
  ['CALL p(); CALL q()', null],
];

const DIAGNOSTICS: Array<[string, boolean, boolean]> = [
  // [sql, readsDiagnostics, readsFoundRows]
  ['SHOW WARNINGS', true, false],
  ['/* app */ SHOW WARNINGS', true, false],
  ['-- app\nshow   errors limit 1', true, false],
  ['SHOW COUNT(*) WARNINGS', true, false],
  ['show count ( * ) errors', true, false],
  ['/*!40100 SHOW WARNINGS */', true, false],
  ['GET DIAGNOSTICS @n = NUMBER', true, false],
  ['get current diagnostics condition 1 @m = MESSAGE_TEXT', true, false],
  ['GET STACKED DIAGNOSTICS @n = NUMBER', true, false],
  ['SELECT FOUND_ROWS()', true, true],
  ['select found_rows ( )', true, true],
  ['SELECT /* c */ ROW_COUNT()', true, false],
  ['SELECT @@warning_count, @@session.error_count', true, false],
  ['SELECT 1; SHOW WARNINGS', true, false],
  ['SELECT 1 /*!99999 , FOUND_ROWS() */', false, false],
  ["SELECT 'found_rows()' FROM t", false, false],
  ['SELECT found_rows FROM t', false, false],
  ['SELECT * FROM warnings', false, false],
  ['SHOW VARIABLES', false, false],
  ['SELECT 1 -- FOUND_ROWS()', false, false],
];

describe('statement facts', () => {
  test('control statements, as the server parses them', () => {
    for (const [sql, expected] of CONTROLS) {
      assert.deepEqual(controlOf(sql), expected, sql);
    }
  });

  test('a LIKE pattern is read with the session’s escaping', () => {
    assert.deepEqual(
      controlOf("SHOW STATUS LIKE 'a\\\\b'"),
      showStatus('session', 'a\\b'),
      'backslash escapes',
    );
    assert.deepEqual(
      controlOf("SHOW STATUS LIKE 'a\\\\b'", { noBackslashEscapes: true }),
      showStatus('session', 'a\\\\b'),
      'NO_BACKSLASH_ESCAPES',
    );
  });

  test('a versioned comment follows the server’s version', () => {
    assert.deepEqual(
      controlOf('SHOW /*!100500 GLOBAL */ STATUS', { serverVersion: 100411 }),
      showStatus('session'),
    );
    assert.deepEqual(
      controlOf('SHOW /*!100500 GLOBAL */ STATUS', { serverVersion: 110402 }),
      showStatus('global'),
    );
  });

  test('statements that read the previous statement’s diagnostics', () => {
    for (const [sql, diagnostics, foundRows] of DIAGNOSTICS) {
      const info = classify(sql, OPTIONS);
      assert.equal(info.readsDiagnostics, diagnostics, `${sql}: readsDiagnostics`);
      assert.equal(info.readsFoundRows, foundRows, `${sql}: readsFoundRows`);
    }
  });

  test('FLUSH STATUS and FLUSH QUERY CACHE invalidate nothing; other FLUSH statements everything', () => {
    for (const [sql, everything] of [
      ['FLUSH STATUS', false],
      ['FLUSH NO_WRITE_TO_BINLOG QUERY CACHE', false],
      ['FLUSH TABLES', true],
      ['FLUSH STATUS, PRIVILEGES', true],
      ['RESET QUERY CACHE', true],
    ] as const) {
      assert.equal(classify(sql, OPTIONS).writesEverything, everything, sql);
    }
  });

  test('SET x = ON is a setting, not an unparsable statement that writes everything', () => {
    for (const sql of ['SET SESSION query_cache_type = ON', 'SET autocommit = ON, x = 1']) {
      const info = classify(sql, OPTIONS);
      assert.equal(info.kind, 'set', sql);
      assert.equal(info.writesEverything, false, sql);
    }
  });
});
