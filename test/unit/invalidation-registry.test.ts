/**
 * The invalidation registry on its own: what "never stale for the writes it sees" rests on.
 * A result is served only when no write to its tables began before it was read and ended after,
 * and none is in flight; numbers keep working across the 32-bit wrap; writers racing on real
 * threads over one SharedArrayBuffer lose no raise and no mark.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';
import { ROUND_DONE_WORD, ROUND_WORD, newControl, race } from '../support/registry-race.ts';

const SLOTS = 1024;

function newRegistry(): InvalidationRegistry {
  return new InvalidationRegistry(InvalidationRegistry.allocate(SLOTS));
}

function slotsOf(...slots: number[]): Int32Array {
  return Int32Array.from(slots);
}

/**
 * A registry whose sequence counter has reached `target` (unsigned), as in a proxy that has
 * already counted that many writes: driving 2^32 writes through the API would take minutes. The
 * counter (the buffer's first word) is moved forward in steps of 2^28, each step ending with a
 * write that takes the step's number, so the registry's own upkeep at such boundaries runs as
 * in a real run; the writes in between would only have raised other tables. The assertion fails
 * loudly if the counter ever moves out of the first word.
 */
function registryAt(target: number): InvalidationRegistry {
  const registry = newRegistry();
  const counter = new Int32Array(registry.buffer);
  const elsewhere = registry.slotOf('elsewhere.steps');
  const STEP = 2 ** 28;
  for (let boundary = STEP; boundary <= target; boundary += STEP) {
    counter[0] = (boundary - 1) | 0;
    registry.beginWrite(elsewhere);
    registry.endWrite(elsewhere);
  }
  counter[0] = target | 0;
  assert.equal(registry.sequence(), target | 0, 'the sequence counter is the first word');
  return registry;
}

/** A registry whose counter was set to `start` with nothing else touched (unreachable state). */
function counterOnly(start: number): InvalidationRegistry {
  const buffer = InvalidationRegistry.allocate(SLOTS);
  new Int32Array(buffer)[0] = start | 0;
  return new InvalidationRegistry(buffer);
}

/** Fresh for a reader outside a snapshot (its snapshot is the fill itself). */
function fresh(registry: InvalidationRegistry, slots: Int32Array, fillSeq: number): boolean {
  return registry.isFresh(slots, fillSeq, fillSeq);
}

