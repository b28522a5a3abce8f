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
 *
 * Each worker also keeps its own share of the in-flight marks (per slot, "everything", schema
 * changes) and the ids of its backend connections, in a region of the buffer only it writes, with
 * plain stores: nobody reads them while it runs. When a worker dies, its marks would stay set for
 * good; the main thread reads its region instead, makes sure the server is done with its
 * connections, and releases what it held (releaseWorker). There are more regions than workers,
 * so a replacement starts on a free one while the dead worker's is still being released.
 */

const SEQUENCE = 0;
const EVERYTHING_SEQ = 1;
const EVERYTHING_IN_FLIGHT = 2;
/** Bumped by RESET QUERY CACHE: every worker empties its store when it sees a new value. */
const CLEARED = 3;
/**
 * Bumped when DDL that may change views, triggers or foreign keys is sent, and again when it has
 * its reply: metadata read at one version is good while the version is still the same, so a
 * catalog knows whether to trust its metadata from this one word.
 */
const SCHEMA_VERSION = 4;
/** DDL statements sent and not yet answered. */
const SCHEMA_CHANGES_IN_FLIGHT = 5;
/** How many accounting regions there are (at least one per worker). */
const REGIONS = 6;
/** Slot words start after the header, each array on its own region. */
const HEADER_WORDS = 16;
/** Beyond this many writes since a fill, a result is stale whatever its slots say. */
const MAX_AGE = 1 << 30;
/** How often (in numbers) old words are moved up: MAX_AGE + SWEEP_INTERVAL stays below 2^31. */
const SWEEP_INTERVAL = 1 << 29;

/** A worker's region: its share of the global counts, its connections, its slots' marks. */
const WORKER_EVERYTHING_IN_FLIGHT = 0;
const WORKER_SCHEMA_CHANGES = 1;
/**
 * The worker's open sessions that wrote the tables stored programs live in: the schema catalogs
 * keep off those tables while any is open (see SchemaCatalog's pause). A dead worker's sessions
 * are gone with it: releaseWorker clears the word with the rest of the region's header.
 */
const WORKER_PROGRAM_TABLE_WRITERS = 3;
const WORKER_HEADER_WORDS = 16;
/** Backend connection ids a worker can record; beyond that, the overflow flag is set. */
export const CONNECTION_CAPACITY = 1 << 14;
const WORKER_CONNECTIONS_OVERFLOW = 2;

export const DEFAULT_REGISTRY_SLOTS = 1 << 16;

/** Where the slot count is kept, so every view of the buffer finds its layout. */
const SLOTS = 7;
/**
 * Non-zero while writes made elsewhere may be unseen (the binlog follower is disconnected or
 * behind its lag bound): no result is served or stored. Zero without a follower.
 */
const WRITES_UNSEEN = 8;
/**
 * Bumped when DDL that may change stored routines or events has its reply (see
 * endSchemaChange): their rows, the costliest part of the metadata to read, are read again
 * only when it moved since they were read. Rows read at a version were read after every such
 * change before it was answered.
 */
const PROGRAM_VERSION = 9;
/**
 * Bumped, before the schema version, when a statement that wrote the tables stored programs
 * live in (mysql.proc, mysql.event, mysql.func) has its reply: see SchemaCatalog's pause.
 */
const PROGRAM_TABLE_WRITES = 10;

function workerRegionWords(slots: number): number {
  return WORKER_HEADER_WORDS + CONNECTION_CAPACITY + slots;
}

/** a ≤ b for sequence numbers that may have wrapped. */
function notAfter(a: number, b: number): boolean {
  return ((a - b) | 0) <= 0;
}

/** FNV-1a's offset basis: the hash of a registry name starts here (see nameHash). */
export const NAME_HASH_START = 0x811c9dc5;

/** FNV-1a over the characters of `text`, continuing from `hash`. */
export function nameHash(hash: number, text: string): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

/** nameHash of one more character, by its code. */
export function nameHashOf(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193);
}

/** What a dead worker held, as released by the main thread. */
export interface ReleasedMarks {
  slots: number;
  everything: number;
  schemaChanges: number;
}

export class InvalidationRegistry {
  readonly buffer: SharedArrayBuffer;
  readonly slots: number;
  /** The region this view (one running worker) keeps its share of the marks in. */
  readonly region: number;
  readonly #words: Int32Array;
  readonly #inFlightBase: number;
  /** This worker's region: its header, then its connection ids, then its per-slot marks. */
  readonly #own: number;
  readonly #ownInFlight: number;
  /** Free places in this worker's connection list (only this worker writes it). */
  readonly #freeConnections: number[] = [];
  #nextConnection = 0;

