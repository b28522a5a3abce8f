/**
 * The invalidation registry every worker shares: one SharedArrayBuffer, set up by the main thread.
 *
 * One global sequence counts finished writes. Each table slot (hash(schema.table) mod size) holds
 * the sequence number of the last write that finished on it, and a count of writes to it still in
 * flight; one more pair stands for "everything" (writes whose tables cannot be known).
 *
 * - A write marks its slots in flight *before* it is sent and, whatever its outcome, takes a new
 *   sequence number and raises its slots to it *before* its client sees the reply.
 * - A reader reads the sequence *before* it sends a SELECT (the fill sequence). Its result is
 *   good while every slot it read is at or below that number and nothing is in flight on them:
 *   a write that finished after the read was sent has a larger number, so a SELECT that raced a
 *   write is born stale and never served.
 * - A transaction's snapshot is a sequence number too: a cached result equals what the snapshot
 *   sees when no slot it read moved past the snapshot's number.
 *
 * Every operation is an atomic on an Int32Array: no lock, no message between threads. Numbers
 * wrap at 2^32 and are compared by their difference, so a result older than 2^30 writes is simply
 * treated as stale. A difference only orders numbers less than 2^31 apart, so every 2^29 numbers
 * the words of tables not written for that long are moved up to the age bound (see #sweep). Two
 * tables sharing a slot only cost an extra miss.
 */

const SEQUENCE = 0;
const EVERYTHING_SEQ = 1;
const EVERYTHING_IN_FLIGHT = 2;
/** Bumped by RESET QUERY CACHE: every worker empties its store when it sees a new value. */
const CLEARED = 3;
/** Bumped after DDL that may change views, triggers or foreign keys. */
const SCHEMA_VERSION = 4;
/** DDL statements sent and not yet answered. */
const SCHEMA_CHANGES_IN_FLIGHT = 5;
/** Slot words start after the header, each array on its own region. */
const HEADER_WORDS = 16;
/** Beyond this many writes since a fill, a result is stale whatever its slots say. */
const MAX_AGE = 1 << 30;
/** How often (in numbers) old words are moved up: MAX_AGE + SWEEP_INTERVAL stays below 2^31. */
const SWEEP_INTERVAL = 1 << 29;

export const DEFAULT_REGISTRY_SLOTS = 1 << 16;

/** a ≤ b for sequence numbers that may have wrapped. */
function notAfter(a: number, b: number): boolean {
  return ((a - b) | 0) <= 0;
}

export class InvalidationRegistry {
  readonly buffer: SharedArrayBuffer;
  readonly slots: number;
  readonly #words: Int32Array;
  readonly #inFlightBase: number;

  /** Allocates the shared area; the main thread does this once and hands the buffer to workers. */
  static allocate(slots = DEFAULT_REGISTRY_SLOTS): SharedArrayBuffer {
    if (slots <= 0 || (slots & (slots - 1)) !== 0)
      throw new RangeError('slots must be a power of two');
    return new SharedArrayBuffer((HEADER_WORDS + 2 * slots) * Int32Array.BYTES_PER_ELEMENT);
  }

  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#words = new Int32Array(buffer);
    this.slots = (this.#words.length - HEADER_WORDS) / 2;
    this.#inFlightBase = HEADER_WORDS + this.slots;
  }

