/**
 * The invalidation registry every worker shares: one SharedArrayBuffer, set up by the main thread,
 * holding per-table-slot generations, per-slot counts of writes in flight, and one global epoch.
 *
 * A write marks its slots in flight before it is sent and, whatever its outcome, bumps their
 * generations and releases them after the reply. A reader snapshots generations before it sends a
 * SELECT and trusts a stored result only while they still match and nothing is in flight. Every
 * operation is a single atomic on an Int32Array: no lock, no message between threads.
 * A slot is hash(table) mod size, so two tables sharing a slot only cost an extra miss.
 */

const EPOCH = 0;
/** Generations and in-flight counts start after the epoch, each on its own region. */
const HEADER_WORDS = 16;

export const DEFAULT_REGISTRY_SLOTS = 1 << 16;

export class InvalidationRegistry {
  readonly buffer: SharedArrayBuffer;
  readonly slots: number;
  readonly #words: Int32Array;

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

  epoch(): number {
    return Atomics.load(this.#words, EPOCH);
  }

  generation(slot: number): number {
    return Atomics.load(this.#words, HEADER_WORDS + slot);
  }

  inFlight(slot: number): number {
    return Atomics.load(this.#words, HEADER_WORDS + this.slots + slot);
  }

  /** Before a write is sent: readers of the slot stop trusting the cache from now on. */
  beginWrite(slot: number): void {
    Atomics.add(this.#words, HEADER_WORDS + this.slots + slot, 1);
  }

  /** After the write's reply, or its error, or a lost connection: new generation, mark released. */
  endWrite(slot: number): void {
    Atomics.add(this.#words, HEADER_WORDS + slot, 1);
    Atomics.sub(this.#words, HEADER_WORDS + this.slots + slot, 1);
  }

  /** Invalidates every entry at once: a write whose tables cannot be known. */
  bumpEpoch(): void {
    Atomics.add(this.#words, EPOCH, 1);
  }
}
