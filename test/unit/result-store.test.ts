/**
 * The per-worker entry store: its byte budget is a hard bound, its accounting matches what it
 * holds, and it evicts as SIEVE does (a read entry outlives unread ones, a scan does not flush a
 * hot set).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENTRY_OVERHEAD_BYTES, ResultStore } from '../../src/cache/result-store.ts';
import type { CachedResult } from '../../src/cache/result-store.ts';

type Input = Omit<CachedResult, 'storedAt' | 'served'>;

/** A result whose bytes start with `tag`, so a later read shows which version was stored. */
function result(tag: number, replyBytes = 16, slots = 1): Input {
  const bytes = Buffer.allocUnsafeSlow(Math.max(replyBytes, 4));
  bytes.fill(0);
  bytes.writeUInt32LE(tag, 0);
  return { bytes, statusOffsets: [0], slots: new Int32Array(slots), fillSeq: tag };
}

function tagOf(entry: CachedResult | undefined): number | undefined {
  return entry?.bytes.readUInt32LE(0);
}

/** A budget that holds exactly `count` entries made by result(tag), keys `keyLength` long. */
function budgetFor(count: number, keyLength = 1): number {
  return count * ResultStore.chargeOf('k'.repeat(keyLength), result(0)) + 1;
}

/** Keys of one length, so that every entry costs the same. */
function padded(name: string): string {
  return name.padStart(10, '.');
}

