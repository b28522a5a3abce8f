/**
 * The entry store, as one thread sees it: its byte budget is a hard bound, its accounting matches
 * what it holds, replies come back byte for byte however often records were moved, it evicts as
 * CLOCK does (a read entry outlives unread ones, a scan does not flush a hot set), and a view
 * still queued on a socket is never overwritten. (shared-result-store.test.ts runs it across
 * worker threads.)
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { NO_ENTRY, ResultStore } from '../../src/cache/result-store.ts';
import type { QueuedWriter, ResultInput } from '../../src/cache/result-store.ts';
import { seeded } from '../support/seeded-random.ts';

/** A result whose bytes start with `tag`, so a later read shows which version was stored. */
function result(tag: number, replyBytes = 16, slots = 1): ResultInput {
  const bytes = Buffer.allocUnsafeSlow(Math.max(replyBytes, 4));
  bytes.fill(tag & 0xff);
  bytes.writeUInt32LE(tag, 0);
  return { bytes, statusOffsets: [0], slots: new Int32Array(slots), fillSeq: tag, rows: tag };
}

function chargeOf(key: string, input: ResultInput): number {
  return ResultStore.chargeOf(
    key,
    input.bytes.length,
    input.statusOffsets.length + input.slots.length,
  );
}

/** A socket that took a whole write at once. */
const sentAtOnce: QueuedWriter = { writableLength: 0, destroyed: false };

/**
 * The reply stored under `key` (marking it read, as a hit does), or undefined. As a session
 * does, the view is "written" at once, which lets go of the hit's pin.
 */
function get(store: ResultStore, key: string): Buffer | undefined {
  const id = store.find(key);
  if (id === NO_ENTRY) return undefined;
  const reply = store.replyOf(id);
  store.pinIfQueued(reply, sentAtOnce);
  return reply;
}

function tagOf(reply: Buffer | undefined): number | undefined {
  return reply?.readUInt32LE(0);
}

/** The budget whose arena is `arenaBytes` (the store's index and control block come first). */
function budgetWithArena(arenaBytes: number): number {
  let budget = arenaBytes;
  while (budget - ResultStore.overheadOf(budget) < arenaBytes) {
    budget = arenaBytes + ResultStore.overheadOf(budget);
  }
  return budget;
}

/** A budget that holds exactly `count` entries made by result(tag), keys `keyLength` long. */
function budgetFor(count: number, keyLength = 1): number {
  return budgetWithArena(count * chargeOf('k'.repeat(keyLength), result(0)) + 1);
}

/** Keys of one length, so that every entry costs the same. */
function padded(name: string): string {
  return name.padStart(10, '.');
}

/** A socket as pinning sees it: still holding `writableLength` queued bytes. */
function writer(writableLength: number): QueuedWriter & { writableLength: number } {
  return { writableLength, destroyed: false };
}

