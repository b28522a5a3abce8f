/**
 * The query cache's entry store: one per worker thread, so nothing here is shared or locked.
 *
 * The caller divides --query-cache-size between the workers and hands each store its share, which
 * the store treats as a hard bound: `bytesUsed` never exceeds `budgetBytes`, and `bytesUsed`
 * charges what an entry really costs in memory (see `chargeOf` and ENTRY_OVERHEAD_BYTES), not
 * just the reply's bytes.
 *
 * Eviction is SIEVE (Zhang et al., "SIEVE is Simpler than LRU", NSDI 2024): entries sit in
 * insertion order, a hit only sets the entry's `visited` bit, and a hand moving from the oldest
 * entry toward the newest clears set bits and evicts the first entry whose bit was clear. Unlike
 * LRU, a hit moves nothing (no Map delete/re-insert, no list surgery, no allocation), and a
 * one-time scan of new queries is evicted before a hot set that keeps being read.
 *
 * Entries are not checked for staleness here: a hit is validated by the caller against the
 * invalidation registry with `slots` and `fillSeq` (invalidation-registry.ts).
 */
import { performance } from 'node:perf_hooks';

export interface CachedResult {
  /** The reply's wire bytes (packets with headers), exactly as the server sent them. */
  readonly bytes: Buffer;
  /** Offsets in `bytes` of 2-byte server status fields a hit must patch. */
  readonly statusOffsets: readonly number[];
  /** Registry slots of the tables the result was read from. */
  readonly slots: Int32Array;
  /** Registry sequence number read before the query was sent (see invalidation-registry.ts). */
  readonly fillSeq: number;
  /** When it was stored (ms, from the store's clock), for the TTL. */
  storedAt: number;
  /** Set by the cache the first time the result is served (admission learns from it). */
  served: boolean;
}

export interface ResultStoreOptions {
  /** This store's share of --query-cache-size, in bytes; never exceeded. */
  budgetBytes: number;
  /** How long an entry may be served after it was stored, in ms; 0 or absent = no TTL. */
  ttlMs?: number;
  /** The clock for `storedAt` and the TTL, in ms; a monotonic one by default. */
  now?: () => number;
}

/**
 * What one entry costs beyond its payload (reply bytes, key characters, slots, status offsets):
 * the store's node object and its boxed `storedAt`, the Map entry, the key string's header, the
 * Buffer object with its ArrayBuffer object and the native record and malloc header of its
 * backing store, the Int32Array (an object, its ArrayBuffer object and on-heap storage: ~220 B
 * unless the caller shares one array between entries), the status-offset array's objects.
 * Measured on Node 24.9 (x64, no pointer compression) with
 *
 *   node --expose-gc bench/result-store-memory.ts
 *
 * which stores 1,000,000 entries shaped like the proxy's (60-char key, 120-byte reply, one slot,
 * two status offsets, so a payload of 200 B): the live V8 heap grows by 717 B per entry and memory
 * outside the V8 heap by 300-308 B (120 B of it the reply), 817-825 B of overhead. Rounded up to
 * 928 because a store that evicts does worse per entry: its Map's table is less full (740 B of
 * heap per entry in a 64 MB store after 1M distinct inserts) and malloc's heap is left fragmented
 * by the evicted replies.
 *
 * Not included, because it belongs to the process rather than to an entry: the garbage V8 lets
 * build up between full GCs and the pages it keeps pooled after them. After 1M distinct inserts
 * into a 64 MB store, RSS had grown by 445-451 MB with Node's defaults (150 MB after a
 * memory-reducing GC), and by 74-75 MB with --optimize-for-size (86 MB at its peak).
 */
export const ENTRY_OVERHEAD_BYTES = 928;

/** Bytes charged per status offset: a JS array element is one 8-byte word. */
const STATUS_OFFSET_BYTES = 8;

/** A stored entry; handed out as the CachedResult itself so a hit allocates nothing. */
class Entry implements CachedResult {
  readonly key: string;
  readonly bytes: Buffer;
  readonly statusOffsets: readonly number[];
  readonly slots: Int32Array;
  readonly fillSeq: number;
  storedAt: number;
  served = false;
  readonly charge: number;
  /** SIEVE's bit: read since the hand last passed it. */
  visited = false;
  /** The neighbour inserted just after this one, or null for the newest. */
  newer: Entry | null = null;
  /** The neighbour inserted just before this one, or null for the oldest. */
  older: Entry | null = null;

