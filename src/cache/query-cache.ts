/**
 * One worker's view of the query cache: the entry store and the registry every worker shares,
 * and this worker's counters. It knows keys, bytes and slots; what goes into a key, and when a
 * statement may use the cache at all, is the session's business.
 */
import { CacheStats, Counter } from './cache-stats.ts';
import { Doorkeeper } from './doorkeeper.ts';
import { FillAdmission } from './fill-admission.ts';
import type { InvalidationRegistry } from './invalidation-registry.ts';
import { keyHashOf, NO_ENTRY, ResultStore } from './result-store.ts';
import type { QueuedWriter, ResultInput } from './result-store.ts';

export { NO_ENTRY } from './result-store.ts';

/** query_cache_type: OFF, ON, or DEMAND (only SQL_CACHE queries). */
export type QueryCacheType = 0 | 1 | 2;

export interface SharedStore {
  buffer: SharedArrayBuffer;
  admission: SharedArrayBuffer;
  missedBefore: SharedArrayBuffer;
  worker: number;
}

/**
 * What admits a miss to a full store: a doorkeeper of recent misses' keys (see admits). Its
 * window, MISSED_BEFORE_RESET misses while the store is nearly full, is many times the results
 * a store holds (TinyLFU samples ten times the cache's size), so a result read again within it
 * is let in on its second miss; 2^20 bits keep false sightings near 12% on average at that.
 */
const MISSED_BEFORE_BITS = 1 << 20;
const MISSED_BEFORE_RESET = MISSED_BEFORE_BITS >>> 2;

export interface QueryCacheOptions {
  type: QueryCacheType;
  /**
   * The store every worker shares (ResultStore.allocate), the admission scores that judge it
   * (FillAdmission.allocate), its doorkeeper (QueryCache.allocateMissedBefore), and this
   * worker's number.
   */
  store?: SharedStore;
  /** Without `store`: --query-cache-size, for a store of this thread's own. */
  budgetBytes?: number;
  /** --query-cache-limit: larger results are not stored. */
  limitBytes: number;
  /** --query-cache-ttl in ms; 0 keeps results until a write or eviction. */
  ttlMs: number;
  /**
   * How often the store drops, in the background, results a write has made stale (they would
   * otherwise linger until looked up, and Qcache_queries_in_cache would still count them); 0 for
   * never.
   */
  sweepIntervalMs?: number;
}

/** Index buckets one background sweep looks at: bounded, so a large store never stalls. */
const SWEEP_BATCH = 5000;

const NO_BYTES = Buffer.alloc(0);
const NO_OFFSETS: readonly number[] = [];
const NO_SLOTS = new Int32Array(0);

