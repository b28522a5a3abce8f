/**
 * The query cache's entry store: one per worker thread, so nothing here is shared or locked.
 *
 * Entries live outside the JavaScript heap. Reply bytes, status offsets and table slots are
 * records in one preallocated buffer, the arena; everything else an entry has (fill sequence, time
 * stored, its bits) is a place in typed arrays indexed by the entry's number. What is left on the
 * heap per entry is its key string and its Map slot. A fill therefore creates no garbage beyond
 * the key, and a full GC has almost nothing of the cache to mark: with tens of thousands of
 * results cached, seven objects per result (the earlier layout: entry, Buffer, ArrayBuffer,
 * slots, offsets...) made GC the largest cost of a miss.
 *
 * The caller divides --query-cache-size between the workers and hands each store its share, which
 * the store treats as a hard bound: the arena's used extent plus the heap overhead of the live
 * entries (ENTRY_OVERHEAD_BYTES and the key's characters each) never exceeds `budgetBytes`. The
 * arena is reserved at its full size but grows into memory only as records are written, so a
 * store that holds little costs little.
 *
 * Eviction is CLOCK (second chance) by sliding compaction. The arena is a ring of records in the
 * order they were written; the free space is one gap, `[#head, #gapEnd)`. A new record goes at
 * the head. To make room, the record right after the gap is looked at: unread since the last
 * pass, it is evicted and the gap grows; read (its `visited` bit), the bit is cleared and the
 * record moves down to the head (memmove), so it is the newest again, and the gap moves on past
 * it. Every record is looked at once per revolution, a hit sets one bit and moves nothing, and
 * memory never fragments: dead records are absorbed as the gap passes over them.
 *
 * A hit hands the caller a view of the arena, written to a socket as it is. If that write could
 * not be finished at once (the socket had more queued than the kernel took), the bytes must stay
 * as they are until it is: the session reports such a view with `pinIfQueued`, and until its
 * socket has nothing queued the record is neither moved nor overwritten (the gap jumps over it).
 *
 * Entries are not checked for staleness here: a hit is validated by the caller against the
 * invalidation registry with the entry's slots (`slotsStart`/`slotCount` in `ints`, or `slotsOf`)
 * and `fillSeqOf` (invalidation-registry.ts).
 */
import { performance } from 'node:perf_hooks';

/** What a result to store is made of. */
export interface ResultInput {
  /** The reply's wire bytes (packets with headers), exactly as the server sent them. */
  readonly bytes: Buffer;
  /** Offsets in `bytes` of 2-byte server status fields a hit must patch. */
  readonly statusOffsets: readonly number[];
  /** Registry slots of the tables the result was read from. */
  readonly slots: Int32Array;
  /** Registry sequence number read before the query was sent (see invalidation-registry.ts). */
  readonly fillSeq: number;
  /** Rows in the result set: what FOUND_ROWS() says after it. */
  readonly rows: number;
}

export interface ResultStoreOptions {
  /** This store's share of --query-cache-size, in bytes; never exceeded. */
  budgetBytes: number;
  /** How long an entry may be served after it was stored, in ms; 0 or absent = no TTL. */
  ttlMs?: number;
  /** The clock for the TTL, in ms; a monotonic one by default. */
  now?: () => number;
}

/** A socket a view was written to, as far as pinning needs it. */
export interface QueuedWriter {
  readonly writableLength: number;
  readonly destroyed: boolean;
}

/** No entry. */
export const NO_ENTRY = -1;

/**
 * What one entry costs beyond its record and its key's characters: the Map's slot (three words
 * and a share of the bucket array), the key string's header, and the entry's places in the
 * per-entry arrays (about 50 B), which grow by doubling, so up to twice that. Measured on Node
 * 24.9 (x64) with
 *
 *   node --expose-gc --optimize-for-size bench/result-store-memory.ts
 *
 * (1,000,000 entries shaped like the proxy's, a 60-char key, a 120-byte reply, one slot, two
 * status offsets, into a 64 MB store): 190 B per held entry, 207 B with a hot set re-read
 * (hence 208). The store's fixed costs (the view cache, VIEW_SLOTS views of ~114 B) are not
 * charged.
 */
export const ENTRY_OVERHEAD_BYTES = 208;

