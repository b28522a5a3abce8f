/**
 * The query cache's entry store: one for the whole proxy, in one SharedArrayBuffer that every
 * worker thread maps. A result any worker stored is a hit in every other, and the budget is not
 * split between workers: with a store per worker, every result was missed once per worker and
 * each held 1/N of the budget, so the hit ratio fell as workers were added.
 *
 * The buffer holds, in order: a control block (the writers' lock, the change sequence, the ring's
 * positions, the totals), each worker's pins, the index, and the arena of records.
 *
 * - A record is one result: a header (state, size, key hash, lengths, fill sequence, rows, bits,
 *   time stored), the status offsets a hit patches, the registry slots of its tables, the key's
 *   code units and the reply's wire bytes. Nothing of an entry lives on a JavaScript heap.
 * - The index is open addressing with linear probing over pairs of 32-bit words, the key's hash
 *   and the record's place; a key's characters are compared in the record, so a hash collision
 *   costs a comparison, never a wrong result.
 * - Eviction is CLOCK by sliding compaction, as before the store was shared: the arena is a ring
 *   of records in the order they were written, with one free gap `[head, gapEnd)`; to make room,
 *   the record after the gap is evicted when it was not read since the last pass, else moved
 *   down to the head. Memory never fragments.
 *
 * Reads take no lock and send no message. Writers (fills, deletes, evictions, sweeps, RESET)
 * take one lock word: fills are a small share of the commands and each holds it for a copy.
 * A reader must not use bytes a writer is moving or overwriting, and a socket write of a view of
 * the arena must not see them change until the kernel has them. Two things ensure it:
 * - The change sequence (a seqlock): a writer makes it odd before it removes or moves a live
 *   record, and even after. A reader notes it before its lookup and checks it after: changed,
 *   it looks again (and after a few tries takes a miss, which is always correct).
 * - Pins: before that check, a reader publishes the record it found in its worker's current-hit
 *   pin. A writer, with the sequence odd, leaves pinned records where they are (the gap jumps
 *   over them). Either the writer's check sees the pin, or the reader's check sees the
 *   sequence change: both are sequentially consistent atomics, so one of them sees the other.
 *   When a socket could not take a hit's view at once, the pin moves to one of the worker's
 *   queued-pin slots until that socket has sent everything.
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
  /** How many of `statusOffsets` are the reply's (the first ones); all of them when absent. */
  readonly statusCount?: number;
  /** Registry slots of the tables the result was read from. */
  readonly slots: Int32Array;
  /** Registry sequence number read before the query was sent (see invalidation-registry.ts). */
  readonly fillSeq: number;
  /** Rows in the result set: what FOUND_ROWS() says after it. */
  readonly rows: number;
}

export interface ResultStoreOptions {
  /** The shared store (ResultStore.allocate); absent: a store of `budgetBytes` of its own. */
  buffer?: SharedArrayBuffer;
  /** With `buffer` absent: the budget, in bytes, of the store made for this one thread. */
  budgetBytes?: number;
  /** This thread's pin area: its worker index (0 when the store is this thread's alone). */
  worker?: number;
  /** How long an entry may be served after it was stored, in ms; 0 or absent = no TTL. */
  ttlMs?: number;
  /** The clock for the TTL, in ms, the same in every thread; wall-clock based by default. */
  now?: () => number;
}

/** A socket a view was written to, as far as pinning needs it. */
export interface QueuedWriter {
  readonly writableLength: number;
  readonly destroyed: boolean;
}

/** No entry. */
export const NO_ENTRY = -1;

// The control block, as 32-bit words.
const LOCK = 0;
const SEQ = 1;
const HEAD = 2;
const GAP_END = 3;
const EXTENT = 4;
const SIZE = 5;
const CLEARED = 6;
const WORKERS = 8;
const CAPACITY = 9;
const ARENA_START = 10;
const ARENA_BYTES = 11;
const BUDGET_LOW = 12;
const BUDGET_HIGH = 13;
/** Float64 word (of the control block as doubles): the records' bytes. */
const BYTES_USED_F64 = 8;
const CONTROL_BYTES = 128;

/** The lock's owner is written as its worker + 1; the main thread's recovery uses this. */
const UNLOCKED = 0;

// Each worker's pin area: [slots in use (high-water), overflow], then PIN_SLOTS [start, end).
/** Slot 0 is the current hit's; the others hold views queued on sockets. */
const PIN_SLOTS = 1024;
const PIN_AREA_WORDS = 2 + 2 * PIN_SLOTS;
const PINS_USED = 0;
const PINS_OVERFLOW = 1;

// A record's header, as 32-bit words from its start.
const STATE = 0;
const RECORD_SIZE = 1;
const HASH = 2;
const KEY_UNITS = 3;
const REPLY_LENGTH = 4;
const COUNTS = 5;
const FILL_SEQ = 6;
const ROWS = 7;
const FLAGS = 8;
/** As a double: word 10 and 11. */
const STORED_AT_F64 = 5;
const HEADER_BYTES = 48;
const LIVE = 1;
const HOLE = 0xffffffff;
/** In KEY_UNITS: the key is stored as UTF-16 code units, else as one byte a character. */
const WIDE_KEY = 0x80000000;

