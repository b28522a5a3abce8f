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

  /** Records a sighting of the text; true when its hash had been seen since the last reset. */
  seenBefore(text: string): boolean {
    if (++this.#sightings >= this.#resetAfter) this.reset();
    const hash = hashOf(text) & this.#mask;
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

/** FNV-1a over the text's UTF-16 code units, mixed so the low bits depend on every unit. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 15;
  return hash >>> 0;
}