  /** The slot of a table name, already normalized ("schema.table"). FNV-1a. */
  slotOf(qualifiedTable: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < qualifiedTable.length; i++) {
      hash ^= qualifiedTable.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0) & (this.slots - 1);
  }

  /** The current sequence number: read it before sending a SELECT whose result may be stored. */
  sequence(): number {
    return Atomics.load(this.#words, SEQUENCE);
  }

  /** Before a write to `slot` is sent: readers of the slot stop trusting the cache from now on. */
  beginWrite(slot: number): void {
    Atomics.add(this.#words, this.#inFlightBase + slot, 1);
  }

  /** After the write's reply, its error, or a lost connection: a new number, mark released. */
  endWrite(slot: number): void {
    this.#raise(HEADER_WORDS + slot, this.#next());
    Atomics.sub(this.#words, this.#inFlightBase + slot, 1);
  }

  /** Before a write whose tables cannot be known is sent. */
  beginWriteEverything(): void {
    Atomics.add(this.#words, EVERYTHING_IN_FLIGHT, 1);
  }

  /** After it: every stored result is stale. */
  endWriteEverything(): void {
    this.#raise(EVERYTHING_SEQ, this.#next());
    Atomics.sub(this.#words, EVERYTHING_IN_FLIGHT, 1);
  }

  /**
   * May a result read from `slots` with fill sequence `fillSeq` be served now, to a reader whose
   * snapshot is `snapshotSeq` (pass the current sequence, or fillSeq, outside a snapshot)?
   * In-flight marks are read before the numbers: a write that has released its mark has already
   * raised its number.
   */
  isFresh(slots: Int32Array, fillSeq: number, snapshotSeq: number): boolean {
    const words = this.#words;
    if (Atomics.load(words, EVERYTHING_IN_FLIGHT) !== 0) return false;
    const limit = notAfter(fillSeq, snapshotSeq) ? fillSeq : snapshotSeq;
    if (!notAfter(Atomics.load(words, EVERYTHING_SEQ), limit)) return false;
    for (let i = 0; i < slots.length; i++) {
      if (Atomics.load(words, this.#inFlightBase + slots[i]!) !== 0) return false;
    }
    for (let i = 0; i < slots.length; i++) {
      if (!notAfter(Atomics.load(words, HEADER_WORDS + slots[i]!), limit)) return false;
    }
    const age = (Atomics.load(words, SEQUENCE) - fillSeq) | 0;
    return age >= 0 && age < MAX_AGE;
  }

  /** How many writes are in flight on a slot (for tests and stats). */
  inFlight(slot: number): number {
    return Atomics.load(this.#words, this.#inFlightBase + slot);
  }

  /** RESET QUERY CACHE: every stored result is stale and every worker empties its store. */
  clearAll(): void {
    this.beginWriteEverything();
    this.endWriteEverything();
    Atomics.add(this.#words, CLEARED, 1);
  }

  /** Changes each time some worker asked every store to be emptied. */
  clearCount(): number {
    return Atomics.load(this.#words, CLEARED);
  }

  /** Before DDL that may change views, triggers or foreign keys is sent. */
  beginSchemaChange(): void {
    Atomics.add(this.#words, SCHEMA_CHANGES_IN_FLIGHT, 1);
  }

  endSchemaChange(): void {
    Atomics.add(this.#words, SCHEMA_VERSION, 1);
    Atomics.sub(this.#words, SCHEMA_CHANGES_IN_FLIGHT, 1);
  }

  /** The schema version; metadata loaded at an older one, or while DDL runs, is not trusted. */
  schemaVersion(): number {
    return Atomics.load(this.#words, SCHEMA_VERSION);
  }

  schemaChangesInFlight(): number {
    return Atomics.load(this.#words, SCHEMA_CHANGES_IN_FLIGHT);
  }

  #next(): number {
    const seq = (Atomics.add(this.#words, SEQUENCE, 1) + 1) | 0;
    if ((seq & (SWEEP_INTERVAL - 1)) === 0) this.#sweep(seq);
    return seq;
  }

  /**
   * Compared by difference, a table last written more than 2^31 numbers ago would look newer
   * than every result (never served again), and a write to it would not raise it (a stale hit
   * once the counter comes round). So the writer that takes each SWEEP_INTERVAL-th number raises
   * every word older than MAX_AGE to `seq - MAX_AGE`: no result that old is ever served, so
   * nothing fresh turns stale, and every word stays within 2^31 of the counter. Once per 2^29
   * writes, one pass over the slots.
   */
  #sweep(seq: number): void {
    const floor = (seq - MAX_AGE) | 0;
    this.#raise(EVERYTHING_SEQ, floor);
    for (let slot = 0; slot < this.slots; slot++) this.#raise(HEADER_WORDS + slot, floor);
  }

  /**
   * Raises a word to `seq` unless it is already past it. Writers finish in any order, so a plain
   * store could move a slot back below a number some reader already compared against.
   */
  #raise(index: number, seq: number): void {
    const words = this.#words;
    for (;;) {
      const current = Atomics.load(words, index);
      if (!notAfter(current, seq) || current === seq) return;
      if (Atomics.compareExchange(words, index, current, seq) === current) return;
    }
  }
}