  /**
   * Allocates the shared area; the main thread does this once and hands the buffer to workers.
   * `regions` accounting regions are set aside, one per running worker at least.
   */
  static allocate(slots = DEFAULT_REGISTRY_SLOTS, regions = 1): SharedArrayBuffer {
    if (slots <= 0 || (slots & (slots - 1)) !== 0)
      throw new RangeError('slots must be a power of two');
    if (!Number.isInteger(regions) || regions < 1) throw new RangeError('regions must be ≥ 1');
    const words = HEADER_WORDS + 2 * slots + regions * workerRegionWords(slots);
    const buffer = new SharedArrayBuffer(words * Int32Array.BYTES_PER_ELEMENT);
    const view = new Int32Array(buffer);
    view[REGIONS] = regions;
    view[SLOTS] = slots;
    return buffer;
  }

  /**
   * A view of the registry for the worker accounting in `region` (the main thread passes any: it
   * writes no marks).
   */
  constructor(buffer: SharedArrayBuffer, region = 0) {
    this.buffer = buffer;
    this.#words = new Int32Array(buffer);
    this.slots = this.#words[SLOTS]!;
    const regions = this.#words[REGIONS]!;
    if (!(region >= 0 && region < regions)) throw new RangeError(`no region ${region}`);
    this.region = region;
    this.#inFlightBase = HEADER_WORDS + this.slots;
    this.#own = this.#regionOf(region);
    this.#ownInFlight = this.#own + WORKER_HEADER_WORDS + CONNECTION_CAPACITY;
  }

  /** How many accounting regions there are. */
  get regions(): number {
    return this.#words[REGIONS]!;
  }