export class QueryCache {
  readonly registry: InvalidationRegistry;
  readonly stats: CacheStats;
  readonly type: QueryCacheType;
  readonly limitBytes: number;
  readonly #store: ResultStore;
  /** Which misses are worth a copy, learned from what became of the results stored so far. */
  readonly admission: FillAdmission;
  /** Keys that missed recently while the store was nearly full, every worker's. */
  readonly #missedBefore: Doorkeeper;
  #clearCount: number;
  #evictions = 0;
  /** This worker's gauges when it started (see the constructor). */
  readonly #sizeBase: number;
  readonly #bytesBase: number;
  /** The registry's sequence when the last complete pass over the store began. */
  #sweptAt: number | null = null;
  /** The registry's sequence when the pass under way began. */
  #passFrom: number | null = null;
  /**
   * What `store` hands the store, which copies it: one object for every fill rather than one
   * each. It holds a fill's buffers only for the call.
   */
  readonly #input: { -readonly [K in keyof ResultInput]: ResultInput[K] } = {
    bytes: NO_BYTES,
    statusOffsets: NO_OFFSETS,
    statusCount: 0,
    slots: NO_SLOTS,
    fillSeq: 0,
    rows: 0,
  };
  readonly #isDead = (id: number): boolean => {
    if (this.#freshFor(id, this.#store.fillSeqOf(id))) return false;
    this.#noteDropped(id);
    return true;
  };

  constructor(registry: InvalidationRegistry, stats: CacheStats, options: QueryCacheOptions) {
    this.registry = registry;
    this.stats = stats;
    this.type = options.type;
    this.limitBytes = options.limitBytes;
    this.#store = new ResultStore({
      buffer: options.store?.buffer,
      worker: options.store?.worker,
      budgetBytes: options.budgetBytes,
      ttlMs: options.ttlMs,
    });
    // A worker started in a dead one's place carries on its share of the gauges: the entries
    // the dead one stored are still in the store.
    this.#sizeBase = stats.of(stats.worker, Counter.QUERIES_IN_CACHE);
    this.#bytesBase = stats.of(stats.worker, Counter.BYTES_USED);
    this.admission = new FillAdmission(registry.slots, options.store?.admission);
    this.#missedBefore = new Doorkeeper(
      MISSED_BEFORE_BITS,
      MISSED_BEFORE_RESET,
      options.store?.missedBefore,
    );
    this.#clearCount = registry.clearCount();
    const interval = options.sweepIntervalMs ?? 0;
    if (interval > 0) {
      setInterval(() => {
        this.sweep(SWEEP_BATCH);
        this.#store.releaseDrainedPins();
      }, interval).unref();
    }
  }

  /**
   * Drops every result the writes finished so far made stale, for SHOW STATUS: the store is
   * every worker's, so one whole pass here covers them all. It holds the writers' lock for the
   * pass (fills in other workers wait; their hits do not).
   */
  sweepForStatus(): void {
    this.#followClears();
    const sequence = this.registry.sequence();
    if (this.#sweptAt !== sequence) {
      this.#store.sweepWhole(this.#isDead);
      this.#sweptAt = sequence;
      this.#passFrom = null;
    }
    this.#updateGauges();
  }

  /**
   * Drops up to `limit` results that no one can be served any more (a write finished on one of
   * their tables), continuing where this worker's last sweep stopped (each worker goes over the
   * whole store); nothing to do while no write has finished since its last full pass. Off the
   * hot path: a timer, and SHOW STATUS.
   */
  sweep(limit: number): void {
    this.#followClears();
    const sequence = this.registry.sequence();
    if (this.#sweptAt === sequence) return;
    this.#passFrom ??= sequence;
    if (this.#store.sweep(this.#isDead, limit)) {
      this.#sweptAt = this.#passFrom;
      this.#passFrom = null;
    }
    this.#updateGauges();
  }

  /**
   * The number of a stored result still equal to what the server would answer now and, inside
   * a transaction, to what its snapshot sees (`snapshotSeq`, or null outside a snapshot); or
   * NO_ENTRY. The number is good until the next change to the cache: read the reply at once.
   * `hash` is keyHashOf(key): a memoised statement keeps it with its key (MemoEntry.keyHash),
   * and a miss hands it on to its admission, flight and fill, so a key is hashed once.
   */
  lookup(key: string, snapshotSeq: number | null, hash: number = keyHashOf(key)): number {
    this.#followClears();
    const store = this.#store;
    const id = store.find(key, hash);
    if (id === NO_ENTRY) return NO_ENTRY;
    const fillSeq = store.fillSeqOf(id);
    // One pass on the hit path: fresh for the snapshot implies fresh for everyone.
    if (this.#freshFor(id, snapshotSeq ?? fillSeq)) {
      if (!store.wasServed(id)) this.admission.served(store.slotsOf(id));
      return id;
    }
    this.stats.add(Counter.STALE_HITS_REFUSED);
    if (snapshotSeq === null || !this.#freshFor(id, fillSeq)) {
      // Stale for everyone from now on: free the room at once.
      this.#noteDropped(id);
      store.deleteEntry(id);
      this.#updateGauges();
    }
    return NO_ENTRY;
  }

  /**
   * A found result's reply with the session's `bits` (under `mask`) in its status fields: a view
   * of the store's memory when they already are, else a copy. Write it at once, then call
   * `pinIfQueued`.
   */
  replyOf(id: number, bits: number, mask: number): Buffer {
    return this.#store.replyWithStatus(id, bits, mask);
  }

  /** The registry slots a found result depends on, as stored with it (a copy of its own). */
  slotsOf(id: number): Int32Array {
    return this.#store.slotsOf(id);
  }

  slotCountOf(id: number): number {
    return this.#store.slotCount(id);
  }

  /** Rows of a found result (what FOUND_ROWS() says after it). */
  rowsOf(id: number): number {
    return this.#store.rowsOf(id);
  }

  /** After a reply was written to `writer`: keeps its bytes as they are while still queued. */
  pinIfQueued(reply: Buffer, writer: QueuedWriter): void {
    this.#store.pinIfQueued(reply, writer);
  }

  /** Is a table among `slots` written faster than its results are read again? */
  writtenOften(slots: Int32Array): boolean {
    return this.admission.declines(slots);
  }

  /** The doorkeeper's memory, for every worker's QueryCache (SharedStore.missedBefore). */
  static allocateMissedBefore(): SharedArrayBuffer {
    return Doorkeeper.allocate(MISSED_BEFORE_BITS);
  }

  /**
   * Should a miss of `key` over `slots` copy its reply for the store? When not, the miss is
   * relayed and counted as not cached, and as one of:
   * - declined: results over these tables have been made stale before anyone read them again;
   * - unseen: the store is nearly full, and `key` has not missed recently. Each result stored
   *   now pushes an older one out, and one read once (sysbench's ranges over a long tail of
   *   rows) would push out one that is read again (the hot rows' results) for nothing. A key
   *   read again is stored at its second miss; this costs each new result one more miss while
   *   the store is full, and nothing while it has room.
   */
  admits(key: string, slots: Int32Array, hash: number = keyHashOf(key)): boolean {
    if (!this.admission.admits(slots)) {
      this.stats.add(Counter.ADMISSION_DECLINED);
      this.stats.add(Counter.NOT_CACHED);
      return false;
    }
    if (!this.#store.nearlyFull || this.#missedBefore.seenBefore(hash)) return true;
    this.stats.add(Counter.ADMISSION_UNSEEN);
    this.stats.add(Counter.NOT_CACHED);
    return false;
  }

  /**
   * Stores a complete reply read with `fillSeq`; refuses one a write has overtaken. `hash` is
   * keyHashOf(key), as for lookup; `statusCount`, how many of `statusOffsets` are the reply's.
   */
  store(
    key: string,
    bytes: Buffer,
    statusOffsets: readonly number[],
    slots: Int32Array,
    fillSeq: number,
    rows: number,
    hash: number = keyHashOf(key),
    statusCount: number = statusOffsets.length,
  ): boolean {
    this.#followClears();
    if (!this.registry.isFresh(slots, fillSeq, fillSeq)) {
      this.stats.add(Counter.STALE_FILLS_REFUSED);
      this.stats.add(Counter.NOT_CACHED);
      return false;
    }
    const input = this.#input;
    input.bytes = bytes;
    input.statusOffsets = statusOffsets;
    input.statusCount = statusCount;
    input.slots = slots;
    input.fillSeq = fillSeq;
    input.rows = rows;
    const stored = this.#store.set(key, input, hash);
    input.bytes = NO_BYTES;
    input.statusOffsets = NO_OFFSETS;
    input.slots = NO_SLOTS;
    if (!stored) {
      this.stats.add(Counter.TOO_LARGE);
      this.stats.add(Counter.NOT_CACHED);
      return false;
    }
    this.stats.add(Counter.INSERTS);
    this.#updateGauges();
    return true;
  }

  /** RESET QUERY CACHE: empties the store and forgets the admission scores, every worker's. */
  clear(): void {
    this.registry.clearAll();
    this.#followClears();
  }

  /** Results in the store, every worker's. */
  get size(): number {
    return this.#store.size;
  }

  /** The whole store's budget (--query-cache-size). */
  get budgetBytes(): number {
    return this.#store.budgetBytes;
  }

  #followClears(): void {
    const count = this.registry.clearCount();
    if (count === this.#clearCount) return;
    this.#clearCount = count;
    this.#passFrom = null;
    // The worker that empties the store forgets the scores; the others find both done.
    if (this.#store.clearFor(count)) this.admission.reset();
    this.#updateGauges();
  }

  /** Is stored result `id` still what the server holds, for a reader at `snapshotSeq`? */
  #freshFor(id: number, snapshotSeq: number): boolean {
    const store = this.#store;
    return this.registry.isFreshIn(
      store.ints,
      store.slotsStart(id),
      store.slotCount(id),
      store.fillSeqOf(id),
      snapshotSeq,
    );
  }

  /**
   * A result is dropped as stale: if no one was ever served it, the tables whose writes made it
   * stale wasted a fill. A write to everything blames no table in particular.
   */
  #noteDropped(id: number): void {
    const store = this.#store;
    if (store.servedBefore(id)) return;
    const slots = store.slotsOf(id);
    const fillSeq = store.fillSeqOf(id);
    for (let i = 0; i < slots.length; i++) {
      if (this.registry.writtenSince(slots[i]!, fillSeq)) this.admission.wasted(slots[i]!);
    }
  }

  #updateGauges(): void {
    const evictions = this.#store.evictions;
    if (evictions !== this.#evictions) {
      this.stats.add(Counter.LOWMEM_PRUNES, evictions - this.#evictions);
      this.#evictions = evictions;
    }
    // Each worker counts what it added and removed; their sum is the store's.
    this.stats.set(Counter.QUERIES_IN_CACHE, this.#sizeBase + this.#store.sizeHere);
    this.stats.set(Counter.BYTES_USED, this.#bytesBase + this.#store.bytesHere);
  }
}
