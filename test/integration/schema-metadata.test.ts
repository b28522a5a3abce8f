/**
 * The schema snapshot read from a real server's information_schema, seen through
 * TableDependencies: views over joins and over views, triggers of one statement, of a plain
 * block and of a block with flow control, foreign keys that cascade two levels, that set null,
 * and that restrict; a MERGE table's UNION, sequences, events, procedures that run no DDL; and
 * how many tables the load opens. Then the same schema seen by a user who may only SELECT, to
 * pin down what information_schema hides from such a user.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TableDependencies } from '../../src/cache/table-dependencies.ts';
import type { SchemaSnapshot } from '../../src/cache/table-dependencies.ts';
import { KeyKind } from '../../src/sql/point-access.ts';
import { serverVersionNumber } from '../../src/sql/statement-classifier.ts';
import type { LowerCaseTableNames } from '../../src/sql/statement-classifier.ts';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../../src/upstream/mysql-connection.ts';
import { loadSchemaSnapshot } from '../../src/upstream/schema-metadata.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';

const direct: ConnectionOptions = {
  host: BACKEND_HOST,
  port: BACKEND_PORT,
  user: BACKEND_USER,
  password: BACKEND_PASSWORD,
  database: BACKEND_DATABASE,
};

/** Unique per run, so that runs sharing a server do not meet. */
const S = `nc_meta_${randomBytes(4).toString('hex')}`;
const OTHER = `${S}_other`;
const SELECT_ONLY_USER = `nc_meta_ro_${randomBytes(4).toString('hex')}`;
const SELECT_ONLY_PASSWORD = 'select-only-1';

/**
 * Run from the `test` database, so that the unqualified names in trigger bodies must be resolved
 * in the trigger's schema, not the session's.
 */