/** mulberry32: a small seeded PRNG, so a failing run replays exactly. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ResultStore', () => {
  test('charges the reply, the key, the slots, the status offsets and the overhead', () => {
    const input = { bytes: Buffer.alloc(100), slots: new Int32Array(3), statusOffsets: [1, 2] };
    assert.equal(ResultStore.chargeOf('abc', input), 100 + 3 + 12 + 16 + ENTRY_OVERHEAD_BYTES);
    // Latin-1 strings take one byte a character in V8, anything else two.
    assert.equal(ResultStore.chargeOf('é', input) - ResultStore.chargeOf('e', input), 0);
    assert.equal(ResultStore.chargeOf('a€', input) - ResultStore.chargeOf('ab', input), 2);
  });

  test('the budget is never exceeded and the accounting matches the entries held', () => {
    const random = seeded(20_240_601);
    const budget = 40_000;
    const store = new ResultStore({ budgetBytes: budget });
    const keys = Array.from({ length: 300 }, (_, i) => `SELECT * FROM t WHERE id = ${i}`);
    /** The tag and charge each key was last stored with, successfully. */
    const latest = new Map<string, { tag: number; charge: number }>();
    let refused = 0;

    for (let step = 1; step <= 20_000; step++) {
      const key = keys[Math.floor(random() * keys.length)]!;
      const draw = random();
      if (draw < 0.6) {
        // Mostly small replies, some close to or over the budget.
        const size = random() < 0.97 ? Math.floor(random() * 2_000) : Math.floor(random() * 45_000);
        const input = result(step, size, 1 + Math.floor(random() * 4));
        const charge = ResultStore.chargeOf(key, input);
        const stored = store.set(key, input);
        assert.equal(stored, charge <= budget);
        if (stored) {
          latest.set(key, { tag: step, charge });
          assert.equal(tagOf(store.get(key)), step, 'a new entry is never its own victim');
        } else {
          latest.delete(key);
          refused++;
          assert.equal(store.get(key), undefined, 'a refused replacement leaves nothing behind');
        }
      } else if (draw < 0.95) {
        const entry = store.get(key);
        if (entry !== undefined) assert.equal(tagOf(entry), latest.get(key)?.tag);
      } else {
        const held = store.get(key) !== undefined;
        assert.equal(store.delete(key), held);
        assert.equal(store.get(key), undefined);
        latest.delete(key);
      }
      assert.ok(store.bytesUsed <= budget, `step ${step}: ${store.bytesUsed} > ${budget}`);

      if (step % 1_000 === 0) {
        let held = 0;
        let charged = 0;
        for (const k of keys) {
          const entry = store.get(k);
          if (entry === undefined) continue;
          const expected = latest.get(k);
          assert.ok(expected !== undefined, `${k} is held but was deleted or refused`);
          assert.equal(tagOf(entry), expected.tag, `${k} holds a replaced version`);
          held++;
          charged += expected.charge;
        }
        assert.equal(store.size, held);
        assert.equal(store.bytesUsed, charged);
      }
    }
    assert.ok(store.evictions > 1_000, `only ${store.evictions} evictions: budget not exercised`);
    assert.ok(refused > 0, 'no oversize entry was drawn');
  });

  test('an entry larger than the whole budget is refused', () => {
    const input = result(1, 1_000);
    const charge = ResultStore.chargeOf('k', input);
    const tight = new ResultStore({ budgetBytes: charge - 1 });
    assert.equal(tight.set('k', input), false);
    assert.equal(tight.size, 0);
    assert.equal(tight.bytesUsed, 0);
    assert.equal(tight.get('k'), undefined);

    const exact = new ResultStore({ budgetBytes: charge });
    assert.equal(exact.set('k', input), true);
    assert.equal(exact.bytesUsed, charge);
    // Replacing it with one too large drops the old version too: it is no longer the latest.
    assert.equal(exact.set('k', result(2, 2_000)), false);
    assert.equal(exact.size, 0);
    assert.equal(exact.bytesUsed, 0);
    assert.equal(exact.evictions, 0);
  });

  test('replacing an entry charges the new version only', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const small = result(1, 10);
    const large = result(2, 5_000, 3);
    store.set('k', small);
    assert.equal(store.bytesUsed, ResultStore.chargeOf('k', small));
    store.set('k', large);
    assert.equal(store.size, 1);
    assert.equal(store.bytesUsed, ResultStore.chargeOf('k', large));
    assert.equal(tagOf(store.get('k')), 2);
    store.set('k', small);
    assert.equal(store.bytesUsed, ResultStore.chargeOf('k', small));
    assert.equal(store.evictions, 0, 'a replacement is not an eviction');
  });

  test('SIEVE evicts an unread entry before a read one, and the hand moves on', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3) });
    for (const key of ['a', 'b', 'c']) store.set(key, result(1));
    store.get('a');
    store.set('d', result(1));
    // FIFO would have evicted a, the oldest; SIEVE clears its bit and takes b.
    assert.equal(store.get('b'), undefined);
    assert.ok(store.get('a') && store.get('c') && store.get('d'));
    assert.equal(store.evictions, 1);

    // a, c and d are all read now; the hand, past a, clears c and d, wraps to a, clears it, and
    // evicts c, the first whose bit it finds clear.
    store.set('e', result(1));
    assert.equal(store.get('c'), undefined);
    assert.deepEqual(
      ['a', 'd', 'e'].map((key) => store.get(key) !== undefined),
      [true, true, true],
    );
    assert.equal(store.size, 3);
    assert.equal(store.evictions, 2);
  });

  test('an entry read once outlives any number of entries never read', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3, 10) });
    store.set(padded('hot'), result(1));
    store.get(padded('hot'));
    for (let i = 0; i < 1_000; i++) store.set(padded(`scan ${i}`), result(i));
    // LRU would have evicted it two inserts after it was read. The hand cleared its bit once,
    // then evicts the scan's entries in insertion order and never comes back around to it.
    assert.equal(tagOf(store.get(padded('hot'))), 1);
    assert.equal(store.evictions, 1_000 - 2);
  });

  test('a one-time scan does not flush a hot set that keeps being read', () => {
    const hotKeys = Array.from({ length: 50 }, (_, i) => padded(`hot ${i}`));
    const store = new ResultStore({ budgetBytes: budgetFor(100, 10) });
    for (const key of hotKeys) store.set(key, result(1));
    for (let i = 0; i < 10_000; i++) {
      store.set(padded(`scan ${i}`), result(2));
      // Each hot key is read once every 50 scan inserts, far fewer than the store holds.
      store.get(hotKeys[i % hotKeys.length]!);
    }
    const survivors = hotKeys.filter((key) => store.get(key) !== undefined);
    assert.deepEqual(survivors, hotKeys);
    assert.equal(store.size, 100);
    assert.ok(store.bytesUsed <= store.budgetBytes);
  });

  test('an entry expires after its TTL, on the injected clock', () => {
    let now = 1_000;
    const store = new ResultStore({ budgetBytes: 1 << 20, ttlMs: 100, now: () => now });
    store.set('k', result(1));
    assert.equal(store.get('k')?.storedAt, 1_000);
    now = 1_099;
    assert.equal(tagOf(store.get('k')), 1);
    now = 1_100;
    assert.equal(store.get('k'), undefined);
    assert.equal(store.expired, 1);
    assert.equal(store.evictions, 0);
    assert.equal(store.size, 0);
    assert.equal(store.bytesUsed, 0);

    // Storing again starts a new lifetime.
    store.set('k', result(2));
    now = 1_150;
    assert.equal(tagOf(store.get('k')), 2);
  });

  test('without a TTL nothing expires', () => {
    let now = 0;
    const store = new ResultStore({ budgetBytes: 1 << 20, now: () => now });
    store.set('k', result(1));
    now = Number.MAX_SAFE_INTEGER;
    assert.equal(tagOf(store.get('k')), 1);
    assert.equal(store.expired, 0);
  });

  test('making room drops expired entries first, read or not, as expired', () => {
    let now = 0;
    const store = new ResultStore({ budgetBytes: budgetFor(2), ttlMs: 100, now: () => now });
    store.set('o', result(1));
    store.get('o');
    now = 60;
    store.set('y', result(2));
    now = 120;
    store.set('n', result(3));
    assert.equal(store.expired, 1);
    assert.equal(store.evictions, 0);
    assert.equal(tagOf(store.get('y')), 2);
    assert.equal(tagOf(store.get('n')), 3);
  });

  test('delete and clear give the bytes back', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const a = result(1, 100);
    const b = result(2, 300);
    store.set('a', a);
    store.set('b', b);
    assert.equal(store.bytesUsed, ResultStore.chargeOf('a', a) + ResultStore.chargeOf('b', b));
    assert.equal(store.delete('a'), true);
    assert.equal(store.delete('a'), false);
    assert.equal(store.size, 1);
    assert.equal(store.bytesUsed, ResultStore.chargeOf('b', b));
    store.clear();
    assert.equal(store.size, 0);
    assert.equal(store.bytesUsed, 0);
    assert.equal(store.get('b'), undefined);
  });

  test('deleting the entry under the hand moves the hand past it', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3) });
    for (const key of ['a', 'b', 'c']) store.set(key, result(1));
    store.get('a');
    store.set('d', result(1)); // evicts b; the hand now rests on c
    assert.equal(store.delete('c'), true);
    store.set('e', result(1)); // fits: no eviction
    store.set('f', result(1)); // the hand, on d now, evicts it
    assert.equal(store.get('d'), undefined);
    assert.deepEqual(
      ['a', 'e', 'f'].map((key) => tagOf(store.get(key))),
      [1, 1, 1],
    );
    assert.equal(store.size, 3);
    assert.equal(store.bytesUsed, 3 * ResultStore.chargeOf('k', result(0)));
  });

  test('after clear the store evicts correctly again', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3, 10) });
    for (let i = 0; i < 10; i++) store.set(padded(`before ${i}`), result(i));
    store.clear();
    for (let i = 0; i < 10; i++) store.set(padded(`after ${i}`), result(i));
    assert.equal(store.size, 3);
    assert.equal(store.bytesUsed, 3 * ResultStore.chargeOf(padded('k'), result(0)));
    // With nothing read, SIEVE is FIFO: the three newest are left.
    assert.deepEqual(
      Array.from({ length: 10 }, (_, i) => tagOf(store.get(padded(`after ${i}`)))),
      [...Array<undefined>(7).fill(undefined), 7, 8, 9],
    );
  });

  test('keeps replies in buffers of their own, not views into a shared slab', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const pooled = Buffer.allocUnsafe(120).fill(7);
    assert.ok(pooled.buffer.byteLength > pooled.length, 'expected a view into the pool');
    store.set('pooled', { bytes: pooled, statusOffsets: [], slots: new Int32Array(1), fillSeq: 0 });
    const kept = store.get('pooled')!.bytes;
    assert.deepEqual(kept, pooled);
    assert.equal(kept.buffer.byteLength, 120);

    const own = Buffer.allocUnsafeSlow(120);
    store.set('own', { bytes: own, statusOffsets: [], slots: new Int32Array(1), fillSeq: 0 });
    assert.equal(store.get('own')!.bytes, own, 'a buffer of its own is kept as it is');
  });

  test('keeps the status offsets as they were when stored', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const statusOffsets: number[] = [];
    statusOffsets.push(12, 90);
    store.set('k', {
      bytes: Buffer.alloc(100),
      statusOffsets,
      slots: new Int32Array(1),
      fillSeq: 5,
    });
    // The store holds a copy: what the caller does with its array later changes nothing.
    statusOffsets.push(99);
    statusOffsets[0] = 0;
    const entry = store.get('k')!;
    assert.deepEqual(entry.statusOffsets, [12, 90]);
    assert.equal(entry.fillSeq, 5);
  });

  test('finds an entry by a key of any shape or character set', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const sql = Buffer.from('SELECT * FROM t WHERE id = 1;').toString('latin1');
    const session = String(42);
    // A concatenation of a slice, as the proxy builds keys; found again by an equal flat string.
    store.set(`${session}\0${sql.slice(0, -1)}`, result(1));
    assert.equal(tagOf(store.get('42\0SELECT * FROM t WHERE id = 1')), 1);
    for (const [tag, key] of [
      [2, "SELECT 'é'"],
      [3, "SELECT '€'"],
      [4, "SELECT '\ud83d'"],
    ] as const) {
      store.set(key, result(tag));
      assert.equal(tagOf(store.get(key)), tag, key);
    }
    assert.equal(store.size, 4);
  });

  test('rejects a budget or TTL that is not a number of bytes or ms', () => {
    assert.throws(() => new ResultStore({ budgetBytes: -1 }), RangeError);
    assert.throws(() => new ResultStore({ budgetBytes: Number.NaN }), RangeError);
    assert.throws(() => new ResultStore({ budgetBytes: 10, ttlMs: -5 }), RangeError);
    assert.equal(new ResultStore({ budgetBytes: 10.9 }).budgetBytes, 10);
  });
});