/** Records start and end on this boundary, so headers can be read as aligned words. */
const ALIGN = 8;
const VISITED = 1;
const SERVED = 2;
/** The largest arena: record offsets are 32-bit. */
const MAX_ARENA_BYTES = 2 ** 32 - 2 * ALIGN;
/** Index buckets: one per this many bytes of budget (a power of two, at least MIN_BUCKETS). */
const BYTES_PER_BUCKET = 128;
const MIN_BUCKETS = 1024;
/** 128 MB of index: 12M entries, more than any budget this arena can hold fills with results. */
const MAX_BUCKETS = 2 ** 24;
/** Entries held at most, as a share of the buckets: linear probing wants free buckets. */
const MAX_LOAD = 0.75;
/** How often a reader looks at an odd sequence before it gives up on this try. */
const SPIN = 1000;
/** Lookups tried before a changing store is taken as a miss. */
const TRIES = 4;
/** Pins held before the sent ones are let go at the next pin (doubles with those still queued). */
const PRUNE_PINS_AT = 64;
/** Views of hit replies kept for reuse (a power of two). */
const VIEW_SLOTS = 4096;

interface Pin {
  /** Its slot in this worker's pin area, or 0 when the area was full (an overflow). */
  readonly slot: number;
  readonly writer: QueuedWriter;
}

export class ResultStore {
  readonly #buffer: SharedArrayBuffer;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #worker: number;
  readonly #control: Int32Array;
  readonly #controlU: Uint32Array;
  readonly #controlF: Float64Array;
  /** This worker's pin area, and every worker's (for the writers' checks). */
  readonly #pinArea: Uint32Array;
  readonly #pinBase: number;
  readonly #index: Int32Array;
  readonly #mask: number;
  readonly #maxEntries: number;
  readonly #arena: Buffer;
  readonly #words: Uint32Array;
  readonly #ints: Int32Array;
  readonly #doubles: Float64Array;
  readonly #workers: number;
  #evictions = 0;
  #expired = 0;
  /**
   * Where this thread's sweep goes on, by index bucket. Each thread sweeps the whole store in
   * its own passes: a pass that started where another thread's stopped would end having seen
   * only part of it.
   */
  #sweepAt = 0;
  /** Entries and bytes this thread added, less those it removed: its share of the gauges. */
  #sizeHere = 0;
  #bytesHere = 0;
  /** Views written to sockets that had not sent them yet (see pinIfQueued). */
  #pins: Pin[] = [];
  #freePinSlots: number[] = [];
  #overflowPins = 0;
  #prunePinsAt = PRUNE_PINS_AT;
  /** Views of recently hit replies, direct-mapped by their offset: a hot hit makes no view. */
  readonly #viewStarts = new Int32Array(VIEW_SLOTS).fill(-1);
  readonly #views: (Buffer | undefined)[] = new Array<Buffer | undefined>(VIEW_SLOTS);

  /**
   * A store of `budgetBytes` for `workers` threads: the buffer to give each of them. The budget
   * bounds the whole buffer, index and control block included.
   */
  static allocate(budgetBytes: number, workers: number): SharedArrayBuffer {
    if (!Number.isFinite(budgetBytes) || budgetBytes < 0)
      throw new RangeError(`budgetBytes must be a finite number >= 0, got ${budgetBytes}`);
    const budget = Math.floor(budgetBytes);
    const capacity = bucketsFor(budget);
    const fixed = fixedBytes(capacity, workers);
    const arenaBytes = Math.max(
      0,
      Math.floor(Math.min(budget - fixed, MAX_ARENA_BYTES) / ALIGN) * ALIGN,
    );
    // Reserved whole; the kernel makes the arena's pages resident as records are first written
    // to them.
    const buffer = new SharedArrayBuffer(fixed + arenaBytes);
    // Not the index's: every fill probes a random bucket and then writes one, so a fresh index
    // page cost two faults (the shared zero page at the probe, a page of its own at the insert)
    // to fills until all of them had been hit, which for a 1 GB budget (16 384 pages) is most
    // of the first hundred thousand fills. Written once here, at a sixteenth of the budget,
    // they are resident from the start, as they would soon be anyway.
    new Int32Array(buffer, CONTROL_BYTES, (fixed - CONTROL_BYTES) >>> 2).fill(0);
    const control = new Uint32Array(buffer, 0, CONTROL_BYTES >>> 2);
    control[WORKERS] = workers;
    control[CAPACITY] = capacity;
    control[ARENA_START] = fixed;
    control[ARENA_BYTES] = arenaBytes;
    control[BUDGET_LOW] = budget % 2 ** 32;
    control[BUDGET_HIGH] = Math.floor(budget / 2 ** 32);
    return buffer;
  }