  constructor(
    key: string,
    result: Omit<CachedResult, 'storedAt' | 'served'>,
    charge: number,
    storedAt: number,
  ) {
    this.key = key;
    this.bytes = ownedBytes(result.bytes);
    // An array grown by push() keeps spare capacity (17 slots after the first push); a copy has
    // exactly its length, which is what the charge of 8 bytes per offset assumes.
    this.statusOffsets = result.statusOffsets.slice();
    this.slots = result.slots;
    this.fillSeq = result.fillSeq;
    this.storedAt = storedAt;
    this.charge = charge;
  }
}

export class ResultStore {
  readonly #budgetBytes: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  #newest: Entry | null = null;
  #oldest: Entry | null = null;
  /** SIEVE's hand: the next entry to examine, or null to start again from the oldest. */
  #hand: Entry | null = null;
  #bytesUsed = 0;
  #evictions = 0;
  #expired = 0;
  /** A sweep is under way; `#sweepAt` is the next entry it looks at (null: the pass is done). */
  #sweeping = false;
  #sweepAt: Entry | null = null;

  constructor(options: ResultStoreOptions) {
    const { budgetBytes, ttlMs = 0, now = () => performance.now() } = options;
    if (!Number.isFinite(budgetBytes) || budgetBytes < 0)
      throw new RangeError(`budgetBytes must be a finite number >= 0, got ${budgetBytes}`);
    if (!Number.isFinite(ttlMs) || ttlMs < 0)
      throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
    // A share of a total divided between workers may be fractional; rounding down keeps it a bound.
    this.#budgetBytes = Math.floor(budgetBytes);
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** What an entry is charged against the budget, in bytes. */
  static chargeOf(
    key: string,
    result: { bytes: Buffer; slots: Int32Array; statusOffsets: readonly number[] },
  ): number {
    return (
      result.bytes.length +
      keyBytes(key) +
      result.slots.byteLength +
      result.statusOffsets.length * STATUS_OFFSET_BYTES +
      ENTRY_OVERHEAD_BYTES
    );
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytesUsed(): number {
    return this.#bytesUsed;
  }

  get budgetBytes(): number {
    return this.#budgetBytes;
  }

  /** Entries evicted to make room (the server's Qcache_lowmem_prunes). */
  get evictions(): number {
    return this.#evictions;
  }

  /** Entries removed because their TTL had passed. */
  get expired(): number {
    return this.#expired;
  }

  /**
   * The entry, or undefined; an expired entry is removed and counted in `expired`. Marks the
   * entry as recently used by setting one bit: this is the path of every cache hit.
   */
  get(key: string): CachedResult | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#ttlMs > 0 && this.#now() - entry.storedAt >= this.#ttlMs) {
      this.#unlink(entry);
      this.#expired++;
      return undefined;
    }
    entry.visited = true;
    return entry;
  }