/** A record's header: its entry number (or HOLE) and its size, two 32-bit words. */
const HEADER_BYTES = 8;
/** The header's first word for a record no entry owns any more. */
const HOLE = 0xffffffff;
/** Records start and end on this boundary, so headers can be read as aligned words. */
const ALIGN = 8;
const VISITED = 1;
const SERVED = 2;
/** The largest arena: record offsets are 32-bit. */
const MAX_ARENA_BYTES = 2 ** 32 - ALIGN;
/** Pins held before the sent ones are let go at the next pin (doubles with those still queued). */
const PRUNE_PINS_AT = 64;
/** Views of hit replies kept for reuse (a power of two). */
const VIEW_SLOTS = 4096;
/** The per-entry arrays start this long and double as needed. */
const INITIAL_ENTRIES = 1024;

interface Pin {
  readonly start: number;
  readonly end: number;
  readonly writer: QueuedWriter;
}

export class ResultStore {
  readonly #budgetBytes: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #index = new Map<string, number>();
  #arena: Buffer;
  #words: Uint32Array;
  #ints: Int32Array;
  /** The first free byte; records are written here. */
  #head = 0;
  /** The end of the free gap: the next record the compaction looks at, or #extent. */
  #gapEnd = 0;
  /** How far into the arena records have ever been written: the memory the arena uses. */
  #extent = 0;
  /** Heap overhead of the live entries (ENTRY_OVERHEAD_BYTES plus key bytes, each). */
  #heapBytes = 0;
  /** What the live entries are charged (their records plus their heap overhead). */
  #bytesUsed = 0;
  #evictions = 0;
  #expired = 0;
  /** Views written to sockets that had not sent them yet (see pinIfQueued). */
  #pins: Pin[] = [];
  /** At this many pins, the sent ones are let go before another is added. */
  #prunePinsAt = PRUNE_PINS_AT;