describe('ResultStore', () => {
  test('charges the record: header, status offsets and slots, key, reply, aligned', () => {
    // A 48-byte header, two 4-byte words, the key's 3 bytes in 4, 100 bytes of reply: 160.
    assert.equal(ResultStore.chargeOf('abc', 100, 2), 160);
    assert.equal(ResultStore.recordBytes(1, 1, 0), 56);
    // A key of Latin-1 characters takes one byte a character, anything else two.
    assert.equal(
      ResultStore.chargeOf('é'.repeat(8), 1, 0),
      ResultStore.chargeOf('e'.repeat(8), 1, 0),
    );
    assert.equal(
      ResultStore.chargeOf('a€'.repeat(4), 1, 0) - ResultStore.chargeOf('ab'.repeat(4), 1, 0),
      8,
    );
  });

  test('the budget is never exceeded and the accounting matches the entries held', () => {
    const random = seeded(20_240_601);
    const budget = 60_000;
    const arena = budget - ResultStore.overheadOf(budget);
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
        const charge = chargeOf(key, input);
        const stored = store.set(key, input);
        assert.equal(stored, charge <= arena);
        if (stored) {
          latest.set(key, { tag: step, charge });
          assert.deepEqual(get(store, key), input.bytes, 'a new entry is never its own victim');
        } else {
          latest.delete(key);
          refused++;
          assert.equal(get(store, key), undefined, 'a refused replacement leaves nothing behind');
        }
      } else if (draw < 0.95) {
        const reply = get(store, key);
        if (reply !== undefined) assert.equal(tagOf(reply), latest.get(key)?.tag);
      } else {
        const held = get(store, key) !== undefined;
        assert.equal(store.delete(key), held);
        assert.equal(get(store, key), undefined);
        latest.delete(key);
      }
      assert.ok(store.boundBytes <= budget, `step ${step}: ${store.boundBytes} > ${budget}`);
      assert.ok(store.bytesUsed <= store.boundBytes);

      if (step % 1_000 === 0) {
        let held = 0;
        let charged = 0;
        for (const k of keys) {
          const reply = get(store, k);
          if (reply === undefined) continue;
          const expected = latest.get(k);
          assert.ok(expected !== undefined, `${k} is held but was deleted or refused`);
          assert.equal(tagOf(reply), expected.tag, `${k} holds a replaced version`);
          // Every byte, after however many moves: result(tag) fills the reply with the tag.
          for (let i = 4; i < reply.length; i++) assert.equal(reply[i], expected.tag & 0xff);
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

  test('a new store holds its index in memory from the start, and none of its arena', () => {
    // Fills probe and write random index buckets: a page first touched there cost a fill two
    // page faults. The arena, nearly all of the budget, is left to the kernel until written:
    // an empty cache does not take its budget's memory.
    const residentBytes = (): number =>
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
    const budget = 512 * 2 ** 20;
    const index = ResultStore.overheadOf(budget);
    const before = residentBytes();
    const buffer = ResultStore.allocate(budget, 1);
    const grown = residentBytes() - before;
    assert.ok(index >= 32 * 2 ** 20, `an index of ${index} bytes`);
    assert.ok(grown >= 0.9 * index, `${grown} bytes made resident for an index of ${index}`);
    assert.ok(grown < index + 32 * 2 ** 20, `${grown} bytes resident: the arena was touched`);
    assert.ok(buffer.byteLength > budget - 2 ** 20, 'the whole budget is reserved');
  });

  test('an entry larger than the whole budget is refused', () => {
    const input = result(1, 1_000);
    const charge = chargeOf('k', input);
    const tight = new ResultStore({ budgetBytes: budgetWithArena(charge) - 1 });
    assert.equal(tight.set('k', input), false);
    assert.equal(tight.size, 0);
    assert.equal(tight.bytesUsed, 0);
    assert.equal(get(tight, 'k'), undefined);

    const exact = new ResultStore({ budgetBytes: budgetWithArena(charge) });
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
    assert.equal(store.bytesUsed, chargeOf('k', small));
    store.set('k', large);
    assert.equal(store.size, 1);
    assert.equal(store.bytesUsed, chargeOf('k', large));
    assert.equal(tagOf(get(store, 'k')), 2);
    store.set('k', small);
    assert.equal(store.bytesUsed, chargeOf('k', small));
    assert.equal(store.evictions, 0, 'a replacement is not an eviction');
  });

  test('nearly full: within 1/16 of the arena, or of the entries the index takes', () => {
    const big = new ResultStore({ budgetBytes: 1 << 20 });
    let key = 0;
    while (!big.nearlyFull) assert.ok(big.set(`big ${key++}`, result(key, 4096)));
    assert.equal(big.evictions, 0, 'before anything had to go');
    assert.ok(big.bytesUsed > (15 / 16) * (big.budgetBytes - ResultStore.overheadOf(1 << 20)));
    // Tiny results run out of index entries long before the arena's bytes.
    const tiny = new ResultStore({ budgetBytes: 1 << 20 });
    key = 0;
    while (!tiny.nearlyFull) assert.ok(tiny.set(`tiny ${key++}`, result(key, 4)));
    assert.equal(tiny.evictions, 0);
    assert.ok(tiny.bytesUsed < (1 << 20) / 2, `${tiny.bytesUsed} bytes for ${tiny.size} entries`);
    tiny.clear();
    assert.equal(tiny.nearlyFull, false, 'empty again');
  });

  test('CLOCK evicts an unread entry before a read one', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3) });
    for (const key of ['a', 'b', 'c']) store.set(key, result(1));
    get(store, 'a');
    store.set('d', result(1));
    // FIFO would have evicted a, the oldest; CLOCK clears its bit, keeps it, and takes b.
    assert.equal(get(store, 'b'), undefined);
    assert.ok(get(store, 'a') && get(store, 'c') && get(store, 'd'));
    assert.equal(store.evictions, 1);

    // a, c and d are all read now: the pass clears c's bit, then a's and d's, and evicts c,
    // the first whose bit it finds clear.
    store.set('e', result(1));
    assert.equal(get(store, 'c'), undefined);
    assert.deepEqual(
      ['a', 'd', 'e'].map((key) => get(store, key) !== undefined),
      [true, true, true],
    );
    assert.equal(store.size, 3);
    assert.equal(store.evictions, 2);
  });

  test('an entry read since the last pass survives the next one, and goes at the one after', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3, 10) });
    store.set(padded('hot'), result(1));
    get(store, padded('hot'));
    store.set(padded('scan 0'), result(2));
    store.set(padded('scan 1'), result(3));
    // One pass of the clock: it clears the bit and evicts the scan's entries around it.
    for (let i = 2; i < 4; i++) store.set(padded(`scan ${i}`), result(2 + i));
    assert.equal(tagOf(get(store, padded('hot'))), 1);
    // Not read again (the read above set the bit once more: clear it with one more pass first).
    for (let i = 4; i < 20; i++) store.set(padded(`scan ${i}`), result(2 + i));
    assert.equal(store.find(padded('hot')), NO_ENTRY);
  });

  test('a one-time scan does not flush a hot set read at least once a revolution', () => {
    const hotKeys = Array.from({ length: 50 }, (_, i) => padded(`hot ${i}`));
    const store = new ResultStore({ budgetBytes: budgetFor(100, 10) });
    for (const key of hotKeys) store.set(key, result(1));
    for (let i = 0; i < 10_000; i++) {
      store.set(padded(`scan ${i}`), result(2));
      // Each hot key is read once every 50 scan inserts: with 50 of the 100 places taken by
      // the hot set, a revolution of the clock is 50 inserts.
      get(store, hotKeys[i % hotKeys.length]!);
    }
    const survivors = hotKeys.filter((key) => get(store, key) !== undefined);
    assert.deepEqual(survivors, hotKeys);
    assert.equal(store.size, 100);
    assert.ok(store.boundBytes <= store.budgetBytes);
    for (const key of hotKeys) assert.equal(tagOf(get(store, key)), 1);
  });

  test('an entry expires after its TTL, on the injected clock', () => {
    let now = 1_000;
    const store = new ResultStore({ budgetBytes: 1 << 20, ttlMs: 100, now: () => now });
    store.set('k', result(1));
    now = 1_099;
    assert.equal(tagOf(get(store, 'k')), 1);
    now = 1_100;
    assert.equal(get(store, 'k'), undefined);
    assert.equal(store.expired, 1);
    assert.equal(store.evictions, 0);
    assert.equal(store.size, 0);
    assert.equal(store.bytesUsed, 0);

    // Storing again starts a new lifetime.
    store.set('k', result(2));
    now = 1_150;
    assert.equal(tagOf(get(store, 'k')), 2);
  });

  test('without a TTL nothing expires', () => {
    let now = 0;
    const store = new ResultStore({ budgetBytes: 1 << 20, now: () => now });
    store.set('k', result(1));
    now = Number.MAX_SAFE_INTEGER;
    assert.equal(tagOf(get(store, 'k')), 1);
    assert.equal(store.expired, 0);
  });

  test('making room drops expired entries first, read or not, as expired', () => {
    let now = 0;
    const store = new ResultStore({ budgetBytes: budgetFor(2), ttlMs: 100, now: () => now });
    store.set('o', result(1));
    get(store, 'o');
    now = 60;
    store.set('y', result(2));
    now = 120;
    store.set('n', result(3));
    assert.equal(store.expired, 1);
    assert.equal(store.evictions, 0);
    assert.equal(tagOf(get(store, 'y')), 2);
    assert.equal(tagOf(get(store, 'n')), 3);
  });

  test('delete and clear give the bytes back', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const a = result(1, 100);
    const b = result(2, 300);
    store.set('a', a);
    store.set('b', b);
    assert.equal(store.bytesUsed, chargeOf('a', a) + chargeOf('b', b));
    assert.equal(store.delete('a'), true);
    assert.equal(store.delete('a'), false);
    assert.equal(store.size, 1);
    assert.equal(store.bytesUsed, chargeOf('b', b));
    store.clear();
    assert.equal(store.size, 0);
    assert.equal(store.bytesUsed, 0);
    assert.ok(store.boundBytes <= store.budgetBytes);
    assert.equal(get(store, 'b'), undefined);
  });

  test("a deleted entry's room is taken when the clock reaches it, with no eviction", () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3) });
    for (const key of ['a', 'b', 'c']) store.set(key, result(1));
    assert.equal(store.delete('a'), true);
    assert.equal(store.bytesUsed, 2 * chargeOf('k', result(0)));
    store.set('d', result(4));
    assert.equal(store.evictions, 0);
    assert.deepEqual(
      ['b', 'c', 'd'].map((key) => tagOf(get(store, key))),
      [1, 1, 4],
    );
    assert.equal(store.bytesUsed, 3 * chargeOf('k', result(0)));
  });

  test('after clear the store evicts correctly again', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3, 10) });
    for (let i = 0; i < 10; i++) store.set(padded(`before ${i}`), result(i));
    store.clear();
    for (let i = 0; i < 10; i++) store.set(padded(`after ${i}`), result(i));
    assert.equal(store.size, 3);
    assert.equal(store.bytesUsed, 3 * chargeOf(padded('k'), result(0)));
    // With nothing read, CLOCK is FIFO: the three newest are left.
    assert.deepEqual(
      Array.from({ length: 10 }, (_, i) => tagOf(get(store, padded(`after ${i}`)))),
      [...Array<undefined>(7).fill(undefined), 7, 8, 9],
    );
  });

  test('copies the reply: what the caller does with its buffer later changes nothing', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const pooled = Buffer.allocUnsafe(120).fill(7);
    store.set('pooled', {
      bytes: pooled,
      statusOffsets: [],
      slots: new Int32Array(1),
      fillSeq: 0,
      rows: 3,
    });
    pooled.fill(9);
    const kept = get(store, 'pooled')!;
    assert.deepEqual(kept, Buffer.alloc(120, 7));
    assert.equal(store.rowsOf(store.find('pooled')), 3);
  });

  test('keeps the status offsets as they were when stored, and patches status bits in a copy', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const statusOffsets: number[] = [];
    statusOffsets.push(12, 90);
    const bytes = Buffer.alloc(100);
    bytes.writeUInt16LE(0x0002, 12);
    bytes.writeUInt16LE(0x0022, 90);
    store.set('k', { bytes, statusOffsets, slots: new Int32Array(1), fillSeq: 5, rows: 0 });
    // The store holds a copy: what the caller does with its array later changes nothing.
    statusOffsets.push(99);
    statusOffsets[0] = 0;
    const id = store.find('k');
    assert.deepEqual(store.statusOffsetsOf(id), [12, 90]);
    assert.equal(store.fillSeqOf(id), 5);
    // Only the first statusCount of a longer array (one reused from reply to reply) are kept.
    store.set('counted', {
      bytes,
      statusOffsets: [12, 90, 99],
      statusCount: 1,
      slots: new Int32Array(1),
      fillSeq: 5,
      rows: 0,
    });
    assert.deepEqual(store.statusOffsetsOf(store.find('counted')), [12]);
    // Bits already as wanted: the stored view itself.
    assert.equal(store.replyWithStatus(id, 0x0002, 0x0003), store.replyOf(id));
    const patched = store.replyWithStatus(id, 0x0001, 0x0003);
    assert.notEqual(patched.buffer, store.replyOf(id).buffer);
    assert.equal(patched.readUInt16LE(12), 0x0001);
    assert.equal(patched.readUInt16LE(90), 0x0021);
    assert.deepEqual(store.replyOf(id), bytes, 'the stored reply is left as it was');
  });

  test('finds an entry by a key of any shape or character set', () => {
    const store = new ResultStore({ budgetBytes: 1 << 20 });
    const sql = Buffer.from('SELECT * FROM t WHERE id = 1;').toString('latin1');
    const session = String(42);
    // A concatenation of a slice, as the proxy builds keys; found again by an equal flat string.
    store.set(`${session}\0${sql.slice(0, -1)}`, result(1));
    assert.equal(tagOf(get(store, '42\0SELECT * FROM t WHERE id = 1')), 1);
    for (const [tag, key] of [
      [2, "SELECT 'é'"],
      [3, "SELECT '€'"],
      [4, "SELECT '\ud83d'"],
    ] as const) {
      store.set(key, result(tag));
      assert.equal(tagOf(get(store, key)), tag, key);
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

describe('a view still queued on a socket', () => {
  /** Stores enough new entries to take the whole arena several times over. */
  function churn(store: ResultStore, from: number, count = 200): void {
    for (let i = from; i < from + count; i++) store.set(padded(`churn ${i}`), result(i, 40));
  }

  test('is neither moved nor overwritten until its socket has sent everything', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(8, 10) });
    store.set(padded('hot'), result(0xabcd, 40));
    const view = get(store, padded('hot'))!;
    const before = Buffer.from(view);
    const socket = writer(40);
    store.pinIfQueued(view, socket);
    assert.equal(store.pinnedViews, 1);
    churn(store, 1);
    assert.deepEqual(view, before, 'the queued bytes were overwritten');
    assert.ok(store.evictions > 100, 'the churn did not go round the arena');
    // Sent: the next passes may take its room.
    socket.writableLength = 0;
    assert.equal(store.pinnedViews, 0);
    churn(store, 1_000);
    assert.notDeepEqual(view, before, 'the room was never reused');
  });

  test('is kept after its entry is deleted, and after the store is cleared', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(8, 10) });
    store.set(padded('a'), result(0x1111, 40));
    store.set(padded('b'), result(0x2222, 40));
    const a = get(store, padded('a'))!;
    const b = get(store, padded('b'))!;
    const [aBefore, bBefore] = [Buffer.from(a), Buffer.from(b)];
    store.pinIfQueued(a, writer(1));
    store.pinIfQueued(b, writer(1));
    store.delete(padded('a'));
    churn(store, 1);
    assert.deepEqual(a, aBefore);
    store.clear();
    churn(store, 1_000);
    assert.deepEqual(a, aBefore);
    assert.deepEqual(b, bBefore);
    assert.ok(store.size > 0, 'nothing could be stored after the clear');
  });

  test('a view sent at once, or not the store’s, pins nothing', () => {
    const store = new ResultStore({ budgetBytes: 1 << 16 });
    store.set('k', result(1));
    store.pinIfQueued(get(store, 'k')!, writer(0));
    store.pinIfQueued(Buffer.alloc(10), writer(10));
    const gone = writer(10);
    store.pinIfQueued(get(store, 'k')!, { writableLength: 10, destroyed: true });
    assert.equal(gone.destroyed, false);
    assert.equal(store.pinnedViews, 0);
  });

  test('pins of sent views are let go even when no fill comes to make room', () => {
    const store = new ResultStore({ budgetBytes: 1 << 16 });
    store.set('k', result(1));
    const view = get(store, 'k')!;
    const stalled = writer(1);
    store.pinIfQueued(view, stalled);
    // A read-only load: hits whose writes queue for a moment, and no fill.
    for (let i = 0; i < 10_000; i++) {
      const socket = writer(10);
      store.pinIfQueued(view, socket);
      socket.writableLength = 0;
    }
    assert.ok(store.pinsHeld <= 128, `${store.pinsHeld} pins held`);
    assert.equal(store.pinnedViews, 1, 'the one still queued is kept');
  });

  test('when pins hold all the room, a fill is refused instead of waiting', () => {
    const store = new ResultStore({ budgetBytes: budgetFor(3, 10) });
    for (const key of ['a', 'b', 'c']) {
      store.set(padded(key), result(1));
      store.pinIfQueued(get(store, padded(key))!, writer(1));
    }
    assert.equal(store.set(padded('d'), result(2)), false);
    assert.deepEqual(
      ['a', 'b', 'c'].map((key) => tagOf(get(store, padded(key)))),
      [1, 1, 1],
    );
  });
});

