/**
 * Admission: a miss is copied into the store unless results over its tables have been dying
 * unread (made stale by writes before anyone read them again). The scores alone, then the query
 * cache learning them from what happens to its entries, with the registry's real writes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CacheStats, Counter } from '../../src/cache/cache-stats.ts';
import {
  DECLINE_AT,
  FillAdmission,
  PROBE_EVERY,
  SCORE_MAX,
  SCORE_MIN,
  SERVED_CREDIT,
} from '../../src/cache/fill-admission.ts';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';
import { NO_ENTRY, QueryCache } from '../../src/cache/query-cache.ts';

/** How many of `misses` consecutive misses over `slots` would be stored. */
function admitted(admission: FillAdmission, slots: Int32Array, misses: number): number {
  let stored = 0;
  for (let i = 0; i < misses; i++) if (admission.admits(slots)) stored++;
  return stored;
}

describe('admission scores', () => {
  test('a table with no history, or whose results are served, has every miss stored', () => {
    const admission = new FillAdmission(1 << 16);
    const t = Int32Array.of(7);
    assert.equal(admitted(admission, t, 100), 100);
    for (let i = 0; i < 100; i++) admission.served(t);
    assert.equal(admission.score(7), SCORE_MAX, 'bounded above');
    assert.equal(admitted(admission, t, 100), 100);
  });

  test('wasted fills past the threshold decline all but one miss in PROBE_EVERY', () => {
    const admission = new FillAdmission(1 << 16);
    const t = Int32Array.of(7);
    for (let i = 0; i < -DECLINE_AT - 1; i++) admission.wasted(7);
    assert.equal(admitted(admission, t, 10), 10, 'not yet');
    admission.wasted(7);
    assert.equal(admitted(admission, t, PROBE_EVERY * 10), 10);
    for (let i = 0; i < 1000; i++) admission.wasted(7);
    assert.equal(admission.score(7), SCORE_MIN, 'bounded below');
  });

  test('a statement is declined when any table it reads declines', () => {
    const admission = new FillAdmission(1 << 16);
    for (let i = 0; i < 100; i++) admission.wasted(3);
    assert.equal(admitted(admission, Int32Array.of(4), 16), 16);
    assert.equal(admitted(admission, Int32Array.of(4, 3), 16), 1);
  });

  test('a declining table recovers once its probes are served, and RESET starts afresh', () => {
    const admission = new FillAdmission(1 << 16);
    const t = Int32Array.of(9);
    for (let i = 0; i < 100; i++) admission.wasted(9);
    const served = Math.ceil((DECLINE_AT + 1 - SCORE_MIN) / SERVED_CREDIT);
    for (let i = 0; i < served; i++) admission.served(t);
    assert.equal(admitted(admission, t, 16), 16);
    for (let i = 0; i < 100; i++) admission.wasted(9);
    admission.reset();
    assert.equal(admission.score(9), 0);
    assert.equal(admitted(admission, t, 16), 16);
  });
});

