import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Bypass } from '../../src/cache/cache-stats.ts';
import {
  DigestTable,
  MAX_DIGESTS,
  MAX_DIGEST_LENGTH,
  OTHER_DIGEST,
  digestTextOf,
  mergeDigests,
} from '../../src/cache/statement-digests.ts';
import { shapeOf, shapedKeyText } from '../../src/sql/statement-shape.ts';

/** The digest the router gives a text: of its shape, or of its key text without one. */
function digestOf(sql: string): string {
  return digestTextOf(shapeOf(sql), shapedKeyText(sql));
}

describe('statement digests', () => {
  test('literals become ?, the rest of the text stays as it is', () => {
    assert.equal(
      digestOf("  SELECT c FROM sbtest1 WHERE id = 42 AND pad = 'x y' ;; "),
      'SELECT c FROM sbtest1 WHERE id = ? AND pad = ?',
    );
    assert.equal(
      digestOf('INSERT INTO t VALUES (1, 2), (3,4)'),
      'INSERT INTO t VALUES (?, ?), (?,?)',
    );
    assert.equal(
      digestOf("SELECT v FROM u WHERE id = X'0aff' OR id = 0x0AFF"),
      'SELECT v FROM u WHERE id = ? OR id = ?',
    );
    // Texts with no shape are their own digests (SET, a comment, a double-quoted string).
    assert.equal(digestTextOf(null, 'SET @a = 1'), 'SET @a = 1');
    assert.equal(digestOf('SELECT "a" FROM t'), 'SELECT "a" FROM t');
    assert.equal(digestTextOf(null, 'x'.repeat(5000)).length, MAX_DIGEST_LENGTH);
  });

  test('a worker keeps MAX_DIGESTS digests apart, then counts new ones together', () => {
    const table = new DigestTable();
    for (let n = 0; n < MAX_DIGESTS; n++) table.recordOf(`SELECT ${n}`, 'select').count++;
    const other = table.recordOf('SELECT one more', 'select');
    assert.equal(other.digest, OTHER_DIGEST);
    assert.equal(table.recordOf('SELECT yet another', 'update'), other);
    assert.equal(table.recordOf('SELECT 7', 'select').count, 1, 'known digests still count');
    assert.equal(table.snapshot().length, MAX_DIGESTS + 1);
  });

  test('workers merge by digest: counts add up, the largest time wins, the main reason follows', () => {
    const [a, b] = [new DigestTable(), new DigestTable()];
    const ra = a.recordOf('SELECT ?', 'select');
    ra.count = 3;
    ra.bypasses[Bypass.ISOLATION] = 2;
    ra.addServerTime(100);
    ra.addServerTime(50);
    const rb = b.recordOf('SELECT ?', 'select');
    rb.count = 4;
    rb.hits = 1;
    rb.bypasses[Bypass.OWN_WRITES] = 3;
    rb.addServerTime(70);
    b.recordOf('UPDATE t SET v = ?', 'update').count = 9;
    const merged = mergeDigests([a.snapshot(), b.snapshot()]);
    assert.deepEqual(
      merged.map((row) => [row.digest, row.count]),
      [
        ['UPDATE t SET v = ?', 9],
        ['SELECT ?', 7],
      ],
    );
    const select = merged[1]!;
    assert.deepEqual(
      [select.hits, select.bypasses, select.mainBypassReason, select.bypassReasons],
      [1, 5, 'own_writes', { isolation: 2, own_writes: 3 }],
    );
    assert.deepEqual(
      [select.serverCount, select.serverMicros, select.maxServerMicros],
      [3, 220, 100],
    );
  });
});