describe('invalidation registry: one writer', () => {
  test('slots must be a power of two; every name maps into them', () => {
    assert.throws(() => InvalidationRegistry.allocate(1000), RangeError);
    assert.throws(() => InvalidationRegistry.allocate(0), RangeError);
    const registry = newRegistry();
    assert.equal(registry.slots, SLOTS);
    for (const name of ['test.t', 'a.b', '', 'schéma.tâble', 'x'.repeat(300)]) {
      const slot = registry.slotOf(name);
      assert.ok(Number.isInteger(slot) && slot >= 0 && slot < SLOTS, `${name} -> ${slot}`);
      assert.equal(registry.slotOf(name), slot, 'the same name, the same slot, every time');
    }
    const other = new InvalidationRegistry(registry.buffer);
    assert.equal(
      other.slotOf('test.t'),
      registry.slotOf('test.t'),
      'the same slot in every worker',
    );
  });

  test('a write invalidates from the moment it is marked, and results read after it are good', () => {
    const registry = newRegistry();
    const t = slotsOf(registry.slotOf('test.t'));
    const fill = registry.sequence();
    assert.ok(fresh(registry, t, fill), 'nothing written since the read');

    registry.beginWrite(t[0]!);
    assert.equal(fresh(registry, t, fill), false, 'in flight: the write may have committed');
    const duringWrite = registry.sequence();
    assert.equal(fresh(registry, t, duringWrite), false, 'a read racing the write is not served');

    registry.endWrite(t[0]!);
    assert.equal(fresh(registry, t, fill), false, 'read before the write: stale for good');
    assert.equal(fresh(registry, t, duringWrite), false, 'read during the write: stale for good');
    const after = registry.sequence();
    assert.ok(fresh(registry, t, after), 'read after the write ended: good');
  });

  test('a write to one table leaves results of other tables alone', () => {
    const registry = newRegistry();
    const a = registry.slotOf('test.a');
    let b = registry.slotOf('test.b');
    // Two names may share a slot (an extra miss only); pick one that does not.
    for (let i = 0; b === a; i++) b = registry.slotOf(`test.b${i}`);
    const fill = registry.sequence();
    registry.beginWrite(a);
    assert.ok(fresh(registry, slotsOf(b), fill));
    registry.endWrite(a);
    assert.ok(fresh(registry, slotsOf(b), fill));
    assert.equal(fresh(registry, slotsOf(b, a), fill), false, 'a result reading both is stale');
  });

  test('in-flight marks are counted: a slot is clear only when every write on it has ended', () => {
    const registry = newRegistry();
    const slot = registry.slotOf('test.t');
    registry.beginWrite(slot);
    registry.beginWrite(slot);
    assert.equal(registry.inFlight(slot), 2);
    registry.endWrite(slot);
    assert.equal(registry.inFlight(slot), 1);
    const fill = registry.sequence();
    assert.equal(fresh(registry, slotsOf(slot), fill), false, 'the second write is still running');
    registry.endWrite(slot);
    assert.equal(registry.inFlight(slot), 0);
    assert.equal(fresh(registry, slotsOf(slot), fill), false, 'and it ended after the read');
    assert.ok(fresh(registry, slotsOf(slot), registry.sequence()));
  });

  test('a write whose tables cannot be known invalidates everything, in flight and after', () => {
    const registry = newRegistry();
    const t = slotsOf(registry.slotOf('test.t'), registry.slotOf('other.u'));
    const fill = registry.sequence();
    registry.beginWriteEverything();
    assert.equal(fresh(registry, t, fill), false);
    assert.equal(fresh(registry, slotsOf(), fill), false, 'even a table-less result');
    registry.endWriteEverything();
    assert.equal(fresh(registry, t, fill), false);
    assert.ok(fresh(registry, t, registry.sequence()));
  });

  test('RESET QUERY CACHE: every result stale, and every worker sees the clear count move', () => {
    const registry = newRegistry();
    const other = new InvalidationRegistry(registry.buffer);
    const t = slotsOf(registry.slotOf('test.t'));
    const fill = registry.sequence();
    const cleared = other.clearCount();
    registry.clearAll();
    assert.notEqual(other.clearCount(), cleared);
    assert.equal(fresh(other, t, fill), false);
    assert.ok(fresh(other, t, other.sequence()));
  });

  test('writes made elsewhere: seen until the follower says otherwise, on every view', () => {
    const registry = newRegistry();
    const worker = new InvalidationRegistry(registry.buffer);
    assert.equal(worker.writesElsewhereSeen(), true);
    registry.setWritesElsewhereSeen(false);
    assert.equal(worker.writesElsewhereSeen(), false);
    registry.setWritesElsewhereSeen(true);
    assert.equal(worker.writesElsewhereSeen(), true);
  });

  test('DDL: metadata is not trusted while it runs, and the schema version moves after it', () => {
    const registry = newRegistry();
    const version = registry.schemaVersion();
    registry.beginSchemaChange();
    assert.equal(registry.schemaChangesInFlight(), 1);
    registry.endSchemaChange();
    assert.equal(registry.schemaChangesInFlight(), 0);
    assert.notEqual(registry.schemaVersion(), version);
  });

  test('snapshots: a result is served to a snapshot only if its tables did not move past it', () => {
    const registry = newRegistry();
    const t = slotsOf(registry.slotOf('test.t'));
    const snapshot = registry.sequence();
    registry.beginWrite(t[0]!);
    registry.endWrite(t[0]!);
    const fillAfterWrite = registry.sequence();
    // Stored by another session after the write: the write is in it, the snapshot predates it.
    assert.equal(registry.isFresh(t, fillAfterWrite, snapshot), false);
    // A snapshot taken after the write sees it: the result is what it would read.
    assert.ok(registry.isFresh(t, fillAfterWrite, registry.sequence()));
    // A result read inside an older snapshot of the same data, after the write: stale for a
    // later snapshot that includes the write.
    const laterSnapshot = registry.sequence();
    assert.equal(registry.isFresh(t, snapshot, laterSnapshot), false);
  });
});

