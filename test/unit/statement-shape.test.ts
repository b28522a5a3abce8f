/**
 * Statement shapes: texts that differ only in plain literals share one, every text where a
 * literal could be taken apart wrongly has none, and a text whose facts come from its shape has
 * exactly the facts the classifier gives it — checked over every statement of the classifier's
 * own tests, with new literals in it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { StatementMemo } from '../../src/proxy/statement-memo.ts';
import type { ClassifyMode } from '../../src/proxy/statement-memo.ts';
import { tokenizesTheSameInEveryMode } from '../../src/sql/mode-independence.ts';
import { NameEncoding, withResolvableNames } from '../../src/sql/name-encoding.ts';
import { classify, serverVersionNumber } from '../../src/sql/statement-classifier.ts';
import type { StatementInfo } from '../../src/sql/statement-info.ts';
import {
  LiteralSpans,
  findShape,
  matchesShape,
  shapeHash,
  hashText,
  shapeOf,
} from '../../src/sql/statement-shape.ts';

const MODE: ClassifyMode = {
  ansiQuotes: false,
  noBackslashEscapes: false,
  lowerCaseTableNames: 0,
  names: NameEncoding.UTF8MB4,
};
const VERSION = '10.11.19-MariaDB';

/** What the classifier itself says of `sql`, as the memo hands it out. */
function classified(sql: string): ReturnType<typeof classify> {
  return withResolvableNames(
    classify(sql, { ...MODE, serverVersion: serverVersionNumber(VERSION) ?? undefined }),
    MODE.names,
    MODE.lowerCaseTableNames,
  );
}

/** A COM_QUERY payload of `sql`, as the router hands it to the memo (Latin-1: a byte a char). */
function queryPayload(sql: string): Buffer {
  return Buffer.concat([Buffer.of(3), Buffer.from(sql, 'latin1')]);
}

/** The memo's entry of `sql` looked up by its bytes, as the router looks COM_QUERY up. */
function classifiedBytes(memo: StatementMemo, sql: string): ReturnType<StatementMemo['classify']> {
  return memo.classifyBytes(queryPayload(sql), 1, 0, () => MODE, VERSION);
}

/** The shape found in `sql`'s bytes, as the memo finds it: its hash, or null when it has none. */
function shapeHashOfBytes(sql: string): number | null {
  const bytes = queryPayload(sql);
  const spans = new LiteralSpans();
  return findShape(bytes, 1, bytes.length, spans) ? shapeHash(bytes, 1, bytes.length, spans) : null;
}

/** `sql` with every literal of its shape replaced by another one (the n-th variant). */
function withOtherLiterals(shape: string, n: number): string {
  let text = '';
  let count = 0;
  for (const char of shape) {
    if (char === '\u0001') text += String(n * 7919 + ++count * 104729);
    else if (char === '\u0002') text += `'v${n}-${++count} x'`;
    // A hex literal, in one spelling or the other by turns.
    else if (char === '\u0003')
      text +=
        ++count % 2 === 0
          ? `X'${(n * 7919 + count).toString(16).padStart(8, '0')}'`
          : `0x${n}f${count}`;
    else text += char;
  }
  return text;
}

/**
 * A point access with `values` for its candidates' and no positions (which differ by text). A
 * literal whose value is none (null: a string that names no row, where the shape's first text
 * had one that did) bounds nothing, as the classifier's missing candidate does: left out, and
 * with no candidate left, no point access (SchemaCatalog and the router read a null value so).
 */
function pointOf(info: StatementInfo, values: ReadonlyArray<string | null> | null): unknown {
  if (info.point === null) return null;
  const candidates = info.point.candidates
    .map((candidate, index) => ({
      column: candidate.column,
      value: values?.[index] ?? null,
      parameter: candidate.parameter,
    }))
    .filter((candidate) => candidate.value !== null || candidate.parameter >= 0)
    .map(({ column, value }) => ({ column, value }));
  return candidates.length === 0 ? null : { assigned: info.point.assigned, candidates };
}