  /**
   * Stores `result` under `key`, evicting as needed to stay within the budget. Returns false, and
   * stores nothing, if the entry alone exceeds the budget. Any previous entry under the key is
   * removed either way: the caller has a newer reply for that key, so the old one is not worth a
   * byte of the budget. The store keeps `result.bytes` and `result.slots` as they are, so the
   * caller must not change them afterwards; but `bytes` is copied first when it is a view into a
   * larger buffer (Buffer.allocUnsafe's pool, a socket chunk), which a kept entry would otherwise
   * keep alive whole while being charged for the view only, and `statusOffsets` is copied.
   */
  set(key: string, result: Omit<CachedResult, 'storedAt' | 'served'>): boolean {
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#unlink(previous);
    const charge = ResultStore.chargeOf(key, result);
    if (charge > this.#budgetBytes) return false;
    const now = this.#now();
    while (this.#bytesUsed + charge > this.#budgetBytes) this.#evictOne(now);

    const entry = new Entry(flatCopy(key), result, charge, now);
    entry.older = this.#newest;
    if (this.#newest === null) this.#oldest = entry;
    else this.#newest.newer = entry;
    this.#newest = entry;
    this.#entries.set(entry.key, entry);
    this.#bytesUsed += charge;
    return true;
  }

  delete(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#unlink(entry);
    return true;
  }

  /**
   * Removes entries `isDead` says can never be served again, looking at no more than `limit` of
   * them, from where the previous sweep stopped. Returns true when it reached the newest entry.
   */
  sweep(isDead: (entry: CachedResult) => boolean, limit: number): boolean {
    let entry = this.#sweeping ? this.#sweepAt : this.#oldest;
    this.#sweeping = true;
    for (let seen = 0; seen < limit && entry !== null; seen++) {
      const next = entry.newer;
      if (isDead(entry)) this.#unlink(entry);
      entry = next;
    }
    this.#sweepAt = entry;
    if (entry !== null) return false;
    this.#sweeping = false;
    return true;
  }

  clear(): void {
    this.#sweeping = false;
    this.#sweepAt = null;
    this.#entries.clear();
    this.#newest = this.#oldest = this.#hand = null;
    this.#bytesUsed = 0;
  }

  /**
   * One step of SIEVE: from the hand toward the newest entry (wrapping to the oldest), clear
   * visited bits until an unvisited entry is found, and evict it. An expired entry the hand
   * passes is dropped as expired instead, visited or not: it can never be served again.
   * Only called while an entry exists, since a charge within the budget fits in an empty store.
   */
  #evictOne(now: number): void {
    let victim = this.#hand ?? this.#oldest!;
    for (;;) {
      if (this.#ttlMs > 0 && now - victim.storedAt >= this.#ttlMs) {
        this.#hand = victim;
        this.#unlink(victim);
        this.#expired++;
        return;
      }
      if (!victim.visited) break;
      victim.visited = false;
      victim = victim.newer ?? this.#oldest!;
    }
    // Unlinking the entry under the hand moves the hand on to the next newer entry.
    this.#hand = victim;
    this.#unlink(victim);
    this.#evictions++;
  }

  /** Removes an entry from the map, the queue and the accounting; the hand moves past it. */
  #unlink(entry: Entry): void {
    this.#entries.delete(entry.key);
    if (this.#hand === entry) this.#hand = entry.newer;
    if (this.#sweepAt === entry) this.#sweepAt = entry.newer;
    if (entry.newer === null) this.#newest = entry.older;
    else entry.newer.older = entry.older;
    if (entry.older === null) this.#oldest = entry.newer;
    else entry.older.newer = entry.newer;
    entry.newer = entry.older = null;
    this.#bytesUsed -= entry.charge;
  }
}

/**
 * `bytes` itself if it is the whole of its backing store, else a copy that is. A small Buffer from
 * Buffer.allocUnsafe is a view into an 8 KB pool slab shared with whatever else the thread
 * allocated, and a view keeps all of its slab alive: kept entries would pin slabs whose other
 * tenants are long gone, so retained memory would outgrow the charge (before this copy,
 * bench/result-store-memory.ts's churn scenario kept 327 B of slabs per held 120-byte reply; up to
 * 8 KB when one hot entry is all that is left of a slab). Pass a Buffer of its own, e.g. from
 * Buffer.allocUnsafeSlow, to avoid the copy.
 */
function ownedBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * The key's characters in memory: V8 keeps a string one byte per character when every character
 * fits in Latin-1, two otherwise.
 */
function keyBytes(key: string): number {
  return isLatin1(key) ? key.length : key.length * 2;
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) return false;
  }
  return true;
}

/**
 * The key as one flat string. A key built by concatenation is a tree of V8 string objects, and a
 * part cut from a statement's text keeps the whole text alive: a proxy-shaped key (session id,
 * separator, a slice of the SQL) costs 88 B more that way than flat, which the charge would miss.
 * Decoding a copy of its bytes gives a plain sequential string; `set` pays for it, not `get`.
 */
function flatCopy(key: string): string {
  const encoding = isLatin1(key) ? 'latin1' : 'utf16le';
  return Buffer.from(key, encoding).toString(encoding);
}