  // Per entry, by its number.
  #keys: (string | undefined)[] = [];
  /**
   * Views of recently hit replies, direct-mapped by entry number: a hit on a hot entry makes no
   * new view, and the memory this takes is fixed (VIEW_SLOTS views at most, ~114 B each),
   * where a view kept per entry would be ~114 B more per entry, uncharged.
   */
  readonly #viewIds = new Int32Array(VIEW_SLOTS).fill(NO_ENTRY);
  readonly #views: (Buffer | undefined)[] = new Array<Buffer | undefined>(VIEW_SLOTS);
  #offset = new Float64Array(INITIAL_ENTRIES);
  #replyLength = new Uint32Array(INITIAL_ENTRIES);
  #statusCount = new Uint16Array(INITIAL_ENTRIES);
  #slotCount = new Uint16Array(INITIAL_ENTRIES);
  #fillSeq = new Int32Array(INITIAL_ENTRIES);
  #rows = new Uint32Array(INITIAL_ENTRIES);
  #storedAt = new Float64Array(INITIAL_ENTRIES);
  #charge = new Uint32Array(INITIAL_ENTRIES);
  #flags = new Uint8Array(INITIAL_ENTRIES);
  /** Entry numbers given back, for reuse. */
  #free: number[] = [];
  /** The next never-used entry number. */
  #nextId = 0;
  /** Where the background sweep goes on, by entry number. */
  #sweepAt = 0;

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
    this.#arena = newArena(this.#budgetBytes);
    this.#words = wordsOf(this.#arena);
    this.#ints = new Int32Array(this.#words.buffer, 0, this.#words.length);
  }

  /** The size of the record an entry takes in the arena, with `words` status offsets and slots. */
  static recordBytes(replyLength: number, words: number): number {
    return alignUp(HEADER_BYTES + 4 * words + replyLength);
  }

  /**
   * What an entry is charged against the budget, in bytes: its record (`words` status offsets
   * and slots) and its heap overhead.
   */
  static chargeOf(key: string, replyLength: number, words: number): number {
    return ResultStore.recordBytes(replyLength, words) + heapBytesOf(key);
  }

  get size(): number {
    return this.#index.size;
  }

  /** What the live entries are charged, in bytes. */
  get bytesUsed(): number {
    return this.#bytesUsed;
  }

  get budgetBytes(): number {
    return this.#budgetBytes;
  }

  /** What the budget bounds: the arena's used extent and the live entries' heap overhead. */
  get boundBytes(): number {
    return this.#extent + this.#heapBytes;
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
   * The entry stored under `key`, or NO_ENTRY; an expired entry is removed and counted in
   * `expired`. Marks the entry as read by setting one bit: this is the path of every cache hit.
   */
  find(key: string): number {
    const id = this.#index.get(key);
    if (id === undefined) return NO_ENTRY;
    if (this.#ttlMs > 0 && this.#now() - this.#storedAt[id]! >= this.#ttlMs) {
      this.#remove(id);
      this.#expired++;
      return NO_ENTRY;
    }
    this.#flags[id]! |= VISITED;
    return id;
  }

  /** The entry's reply, a view of the arena: valid until the next change to the store. */
  replyOf(id: number): Buffer {
    const slot = id & (VIEW_SLOTS - 1);
    if (this.#viewIds[slot] === id) return this.#views[slot]!;
    const start = this.#replyStart(id);
    const view = this.#arena.subarray(start, start + this.#replyLength[id]!);
    this.#viewIds[slot] = id;
    this.#views[slot] = view;
    return view;
  }

  /**
   * The entry's reply with `bits` (under `mask`) in each of its status fields: the stored view
   * when they already are, else a patched copy of its own.
   */
  replyWithStatus(id: number, bits: number, mask: number): Buffer {
    const reply = this.replyOf(id);
    const count = this.#statusCount[id]!;
    const first = (this.#offset[id]! + HEADER_BYTES) >>> 2;
    const words = this.#words;
    let same = true;
    for (let i = 0; i < count; i++) {
      if ((reply.readUInt16LE(words[first + i]) & mask) !== bits) same = false;
    }
    if (same) return reply;
    const patched = Buffer.from(reply);
    for (let i = 0; i < count; i++) {
      const at = words[first + i]!;
      patched.writeUInt16LE((patched.readUInt16LE(at) & ~mask) | bits, at);
    }
    return patched;
  }

  statusOffsetsOf(id: number): number[] {
    const first = (this.#offset[id]! + HEADER_BYTES) >>> 2;
    return Array.from(this.#words.subarray(first, first + this.#statusCount[id]!));
  }

  /** The arena as 32-bit words, for reading an entry's slots where they are (`slotsStart`). */
  get ints(): Int32Array {
    return this.#ints;
  }

  /** Where in `ints` the entry's slots start. */
  slotsStart(id: number): number {
    return ((this.#offset[id]! + HEADER_BYTES) >>> 2) + this.#statusCount[id]!;
  }

  slotCount(id: number): number {
    return this.#slotCount[id]!;
  }

  /** The entry's slots as an array of their own (off the hit path: it allocates). */
  slotsOf(id: number): Int32Array {
    const start = this.slotsStart(id);
    return this.#ints.slice(start, start + this.#slotCount[id]!);
  }

  fillSeqOf(id: number): number {
    return this.#fillSeq[id]!;
  }

  rowsOf(id: number): number {
    return this.#rows[id]!;
  }

  /** Has the entry been served? The first call for an entry says no, and marks it served. */
  wasServed(id: number): boolean {
    const flags = this.#flags[id]!;
    if (flags & SERVED) return true;
    this.#flags[id] = flags | SERVED;
    return false;
  }

  servedBefore(id: number): boolean {
    return (this.#flags[id]! & SERVED) !== 0;
  }

  /**
   * Stores `input` under `key`, evicting as needed to stay within the budget. Returns false, and
   * stores nothing, if the entry alone exceeds the budget, or no room can be made because what
   * is left is pinned by writes still queued. Any previous entry under the key is removed either
   * way: the caller has a newer reply for that key, so the old one is not worth a byte. The
   * reply's bytes, status offsets and slots are copied.
   */
  set(key: string, input: ResultInput): boolean {
    const previous = this.#index.get(key);
    if (previous !== undefined) this.#remove(previous);
    const statusCount = input.statusOffsets.length;
    const slotCount = input.slots.length;
    if (statusCount > 0xffff || slotCount > 0xffff) return false;
    const record = ResultStore.recordBytes(input.bytes.length, statusCount + slotCount);
    const heap = heapBytesOf(key);
    if (record + heap > this.#budgetBytes) return false;
    const at = this.#makeRoom(record, heap);
    if (at < 0) return false;

    const id = this.#newId();
    const owned = flatCopy(key);
    this.#keys[id] = owned;
    this.#offset[id] = at;
    this.#replyLength[id] = input.bytes.length;
    this.#statusCount[id] = statusCount;
    this.#slotCount[id] = slotCount;
    this.#fillSeq[id] = input.fillSeq;
    this.#rows[id] = input.rows;
    this.#storedAt[id] = this.#ttlMs > 0 ? this.#now() : 0;
    this.#charge[id] = record + heap;
    this.#flags[id] = 0;
    const words = this.#words;
    const header = at >>> 2;
    words[header] = id;
    words[header + 1] = record;
    for (let i = 0; i < statusCount; i++) words[header + 2 + i] = input.statusOffsets[i]!;
    this.#ints.set(input.slots, header + 2 + statusCount);
    input.bytes.copy(this.#arena, at + HEADER_BYTES + 4 * (statusCount + slotCount));
    this.#index.set(owned, id);
    this.#heapBytes += heap;
    this.#bytesUsed += record + heap;
    return true;
  }

  delete(key: string): boolean {
    const id = this.#index.get(key);
    if (id === undefined) return false;
    this.#remove(id);
    return true;
  }

  deleteEntry(id: number): void {
    if (this.#keys[id] !== undefined) this.#remove(id);
  }

  /**
   * Removes entries `isDead` says can never be served again, looking at no more than `limit`
   * entry numbers, from where the previous sweep stopped. Returns true when a pass ended.
   */
  sweep(isDead: (id: number) => boolean, limit: number): boolean {
    let id = this.#sweepAt;
    for (let seen = 0; seen < limit && id < this.#nextId; seen++, id++) {
      if (this.#keys[id] !== undefined && isDead(id)) this.#remove(id);
    }
    if (id < this.#nextId) {
      this.#sweepAt = id;
      return false;
    }
    this.#sweepAt = 0;
    return true;
  }

  clear(): void {
    this.#index.clear();
    this.#keys = [];
    this.#viewIds.fill(NO_ENTRY);
    this.#views.fill(undefined);
    this.#free = [];
    this.#nextId = 0;
    this.#sweepAt = 0;
    this.#head = this.#gapEnd = this.#extent = 0;
    this.#heapBytes = this.#bytesUsed = 0;
    // Views still queued keep the old arena alive and unchanged; new records go elsewhere.
    this.#releaseDrainedPins();
    if (this.#pins.length > 0) {
      this.#pins = [];
      this.#arena = newArena(this.#budgetBytes);
      this.#words = wordsOf(this.#arena);
      this.#ints = new Int32Array(this.#words.buffer, 0, this.#words.length);
    }
  }

  /**
   * After `view` was written to `writer`: if the socket still holds queued bytes, the view may be
   * among them, and its record must stay as it is until the socket has sent everything.
   */
  pinIfQueued(view: Buffer, writer: QueuedWriter): void {
    if (writer.writableLength === 0 || view.buffer !== this.#arena.buffer) return;
    // Pins are otherwise let go only when the compaction reaches them: a store that makes no
    // room (hits only) must not collect them without end.
    if (this.#pins.length >= this.#prunePinsAt) {
      this.#releaseDrainedPins();
      this.#prunePinsAt = Math.max(PRUNE_PINS_AT, 2 * this.#pins.length);
    }
    const start = view.byteOffset;
    this.#pins.push({ start, end: start + view.length, writer });
  }

  /** Views pinned and not yet sent (for tests and stats). */
  get pinnedViews(): number {
    this.#releaseDrainedPins();
    return this.#pins.length;
  }

  /** Pins held, sent or not, as they are before the next release (for tests). */
  get pinsHeld(): number {
    return this.#pins.length;
  }

  /**
   * Evicts until a record of `record` bytes fits at the head and the budget holds `heap` more
   * bytes of overhead; returns where the record goes, or -1 when no room can be made.
   */
  #makeRoom(record: number, heap: number): number {
    const budget = this.#budgetBytes;
    // Each revolution clears every visited bit, so two of them make room unless pins block it.
    let wraps = 0;
    for (;;) {
      const gap = this.#gapEnd - this.#head;
      if (gap >= record && this.#extent + this.#heapBytes + heap <= budget) {
        const at = this.#head;
        this.#head += record;
        return at;
      }
      if (this.#gapEnd === this.#extent) {
        // Nothing after the gap: grow into unused arena when the budget allows, else wrap.
        const grown = this.#head + record;
        if (grown <= this.#arena.length && grown + this.#heapBytes + heap <= budget) {
          this.#extent = this.#gapEnd = grown;
          continue;
        }
        if (++wraps > 3) return -1;
        // Nothing lives past the head: the ring ends there from now on, which leaves room in
        // the budget for more entries' heap overhead when entries got smaller.
        this.#extent = this.#head;
        this.#head = this.#gapEnd = 0;
        continue;
      }
      this.#reclaimNext();
    }
  }

  /** Looks at the record right after the gap: absorbs it, moves it down, or jumps over it. */
  #reclaimNext(): void {
    const at = this.#gapEnd;
    const header = at >>> 2;
    const id = this.#words[header]!;
    const size = this.#words[header + 1]!;
    if (this.#pins.length > 0 && this.#isPinned(at, at + size)) {
      // A queued write still reads these bytes: leave them, and start the gap after them.
      this.#markHole(this.#head, at);
      this.#head = this.#gapEnd = at + size;
      return;
    }
    if (id === HOLE) {
      this.#gapEnd = at + size;
      return;
    }
    const flags = this.#flags[id]!;
    const expired = this.#ttlMs > 0 && this.#now() - this.#storedAt[id]! >= this.#ttlMs;
    if (flags & VISITED && !expired) {
      this.#flags[id] = flags & ~VISITED;
      const to = this.#head;
      if (to !== at) {
        this.#arena.copyWithin(to, at, at + size);
        this.#offset[id] = to;
        this.#dropView(id);
      }
      this.#head = to + size;
      this.#gapEnd = at + size;
      return;
    }
    this.#remove(id);
    if (expired) this.#expired++;
    else this.#evictions++;
    this.#gapEnd = at + size;
  }

  /** Drops an entry from the index and the accounting; its record becomes a hole. */
  #remove(id: number): void {
    this.#index.delete(this.#keys[id]!);
    const charge = this.#charge[id]!;
    const record = this.#words[(this.#offset[id]! >>> 2) + 1]!;
    this.#words[this.#offset[id]! >>> 2] = HOLE;
    this.#keys[id] = undefined;
    this.#dropView(id);
    this.#heapBytes -= charge - record;
    this.#bytesUsed -= charge;
    this.#free.push(id);
  }

  #dropView(id: number): void {
    const slot = id & (VIEW_SLOTS - 1);
    if (this.#viewIds[slot] !== id) return;
    this.#viewIds[slot] = NO_ENTRY;
    this.#views[slot] = undefined;
  }

  #markHole(from: number, to: number): void {
    if (to <= from) return;
    const header = from >>> 2;
    this.#words[header] = HOLE;
    this.#words[header + 1] = to - from;
  }

  #isPinned(start: number, end: number): boolean {
    this.#releaseDrainedPins();
    for (const pin of this.#pins) {
      if (pin.start < end && start < pin.end) return true;
    }
    return false;
  }

  #releaseDrainedPins(): void {
    const pins = this.#pins;
    let kept = 0;
    for (const pin of pins) {
      if (pin.writer.writableLength > 0 && !pin.writer.destroyed) pins[kept++] = pin;
    }
    pins.length = kept;
  }

  #replyStart(id: number): number {
    return this.#offset[id]! + HEADER_BYTES + 4 * (this.#statusCount[id]! + this.#slotCount[id]!);
  }

  #newId(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    const id = this.#nextId++;
    if (id === this.#flags.length) this.#grow();
    return id;
  }

  #grow(): void {
    const length = this.#flags.length * 2;
    this.#offset = grown(this.#offset, new Float64Array(length));
    this.#replyLength = grown(this.#replyLength, new Uint32Array(length));
    this.#statusCount = grown(this.#statusCount, new Uint16Array(length));
    this.#slotCount = grown(this.#slotCount, new Uint16Array(length));
    this.#fillSeq = grown(this.#fillSeq, new Int32Array(length));
    this.#rows = grown(this.#rows, new Uint32Array(length));
    this.#storedAt = grown(this.#storedAt, new Float64Array(length));
    this.#charge = grown(this.#charge, new Uint32Array(length));
    this.#flags = grown(this.#flags, new Uint8Array(length));
  }
}

function grown<T extends Float64Array | Uint32Array | Uint16Array | Int32Array | Uint8Array>(
  from: T,
  to: T,
): T {
  to.set(from);
  return to;
}

function alignUp(bytes: number): number {
  return (bytes + ALIGN - 1) & ~(ALIGN - 1);
}

/**
 * The arena: reserved whole, untouched (so not resident) until records are written. Offsets are
 * 32-bit words' indexes, so one arena holds at most 4 GiB; a larger share of the budget leaves
 * the rest unused.
 */
function newArena(budgetBytes: number): Buffer {
  // Not `& ~(ALIGN - 1)`: bitwise operators cut to 32 bits, and a share may be 2 GiB or more.
  const bytes = Math.floor(Math.min(budgetBytes, MAX_ARENA_BYTES) / ALIGN) * ALIGN;
  return Buffer.allocUnsafeSlow(Math.max(ALIGN, bytes));
}

function wordsOf(arena: Buffer): Uint32Array {
  return new Uint32Array(arena.buffer, arena.byteOffset, arena.length >>> 2);
}

/** An entry's heap overhead: ENTRY_OVERHEAD_BYTES and its key's characters. */
function heapBytesOf(key: string): number {
  return ENTRY_OVERHEAD_BYTES + (isLatin1(key) ? key.length : key.length * 2);
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
 * Decoding a copy of its bytes gives a plain sequential string; `set` pays for it, not `find`.
 */
function flatCopy(key: string): string {
  const encoding = isLatin1(key) ? 'latin1' : 'utf16le';
  return Buffer.from(key, encoding).toString(encoding);
}
