/**
 * Has this text been seen before, recently? A bitmap of hashes (TinyLFU's doorkeeper, a Bloom
 * filter with one hash): a text's first sighting only sets its bit, so whatever the caller keeps
 * for texts seen twice is never spent on one-time texts. Bits are forgotten all at once after
 * `resetAfter` sightings, so the filter does not fill up and says "seen" to everything. A
 * collision only makes a one-time text look seen before (it is then kept, as without the filter).
 *
 * The bits may live in a SharedArrayBuffer (allocate) that several threads use: then a sighting
 * in one counts in all. They are set with plain reads and writes, so two threads setting bits of
 * one word at once may lose one; the text then looks unseen once more, which the caller can bear
 * (the filter is an estimate either way).
 */
export class Doorkeeper {
  /** Word 0 counts sightings since the last reset; the bits follow. */
  readonly #words: Int32Array;
  readonly #mask: number;
  readonly #resetAfter: number;

  /** Memory for a doorkeeper of `bits` bits that threads share. */
  static allocate(bits: number): SharedArrayBuffer {
    checkBits(bits);
    return new SharedArrayBuffer(4 + (bits >>> 3));
  }

  /**
   * `bits` is a power of two; `resetAfter` sightings clear every bit. `shared`, from allocate
   * with the same `bits`, makes the bits those of every thread given it.
   */
  constructor(bits: number, resetAfter: number, shared?: SharedArrayBuffer) {
    checkBits(bits);
    this.#words = new Int32Array(shared ?? new ArrayBuffer(4 + (bits >>> 3)));
    if (this.#words.length !== 1 + (bits >>> 5))
      throw new RangeError(`a doorkeeper of ${32 * (this.#words.length - 1)} bits, not ${bits}`);
    this.#mask = bits - 1;
    this.#resetAfter = resetAfter;
  }

  /**
   * Records a sighting of the text whose 32-bit hash (FNV-1a, say) is `textHash`; true when that
   * hash had been seen since the last reset. The caller hashes, so a text sent as bytes is never
   * made a string for this.
   */
  seenBefore(textHash: number): boolean {
    const words = this.#words;
    if (++words[0]! >= this.#resetAfter) this.reset();
    // Mixed so the low bits, the ones kept, depend on every byte.
    const hash = (textHash ^ (textHash >>> 15)) & this.#mask;
    const word = 1 + (hash >>> 5);
    const bit = 1 << (hash & 31);
    if ((words[word]! & bit) !== 0) return true;
    words[word]! |= bit;
    return false;
  }

  reset(): void {
    this.#words.fill(0);
  }
}

function checkBits(bits: number): void {
  if (bits < 32 || (bits & (bits - 1)) !== 0)
    throw new RangeError('bits must be a power of two ≥ 32');
}