describe('statement shapes', () => {
  test('texts that differ only in plain literals share a shape', () => {
    const pairs = [
      ['SELECT c FROM sbtest1 WHERE id=1', 'SELECT c FROM sbtest1 WHERE id=123456'],
      [
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'a-b', 'c')",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (77, 88, '', 'd e f')",
      ],
      ['  select * from `t 1` where a in (1,2)  ;', '  select * from `t 1` where a in (3,4)  ;'],
      [
        "UPDATE t SET v = 'x' WHERE id BETWEEN 5 AND 9",
        "UPDATE t SET v = 'y;z' WHERE id BETWEEN 1 AND 2",
      ],
      ['DELETE FROM t WHERE id = -5', 'DELETE FROM t WHERE id = -6'],
      // Hex literals, in either spelling: X'…' and 0x… mean the same.
      ["SELECT v FROM u WHERE id = X'0aFF'", "SELECT v FROM u WHERE id = x''"],
      ["SELECT v FROM u WHERE id = X'0a'", 'SELECT v FROM u WHERE id = 0xABC'],
      ["INSERT INTO u (id, v) VALUES (0x1F, 'a')", "INSERT INTO u (id, v) VALUES (X'00', 'b')"],
    ] as const;
    for (const [a, b] of pairs) {
      assert.notEqual(shapeOf(a), null, a);
      assert.equal(shapeOf(a), shapeOf(b), `${a} / ${b}`);
    }
  });

  test('texts whose names or structure differ do not', () => {
    const pairs = [
      ['SELECT * FROM t1', 'SELECT * FROM t2'],
      ['SELECT * FROM seq_1_to_10', 'SELECT * FROM seq_1_to_20'],
      ['SELECT * FROM `t 1`', 'SELECT * FROM `t 2`'],
      ['SELECT a FROM t WHERE id = 1', 'SELECT a FROM t WHERE id = 1 FOR UPDATE'],
      ["SELECT 'a' FROM t", 'SELECT 1 FROM t'],
      ["SELECT X'01' FROM t", 'SELECT 1 FROM t'],
      ["SELECT X'01' FROM t", "SELECT '01' FROM t"],
    ] as const;
    for (const [a, b] of pairs) {
      assert.notEqual(shapeOf(a), shapeOf(b), `${a} / ${b}`);
      // Compared by their bytes, as a text is matched against the shape of one seen before.
      const bytes = queryPayload(b);
      const spans = new LiteralSpans();
      assert.ok(findShape(bytes, 1, bytes.length, spans), b);
      assert.equal(matchesShape(bytes, 1, bytes.length, spans, shapeOf(a)!), false, `${a} / ${b}`);
    }
  });

  test('a text where a literal could be taken apart wrongly has no shape', () => {
    for (const sql of [
      'SELECT 1e5 FROM t',
      'SELECT 0x1G FROM t',
      'SELECT 0x FROM t',
      'SELECT 0x1F.5 FROM t',
      'SELECT 0X1F FROM t',
      'SELECT 0b101 FROM t',
      'SELECT 1.5 FROM t',
      'SELECT .5 FROM t',
      'SELECT * FROM db.1t',
      'SELECT * FROM db . 1',
      'SELECT 1abc FROM t',
      "SELECT X'0F1' FROM t",
      "SELECT X'0G' FROM t",
      "SELECT X'0F'a FROM t",
      "SELECT X'0F''1' FROM t",
      "SELECT B'01' FROM t",
      "SELECT @X'01' FROM t",
      "SELECT t.X'01' FROM t",
      "SELECT _utf8'a' FROM t",
      "SELECT 'it''s' FROM t",
      "SELECT 'a\\'b' FROM t",
      'SELECT "a" FROM t',
      'SELECT 1 FROM t -- comment',
      'SELECT 1 FROM t # comment',
      'SELECT /* c */ 1 FROM t',
      'SELECT /*!50000 1 */ FROM t',
      'SELECT @1 FROM t',
      'SELECT @ 1 FROM t',
      "SELECT 'é' FROM t",
      'SELECT 1 FROM t\u0000',
      "SELECT 'unterminated FROM t",
      'SELECT * FROM `unterminated',
      'SET @a = 1',
      'SHOW TABLES',
      'WITH c AS (SELECT 1) SELECT * FROM c',
      '(SELECT 1)',
    ]) {
      assert.equal(shapeOf(sql), null, sql);
      assert.equal(shapeHashOfBytes(sql), null, sql);
    }
  });

  test('facts from a shape are the classifier’s, over every statement of its tests', () => {
    const source = readFileSync(new URL('./sql-classifier.test.ts', import.meta.url), 'utf8');
    const statements = new Set<string>();
    // The cases' texts: `sql: '...'` and `sql: "..."` (template literals are left out).
    for (const match of source.matchAll(/sql:\s*(['"])((?:\\.|(?!\1)[^\\\n])*)\1/g)) {
      statements.add(match[2]!.replace(/\\(.)/g, (_, escaped: string) => escaped));
    }
    for (const extra of [
      'SELECT c FROM sbtest1 WHERE id=5',
      'SELECT a FROM t1 WHERE b = 1;;  ',
      '\n  SELECT a FROM t1 WHERE b = 2 ;\r\n',
      "SELECT a FROM t1 WHERE b = 'x';",
      'SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104',
      'SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 104',
      'SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c',
      'SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c',
      'UPDATE sbtest1 SET k=k+1 WHERE id=5',
      "UPDATE sbtest1 SET c='12-34' WHERE id=5",
      'DELETE FROM sbtest1 WHERE id=5',
      "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 6, '1-2', '3-4')",
      "REPLACE INTO t VALUES (1, 'a')",
      'SELECT SQL_NO_CACHE * FROM t WHERE a = 1',
      'SELECT * FROM t WHERE a = 1 LOCK IN SHARE MODE',
      "SELECT GET_LOCK('a', 10) FROM t",
      'SELECT * FROM t LIMIT 0',
      'SELECT * FROM t LIMIT 10, 20',
      "SELECT * FROM t INTO OUTFILE '/tmp/x'",
      'SELECT f(1) FROM t',
      "SELECT * FROM information_schema.tables WHERE table_name = 'x'",
      "SELECT * FROM mysql.user WHERE user = 'x'",
      'SELECT * FROM t1 JOIN t2 ON t1.a = t2.b WHERE t1.c = 3',
      "INSERT INTO t SELECT * FROM u WHERE a = 'x' ON DUPLICATE KEY UPDATE b = 2",
      "SELECT v FROM u WHERE id = X'0123456789abcdef'",
      'SELECT v FROM u WHERE id = 0x0123456789ABCDEF',
      "SELECT v FROM u WHERE id IN (X'00', 0x01) AND k = 5",
      "UPDATE u SET v = X'ff' WHERE id = X'0a0b'",
      "INSERT INTO u (id, v) VALUES (X'0a0b', 'xyz')",
      "DELETE FROM u WHERE id = 0xfe AND v = 'x'",
      "SELECT HEX(X'41'), 0x41 + 1 FROM t",
    ]) {
      statements.add(extra);
    }
    let shaped = 0;
    for (const sql of statements) {
      const shape = shapeOf(sql);
      if (shape === null) continue;
      // Found in its bytes with no text built, the shape hashes as its text does.
      assert.equal(shapeHashOfBytes(sql), hashText(shape), sql);
      const memo = new StatementMemo();
      memo.classify(sql, MODE, VERSION);
      // The router's way: by the bytes, where a new text of a known shape is matched unbuilt.
      const byBytes = new StatementMemo();
      classifiedBytes(byBytes, sql);
      for (let n = 1; n <= 2; n++) {
        const other = withOtherLiterals(shape, n);
        assert.equal(shapeOf(other), shape, `${other} has the shape of ${sql}`);
        for (const entry of [
          memo.classify(other, MODE, VERSION),
          classifiedBytes(byBytes, other),
        ]) {
          // The facts are the shape's, the key text and the point values the text's own (read
          // from its literals where the shape's first text had them).
          const own = classified(other);
          assert.deepEqual(
            {
              ...entry.info,
              keyText: entry.keyText,
              point: pointOf(entry.info, entry.pointValues),
            },
            { ...own, point: pointOf(own, own.point?.candidates.map((c) => c.value) ?? null) },
            `facts of ${other} (shaped as ${sql})`,
          );
          assert.equal(entry.modeIndependent, tokenizesTheSameInEveryMode(other), other);
        }
      }
      shaped++;
    }
    // The corpus must exercise the shapes, not pass by having none.
    assert.ok(shaped >= 150, `only ${shaped} statements had a shape`);
  });

  test('a shape’s facts are used: a new text of a known shape is not classified again', () => {
    const memo = new StatementMemo();
    const first = memo.classify('SELECT c FROM sbtest1 WHERE id>1', MODE, VERSION);
    const second = memo.classify('SELECT c FROM sbtest1 WHERE id>2', MODE, VERSION);
    // The same tables, by the very same objects: no second classification made them.
    assert.equal(second.info.reads, first.info.reads);
    assert.equal(second.keyText, 'SELECT c FROM sbtest1 WHERE id>2');
    // What the router derived from the first text's tables (its slots, for one schema and one
    // load of the metadata) serves every later text of the shape.
    first.readSlots = Int32Array.of(5);
    first.readGeneration = 3;
    first.readSchema = 'db';
    const third = memo.classify('SELECT c FROM sbtest1 WHERE id>3', MODE, VERSION);
    assert.equal(third.readSlots, first.readSlots);
    assert.equal(third.readGeneration, 3);
    assert.equal(third.readSchema, 'db');
    // By its bytes too.
    const fourth = classifiedBytes(memo, 'SELECT c FROM sbtest1 WHERE id>4');
    assert.equal(fourth.info.reads, first.info.reads);
    assert.equal(fourth.keyText, 'SELECT c FROM sbtest1 WHERE id>4');
    assert.equal(fourth.readSlots, first.readSlots);
  });

  test('a point statement’s shape: each text has its own values, and slots of its own', () => {
    const memo = new StatementMemo();
    const first = memo.classify('SELECT c FROM sbtest1 WHERE id=1', MODE, VERSION);
    assert.deepEqual(first.pointValues, ['1']);
    first.readSlots = Int32Array.of(5);
    first.readGeneration = 3;
    first.readSchema = 'db';
    for (const next of [
      memo.classify('SELECT c FROM sbtest1 WHERE id=0042', MODE, VERSION),
      classifiedBytes(memo, 'SELECT c FROM sbtest1 WHERE id=42'),
    ]) {
      // The shape's facts, by the very same objects, but this text's value (leading zeros
      // dropped), and no slots of the first text's value.
      assert.equal(next.info, first.info);
      assert.deepEqual(next.pointValues, ['42']);
      assert.equal(next.readSlots, null);
      assert.equal(next.readGeneration, -1);
    }
    // More digits than a value is read with: the text is no point statement.
    const long = classifiedBytes(memo, 'SELECT c FROM sbtest1 WHERE id=1234567890123456');
    assert.deepEqual(long.pointValues, [null]);
    // An INSERT's candidates are the columns given plain integers or strings, in the list's
    // order; a string that names no row gives no value.
    memo.classify("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 6, '1-2', '3-4')", MODE, VERSION);
    const insert = classifiedBytes(
      memo,
      "INSERT INTO sbtest1 (id, k, c, pad) VALUES (77, 0, '9-9', '8 8')",
    );
    assert.deepEqual(
      insert.info.point?.candidates.map((candidate) => candidate.column),
      ['id', 'k', 'c', 'pad'],
    );
    assert.deepEqual(insert.pointValues, ['77', '0', "'9-9", null]);
    // A quoted value (a string key's, or PDO's emulated prepares' id): a quote and the string,
    // this text's own; a string of anything else in its place gives none.
    memo.classify("SELECT c FROM sbtest1 WHERE id = '5'", MODE, VERSION);
    assert.deepEqual(classifiedBytes(memo, "SELECT c FROM sbtest1 WHERE id = '0061'").pointValues, [
      "'0061",
    ]);
    assert.deepEqual(classifiedBytes(memo, "SELECT c FROM sbtest1 WHERE id = 'Ab-1'").pointValues, [
      "'Ab-1",
    ]);
    assert.deepEqual(classifiedBytes(memo, "SELECT c FROM sbtest1 WHERE id = '6 1'").pointValues, [
      null,
    ]);
    assert.deepEqual(
      classifiedBytes(memo, `SELECT c FROM sbtest1 WHERE id = '${'a'.repeat(256)}'`).pointValues,
      [null],
    );
  });

  test('two shapes with one hash: a text takes only the facts of its own shape', () => {
    // Found by hashing the shapes of t0, t1, ... until two collided (the first pair).
    const [a, b] = [422_789, 639_192];
    const textOf = (n: number): string => `SELECT * FROM t${n} WHERE id = 1`;
    assert.equal(hashText(shapeOf(textOf(a))!), hashText(shapeOf(textOf(b))!));
    for (const lookUp of ['text', 'bytes'] as const) {
      const memo = new StatementMemo();
      memo.classify(textOf(a), MODE, VERSION);
      const sql = textOf(b).replace('= 1', '= 2');
      const entry =
        lookUp === 'text' ? memo.classify(sql, MODE, VERSION) : classifiedBytes(memo, sql);
      assert.deepEqual(entry.info, classified(sql), `${sql} by its ${lookUp}`);
    }
  });
});