  #regionOf(worker: number): number {
    return HEADER_WORDS + 2 * this.slots + worker * workerRegionWords(this.slots);
  }

  /** The slot of a table name, already normalized ("schema.table"). FNV-1a. */
  slotOf(qualifiedTable: string): number {
    return this.slotOfHash(nameHash(NAME_HASH_START, qualifiedTable));
  }

  /**
   * The slot of the name whose hash is `hash` (nameHash from NAME_HASH_START over the whole
   * name): a caller that hashes a name's end itself, without building the name, finds its slot.
   */
  slotOfHash(hash: number): number {
    return (hash >>> 0) & (this.slots - 1);
  }

  /** The current sequence number: read it before sending a SELECT whose result may be stored. */
  sequence(): number {
    return Atomics.load(this.#words, SEQUENCE);
  }

  /** Before a write to `slot` is sent: readers of the slot stop trusting the cache from now on. */
  // The worker's own share is counted after the shared mark goes up and before it comes down: a
  // worker that dies in between leaves a mark held (safe), never one released twice.
  beginWrite(slot: number): void {
    const words = this.#words;
    Atomics.add(words, this.#inFlightBase + slot, 1);
    words[this.#ownInFlight + slot]!++;
  }

  /** After the write's reply, its error, or a lost connection: a new number, mark released. */
  endWrite(slot: number): void {
    const words = this.#words;
    this.#raise(HEADER_WORDS + slot, this.#next());
    words[this.#ownInFlight + slot]!--;
    Atomics.sub(words, this.#inFlightBase + slot, 1);
  }

  /** Before a write whose tables cannot be known is sent. */
  beginWriteEverything(): void {
    Atomics.add(this.#words, EVERYTHING_IN_FLIGHT, 1);
    this.#words[this.#own + WORKER_EVERYTHING_IN_FLIGHT]!++;
  }

  /** After it: every stored result is stale. */
  endWriteEverything(): void {
    this.#raise(EVERYTHING_SEQ, this.#next());
    this.#words[this.#own + WORKER_EVERYTHING_IN_FLIGHT]!--;
    Atomics.sub(this.#words, EVERYTHING_IN_FLIGHT, 1);
  }

  /**
   * May a result read from `slots` with fill sequence `fillSeq` be served now, to a reader whose
   * snapshot is `snapshotSeq` (pass the current sequence, or fillSeq, outside a snapshot)?
   * In-flight marks are read before the numbers: a write that has released its mark has already
   * raised its number.
   */
  isFresh(slots: Int32Array, fillSeq: number, snapshotSeq: number): boolean {
    return this.isFreshIn(slots, 0, slots.length, fillSeq, snapshotSeq);
  }

  /** isFresh for the `count` slots at `from` in `slots` (where the store keeps them). */
  isFreshIn(
    slots: Int32Array,
    from: number,
    count: number,
    fillSeq: number,
    snapshotSeq: number,
  ): boolean {
    const words = this.#words;
    if (Atomics.load(words, EVERYTHING_IN_FLIGHT) !== 0) return false;
    const limit = notAfter(fillSeq, snapshotSeq) ? fillSeq : snapshotSeq;
    if (!notAfter(Atomics.load(words, EVERYTHING_SEQ), limit)) return false;
    const end = from + count;
    for (let i = from; i < end; i++) {
      if (Atomics.load(words, this.#inFlightBase + slots[i]!) !== 0) return false;
    }
    for (let i = from; i < end; i++) {
      if (!notAfter(Atomics.load(words, HEADER_WORDS + slots[i]!), limit)) return false;
    }
    const age = (Atomics.load(words, SEQUENCE) - fillSeq) | 0;
    return age >= 0 && age < MAX_AGE;
  }

  /**
   * Has a write to `slot` finished since `fillSeq`, or is one in flight? Tells which of a stale
   * result's tables made it stale (off the hit path: when the result is dropped).
   */
  writtenSince(slot: number, fillSeq: number): boolean {
    const words = this.#words;
    return (
      Atomics.load(words, this.#inFlightBase + slot) !== 0 ||
      !notAfter(Atomics.load(words, HEADER_WORDS + slot), fillSeq)
    );
  }

  /** How many writes are in flight on a slot (for tests and stats). */
  inFlight(slot: number): number {
    return Atomics.load(this.#words, this.#inFlightBase + slot);
  }

  /**
   * Are writes made on the server behind the proxy's back accounted for? One atomic load, read
   * before a hit is served or a fill is planned.
   */
  writesElsewhereSeen(): boolean {
    return Atomics.load(this.#words, WRITES_UNSEEN) === 0;
  }

  /** The binlog follower (main thread) says whether it is within its lag bound. */
  setWritesElsewhereSeen(seen: boolean): void {
    Atomics.store(this.#words, WRITES_UNSEEN, seen ? 0 : 1);
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
    const words = this.#words;
    Atomics.add(words, SCHEMA_CHANGES_IN_FLIGHT, 1);
    words[this.#own + WORKER_SCHEMA_CHANGES]!++;
    Atomics.add(words, SCHEMA_VERSION, 1);
    Atomics.notify(words, SCHEMA_VERSION);
  }

  /**
   * After its reply (or error, or lost connection): metadata read from now on sees it.
   * `programs` unless it is known to leave stored routines and events alone (it defines a
   * named table, view...); `programTables` when it wrote the tables they live in.
   */
  endSchemaChange(programs = true, programTables = false): void {
    const words = this.#words;
    if (programs) Atomics.add(words, PROGRAM_VERSION, 1);
    if (programTables) Atomics.add(words, PROGRAM_TABLE_WRITES, 1);
    this.#words[this.#own + WORKER_SCHEMA_CHANGES]!--;
    Atomics.sub(words, SCHEMA_CHANGES_IN_FLIGHT, 1);
    Atomics.add(words, SCHEMA_VERSION, 1);
    Atomics.notify(words, SCHEMA_VERSION);
  }

  /**
   * The schema version: metadata loaded while it had this value, with no DDL in flight, is good
   * for as long as it keeps it.
   */
  schemaVersion(): number {
    return Atomics.load(this.#words, SCHEMA_VERSION);
  }

  /** Moves with each schema change that may change stored routines or events. */
  programVersion(): number {
    return Atomics.load(this.#words, PROGRAM_VERSION);
  }

  /** Moves with each statement that wrote mysql.proc, mysql.event or mysql.func. */
  programTableWrites(): number {
    return Atomics.load(this.#words, PROGRAM_TABLE_WRITES);
  }

  /** A session of this worker wrote mysql.proc, mysql.event or mysql.func (once per session). */
  openProgramTableWriter(): void {
    Atomics.add(this.#words, this.#own + WORKER_PROGRAM_TABLE_WRITERS, 1);
  }

  /** That session is gone. */
  closeProgramTableWriter(): void {
    Atomics.sub(this.#words, this.#own + WORKER_PROGRAM_TABLE_WRITERS, 1);
  }

  /** Whether a session of any worker that wrote the program tables is still open. */
  programTableWritersOpen(): boolean {
    const words = this.#words;
    for (let region = 0; region < this.regions; region++) {
      if (Atomics.load(words, this.#regionOf(region) + WORKER_PROGRAM_TABLE_WRITERS) !== 0) {
        return true;
      }
    }
    return false;
  }

  schemaChangesInFlight(): number {
    return Atomics.load(this.#words, SCHEMA_CHANGES_IN_FLIGHT);
  }

  /**
   * Resolves when the schema version is no longer `version` (immediately if it is not), or after
   * `timeoutMs`. A change anywhere wakes every worker waiting here, with no message sent.
   */
  schemaVersionChange(version: number, timeoutMs: number): Promise<unknown> {
    return this.#change(SCHEMA_VERSION, version, timeoutMs);
  }

  /** Resolves when word `index` no longer holds `value` (at once if it does not), or on time. */
  #change(index: number, value: number, timeoutMs: number): Promise<unknown> {
    const waited = Atomics.waitAsync(this.#words, index, value, timeoutMs);
    return waited.async ? waited.value : Promise.resolve(waited.value);
  }

  // --- a worker's connections, for the main thread when the worker dies -----------------------

  /**
   * Records a backend connection of this worker (the server's connection id); returns its place
   * for forgetConnection, or -1 when the list is full (the overflow flag then says so).
   */
  recordConnection(connectionId: number): number {
    const words = this.#words;
    // Ids are unsigned 32-bit, stored plus one so that 0 marks a free place: the largest id
    // cannot be stored, and counts as an overflow.
    if (connectionId >>> 0 === 0xffffffff) {
      words[this.#own + WORKER_CONNECTIONS_OVERFLOW] = 1;
      return -1;
    }
    const place = this.#freeConnections.pop() ?? this.#nextConnection++;
    if (place >= CONNECTION_CAPACITY) {
      this.#nextConnection = CONNECTION_CAPACITY;
      words[this.#own + WORKER_CONNECTIONS_OVERFLOW] = 1;
      return -1;
    }
    words[this.#own + WORKER_HEADER_WORDS + place] = (connectionId + 1) | 0;
    return place;
  }

  forgetConnection(place: number): void {
    if (place < 0) return;
    this.#words[this.#own + WORKER_HEADER_WORDS + place] = 0;
    this.#freeConnections.push(place);
  }

  /** The backend connections a (dead) worker had open, by the server's ids. */
  connectionsOf(worker: number): { ids: number[]; overflowed: boolean } {
    const words = this.#words;
    const base = this.#regionOf(worker);
    const ids: number[] = [];
    for (let place = 0; place < CONNECTION_CAPACITY; place++) {
      const stored = words[base + WORKER_HEADER_WORDS + place]!;
      if (stored !== 0) ids.push(((stored >>> 0) - 1) >>> 0);
    }
    return { ids, overflowed: words[base + WORKER_CONNECTIONS_OVERFLOW] !== 0 };
  }

  /** How many marks a (dead) worker holds: table slots, "everything" and schema changes. */
  heldBy(worker: number): number {
    const words = this.#words;
    const base = this.#regionOf(worker);
    const inFlight = base + WORKER_HEADER_WORDS + CONNECTION_CAPACITY;
    let held = words[base + WORKER_EVERYTHING_IN_FLIGHT]! + words[base + WORKER_SCHEMA_CHANGES]!;
    for (let slot = 0; slot < this.slots; slot++) held += words[inFlight + slot]!;
    return held;
  }

  /**
   * The main thread, once a worker is dead and the server done with its connections: every mark
   * the worker held is released as its writes would have released them (numbers raised first),
   * and its region is cleared for the worker that replaces it.
   */
  releaseWorker(worker: number): ReleasedMarks {
    const words = this.#words;
    const base = this.#regionOf(worker);
    const inFlight = base + WORKER_HEADER_WORDS + CONNECTION_CAPACITY;
    const released: ReleasedMarks = { slots: 0, everything: 0, schemaChanges: 0 };
    for (let slot = 0; slot < this.slots; slot++) {
      const held = words[inFlight + slot]!;
      if (held === 0) continue;
      this.#raise(HEADER_WORDS + slot, this.#next());
      words[inFlight + slot] = 0;
      Atomics.sub(words, this.#inFlightBase + slot, held);
      released.slots += held;
    }
    const everything = words[base + WORKER_EVERYTHING_IN_FLIGHT]!;
    if (everything !== 0) {
      this.#raise(EVERYTHING_SEQ, this.#next());
      words[base + WORKER_EVERYTHING_IN_FLIGHT] = 0;
      Atomics.sub(words, EVERYTHING_IN_FLIGHT, everything);
      released.everything = everything;
    }
    const schemaChanges = words[base + WORKER_SCHEMA_CHANGES]!;
    if (schemaChanges !== 0) {
      words[base + WORKER_SCHEMA_CHANGES] = 0;
      Atomics.sub(words, SCHEMA_CHANGES_IN_FLIGHT, schemaChanges);
      // Which of them might have changed routines is not recorded: any may have.
      Atomics.add(words, PROGRAM_VERSION, 1);
      Atomics.add(words, SCHEMA_VERSION, 1);
      Atomics.notify(words, SCHEMA_VERSION);
      released.schemaChanges = schemaChanges;
    }
    words.fill(0, base, base + WORKER_HEADER_WORDS + CONNECTION_CAPACITY);
    return released;
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
