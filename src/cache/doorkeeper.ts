/**
 * Has this text been seen before, recently? A bitmap of hashes (TinyLFU's doorkeeper, a Bloom
 * filter with one hash): a text's first sighting only sets its bit, so whatever the caller keeps
 * for texts seen twice is never spent on one-time texts. Bits are forgotten all at once after
 * `resetAfter` sightings, so the filter does not fill up and says "seen" to everything. A
 * collision only makes a one-time text look seen before (it is then kept, as without the filter).
 */
export class Doorkeeper {
  readonly #bits: Int32Array;
  readonly #mask: number;
  readonly #resetAfter: number;
  #sightings = 0;

  /** `bits` is a power of two; `resetAfter` sightings clear every bit. */
  constructor(bits: number, resetAfter: number) {
    if (bits < 32 || (bits & (bits - 1)) !== 0)
      throw new RangeError('bits must be a power of two ≥ 32');
    this.#bits = new Int32Array(bits >>> 5);
    this.#mask = bits - 1;
    this.#resetAfter = resetAfter;
  }

  /**
   * Records a sighting of the text whose 32-bit hash (FNV-1a, say) is `textHash`; true when that
   * hash had been seen since the last reset. The caller hashes, so a text sent as bytes is never
   * made a string for this.
   */
  seenBefore(textHash: number): boolean {
    if (++this.#sightings >= this.#resetAfter) this.reset();
    // Mixed so the low bits, the ones kept, depend on every byte.
    const hash = (textHash ^ (textHash >>> 15)) & this.#mask;
    const word = hash >>> 5;
    const bit = 1 << (hash & 31);
    const bits = this.#bits;
    if ((bits[word]! & bit) !== 0) return true;
    bits[word]! |= bit;
    return false;
  }

  reset(): void {
    this.#bits.fill(0);
    this.#sightings = 0;
  }
}
