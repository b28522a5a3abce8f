/**
 * The counters behind SHOW STATUS: stale results leave the store (so Qcache_queries_in_cache
 * falls after writes), in bounded steps that resume where they stopped; FLUSH STATUS zeroes the
 * counters as the server does and leaves the gauges.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CacheStats, Counter } from '../../src/cache/cache-stats.ts';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';
import { QueryCache } from '../../src/cache/query-cache.ts';
import { NO_ENTRY, ResultStore } from '../../src/cache/result-store.ts';
import type { ResultInput } from '../../src/cache/result-store.ts';

function entry(tag: number, slot = 0): ResultInput {
  const bytes = Buffer.allocUnsafeSlow(8).fill(0);
  bytes.writeUInt32LE(tag, 0);
  return { bytes, statusOffsets: [], slots: Int32Array.of(slot), fillSeq: tag, rows: 0 };
}

describe('stale results are swept', () => {
  test('a sweep looks at `limit` index buckets, resumes where it stopped, and says when it is through', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    for (let tag = 0; tag < 10; tag++) store.set(`k${tag}`, entry(tag));
    const odd = (id: number): boolean => store.fillSeqOf(id) % 2 === 1;
    const fillSeqOf = (key: string): number | undefined => {
      const id = store.find(key);
      return id === NO_ENTRY ? undefined : store.fillSeqOf(id);
    };
    const half = store.buckets / 2;
    assert.equal(store.sweep(odd, half), false);
    const left = store.size;
    assert.ok(left > 5 && left < 10, `${left} left after half a pass: not a partial pass`);
    // An entry goes away between two steps: the pass goes on with the others.
    store.delete('k4');
    assert.equal(store.sweep(odd, store.buckets), true);
    assert.deepEqual(['k0', 'k2', 'k6', 'k8'].map(fillSeqOf), [0, 2, 6, 8]);
    assert.equal(store.size, 4);
    // A new pass starts from the first bucket again.
    store.set('k11', entry(11));
    assert.equal(store.sweep(odd, store.buckets), true);
    assert.equal(store.find('k11'), NO_ENTRY);
  });

  test('the query cache drops what a finished write made stale, and the gauges follow', () => {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate());
    const stats = new CacheStats(CacheStats.allocate(1), 0);
    const cache = new QueryCache(registry, stats, {
      type: 1,
      budgetBytes: 1 << 20,
      limitBytes: 1 << 20,
      ttlMs: 0,
    });
    const t = registry.slotOf('db.t');
    const u = registry.slotOf('db.u');
    const fill = registry.sequence();
    const bytes = (): Buffer => Buffer.alloc(16);
    assert.ok(cache.store('a', bytes(), [], Int32Array.of(t), fill, 0));
    assert.ok(cache.store('b', bytes(), [], Int32Array.of(u), fill, 0));
    assert.ok(cache.store('c', bytes(), [], Int32Array.of(t, u), fill, 0));
    assert.equal(stats.total(Counter.QUERIES_IN_CACHE), 3);
    registry.beginWrite(t);
    registry.endWrite(t);
    // Nothing looked the stale results up: they are still counted until a sweep.
    assert.equal(stats.total(Counter.QUERIES_IN_CACHE), 3);
    cache.sweep(1 << 20);
    assert.equal(stats.total(Counter.QUERIES_IN_CACHE), 1, 'only b is left');
    assert.notEqual(cache.lookup('b', null), NO_ENTRY);
    const used = stats.total(Counter.BYTES_USED);
    // No write since the last full pass: nothing to do.
    cache.sweep(1 << 20);
    assert.equal(stats.total(Counter.BYTES_USED), used);
  });
});

describe('FLUSH STATUS', () => {
  test('zeroes every worker’s counters as shown, keeps the gauges, and counts on from there', () => {
    const buffer = CacheStats.allocate(2);
    const first = new CacheStats(buffer, 0);
    const second = new CacheStats(buffer, 1);
    first.add(Counter.HITS, 5);
    second.add(Counter.HITS, 2);
    second.add(Counter.NOT_CACHED, 3);
    first.bypass(1);
    first.set(Counter.QUERIES_IN_CACHE, 4);
    second.set(Counter.BYTES_USED, 1000);
    assert.equal(first.shown(Counter.HITS), 7);
    second.flush();
    for (const stats of [first, second]) {
      assert.equal(stats.shown(Counter.HITS), 0);
      assert.equal(stats.shown(Counter.NOT_CACHED), 0);
      assert.equal(stats.shownBypass(1), 0);
      assert.equal(stats.shown(Counter.QUERIES_IN_CACHE), 4, 'a gauge');
      assert.equal(stats.shown(Counter.BYTES_USED), 1000, 'a gauge');
    }
    first.add(Counter.HITS);
    assert.equal(second.shown(Counter.HITS), 1);
    assert.equal(second.total(Counter.HITS), 8, 'the totals themselves are untouched');
  });
});