  /** The size of the record an entry takes, with `words` status offsets and slots. */
  static recordBytes(keyBytes: number, replyLength: number, words: number): number {
    return alignUp(HEADER_BYTES + 4 * words + alignUp4(keyBytes) + replyLength);
  }

  /** What an entry is charged against the budget: its record. */
  static chargeOf(key: string, replyLength: number, words: number): number {
    return ResultStore.recordBytes(keyBytesOf(key), replyLength, words);
  }

  /** What a store of `budgetBytes` for `workers` keeps for itself before its arena. */
  static overheadOf(budgetBytes: number, workers = 1): number {
    return fixedBytes(bucketsFor(Math.floor(budgetBytes)), workers);
  }

  constructor(options: ResultStoreOptions) {
    const { ttlMs = 0, now = wallClockMs } = options;
    if (!Number.isFinite(ttlMs) || ttlMs < 0)
      throw new RangeError(`ttlMs must be a finite number >= 0, got ${ttlMs}`);
    this.#buffer = options.buffer ?? ResultStore.allocate(options.budgetBytes ?? 0, 1);
    this.#worker = options.worker ?? 0;
    this.#ttlMs = ttlMs;
    this.#now = now;
    const buffer = this.#buffer;
    this.#control = new Int32Array(buffer, 0, CONTROL_BYTES >>> 2);
    this.#controlU = new Uint32Array(buffer, 0, CONTROL_BYTES >>> 2);
    this.#controlF = new Float64Array(buffer, 0, CONTROL_BYTES >>> 3);
    const control = this.#controlU;
    this.#workers = control[WORKERS]!;
    if (this.#worker < 0 || this.#worker > this.#workers)
      throw new RangeError(`worker ${this.#worker} is not one of the store's ${this.#workers}`);
    const capacity = control[CAPACITY]!;
    // One pin area more than workers: the main thread's, which never pins.
    this.#pinArea = new Uint32Array(buffer, CONTROL_BYTES, (this.#workers + 1) * PIN_AREA_WORDS);
    this.#pinBase = this.#worker * PIN_AREA_WORDS;
    this.#pinArea.fill(0, this.#pinBase, this.#pinBase + PIN_AREA_WORDS);
    for (let slot = PIN_SLOTS - 1; slot >= 1; slot--) this.#freePinSlots.push(slot);
    this.#index = new Int32Array(
      buffer,
      CONTROL_BYTES + 4 * (this.#workers + 1) * PIN_AREA_WORDS,
      2 * capacity,
    );
    this.#mask = capacity - 1;
    this.#maxEntries = Math.floor(capacity * MAX_LOAD);
    this.#arena = Buffer.from(buffer, control[ARENA_START], control[ARENA_BYTES]);
    this.#words = new Uint32Array(buffer, control[ARENA_START], control[ARENA_BYTES]! >>> 2);
    this.#ints = new Int32Array(buffer, control[ARENA_START], control[ARENA_BYTES]! >>> 2);
    this.#doubles = new Float64Array(buffer, control[ARENA_START], control[ARENA_BYTES]! >>> 3);
  }

  /** Results held, by every worker. */
  get size(): number {
    return this.#controlU[SIZE]!;
  }

  /** The records' bytes, every worker's. */
  get bytesUsed(): number {
    return this.#controlF[BYTES_USED_F64]!;
  }

  /**
   * Is the store nearly full (within 1/16 of its arena's bytes or of the entries its index
   * takes)? Then a new result pushes an older one out: storing is no longer free.
   */
  get nearlyFull(): boolean {
    const arenaBytes = this.#arena.length;
    const maxEntries = this.#maxEntries;
    return (
      this.#controlF[BYTES_USED_F64]! >= arenaBytes - arenaBytes / 16 ||
      this.#controlU[SIZE]! >= maxEntries - maxEntries / 16
    );
  }

  /** The whole store's budget. */
  get budgetBytes(): number {
    return this.#controlU[BUDGET_LOW]! + this.#controlU[BUDGET_HIGH]! * 2 ** 32;
  }

  /** What the budget bounds: the fixed part and the arena as far as records have been written. */
  get boundBytes(): number {
    return this.#controlU[ARENA_START]! + this.#controlU[EXTENT]!;
  }

  /** Entries this thread evicted to make room (the server's Qcache_lowmem_prunes). */
  get evictions(): number {
    return this.#evictions;
  }

  /** Entries this thread removed because their TTL had passed. */
  get expired(): number {
    return this.#expired;
  }

  /** Entries this thread added, less those it removed (its share of Qcache_queries_in_cache). */
  get sizeHere(): number {
    return this.#sizeHere;
  }

  /** Bytes this thread added, less those it removed. */
  get bytesHere(): number {
    return this.#bytesHere;
  }

  /**
   * The entry stored under `key`, or NO_ENTRY; an expired entry is removed and counted in
   * `expired`. Marks the entry as read by setting one bit: this is the path of every cache hit.
   * The entry is this thread's current hit: it stays where it is, its bytes as they are, until
   * this thread's next lookup (or until its view is sent, see pinIfQueued). `hash` is
   * keyHashOf(key), for a caller that keeps it.
   */
  find(key: string, hash: number = keyHashOf(key)): number {
    const control = this.#control;
    const pins = this.#pinArea;
    const base = this.#pinBase + 2;
    for (let tries = 0; tries < TRIES; tries++) {
      const seq = this.#evenSequence();
      if (seq < 0) return NO_ENTRY;
      const at = this.#probe(hash, key);
      if (at < 0) return NO_ENTRY;
      const size = this.#words[(at >>> 2) + RECORD_SIZE]!;
      Atomics.store(pins, base, at);
      Atomics.store(pins, base + 1, at + size);
      if (Atomics.load(control, SEQ) !== seq) continue;
      // Pinned, and nothing moved it since it was found: its bytes are the entry's.
      const header = at >>> 2;
      if (
        this.#ttlMs > 0 &&
        this.#now() - this.#doubles[(at >>> 3) + STORED_AT_F64]! >= this.#ttlMs
      ) {
        if (this.#removeIfLive(at)) this.#expired++;
        return NO_ENTRY;
      }
      this.#words[header + FLAGS]! |= VISITED;
      return at;
    }
    return NO_ENTRY;
  }

  /** The entry's reply, a view of the arena: see find for how long it holds. */
  replyOf(id: number): Buffer {
    const start = this.#replyStart(id);
    const length = this.#words[(id >>> 2) + REPLY_LENGTH]!;
    const slot = (id >>> 3) & (VIEW_SLOTS - 1);
    const cached = this.#views[slot];
    if (this.#viewStarts[slot] === start && cached !== undefined && cached.length === length)
      return cached;
    const view = this.#arena.subarray(start, start + length);
    this.#viewStarts[slot] = start;
    this.#views[slot] = view;
    return view;
  }

  /**
   * The entry's reply with `bits` (under `mask`) in each of its status fields: the stored view
   * when they already are, else a patched copy of its own.
   */
  replyWithStatus(id: number, bits: number, mask: number): Buffer {
    const reply = this.replyOf(id);
    const count = this.#words[(id >>> 2) + COUNTS]! & 0xffff;
    const first = (id + HEADER_BYTES) >>> 2;
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
    const first = (id + HEADER_BYTES) >>> 2;
    return Array.from(
      this.#words.subarray(first, first + (this.#words[(id >>> 2) + COUNTS]! & 0xffff)),
    );
  }

  /** The arena as 32-bit words, for reading an entry's slots where they are (`slotsStart`). */
  get ints(): Int32Array {
    return this.#ints;
  }

  /** Where in `ints` the entry's slots start. */
  slotsStart(id: number): number {
    return ((id + HEADER_BYTES) >>> 2) + (this.#words[(id >>> 2) + COUNTS]! & 0xffff);
  }

  slotCount(id: number): number {
    return this.#words[(id >>> 2) + COUNTS]! >>> 16;
  }

  /** The entry's slots as an array of their own (off the hit path: it allocates). */
  slotsOf(id: number): Int32Array {
    const start = this.slotsStart(id);
    return this.#ints.slice(start, start + this.slotCount(id));
  }

  fillSeqOf(id: number): number {
    return this.#ints[(id >>> 2) + FILL_SEQ]!;
  }

  rowsOf(id: number): number {
    return this.#words[(id >>> 2) + ROWS]!;
  }

  /** Has the entry been served? The first call for an entry says no, and marks it served. */
  wasServed(id: number): boolean {
    const at = (id >>> 2) + FLAGS;
    const flags = this.#words[at]!;
    if (flags & SERVED) return true;
    this.#words[at] = flags | SERVED;
    return false;
  }

  servedBefore(id: number): boolean {
    return (this.#words[(id >>> 2) + FLAGS]! & SERVED) !== 0;
  }

  /**
   * Stores `input` under `key`, evicting as needed to stay within the budget. Returns false, and
   * stores nothing, if the entry alone exceeds the arena, or no room can be made because what
   * is left is pinned by writes still queued. Any previous entry under the key is removed either
   * way: the caller has a newer reply for that key, so the old one is not worth a byte. The
   * reply's bytes, status offsets and slots are copied. `hash` is keyHashOf(key).
   */
  set(key: string, input: ResultInput, hash: number = keyHashOf(key)): boolean {
    this.#lock();
    try {
      const previous = this.#probe(hash, key);
      if (previous >= 0) this.#removeLocked(previous);
      const statusCount = input.statusCount ?? input.statusOffsets.length;
      const slotCount = input.slots.length;
      if (statusCount > 0xffff || slotCount > 0xffff) return false;
      const wide = !isLatin1(key);
      const keyBytes = wide ? 2 * key.length : key.length;
      const record = ResultStore.recordBytes(keyBytes, input.bytes.length, statusCount + slotCount);
      if (record > this.#arena.length) return false;
      const at = this.#makeRoom(record);
      if (at < 0) return false;
      const words = this.#words;
      const header = at >>> 2;
      words[header + RECORD_SIZE] = record;
      words[header + HASH] = hash;
      words[header + KEY_UNITS] = key.length | (wide ? WIDE_KEY : 0);
      words[header + REPLY_LENGTH] = input.bytes.length;
      words[header + COUNTS] = statusCount | (slotCount << 16);
      this.#ints[header + FILL_SEQ] = input.fillSeq;
      words[header + ROWS] = input.rows;
      words[header + FLAGS] = 0;
      this.#doubles[(at >>> 3) + STORED_AT_F64] = this.#ttlMs > 0 ? this.#now() : 0;
      for (let i = 0; i < statusCount; i++)
        words[header + HEADER_BYTES / 4 + i] = input.statusOffsets[i]!;
      this.#ints.set(input.slots, header + HEADER_BYTES / 4 + statusCount);
      const keyAt = at + HEADER_BYTES + 4 * (statusCount + slotCount);
      this.#arena.write(key, keyAt, keyBytes, wide ? 'utf16le' : 'latin1');
      input.bytes.copy(this.#arena, keyAt + alignUp4(keyBytes));
      words[header + STATE] = LIVE;
      this.#insert(hash, at);
      this.#controlU[SIZE]!++;
      this.#controlF[BYTES_USED_F64]! += record;
      this.#sizeHere++;
      this.#bytesHere += record;
      return true;
    } finally {
      this.#unlock();
    }
  }

  delete(key: string): boolean {
    const hash = keyHashOf(key);
    this.#lock();
    try {
      const at = this.#probe(hash, key);
      if (at < 0) return false;
      this.#removeLocked(at);
      return true;
    } finally {
      this.#unlock();
    }
  }

  /** Removes a found entry (this thread's current hit), unless another thread just did. */
  deleteEntry(id: number): void {
    this.#removeIfLive(id);
  }

  /**
   * Removes entries `isDead` says can never be served again, looking at no more than `limit`
   * index buckets, from where this thread's previous sweep stopped. Returns true when a
   * pass over the whole index ended. Holds the writers' lock throughout, so `isDead` sees
   * entries that stay where they are.
   */
  sweep(isDead: (id: number) => boolean, limit: number): boolean {
    this.#lock();
    try {
      return this.#sweepLocked(isDead, limit);
    } finally {
      this.#unlock();
    }
  }

  /** Index buckets: what a pass of `sweep` goes over. */
  get buckets(): number {
    return this.#mask + 1;
  }

  /** One whole pass of `sweep`, from the first bucket; the next sweep starts over. */
  sweepWhole(isDead: (id: number) => boolean): void {
    this.#lock();
    try {
      this.#sweepAt = 0;
      this.#sweepLocked(isDead, this.#mask + 1);
    } finally {
      this.#unlock();
    }
  }

  #sweepLocked(isDead: (id: number) => boolean, limit: number): boolean {
    const index = this.#index;
    const capacity = this.#mask + 1;
    let bucket = this.#sweepAt;
    for (let seen = 0; seen < limit && bucket < capacity;) {
      const ref = index[2 * bucket + 1]!;
      if (ref !== 0) {
        const at = (ref - 1) * ALIGN;
        // Removing shifts a later entry into this bucket: look at the bucket again.
        if (isDead(at)) {
          this.#removeLocked(at);
          continue;
        }
      }
      bucket++;
      seen++;
    }
    if (bucket < capacity) {
      this.#sweepAt = bucket;
      return false;
    }
    this.#sweepAt = 0;
    return true;
  }

  /** Empties the store, for every worker. */
  clear(): void {
    this.#lock();
    try {
      this.#clearLocked();
    } finally {
      this.#unlock();
    }
  }

  /**
   * RESET QUERY CACHE number `count` (the registry's count of them): the first worker to see it
   * empties the store (and is told so: true); the others find it done.
   */
  clearFor(count: number): boolean {
    if (this.#controlU[CLEARED] === count >>> 0) return false;
    this.#lock();
    try {
      if (this.#controlU[CLEARED] === count >>> 0) return false;
      this.#controlU[CLEARED] = count >>> 0;
      this.#clearLocked();
      return true;
    } finally {
      this.#unlock();
    }
  }

  /**
   * After `view` was written to `writer`: if the socket still holds queued bytes, the view may be
   * among them, and its record must stay as it is until the socket has sent everything.
   * Otherwise the current hit's pin is let go.
   */
  pinIfQueued(view: Buffer, writer: QueuedWriter): void {
    const pins = this.#pinArea;
    const base = this.#pinBase + 2;
    if (writer.writableLength === 0 || view.buffer !== this.#buffer) {
      Atomics.store(pins, base + 1, 0);
      Atomics.store(pins, base, 0);
      return;
    }
    // Pins are otherwise let go only when this worker makes room: a worker that only hits must
    // not collect them without end.
    if (this.#pins.length >= this.#prunePinsAt) {
      this.releaseDrainedPins();
      this.#prunePinsAt = Math.max(PRUNE_PINS_AT, 2 * this.#pins.length);
    }
    const slot = this.#freePinSlots.pop() ?? 0;
    if (slot === 0) {
      // Every slot is taken: writers leave the whole arena alone until some are sent.
      this.#overflowPins++;
      Atomics.store(pins, this.#pinBase + PINS_OVERFLOW, 1);
    } else {
      // The view's own bytes, in the arena's offsets: the record that holds them stays put.
      const start = view.byteOffset - this.#arena.byteOffset;
      const at = this.#pinBase + 2 + 2 * slot;
      Atomics.store(pins, at, start);
      Atomics.store(pins, at + 1, start + view.length);
      if (slot + 1 > pins[this.#pinBase + PINS_USED]!)
        Atomics.store(pins, this.#pinBase + PINS_USED, slot + 1);
    }
    // The current hit's pin last: the queued one has taken over.
    Atomics.store(pins, base + 1, 0);
    Atomics.store(pins, base, 0);
    this.#pins.push({ slot, writer });
  }

  /** Lets go of the pins of views their sockets have sent (or that closed). */
  releaseDrainedPins(): void {
    const pins = this.#pins;
    const area = this.#pinArea;
    let kept = 0;
    for (const pin of pins) {
      if (pin.writer.writableLength > 0 && !pin.writer.destroyed) {
        pins[kept++] = pin;
        continue;
      }
      if (pin.slot === 0) {
        this.#overflowPins--;
      } else {
        const at = this.#pinBase + 2 + 2 * pin.slot;
        Atomics.store(area, at + 1, 0);
        Atomics.store(area, at, 0);
        this.#freePinSlots.push(pin.slot);
      }
    }
    pins.length = kept;
    if (this.#overflowPins === 0) Atomics.store(area, this.#pinBase + PINS_OVERFLOW, 0);
  }

  /** Views pinned and not yet sent (for tests and stats). */
  get pinnedViews(): number {
    this.releaseDrainedPins();
    return this.#pins.length;
  }

  /** Pins held, sent or not, as they are before the next release (for tests). */
  get pinsHeld(): number {
    return this.#pins.length;
  }

  /**
   * After worker `worker` ended (called in the main thread): its pins go, and the writers' lock
   * if it died holding it (a worker terminated in the middle of a fill): the store is emptied
   * then, as what it was changing may be half done.
   */
  recoverAfterExit(worker: number): void {
    const base = worker * PIN_AREA_WORDS;
    this.#pinArea.fill(0, base, base + PIN_AREA_WORDS);
    const owner = worker + 1;
    if (Atomics.compareExchange(this.#control, LOCK, owner, this.#worker + 1) !== owner) return;
    try {
      if ((Atomics.load(this.#control, SEQ) & 1) === 1) Atomics.add(this.#control, SEQ, 1);
      this.#clearLocked();
    } finally {
      this.#unlock();
    }
  }

  #lock(): void {
    const control = this.#control;
    const me = this.#worker + 1;
    for (;;) {
      const owner = Atomics.compareExchange(control, LOCK, UNLOCKED, me);
      if (owner === UNLOCKED) return;
      if (owner === me) throw new Error('result store: the writers’ lock taken twice');
      // Held for a copy at most: wait a little (woken at once by the unlock).
      Atomics.wait(control, LOCK, owner, 1);
    }
  }

  #unlock(): void {
    Atomics.store(this.#control, LOCK, UNLOCKED);
    Atomics.notify(this.#control, LOCK, 1);
  }

  /** The change sequence once it is even (no change under way), or -1 when it stays odd. */
  #evenSequence(): number {
    const control = this.#control;
    for (let spins = 0; spins < SPIN; spins++) {
      const seq = Atomics.load(control, SEQ);
      if ((seq & 1) === 0) return seq;
    }
    return -1;
  }

  #beginChange(): void {
    Atomics.add(this.#control, SEQ, 1);
  }

  #endChange(): void {
    Atomics.add(this.#control, SEQ, 1);
  }

  /** The record of `key` (its offset), or -1. Reads only: a reader's result is checked after. */
  #probe(hash: number, key: string): number {
    const index = this.#index;
    const mask = this.#mask;
    for (let bucket = hash & mask, seen = 0; seen <= mask; bucket = (bucket + 1) & mask, seen++) {
      const ref = index[2 * bucket + 1]!;
      if (ref === 0) return -1;
      if (index[2 * bucket] !== hash) continue;
      const at = (ref - 1) * ALIGN;
      if (this.#holdsKey(at, key)) return at;
    }
    return -1;
  }

  /** Is the record at `at` live and stored under `key`? */
  #holdsKey(at: number, key: string): boolean {
    const words = this.#words;
    const header = at >>> 2;
    if (header + HEADER_BYTES / 4 > words.length || words[header + STATE] !== LIVE) return false;
    const units = words[header + KEY_UNITS]!;
    const length = units & ~WIDE_KEY;
    if (length !== key.length) return false;
    const keyAt =
      at +
      HEADER_BYTES +
      4 * ((words[header + COUNTS]! & 0xffff) + (words[header + COUNTS]! >>> 16));
    const arena = this.#arena;
    if (keyAt + (units & WIDE_KEY ? 2 * length : length) > arena.length) return false;
    if (units & WIDE_KEY) {
      for (let i = 0; i < length; i++) {
        if (arena[keyAt + 2 * i]! + (arena[keyAt + 2 * i + 1]! << 8) !== key.charCodeAt(i))
          return false;
      }
      return true;
    }
    for (let i = 0; i < length; i++) {
      if (arena[keyAt + i] !== key.charCodeAt(i)) return false;
    }
    return true;
  }

  /** Points a free bucket at the record at `at` (under the lock). */
  #insert(hash: number, at: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let bucket = hash & mask;
    while (index[2 * bucket + 1] !== 0) bucket = (bucket + 1) & mask;
    index[2 * bucket] = hash;
    // Last, and atomically: a reader that sees the place sees the record written before it.
    Atomics.store(index, 2 * bucket + 1, at / ALIGN + 1);
  }

  /** The bucket that points at the record at `at`, or -1. */
  #bucketOf(at: number): number {
    const index = this.#index;
    const mask = this.#mask;
    const ref = at / ALIGN + 1;
    const hash = this.#words[(at >>> 2) + HASH]!;
    for (let bucket = hash & mask, seen = 0; seen <= mask; bucket = (bucket + 1) & mask, seen++) {
      const found = index[2 * bucket + 1]!;
      if (found === 0) return -1;
      if (found === ref) return bucket;
    }
    return -1;
  }

  /**
   * Empties a bucket, moving later ones of its run back so every entry stays reachable from its
   * hash's bucket (no tombstones). A reader probing meanwhile may miss an entry: a miss.
   */
  #unlink(bucket: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let hole = bucket;
    for (let next = (hole + 1) & mask; ; next = (next + 1) & mask) {
      const ref = index[2 * next + 1]!;
      if (ref === 0) break;
      const home = index[2 * next]! & mask;
      // The entry at `next` may move to the hole if its home is not in (hole, next].
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (between) continue;
      index[2 * hole] = index[2 * next]!;
      Atomics.store(index, 2 * hole + 1, ref);
      hole = next;
    }
    Atomics.store(index, 2 * hole + 1, 0);
    index[2 * hole] = 0;
  }

  /** Removes the found entry at `at` if it is still live (takes the lock). */
  #removeIfLive(at: number): boolean {
    this.#lock();
    try {
      if (this.#words[(at >>> 2) + STATE] !== LIVE) return false;
      this.#removeLocked(at);
      return true;
    } finally {
      this.#unlock();
    }
  }

  /** Drops a live entry, as one change (see the change sequence). */
  #removeLocked(at: number): void {
    this.#beginChange();
    this.#dropLocked(at);
    this.#endChange();
  }

  /**
   * Drops a live entry from the index and the accounting; its record becomes a hole. Call with
   * the sequence odd.
   */
  #dropLocked(at: number): void {
    const bucket = this.#bucketOf(at);
    if (bucket >= 0) this.#unlink(bucket);
    const header = at >>> 2;
    const record = this.#words[header + RECORD_SIZE]!;
    this.#words[header + STATE] = HOLE;
    this.#controlU[SIZE]!--;
    this.#controlF[BYTES_USED_F64]! -= record;
    this.#sizeHere--;
    this.#bytesHere -= record;
  }

  #clearLocked(): void {
    this.#beginChange();
    this.#index.fill(0);
    // Every record in the ring becomes a hole; the compaction takes them up as it goes.
    const control = this.#controlU;
    const words = this.#words;
    const markRange = (from: number, to: number): void => {
      for (let at = from; at < to;) {
        const size = words[(at >>> 2) + RECORD_SIZE]!;
        if (size === 0) break;
        words[at >>> 2] = HOLE;
        at += size;
      }
    };
    markRange(control[GAP_END]!, control[EXTENT]!);
    markRange(0, control[HEAD]!);
    this.#sizeHere -= control[SIZE]!;
    this.#bytesHere -= this.#controlF[BYTES_USED_F64]!;
    control[SIZE] = 0;
    this.#controlF[BYTES_USED_F64] = 0;
    this.#endChange();
  }

  /**
   * Evicts until a record of `record` bytes fits at the head and the index has a free bucket to
   * spare; returns where the record goes, or -1 when no room can be made.
   */
  #makeRoom(record: number): number {
    const control = this.#controlU;
    const arenaBytes = this.#arena.length;
    this.releaseDrainedPins();
    // Each revolution clears every visited bit, so two of them make room unless pins block it.
    let wraps = 0;
    for (;;) {
      const head = control[HEAD]!;
      const gapEnd = control[GAP_END]!;
      const extent = control[EXTENT]!;
      if (gapEnd - head >= record && control[SIZE]! < this.#maxEntries) {
        control[HEAD] = head + record;
        return head;
      }
      if (gapEnd === extent) {
        // Nothing after the gap: grow into unused arena, else wrap.
        // Pins lie only on records in the ring: what lies beyond its end was gap when it wrapped.
        const grown = head + record;
        if (grown <= arenaBytes && control[SIZE]! < this.#maxEntries) {
          control[EXTENT] = control[GAP_END] = grown;
          continue;
        }
        if (++wraps > 3) return -1;
        control[EXTENT] = head;
        control[HEAD] = control[GAP_END] = 0;
        continue;
      }
      this.#reclaimNext();
    }
  }

  /** Looks at the record right after the gap: absorbs it, moves it down, or jumps over it. */
  #reclaimNext(): void {
    const control = this.#controlU;
    const words = this.#words;
    const at = control[GAP_END]!;
    const header = at >>> 2;
    const size = words[header + RECORD_SIZE]!;
    this.#beginChange();
    try {
      if (this.#isPinned(at, at + size)) {
        // A reader uses these bytes: leave them, and start the gap after them.
        this.#markHole(control[HEAD]!, at);
        control[HEAD] = control[GAP_END] = at + size;
        return;
      }
      if (words[header + STATE] !== LIVE) {
        control[GAP_END] = at + size;
        return;
      }
      const flags = words[header + FLAGS]!;
      const expired =
        this.#ttlMs > 0 && this.#now() - this.#doubles[(at >>> 3) + STORED_AT_F64]! >= this.#ttlMs;
      if (flags & VISITED && !expired) {
        words[header + FLAGS] = flags & ~VISITED;
        const to = control[HEAD]!;
        if (to !== at) {
          const bucket = this.#bucketOf(at);
          this.#arena.copyWithin(to, at, at + size);
          if (bucket >= 0) Atomics.store(this.#index, 2 * bucket + 1, to / ALIGN + 1);
        }
        control[HEAD] = to + size;
        control[GAP_END] = at + size;
        return;
      }
      // Pin checked and bytes given up in the same change: no reader can pin it in between.
      this.#dropLocked(at);
      if (expired) this.#expired++;
      else this.#evictions++;
      control[GAP_END] = at + size;
    } finally {
      this.#endChange();
    }
  }

  #markHole(from: number, to: number): void {
    if (to <= from) return;
    const header = from >>> 2;
    this.#words[header + STATE] = HOLE;
    this.#words[header + RECORD_SIZE] = to - from;
  }

  /** Does a pin of any worker touch `[start, end)`? Call with the sequence odd. */
  #isPinned(start: number, end: number): boolean {
    const area = this.#pinArea;
    for (let worker = 0; worker <= this.#workers; worker++) {
      const base = worker * PIN_AREA_WORDS;
      if (Atomics.load(area, base + PINS_OVERFLOW) !== 0) return true;
      const used = Math.max(1, Atomics.load(area, base + PINS_USED));
      for (let slot = 0; slot < used; slot++) {
        const at = base + 2 + 2 * slot;
        const to = Atomics.load(area, at + 1);
        if (to !== 0 && start < to && Atomics.load(area, at) < end) return true;
      }
    }
    return false;
  }

  #replyStart(id: number): number {
    const words = this.#words;
    const header = id >>> 2;
    const counts = words[header + COUNTS]!;
    const units = words[header + KEY_UNITS]!;
    const keyBytes = units & WIDE_KEY ? 2 * (units & ~WIDE_KEY) : units;
    return id + HEADER_BYTES + 4 * ((counts & 0xffff) + (counts >>> 16)) + alignUp4(keyBytes);
  }
}

function alignUp(bytes: number): number {
  return Math.ceil(bytes / ALIGN) * ALIGN;
}

function alignUp4(bytes: number): number {
  return (bytes + 3) & ~3;
}

/** Index buckets for a budget: a power of two, about one per BYTES_PER_BUCKET. */
function bucketsFor(budget: number): number {
  let buckets = MIN_BUCKETS;
  while (buckets * 2 * BYTES_PER_BUCKET <= budget && buckets < MAX_BUCKETS) buckets *= 2;
  return buckets;
}

function fixedBytes(buckets: number, workers: number): number {
  return alignUp(CONTROL_BYTES + 4 * (workers + 1) * PIN_AREA_WORDS + 8 * buckets);
}

/** The key's bytes in a record: one a character when all fit in one, else UTF-16. */
function keyBytesOf(key: string): number {
  return isLatin1(key) ? key.length : 2 * key.length;
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) return false;
  }
  return true;
}

/** FNV-1a over the key's UTF-16 code units, then a final mix so low bits vary. */
export function keyHashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash | 0;
}

/** Milliseconds every thread reads alike (each worker's performance.now() has its own origin). */
function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