const SETUP = [
  `CREATE DATABASE ${S}`,
  `CREATE TABLE ${S}.plain (id INT PRIMARY KEY)`,
  `CREATE TABLE ${S}.plain_myisam (id INT PRIMARY KEY) ENGINE=MyISAM`,
  // Primary keys: point columns or not.
  `CREATE TABLE ${S}.keys_bigint (id BIGINT UNSIGNED PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_tiny (id TINYINT PRIMARY KEY, v INT) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_named (\`Key_Id\` MEDIUMINT UNSIGNED PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_pair (a INT, b INT, PRIMARY KEY (a, b)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_pair_reversed (a SMALLINT, b BIGINT UNSIGNED, v INT, PRIMARY KEY (b, a)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_pair_text (a INT, code VARCHAR(10) CHARACTER SET utf8mb4, PRIMARY KEY (a, code)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_pair_shifted (a INT, b INT, PRIMARY KEY (a, b)) ENGINE=InnoDB`,
  `CREATE TRIGGER ${S}.keys_pair_shifted_bi BEFORE INSERT ON ${S}.keys_pair_shifted FOR EACH ROW SET NEW.b = NEW.a * 2`,
  `CREATE TABLE ${S}.keys_text (code VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_char (code CHAR(8) CHARACTER SET latin1 PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_text_roman (code VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_roman_ci PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_text_utf16 (code VARCHAR(10) CHARACTER SET utf16 PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_binary (code VARBINARY(10) PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_uuid (id BINARY(16) PRIMARY KEY, v INT) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_pair_binary (tenant INT, id BINARY(16), PRIMARY KEY (tenant, id)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_blob (b BLOB, PRIMARY KEY (b(10))) ENGINE=InnoDB`,
  // MariaDB's UUID type: 16 bytes in InnoDB, compared as a UUID and written as text.
  `CREATE TABLE ${S}.keys_uuid_type (id UUID PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_enum (e ENUM('a', 'b') PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_year (y YEAR PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_none (a INT) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_parted (id INT PRIMARY KEY) ENGINE=InnoDB PARTITION BY HASH (id) PARTITIONS 2`,
  // Other unique keys: one column, two, a long UNIQUE (a hash over a hidden virtual column);
  // and a key that is not unique.
  `CREATE TABLE ${S}.keys_unique (id INT PRIMARY KEY, code INT UNIQUE) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_unique_pair (id INT PRIMARY KEY, a INT, b INT, UNIQUE (a, b)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_unique_long (id INT PRIMARY KEY, doc TEXT, UNIQUE (doc)) ENGINE=InnoDB`,
  `CREATE TABLE ${S}.keys_indexed (id INT PRIMARY KEY, a INT, INDEX (a)) ENGINE=InnoDB`,
  // FULLTEXT: InnoDB adds a unique index of its own (FTS_DOC_ID_INDEX), taken as another key.
  `CREATE TABLE ${S}.keys_fulltext (id INT PRIMARY KEY, t TEXT, FULLTEXT (t)) ENGINE=InnoDB`,
  // BEFORE triggers that may set the key, or read it only; one that cannot be read.
  `CREATE TABLE ${S}.keys_shifted (id INT PRIMARY KEY) ENGINE=InnoDB`,
  `CREATE TRIGGER ${S}.keys_shifted_bu BEFORE UPDATE ON ${S}.keys_shifted FOR EACH ROW SET NEW.id = NEW.id + 10`,
  `CREATE TABLE ${S}.keys_copied (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
  `CREATE TRIGGER ${S}.keys_copied_bi BEFORE INSERT ON ${S}.keys_copied FOR EACH ROW INSERT INTO audit (msg) VALUES (NEW.id)`,
  `CREATE TABLE ${S}.keys_flow (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
  `CREATE TRIGGER ${S}.keys_flow_bu BEFORE UPDATE ON ${S}.keys_flow FOR EACH ROW
   BEGIN
     IF NEW.v < 0 THEN SET NEW.v = 0; END IF;
   END`,
  `CREATE TABLE ${S}.MixedCase (id INT PRIMARY KEY)`,
  `CREATE TABLE ${S}.versioned (id INT PRIMARY KEY) WITH SYSTEM VERSIONING`,
  `CREATE SEQUENCE ${S}.seq`,

  // Views: over a join, over a view, without tables, over a system schema, non-deterministic.
  `CREATE TABLE ${S}.t1 (id INT PRIMARY KEY, a INT)`,
  `CREATE TABLE ${S}.t2 (id INT PRIMARY KEY, b INT)`,
  `CREATE VIEW ${S}.v_join AS SELECT t1.id, t1.a, t2.b FROM ${S}.t1 JOIN ${S}.t2 ON t1.id = t2.id`,
  `CREATE VIEW ${S}.v_of_v AS SELECT id, b FROM ${S}.v_join WHERE a > 0`,
  `CREATE VIEW ${S}.v_const AS SELECT 1 AS one`,
  `CREATE VIEW ${S}.v_system AS SELECT TABLE_NAME FROM information_schema.TABLES`,
  `CREATE VIEW ${S}.v_now AS SELECT id, NOW() AS at FROM ${S}.t1`,

  // Triggers.
  `CREATE TABLE ${S}.audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100))`,
  `CREATE TABLE ${S}.orders (id INT PRIMARY KEY)`,
  `CREATE TRIGGER ${S}.orders_ai AFTER INSERT ON ${S}.orders FOR EACH ROW INSERT INTO audit (msg) VALUES (NEW.id)`,
  `CREATE TABLE ${S}.items (id INT PRIMARY KEY, n INT)`,
  `CREATE TABLE ${S}.log_a (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(100))`,
  `CREATE TABLE ${S}.log_b (id INT PRIMARY KEY, hits INT NOT NULL DEFAULT 0)`,
  `CREATE TABLE ${S}.log_c (id INT PRIMARY KEY)`,
  // The ';' inside the string must not split the block.
  `CREATE TRIGGER ${S}.items_au AFTER UPDATE ON ${S}.items FOR EACH ROW
   BEGIN
     INSERT INTO log_a (note) VALUES ('updated; see items');
     UPDATE log_b SET hits = hits + 1 WHERE id = NEW.id;
   END`,
  `CREATE TRIGGER ${S}.items_ad AFTER DELETE ON ${S}.items FOR EACH ROW
   tidy: BEGIN
     DELETE FROM ${S}.log_c WHERE id = OLD.id;
   END tidy`,
  `CREATE TABLE ${S}.flagged (id INT PRIMARY KEY)`,
  `CREATE TRIGGER ${S}.flagged_bd BEFORE DELETE ON ${S}.flagged FOR EACH ROW
   BEGIN
     IF OLD.id > 10 THEN
       INSERT INTO audit (msg) VALUES ('big one gone');
     END IF;
   END`,
  `CREATE TABLE ${S}.stamped (id INT PRIMARY KEY, at DATETIME)`,
  `CREATE TRIGGER ${S}.stamped_bi BEFORE INSERT ON ${S}.stamped FOR EACH ROW SET NEW.at = NOW()`,
  // Created under ANSI_QUOTES: "audit" is a table there, whatever the loading session's mode.
  `CREATE TABLE ${S}.quoted (id INT PRIMARY KEY)`,
  `SET @saved_sql_mode = @@sql_mode`,
  `SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')`,
  `CREATE TRIGGER ${S}.quoted_ai AFTER INSERT ON ${S}.quoted FOR EACH ROW INSERT INTO "audit" ("msg") VALUES ('quoted')`,
  `SET sql_mode = @saved_sql_mode`,

  // Foreign keys: cascading two levels, SET NULL on update, RESTRICT.
  `CREATE TABLE ${S}.parent (id INT PRIMARY KEY)`,
  `CREATE TABLE ${S}.child (id INT PRIMARY KEY, parent_id INT,
     FOREIGN KEY (parent_id) REFERENCES ${S}.parent (id) ON DELETE CASCADE)`,
  `CREATE TABLE ${S}.grandchild (id INT PRIMARY KEY, child_id INT,
     FOREIGN KEY (child_id) REFERENCES ${S}.child (id) ON DELETE CASCADE)`,
  `CREATE TABLE ${S}.owner (id INT PRIMARY KEY)`,
  `CREATE TABLE ${S}.pet (id INT PRIMARY KEY, owner_id INT,
     FOREIGN KEY (owner_id) REFERENCES ${S}.owner (id) ON UPDATE SET NULL)`,
  `CREATE TABLE ${S}.strict_parent (id INT PRIMARY KEY)`,
  // A name InnoDB's dictionary writes encoded (kid@002d1).
  `CREATE TABLE ${S}.\`kid-1\` (id INT PRIMARY KEY, parent_id INT,
     FOREIGN KEY (parent_id) REFERENCES ${S}.owner (id) ON DELETE CASCADE)`,
  `CREATE TABLE ${S}.strict_child (id INT PRIMARY KEY, parent_id INT,
     FOREIGN KEY (parent_id) REFERENCES ${S}.strict_parent (id) ON DELETE RESTRICT ON UPDATE RESTRICT)`,

  // Rows stored in other tables: MERGE over tables of its own schema and another, an empty
  // MERGE, one whose UNION table is gone.
  `CREATE DATABASE ${OTHER}`,
  `CREATE TABLE ${S}.part_a (id INT) ENGINE=MyISAM`,
  `CREATE TABLE ${OTHER}.part_b (id INT) ENGINE=MyISAM`,
  `CREATE TABLE ${S}.merged (id INT) ENGINE=MERGE UNION=(${S}.part_a, ${OTHER}.part_b) INSERT_METHOD=LAST`,
  `CREATE TABLE ${S}.merged_empty (id INT) ENGINE=MERGE`,
  `CREATE TABLE ${S}.gone_part (id INT) ENGINE=MyISAM`,
  `CREATE TABLE ${S}.merged_broken (id INT) ENGINE=MERGE UNION=(${S}.gone_part)`,
  `DROP TABLE ${S}.gone_part`,
  // An INSERT that takes the default advances the sequence.
  `CREATE TABLE ${S}.numbered (id INT DEFAULT NEXTVAL(${S}.seq), v INT)`,

  // The scheduler writes what an enabled event's body writes; a disabled one writes nothing.
  `CREATE TABLE ${S}.ticks (id INT AUTO_INCREMENT PRIMARY KEY)`,
  `CREATE TABLE ${S}.paused (id INT)`,
  `CREATE EVENT ${S}.tick ON SCHEDULE EVERY 1 HOUR STARTS CURRENT_TIMESTAMP + INTERVAL 1 HOUR DO INSERT INTO ticks VALUES (NULL)`,
  `CREATE EVENT ${S}.pause ON SCHEDULE EVERY 1 HOUR DISABLE DO DELETE FROM ${S}.paused`,

  // Procedures: a CALL of one that runs no DDL, directly or through what it calls, needs no
  // reload of the metadata.
  `CREATE PROCEDURE ${S}.Writes_Rows(n INT)
   BEGIN
     DECLARE i INT DEFAULT 0;
     WHILE i < n DO
       UPDATE t1 SET a = a + 1 WHERE id = i;
       SET i = i + 1;
     END WHILE;
     SELECT 'DROP TABLE t1; CREATE VIEW x AS SELECT 1' AS words_in_a_string FROM t2;
   END`,
  `CREATE PROCEDURE ${S}.makes_table() CREATE TABLE IF NOT EXISTS made (id INT)`,
  `CREATE PROCEDURE ${S}.drops_later() BEGIN IF 1 = 0 THEN DROP TABLE t2; END IF; END`,
  `CREATE PROCEDURE ${S}.dynamic() BEGIN EXECUTE IMMEDIATE 'SELECT 1'; END`,
  `CREATE PROCEDURE ${S}.prepares() BEGIN PREPARE s FROM 'SELECT 1'; DEALLOCATE PREPARE s; END`,
  `CREATE PROCEDURE ${S}.calls_free() BEGIN CALL writes_rows(1); CALL ${OTHER}.elsewhere; END`,
  `CREATE PROCEDURE ${OTHER}.elsewhere() DELETE FROM ${OTHER}.part_b WHERE id < 0`,
  `CREATE PROCEDURE ${S}.calls_ddl() BEGIN CALL \`${S}\`.makes_table(); END`,
  `CREATE PROCEDURE ${S}.calls_missing() CALL no_such_procedure()`,
  `CREATE PROCEDURE ${S}.ping(n INT) BEGIN IF n > 0 THEN CALL pong(n - 1); END IF; END`,
  `CREATE PROCEDURE ${S}.pong(n INT) BEGIN IF n > 0 THEN CALL ping(n - 1); END IF; END`,
  `CREATE PROCEDURE ${S}.ping_ddl(n INT) BEGIN IF n > 0 THEN CALL pong_ddl(n - 1); END IF; END`,
  `CREATE PROCEDURE ${S}.pong_ddl(n INT) BEGIN CALL ping_ddl(n); ALTER TABLE t2 ADD c INT; END`,
  // Under ORACLE a procedure calls another without CALL: nothing is known of it.
  `SET sql_mode = CONCAT(@@sql_mode, ',ORACLE')`,
  `CREATE PROCEDURE ${S}.oracle_style AS BEGIN NULL; END`,
  `SET sql_mode = @saved_sql_mode`,
  // A function is no procedure: CALL cannot name it. A procedure that calls a stored function
  // runs what the function runs: a function may create a (temporary) table; a table or a
  // built-in before a parenthesis is no call of one.
  `CREATE FUNCTION ${S}.f() RETURNS INT RETURN 1`,
  `CREATE PROCEDURE ${S}.calls_function() SELECT a FROM t1 WHERE id = f()`,
  `CREATE PROCEDURE ${S}.calls_function_qualified() SELECT \`${S}\`.F()`,
  `CREATE FUNCTION ${S}.makes_temp() RETURNS INT BEGIN
     CREATE TEMPORARY TABLE IF NOT EXISTS fn_made (id INT); RETURN 1;
   END`,
  `CREATE FUNCTION ${S}.calls_maker() RETURNS INT RETURN makes_temp() + 1`,
  `CREATE PROCEDURE ${S}.calls_making_function() SELECT ${S}.makes_temp()`,
  `CREATE FUNCTION ${S}.audits(m VARCHAR(20)) RETURNS INT BEGIN
     INSERT INTO audit (msg) VALUES (m); RETURN 1;
   END`,
  `CREATE FUNCTION ${S}.audits_twice() RETURNS INT RETURN audits('a') + audits('b')`,
  `CREATE PROCEDURE ${S}.updates_with_audit() UPDATE t1 SET a = a + audits('u') WHERE id = 0`,
  `CREATE PROCEDURE ${S}.inserts_columns() INSERT INTO audit (msg) VALUES (CONCAT('a', 'b'))`,
  // So may a view that calls one, and one over it, read by a procedure.
  `CREATE VIEW ${S}.v_calls_f AS SELECT ${S}.f() AS x`,
  `CREATE VIEW ${S}.v_over_calls_f AS SELECT x FROM ${S}.v_calls_f`,
  `CREATE PROCEDURE ${S}.reads_writing_view() SELECT x FROM v_over_calls_f`,
  // Views over functions that write, or make a table: reading them writes.
  `CREATE VIEW ${S}.v_calls_audits AS SELECT ${S}.audits('v') AS y`,
  `CREATE VIEW ${S}.v_calls_maker AS SELECT ${S}.calls_maker() AS z`,
  `CREATE VIEW ${S}.v_joins_calls AS SELECT x, y FROM ${S}.v_calls_f, ${S}.v_calls_audits`,
  // What procedures write: told, through flow control and handlers, or untold.
  `CREATE PROCEDURE ${S}.handles() BEGIN
     DECLARE CONTINUE HANDLER FOR SQLEXCEPTION INSERT INTO log_a (note) VALUES ('failed');
     IF 1 = 1 THEN DELETE FROM log_c; ELSE TRUNCATE TABLE log_b; END IF;
   END`,
  `CREATE PROCEDURE ${S}.global_setting() SET @@global.max_connections = @@global.max_connections`,
  `CREATE PROCEDURE ${S}.advances() SELECT NEXTVAL(seq)`,
  `CREATE PROCEDURE ${S}.replaces_text() SET @s = REPLACE('a', 'a', 'b')`,
  `CREATE PROCEDURE ${S}.grants() GRANT SELECT ON ${S}.t1 TO CURRENT_USER`,
  // DDL of temporary tables only, on a branch, in a handler, qualified, through a call.
  `CREATE PROCEDURE ${S}.scratch_work(n INT) BEGIN
     DECLARE CONTINUE HANDLER FOR SQLEXCEPTION DROP TEMPORARY TABLE IF EXISTS scratch;
     IF n > 0 THEN CREATE TEMPORARY TABLE scratch (id INT) ENGINE = MEMORY; END IF;
     INSERT INTO scratch VALUES (n);
     CREATE TEMPORARY TABLE IF NOT EXISTS ${OTHER}.kept LIKE ${S}.t1;
   END`,
  `CREATE PROCEDURE ${OTHER}.calls_scratch() BEGIN CALL ${S}.scratch_work(1); DELETE FROM part_b; END`,
  `CREATE PROCEDURE ${S}.scratch_then_table() BEGIN CREATE TEMPORARY TABLE s2 (id INT); CREATE TABLE s3 (id INT); END`,
  // Triggers may create temporary tables, themselves or through what they call.
  `CREATE TABLE ${S}.maker (id INT)`,
  `CREATE TRIGGER ${S}.maker_ai AFTER INSERT ON ${S}.maker FOR EACH ROW CREATE TEMPORARY TABLE IF NOT EXISTS shadowed (id INT)`,
  `CREATE TABLE ${S}.feeds_maker (id INT)`,
  `CREATE TRIGGER ${S}.feeds_maker_ai AFTER INSERT ON ${S}.feeds_maker FOR EACH ROW INSERT INTO maker VALUES (NEW.id)`,
  // Triggers that call stored functions write what the functions do, when that is known.
  `CREATE TABLE ${S}.calls_f (id INT)`,
  `CREATE TRIGGER ${S}.calls_f_bi BEFORE INSERT ON ${S}.calls_f FOR EACH ROW SET NEW.id = f()`,
  `CREATE TABLE ${S}.calls_audits (id INT)`,
  `CREATE TRIGGER ${S}.calls_audits_bi BEFORE INSERT ON ${S}.calls_audits FOR EACH ROW SET NEW.id = audits('new')`,
  `CREATE TABLE ${S}.calls_maker (id INT)`,
  `CREATE TRIGGER ${S}.calls_maker_bi BEFORE INSERT ON ${S}.calls_maker FOR EACH ROW SET NEW.id = makes_temp()`,
];

async function run(connection: MysqlConnection, sql: string): Promise<void> {
  const result = await connection.query(sql);
  if (result.error) throw new Error(`${sql}\n→ ${result.error.message}`);
}

/** "schema.table" of the throwaway schema. */
function q(name: string): string {
  return `${S}.${name}`;
}

/** A set's content compared without regard to order; null and 'everything' as they are. */
function sorted<T>(value: readonly string[] | T): string[] | T {
  return Array.isArray(value) ? [...(value as readonly string[])].sort() : (value as T);
}

/**
 * The part of a snapshot that is the throwaway schema's, to compare without other schemas; lists
 * sorted, since their order is information_schema's.
 */
function ours(snapshot: SchemaSnapshot): Record<string, Record<string, unknown>> {
  const pick = (map: Map<string, string | string[]>): Record<string, unknown> =>
    Object.fromEntries(
      [...map]
        .filter(([key]) => key.startsWith(`${S}.`))
        .map(([key, value]) => [key, sorted(value)]),
    );
  return {
    baseTables: pick(snapshot.baseTables),
    views: pick(snapshot.views),
    triggerWrites: pick(snapshot.triggerWrites),
    cascades: pick(snapshot.cascades),
    storedIn: pick(snapshot.storedIn ?? new Map<string, string[]>()),
  };
}

describe('schema metadata', () => {
  let admin: MysqlConnection;
  let snapshot: SchemaSnapshot;
  let deps: TableDependencies;

  before(async () => {
    admin = await MysqlConnection.connect(direct);
    for (const sql of SETUP) await run(admin, sql);
    snapshot = await loadSchemaSnapshot(admin, {});
    deps = new TableDependencies(snapshot);
  });

  after(async () => {
    await run(admin, `DROP DATABASE IF EXISTS ${S}`);
    await run(admin, `DROP DATABASE IF EXISTS ${OTHER}`);
    await run(admin, `DROP USER IF EXISTS '${SELECT_ONLY_USER}'@'127.0.0.1'`);
    admin.close();
  });

  test('base tables of every kind, with their engines; system schemas left out', () => {
    for (const name of ['plain', 'MixedCase', 'versioned', 't1', 'parent']) {
      assert.deepEqual(deps.readsOf(q(name)), [q(name)], name);
    }
    assert.equal(deps.engineOf(q('plain')), 'InnoDB');
    assert.equal(deps.engineOf(q('plain_myisam')), 'MyISAM');
    assert.equal(deps.engineOf(q('versioned')), 'InnoDB');
    assert.equal(typeof deps.engineOf(q('seq')), 'string');
    assert.equal(deps.engineOf(q('v_join')), undefined);
    assert.equal(deps.engineOf(q('nope')), undefined);
    // lower_case_table_names is 0 here: the name keeps its case, and another case is unknown.
    assert.equal(deps.readsOf(q('mixedcase')), null);
    for (const map of [snapshot.baseTables, snapshot.views, snapshot.triggerWrites]) {
      for (const key of map.keys()) {
        assert.doesNotMatch(key, /^(mysql|information_schema|performance_schema|sys)\./i);
      }
    }
  });

  test('views read their base tables, through views', () => {
    assert.deepEqual(snapshot.views.get(q('v_of_v')), [q('v_join')]);
    assert.deepEqual(sorted(deps.readsOf(q('v_join'))), [q('t1'), q('t2')]);
    assert.deepEqual(sorted(deps.readsOf(q('v_of_v'))), [q('t1'), q('t2')]);
    assert.deepEqual(deps.readsOf(q('v_const')), []);
    // Over a system schema, or non-deterministic: nothing a reader of the view may cache.
    assert.equal(deps.readsOf(q('v_system')), null);
    assert.equal(deps.readsOf(q('v_now')), null);
    assert.equal(deps.readsOf(q('no_such_table')), null);
    // Writing through a view writes its base tables.
    assert.deepEqual(sorted(deps.writesOf(q('v_of_v'))), [q('t1'), q('t2')]);
    assert.equal(deps.writesOf(q('v_now')), 'everything');
  });

  test('views that call stored functions: those that run no DDL and write nothing write nothing', () => {
    // f() returns a constant: reading the view runs it, and that is all.
    assert.deepEqual(
      [...(snapshot.functionViews ?? [])].filter((v) => v.startsWith(`${S}.`)),
      [q('v_calls_f')],
    );
    for (const view of ['v_calls_f', 'v_over_calls_f']) {
      assert.equal(deps.readMayWrite(q(view)), false, view);
      assert.equal(deps.readCallsFunctions(q(view)), true, view);
    }
    // audits() inserts a row, calls_maker() creates a table, through makes_temp(): reading either
    // writes as far as the proxy can tell, and so does a view over one of them and over v_calls_f.
    for (const view of ['v_calls_audits', 'v_calls_maker', 'v_joins_calls']) {
      assert.equal(deps.readMayWrite(q(view)), true, view);
    }
    // A plain view calls no function.
    assert.equal(deps.readCallsFunctions(q('v_join')), false);
    assert.equal(deps.readMayWrite(q('v_join')), false);
  });

  test('triggers: one statement, a plain block, a labelled block, flow control, sql_mode', () => {
    assert.deepEqual(sorted(deps.writesOf(q('orders'))), [q('audit'), q('orders')]);
    assert.deepEqual(sorted(deps.writesOf(q('items'))), [
      q('items'),
      q('log_a'),
      q('log_b'),
      q('log_c'),
    ]);
    assert.deepEqual(snapshot.triggerWrites.get(q('flagged')), ['*']);
    assert.equal(deps.writesOf(q('flagged')), 'everything');
    // Listed with nothing written: its writes may still change session state (a trigger may
    // SET session variables), which the proxy must hear about.
    assert.deepEqual(snapshot.triggerWrites.get(q('stamped')), []);
    assert.equal(deps.hasTriggers(q('stamped')), true);
    assert.equal(deps.hasTriggers(q('strict_child')), false);
    assert.deepEqual(deps.writesOf(q('stamped')), [q('stamped')]);
    assert.deepEqual(sorted(deps.writesOf(q('quoted'))), [q('audit'), q('quoted')]);
    assert.deepEqual(deps.writesOf(q('audit')), [q('audit')]);
  });

  test('foreign keys: cascades two levels down, SET NULL, not RESTRICT', () => {
    assert.deepEqual(snapshot.cascades.get(q('parent')), [q('child')]);
    assert.deepEqual(sorted(deps.writesOf(q('parent'))), [
      q('child'),
      q('grandchild'),
      q('parent'),
    ]);
    assert.deepEqual(sorted(deps.writesOf(q('child'))), [q('child'), q('grandchild')]);
    assert.deepEqual(deps.writesOf(q('grandchild')), [q('grandchild')]);
    assert.deepEqual(sorted(deps.writesOf(q('owner'))), [q('kid-1'), q('owner'), q('pet')]);
    assert.deepEqual(deps.writesOf(q('strict_parent')), [q('strict_parent')]);
    assert.deepEqual(deps.writesOf(q('strict_child')), [q('strict_child')]);
  });

  test('MERGE reads and writes its UNION; unknown storage poisons; sequences are not cached', () => {
    const partB = `${OTHER}.part_b`;
    assert.deepEqual(snapshot.storedIn?.get(q('merged')), [q('part_a'), partB]);
    assert.deepEqual(sorted(deps.readsOf(q('merged'))), [q('merged'), q('part_a'), partB].sort());
    assert.deepEqual(sorted(deps.writesOf(q('merged'))), [q('merged'), q('part_a'), partB].sort());
    // A write to a UNION table invalidates readers of the MERGE table through their dependency.
    assert.deepEqual(deps.writesOf(q('part_a')), [q('part_a')]);
    assert.deepEqual(snapshot.storedIn?.get(q('merged_empty')), []);
    assert.deepEqual(deps.readsOf(q('merged_empty')), [q('merged_empty')]);
    // Its UNION cannot be read (the server shows no engine for it): it may hold anything.
    assert.deepEqual(snapshot.storedIn?.get(q('merged_broken')), ['*']);
    assert.equal(deps.readsOf(q('merged_broken')), null);
    assert.equal(deps.writesOf(q('merged_broken')), 'everything');
    assert.equal(snapshot.storedIn?.has(q('plain_myisam')), false);
    // Any INSERT may advance a sequence through a column default: never cached.
    assert.equal(deps.readsOf(q('seq')), null);
    assert.deepEqual(deps.writesOf(q('numbered')), [q('numbered')]);
    assert.deepEqual(deps.readsOf(q('numbered')), [q('numbered')]);
  });

  test('tables enabled events write are never cacheable', () => {
    assert.ok(snapshot.writtenBehind?.includes(q('ticks')));
    assert.ok(!snapshot.writtenBehind?.includes(q('paused')));
    assert.equal(deps.readsOf(q('ticks')), null);
    assert.deepEqual(deps.readsOf(q('paused')), [q('paused')]);
    assert.deepEqual(deps.writesOf(q('ticks')), [q('ticks')]);
  });

  test('procedures that run no DDL, through the procedures they call', () => {
    const free = (name: string): boolean => deps.runsNoDdl(name);
    // Flow control, writes, and DDL words inside a string: no DDL. The name is lowered.
    assert.equal(free(q('writes_rows')), true);
    assert.equal(free(q('Writes_Rows')), false, 'looked up lowered only');
    assert.equal(free(q('calls_free')), true);
    assert.equal(free(`${OTHER}.elsewhere`), true);
    // A cycle of calls without DDL runs none; with DDL anywhere on it, each may.
    assert.equal(free(q('ping')), true);
    assert.equal(free(q('pong')), true);
    assert.equal(free(q('ping_ddl')), false);
    assert.equal(free(q('pong_ddl')), false);
    // DDL in the body, even on a branch not taken; dynamic SQL; a call of one that runs DDL or
    // of one the metadata does not show; PL/SQL; a call of a stored function.
    for (const name of [
      'makes_table',
      'drops_later',
      'dynamic',
      'prepares',
      'calls_ddl',
      'calls_missing',
      'oracle_style',
      'calls_making_function',
      'reads_writing_view',
      'f',
      'no_such_procedure',
      'makes_temp()',
      'calls_maker()',
    ]) {
      assert.equal(free(q(name)), false, name);
    }
    // Stored functions are keyed "name()": those that create no table, themselves or through
    // the functions they call, and the procedures that call only such.
    for (const name of [
      'f()',
      'audits()',
      'audits_twice()',
      'calls_function',
      'calls_function_qualified',
    ]) {
      assert.equal(free(q(name)), true, name);
    }
    assert.equal(deps.nameRunsNoDdl('audits()'), true, 'no UDF is named audits');
    assert.equal(deps.nameIsNoUdf('audits()'), true);
    assert.equal(deps.nameRunsNoDdl('makes_temp()'), false);
    // Every procedure the server has is listed (root may see them all): a name all of whose
    // procedures run no DDL runs none whatever the current database; one not seen may be new.
    assert.equal(deps.nameRunsNoDdl('writes_rows'), true);
    assert.equal(deps.nameRunsNoDdl('makes_table'), false);
    assert.equal(deps.nameRunsNoDdl('no_such_procedure'), false);
    // The system schemas' procedures are listed too: sys.ps_setup_save creates temporary tables.
    assert.equal(deps.runsNoDdl('sys.ps_setup_save'), false);
    assert.equal(deps.nameRunsNoDdl('ps_setup_save'), false);
    assert.deepEqual(
      [...(snapshot.ddlFreeProcedures ?? [])].filter((name) => name.startsWith(`${S}.`)).sort(),
      [
        q('advances'),
        q('audits()'),
        q('audits_twice()'),
        q('calls_free'),
        q('calls_function'),
        q('calls_function_qualified'),
        q('f()'),
        q('global_setting'),
        q('grants'),
        q('handles'),
        q('inserts_columns'),
        q('ping'),
        q('pong'),
        q('replaces_text'),
        q('updates_with_audit'),
        q('writes_rows'),
      ],
    );
  });

  test('what procedures write, with what they call; untold where the body does not say', () => {
    const writes = (name: string): string[] | null => {
      const written = deps.procedureWrites(name);
      return written === null ? null : [...written].sort();
    };
    assert.deepEqual(writes(q('writes_rows')), [q('t1')]);
    assert.deepEqual(writes(q('calls_free')), [q('t1'), `${OTHER}.part_b`]);
    assert.deepEqual(writes(q('inserts_columns')), [q('audit')]);
    assert.deepEqual(writes(q('handles')), [q('log_a'), q('log_b'), q('log_c')]);
    assert.deepEqual(writes(q('ping')), []);
    // Stored functions' writes, and theirs in the routines that call them.
    assert.deepEqual(writes(q('audits()')), [q('audit')]);
    assert.deepEqual(writes(q('audits_twice()')), [q('audit')]);
    assert.deepEqual(writes(q('f()')), []);
    assert.deepEqual(writes(q('updates_with_audit')), [q('audit'), q('t1')]);
    assert.deepEqual([...(deps.nameWrites('audits()') ?? [])], [q('audit')]);
    // A global setting, a sequence, a string function named as a statement, a grant: untold.
    for (const name of ['global_setting', 'advances', 'replaces_text', 'grants']) {
      assert.equal(deps.runsNoDdl(q(name)), true, name);
      assert.equal(writes(q(name)), null, name);
    }
    // Procedures that may run DDL write what cannot be told.
    assert.equal(writes(q('makes_table')), null);
    assert.deepEqual([...(deps.nameWrites('writes_rows') ?? [])], [q('t1')]);
    assert.equal(deps.nameWrites('grants'), null);
  });

  test('procedures that run no DDL but temporary tables’, with the tables they create', () => {
    const temporary = (name: string): object | null => {
      const procedure = deps.temporaryProcedure(name);
      return procedure === null
        ? null
        : {
            temporaries: [...procedure.temporaries].sort(),
            writes: procedure.writes && [...procedure.writes].sort(),
          };
    };
    assert.deepEqual(temporary(q('scratch_work')), {
      temporaries: [q('scratch'), `${OTHER}.kept`],
      writes: [q('scratch')],
    });
    assert.deepEqual(temporary(`${OTHER}.calls_scratch`), {
      temporaries: [q('scratch'), `${OTHER}.kept`],
      writes: [q('scratch'), `${OTHER}.part_b`],
    });
    // By name, for a CALL whose schema is not known: every procedure of the name.
    assert.deepEqual(deps.temporaryProcedureName('scratch_work')?.temporaries.sort(), [
      q('scratch'),
      `${OTHER}.kept`,
    ]);
    assert.equal(deps.temporaryProcedureName('scratch_then_table'), null);
    assert.equal(deps.temporaryProcedureName('writes_rows'), null, 'free: no temporary table');
    // Not free: a CALL of one still creates tables; nor one with other DDL, nor a function.
    assert.equal(deps.runsNoDdl(q('scratch_work')), false);
    assert.equal(deps.nameRunsNoDdl('scratch_work'), false);
    for (const name of ['scratch_then_table', 'makes_table', 'makes_temp()', 'writes_rows']) {
      assert.equal(temporary(q(name)), null, name);
    }
  });

  test('tables whose triggers may create a table, through the tables they write', () => {
    assert.equal(deps.writeMayCreateTables(q('maker')), true);
    assert.equal(deps.writeMayCreateTables(q('feeds_maker')), true, 'its trigger writes maker');
    assert.equal(deps.writeMayCreateTables(q('calls_maker')), true, 'a stored function may');
    assert.equal(deps.writeMayCreateTables(q('calls_f')), false, 'one known to create none');
    assert.equal(deps.writeMayCreateTables(q('calls_audits')), false);
    // Triggers that write with a column list, a built-in call, none at all: none.
    for (const name of ['orders', 'items', 'stamped', 'plain']) {
      assert.equal(deps.writeMayCreateTables(q(name)), false, name);
    }
    // A trigger with flow control writes what cannot be told, maker perhaps: it may.
    assert.equal(deps.writeMayCreateTables(q('flagged')), true);
  });

  test('point keys: a primary key of integer, string or binary columns, read from InnoDB’s dictionary', () => {
    const points = Object.fromEntries(
      [...(snapshot.pointKeys ?? [])]
        .filter(([name]) => name.startsWith(`${S}.`))
        // Integers only, unless a test says otherwise.
        .map(([name, key]) => [
          name,
          key.kinds.some((kind) => kind !== KeyKind.INTEGER)
            ? key
            : { ...key, kinds: key.kinds.length },
        ]),
    );
    const sole = { soleUniqueKey: true, movedByTriggers: false, kinds: 1 };
    const int = 2 ** 31 - 1;
    assert.deepEqual(points[q('plain')], { columns: ['id'], max: [int], ...sole });
    assert.deepEqual(points[q('keys_bigint')], {
      columns: ['id'],
      max: [Number.MAX_SAFE_INTEGER],
      ...sole,
    });
    assert.deepEqual(points[q('keys_tiny')], { columns: ['id'], max: [127], ...sole });
    assert.deepEqual(points[q('keys_named')], { columns: ['key_id'], max: [2 ** 24 - 1], ...sole });
    assert.deepEqual(points[q('keys_indexed')], { columns: ['id'], max: [int], ...sole });
    // Two columns, in the key's order (not the table's).
    assert.deepEqual(points[q('keys_pair')], {
      columns: ['a', 'b'],
      max: [int, int],
      ...sole,
      kinds: 2,
    });
    assert.deepEqual(points[q('keys_pair_reversed')], {
      columns: ['b', 'a'],
      max: [Number.MAX_SAFE_INTEGER, 2 ** 15 - 1],
      ...sole,
      kinds: 2,
    });
    // Strings of a collation key-text.ts folds: how many characters each holds.
    assert.deepEqual(points[q('keys_text')], {
      columns: ['code'],
      max: [10],
      ...sole,
      kinds: [KeyKind.TEXT],
    });
    assert.deepEqual(points[q('keys_char')], {
      columns: ['code'],
      max: [8],
      ...sole,
      kinds: [KeyKind.TEXT],
    });
    assert.deepEqual(points[q('keys_pair_text')], {
      columns: ['a', 'code'],
      max: [int, 10],
      ...sole,
      kinds: [KeyKind.INTEGER, KeyKind.TEXT],
    });
    // Bytes (VARBINARY, BINARY padded to its width): how many bytes each holds.
    assert.deepEqual(points[q('keys_binary')], {
      columns: ['code'],
      max: [10],
      ...sole,
      kinds: [KeyKind.BYTES],
    });
    assert.deepEqual(points[q('keys_uuid')], {
      columns: ['id'],
      max: [16],
      ...sole,
      kinds: [KeyKind.FIXED_BYTES],
    });
    assert.deepEqual(points[q('keys_pair_binary')], {
      columns: ['tenant', 'id'],
      max: [int, 16],
      ...sole,
      kinds: [KeyKind.INTEGER, KeyKind.FIXED_BYTES],
    });
    // A point key still, but not the table's one unique key (what an upsert may collide on).
    for (const name of ['keys_unique', 'keys_unique_pair', 'keys_unique_long', 'keys_fulltext']) {
      assert.deepEqual(
        points[q(name)],
        { columns: ['id'], max: [int], soleUniqueKey: false, movedByTriggers: false, kinds: 1 },
        name,
      );
    }
    // A BEFORE INSERT or UPDATE trigger that sets the key, or cannot be read; not one that
    // reads it in a write, sets another column, or runs after.
    for (const [name, moved] of [
      ['keys_shifted', true],
      ['keys_pair_shifted', true],
      ['keys_flow', true],
      ['keys_copied', false],
      ['stamped', false],
      ['orders', false],
      ['flagged', false],
    ] as const) {
      assert.equal(points[q(name)]?.movedByTriggers, moved, name);
    }
    // Not MyISAM's, not strings of a collation that takes letters for others, of a character
    // set whose bytes are not ASCII's, not ENUM, not a BLOB's prefix (a key of part of the
    // value), not the UUID type (its values are texts, not bytes: `'123e4567-…'`), not YEAR
    // (`y = 5` is 2005), not a partitioned table's (InnoDB lists its partitions), not a table
    // without a primary key.
    for (const name of [
      'plain_myisam',
      'keys_text_roman',
      'keys_text_utf16',
      'keys_enum',
      'keys_blob',
      'keys_uuid_type',
      'keys_year',
      'keys_none',
      'keys_parted',
    ]) {
      assert.equal(points[q(name)], undefined, name);
    }
  });

  test('the snapshot is the whole of it', () => {
    assert.deepEqual(ours(snapshot).storedIn, {
      [q('merged')]: [q('part_a'), `${OTHER}.part_b`],
      [q('merged_empty')]: [],
      [q('merged_broken')]: ['*'],
    });
    assert.deepEqual(ours(snapshot).triggerWrites, {
      [q('calls_f')]: [],
      [q('calls_audits')]: [q('audit')],
      [q('calls_maker')]: ['*'],
      [q('feeds_maker')]: [q('maker')],
      [q('maker')]: [q('shadowed')],
      [q('orders')]: [q('audit')],
      [q('items')]: [q('log_a'), q('log_b'), q('log_c')],
      [q('flagged')]: ['*'],
      [q('quoted')]: [q('audit')],
      [q('stamped')]: [],
      [q('keys_shifted')]: [],
      [q('keys_copied')]: [q('audit')],
      [q('keys_flow')]: ['*'],
      [q('keys_pair_shifted')]: [],
    });
    assert.deepEqual(ours(snapshot).cascades, {
      [q('parent')]: [q('child')],
      [q('child')]: [q('grandchild')],
      [q('owner')]: [q('kid-1'), q('pet')],
    });
  });

  test('with PROCESS the load opens no table but MERGE tables (foreign keys from InnoDB)', async () => {
    const opened = async (): Promise<number> =>
      Number((await admin.queryRows("SHOW SESSION STATUS LIKE 'Opened_tables'"))[0]?.[1]);
    const tables = ['parent', 'child', 'grandchild', 'owner', 'pet', 'kid-1', 'plain', 'ticks'];
    // Closed, so that opening them again counts.
    await run(admin, `FLUSH TABLES ${tables.map((name) => `${S}.\`${name}\``).join(', ')}`);
    const before = await opened();
    const again = await loadSchemaSnapshot(admin, {});
    const delta = (await opened()) - before;
    // SHOW CREATE TABLE of a MERGE table (of any schema on the server) opens it and its UNION;
    // reading the events opens mysql.event.
    let mergeOpens = 1;
    for (const [name, stored] of again.storedIn ?? []) {
      if (/^MRG_MYISAM$/i.test(again.baseTables.get(name) ?? '')) {
        mergeOpens += 1 + (stored[0] === '*' ? 1 : stored.length);
      }
    }
    assert.ok(delta <= mergeOpens, `opened ${delta} tables, ${mergeOpens} for MERGE tables`);
    assert.deepEqual(ours(again).cascades, ours(snapshot).cascades);
  });

  test('server settings passed in or read from the server give the same snapshot', async () => {
    const [row] = await admin.queryRows('SELECT @@lower_case_table_names, @@version');
    const given = await loadSchemaSnapshot(admin, {
      lowerCaseTableNames: Number(row?.[0]) as LowerCaseTableNames,
      serverVersion: serverVersionNumber(row?.[1] ?? '') ?? undefined,
      ansiQuotes: false,
    });
    assert.deepEqual(ours(given), ours(snapshot));
  });

  test('a user who may only SELECT: views unknown, triggers hidden, keys taken as cascading', async () => {
    await run(
      admin,
      `CREATE USER '${SELECT_ONLY_USER}'@'127.0.0.1' IDENTIFIED BY '${SELECT_ONLY_PASSWORD}'`,
    );
    await run(admin, `GRANT SELECT ON ${S}.* TO '${SELECT_ONLY_USER}'@'127.0.0.1'`);
    const limited = await MysqlConnection.connect({
      ...direct,
      user: SELECT_ONLY_USER,
      password: SELECT_ONLY_PASSWORD,
      database: S,
    });
    try {
      const seen = await loadSchemaSnapshot(limited, {});
      const limitedDeps = new TableDependencies(seen);
      assert.deepEqual(ours(seen).baseTables, ours(snapshot).baseTables);
      // Without SHOW VIEW the definitions are empty: no view can be cached.
      assert.deepEqual(seen.views.get(q('v_join')), ['*']);
      assert.equal(limitedDeps.readsOf(q('v_join')), null);
      assert.equal(limitedDeps.readsOf(q('v_const')), null);
      // Without TRIGGER the triggers are not listed at all, and nothing says so: the limitation
      // loadSchemaSnapshot documents.
      assert.deepEqual(ours(seen).triggerWrites, {});
      // Procedures' bodies are hidden from it (or the procedures are): none is known DDL-free.
      assert.equal(limitedDeps.runsNoDdl(q('writes_rows')), false);
      // Nor can it tell it sees every procedure: no name is known to run no DDL anywhere.
      assert.equal(limitedDeps.nameRunsNoDdl('writes_rows'), false);
      // The keys show without their rules, and are taken as cascading, RESTRICT included.
      assert.deepEqual(sorted(limitedDeps.writesOf(q('parent'))), [
        q('child'),
        q('grandchild'),
        q('parent'),
      ]);
      assert.deepEqual(sorted(limitedDeps.writesOf(q('strict_parent'))), [
        q('strict_child'),
        q('strict_parent'),
      ]);
    } finally {
      limited.close();
    }
  });
});