describe('slots', () => {
  test('are kept in the record, copied, and read back where they are', () => {
    const store = new ResultStore({ budgetBytes: 1 << 16 });
    const slots = Int32Array.of(3, 7, 11);
    store.set('k', { bytes: Buffer.alloc(20, 1), statusOffsets: [2], slots, fillSeq: 9, rows: 0 });
    slots[0] = 99;
    const id = store.find('k');
    const start = store.slotsStart(id);
    assert.deepEqual(
      Array.from(store.ints.subarray(start, start + store.slotCount(id))),
      [3, 7, 11],
    );
    assert.deepEqual(Array.from(store.slotsOf(id)), [3, 7, 11]);
    assert.deepEqual(store.replyOf(id), Buffer.alloc(20, 1));
  });
});

describe('a large budget', () => {
  test('a share of 2 GiB or more gets an arena that large (up to 4 GiB), reserved, not touched', () => {
    for (const budgetBytes of [2 ** 31, 3 * 2 ** 30 + 5, Number.MAX_SAFE_INTEGER]) {
      const store = new ResultStore({ budgetBytes });
      const big = result(1, 1 << 20);
      for (let i = 0; i < 8; i++) assert.ok(store.set(`k${i}`, big), `${budgetBytes}: k${i}`);
      assert.equal(store.size, 8);
      assert.equal(store.evictions, 0);
      assert.ok(store.boundBytes > 8 << 20);
    }
  });
});