describe('the query cache learns admission from its entries', () => {
  function setUp(): { registry: InvalidationRegistry; stats: CacheStats; cache: QueryCache } {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate());
    const stats = new CacheStats(CacheStats.allocate(1), 0);
    const cache = new QueryCache(registry, stats, {
      type: 1,
      budgetBytes: 1 << 20,
      limitBytes: 1 << 20,
      ttlMs: 0,
    });
    return { registry, stats, cache };
  }
  const write = (registry: InvalidationRegistry, slot: number): void => {
    registry.beginWrite(slot);
    registry.endWrite(slot);
  };

  test('results made stale unread, found at lookup or by the sweep, decline the table written', () => {
    const { registry, stats, cache } = setUp();
    const t = registry.slotOf('db.t');
    const u = registry.slotOf('db.u');
    const both = Int32Array.of(t, u);
    for (let round = 0; round < -DECLINE_AT; round++) {
      assert.ok(cache.admits(`k${round}`, both));
      assert.ok(cache.store(`k${round}`, Buffer.alloc(16), [], both, registry.sequence(), 0));
      write(registry, t);
      // Half are found stale when looked up again, half are dropped in the background.
      if (round % 2 === 0) assert.equal(cache.lookup(`k${round}`, null), NO_ENTRY);
      else cache.sweep(1 << 20);
    }
    assert.equal(cache.admission.score(t), DECLINE_AT);
    assert.equal(cache.admission.score(u), 0, 'u was not written: not its fault');
    assert.ok(cache.admits('k', Int32Array.of(u)));
    assert.equal(admittedBy(cache, Int32Array.of(t), PROBE_EVERY), 1);
    assert.equal(stats.total(Counter.ADMISSION_DECLINED), PROBE_EVERY - 1);
    assert.equal(stats.total(Counter.NOT_CACHED), PROBE_EVERY - 1);
  });

  test('a result served before the write that made it stale is no waste', () => {
    const { registry, cache } = setUp();
    const t = registry.slotOf('db.t');
    const slots = Int32Array.of(t);
    for (let round = 0; round < 100; round++) {
      assert.ok(cache.admits('k', slots), `round ${round}`);
      cache.store('k', Buffer.alloc(16), [], slots, registry.sequence(), 0);
      assert.notEqual(cache.lookup('k', null), NO_ENTRY);
      write(registry, t);
      assert.equal(cache.lookup('k', null), NO_ENTRY);
    }
    assert.equal(cache.admission.score(t), SCORE_MAX);
  });

  test('a write to everything blames no table', () => {
    const { registry, cache } = setUp();
    const t = registry.slotOf('db.t');
    for (let round = 0; round < 100; round++) {
      cache.store('k', Buffer.alloc(16), [], Int32Array.of(t), registry.sequence(), 0);
      registry.beginWriteEverything();
      registry.endWriteEverything();
      assert.equal(cache.lookup('k', null), NO_ENTRY);
    }
    assert.equal(cache.admission.score(t), 0);
  });
});

describe('a nearly full store admits a miss at its second sighting', () => {
  // Room for a few dozen 1 KB results, so the test fills it quickly.
  const BUDGET = 64 << 10;
  function setUp(): { registry: InvalidationRegistry; stats: CacheStats; cache: QueryCache } {
    const registry = new InvalidationRegistry(InvalidationRegistry.allocate());
    const stats = new CacheStats(CacheStats.allocate(1), 0);
    const cache = new QueryCache(registry, stats, {
      type: 1,
      budgetBytes: BUDGET,
      limitBytes: BUDGET,
      ttlMs: 0,
    });
    return { registry, stats, cache };
  }

  test('with room, every miss is stored; once nearly full, a key only from its second miss', () => {
    const { registry, stats, cache } = setUp();
    const slots = Int32Array.of(registry.slotOf('db.t'));
    let key = 0;
    // Filling: every first miss is admitted until the store has no room to spare.
    while (cache.admits(`fill ${key}`, slots)) {
      assert.ok(cache.store(`fill ${key}`, Buffer.alloc(1024), [], slots, 0, 1), `stored ${key}`);
      key++;
      assert.ok(key < 1000, 'the store never filled');
    }
    assert.ok(key > 20, `only ${key} results before the store was nearly full`);
    assert.equal(stats.total(Counter.ADMISSION_UNSEEN), 1);
    assert.equal(stats.total(Counter.NOT_CACHED), 1);
    // The declined key's second miss is stored, and so is any key missed before.
    assert.ok(cache.admits(`fill ${key}`, slots), 'second sighting');
    assert.ok(!cache.admits('once', slots));
    assert.ok(!cache.admits('twice', slots));
    assert.ok(cache.admits('twice', slots));
    assert.equal(stats.total(Counter.ADMISSION_UNSEEN), 3);
    assert.equal(stats.total(Counter.ADMISSION_DECLINED), 0, 'the tables are not to blame');
    // RESET QUERY CACHE empties the store: first misses are stored again.
    cache.clear();
    assert.ok(cache.admits('after reset', slots));
  });

  test('a table declined for its writes is counted as declined, not unseen', () => {
    const { registry, stats, cache } = setUp();
    const t = registry.slotOf('db.t');
    for (let i = 0; i < 100; i++) cache.admission.wasted(t);
    assert.equal(admittedBy(cache, Int32Array.of(t), PROBE_EVERY), 1);
    assert.equal(stats.total(Counter.ADMISSION_DECLINED), PROBE_EVERY - 1);
    assert.equal(stats.total(Counter.ADMISSION_UNSEEN), 0);
  });
});

function admittedBy(cache: QueryCache, slots: Int32Array, misses: number): number {
  let stored = 0;
  for (let i = 0; i < misses; i++) if (cache.admits(`k${i}`, slots)) stored++;
  return stored;
}