describe('invalidation registry: sequence wrap-around', () => {
  // Int32 words: the signed wrap (0x7fffffff -> -0x80000000) is where a plain comparison breaks.
  for (const [name, start] of [
    ['the signed 32-bit wrap', 2 ** 31 - 3],
    ['the unsigned 32-bit wrap', 2 ** 32 - 3],
  ] as const) {
    test(`results read before ${name} are invalidated by writes after it`, () => {
      const registry = registryAt(start);
      const t = slotsOf(registry.slotOf('test.t'));
      const u = slotsOf(registry.slotOf('test.u'));
      const fill = registry.sequence();
      // Writes elsewhere carry the counter across the wrap.
      for (let i = 0; i < 5; i++) {
        registry.beginWrite(u[0]!);
        registry.endWrite(u[0]!);
      }
      assert.ok(fresh(registry, t, fill), 'untouched tables stay good across the wrap');
      assert.equal(fresh(registry, u, fill), false, 'written tables are stale across the wrap');
      registry.beginWrite(t[0]!);
      registry.endWrite(t[0]!);
      assert.equal(fresh(registry, t, fill), false, 'a write after the wrap invalidates');
      const after = registry.sequence();
      assert.ok(fresh(registry, t, after), 'and results read after it are good');
      // A snapshot taken before the wrap does not see a result filled after it.
      assert.equal(registry.isFresh(t, after, fill), false);
    });

    test(`a write that finished before ${name} does not make later results stale`, () => {
      const registry = registryAt(start);
      const t = slotsOf(registry.slotOf('test.t'));
      registry.beginWrite(t[0]!);
      registry.endWrite(t[0]!);
      const u = registry.slotOf('test.u');
      for (let i = 0; i < 5; i++) {
        registry.beginWrite(u);
        registry.endWrite(u);
      }
      assert.ok(fresh(registry, t, registry.sequence()));
      registry.beginWriteEverything();
      registry.endWriteEverything();
      assert.ok(fresh(registry, t, registry.sequence()), 'also after an everything-write');
    });
  }

  test('a table not written for 2^31 writes is still cached, and its next write still counts', () => {
    // The counter goes round more than once: tables written once, long ago, must neither look
    // newer than every result nor swallow their next write.
    for (const target of [2 ** 31 + 5, 2 ** 32 - 2 ** 29 + 5, 2 ** 32 + 2 ** 30]) {
      const registry = registryAt(target);
      const t = slotsOf(registry.slotOf('test.t'));
      const fill = registry.sequence();
      assert.ok(fresh(registry, t, fill), `${target}: an old table's result is served`);
      registry.beginWriteEverything();
      registry.endWriteEverything();
      assert.ok(fresh(registry, t, registry.sequence()), `${target}: also after an everything`);
      const before = registry.sequence();
      registry.beginWrite(t[0]!);
      registry.endWrite(t[0]!);
      assert.equal(fresh(registry, t, before), false, `${target}: its next write invalidates`);
      assert.ok(fresh(registry, t, registry.sequence()));
    }
  });

  test('a result older than 2^30 writes is stale, even where the numbers alias past 2^31', () => {
    const t = slotsOf(newRegistry().slotOf('test.t'));
    const fill = 1000;
    // Just under the age bound: untouched tables are still good.
    assert.ok(fresh(counterOnly(fill + 2 ** 30 - 1), t, fill));
    assert.equal(fresh(counterOnly(fill + 2 ** 30), t, fill), false);
    // A write 2^31 + 1 numbers later looks "before" the fill by difference: the age bound is
    // what keeps that result from being served.
    const aliased = counterOnly(fill + 2 ** 31);
    aliased.beginWrite(t[0]!);
    aliased.endWrite(t[0]!);
    assert.equal(fresh(aliased, t, fill), false);
  });
});

function sum(counts: number[]): number {
  return counts.reduce((total, count) => total + count, 0);
}

describe('invalidation registry: writers racing on real threads', () => {
  for (const target of ['one table', 'everything'] as const) {
    test(`writes ending at once on ${target}: the newest number wins, every mark is released`, async () => {
      const registry = newRegistry();
      const slot = target === 'everything' ? -1 : registry.slotOf('test.t');
      // One per core: spinning threads beyond that would wait for time slices, not collide.
      const threads = 2;
      const base = { registry: registry.buffer, control: newControl(), slot };
      const running = await race(Array.from({ length: threads }, () => base));
      const words = running.control;
      const t = slotsOf(registry.slotOf('test.t'));
      const problems: string[] = [];
      try {
        for (let round = 1; round <= 10_000 && problems.length === 0; round++) {
          const before = registry.sequence();
          Atomics.store(words, ROUND_DONE_WORD, 0);
          Atomics.store(words, ROUND_WORD, round);
          for (let done = 0; done < threads; done = Atomics.load(words, ROUND_DONE_WORD)) {
            Atomics.wait(words, ROUND_DONE_WORD, done, 1000);
          }
          const after = registry.sequence();
          if (((after - before) | 0) !== threads)
            problems.push(`round ${round}: ${threads} writes took ${after - before} numbers`);
          if (slot >= 0 && registry.inFlight(slot) !== 0)
            problems.push(`round ${round}: a mark was left in flight`);
          if (fresh(registry, t, before))
            problems.push(`round ${round}: a result read before the writes is still fresh`);
          // A slot that moved back below the newest number would serve a result read between
          // the last two writes' numbers although the last write began after it.
          if (fresh(registry, t, (after - 1) | 0))
            problems.push(`round ${round}: the newest number was lost (an older raise won)`);
          if (!fresh(registry, t, after))
            problems.push(`round ${round}: a result read after every write ended is not fresh`);
        }
      } finally {
        const counts = await running.stop();
        assert.equal(registry.sequence(), sum(counts));
      }
      assert.deepEqual(problems, []);
    });
  }
});
