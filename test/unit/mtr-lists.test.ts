/** The regression suite's lists: known failures (the ratchet) and accepted differences. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { differencesBeyond, readKnownFailures } from '../mtr/known-failures.ts';
import { readAcceptedDifferences } from '../mtr/result-diff.ts';

const dir = mkdtempSync(join(tmpdir(), 'nicecache-mtr-lists-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('known failures: modes and reasons per test, comments and blank lines skipped', () => {
  const known = readKnownFailures(
    file(
      'known.txt',
      '# a comment\n\nquery_cache cache-on -- why\nsp cache-on,cache-off -- other\n',
    ),
  );
  assert.deepEqual([...known.keys()], ['query_cache', 'sp']);
  assert.deepEqual([...known.get('sp')!.modes], ['cache-on', 'cache-off']);
  assert.equal(known.get('query_cache')!.reason, 'why');
});

test('known failures: the lines a failure may change, and what differs beyond them', () => {
  const known = readKnownFailures(
    file(
      'lines.txt',
      'cache_innodb cache-on /^Qcache_hits\\t/ -- hits differ\nsp cache-on -- any\n',
    ),
  );
  const listed = known.get('cache_innodb')!;
  assert.equal(listed.reason, 'hits differ');
  assert.ok(listed.lines!.test('Qcache_hits\t3'));
  assert.equal(known.get('sp')!.lines, null);

  const expected = file('expected.result', 'SELECT 1;\n1\nQcache_hits\t0\nQcache_inserts\t1\n');
  const asListed = file('listed.reject', 'SELECT 1;\n1\nQcache_hits\t2\nQcache_inserts\t1\n');
  const more = file('more.reject', 'SELECT 1;\n2\nQcache_hits\t2\nQcache_inserts\t3\n');
  assert.deepEqual(differencesBeyond(listed, expected, asListed, []), []);
  assert.deepEqual(differencesBeyond(listed, expected, more, []), [
    '-1',
    '+2',
    '-Qcache_inserts\t1',
    '+Qcache_inserts\t3',
  ]);
  // An accepted difference still explains what it names.
  const accepted = readAcceptedDifferences(file('acc.txt', '* /^Qcache_inserts\\t/ -- reason\n'));
  assert.deepEqual(differencesBeyond(listed, expected, more, accepted), ['-1', '+2']);
  // An entry without lines may change any.
  assert.deepEqual(differencesBeyond(known.get('sp')!, expected, more, []), []);
});

test('known failures: a line without a mode or reason, or a test listed twice, is refused', () => {
  assert.throws(() => readKnownFailures(file('a.txt', 'query_cache -- why\n')), /a\.txt:1/);
  assert.throws(() => readKnownFailures(file('b.txt', 'query_cache direct -- why\n')), /b\.txt:1/);
  assert.throws(
    () => readKnownFailures(file('c.txt', 'sp cache-on -- a\nsp cache-off -- b\n')),
    /listed twice/,
  );
});

test('accepted differences: the repository’s lists parse', () => {
  const here = new URL('../mtr/', import.meta.url).pathname;
  assert.ok(readAcceptedDifferences(join(here, 'accepted-differences.txt')).length > 0);
  assert.ok(readKnownFailures(join(here, 'known-failures.txt')).size > 0);
  const parsed = readAcceptedDifferences(file('d.txt', 'view -/^Opened\\t/ -- reason\n'));
  assert.equal(parsed[0]!.drop, true);
  assert.ok(parsed[0]!.line.test('Opened\t3'));
});
