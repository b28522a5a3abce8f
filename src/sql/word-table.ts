/**
 * A fixed set of ASCII words looked up case-insensitively straight from a slice of the SQL text,
 * by char codes: no substring, no toUpperCase, no allocation. The tokenizer asks it about every
 * bare word of every statement, so this is the hot path's inner loop.
 *
 * Open addressing over a power-of-two table; a hit is confirmed by comparing the characters, so
 * hash collisions cost a comparison, never a wrong answer. Each slot also keeps its word's length,
 * so that most words that are no keyword are rejected without reading them twice.
 */

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
const CASE_BIT = 0x20;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export class WordTable {
  /** The words in upper case, indexed by their id (the position in the constructor's list). */
  readonly words: readonly string[];
  readonly #slots: Int32Array;
  readonly #slotLengths: Uint8Array;
  readonly #mask: number;
  readonly #longest: number;

  constructor(words: readonly string[]) {
    this.words = words.map((word) => word.toUpperCase());
    let size = 16;
    while (size < words.length * 4) size <<= 1;
    this.#slots = new Int32Array(size).fill(-1);
    this.#slotLengths = new Uint8Array(size);
    this.#mask = size - 1;
    let longest = 0;
    this.words.forEach((word, id) => {
      if (!/^[A-Z0-9_$]+$/.test(word)) throw new Error(`not a plain ASCII word: ${word}`);
      if (this.lookup(word, 0, word.length) !== -1) throw new Error(`duplicate word: ${word}`);
      longest = Math.max(longest, word.length);
      let slot = hashOf(word, 0, word.length) & this.#mask;
      while (this.#slots[slot] !== -1) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = id;
      this.#slotLengths[slot] = word.length;
    });
    this.#longest = longest;
  }

  /** The id of text[start, end) in any letter case, or -1 when it is not one of the words. */
  lookup(text: string, start: number, end: number): number {
    const length = end - start;
    if (length > this.#longest || length === 0) return -1;
    let slot = hashOf(text, start, end) & this.#mask;
    for (;;) {
      const id = this.#slots[slot]!;
      if (id === -1) return -1;
      if (
        this.#slotLengths[slot] === length &&
        equalsFolded(this.words[id]!, text, start, length)
      ) {
        return id;
      }
      slot = (slot + 1) & this.#mask;
    }
  }
}

/**
 * A hash of the length and of up to five characters (both ends and the middle), letters folded to
 * upper case: constant time whatever the word's length. Its collisions only cost a comparison.
 */
function hashOf(text: string, start: number, end: number): number {
  const last = end - 1;
  let hash = Math.imul(end - start, FNV_PRIME) ^ FNV_OFFSET;
  hash = Math.imul(hash ^ folded(text, start), FNV_PRIME);
  hash = Math.imul(hash ^ folded(text, last), FNV_PRIME);
  hash = Math.imul(hash ^ folded(text, (start + last) >> 1), FNV_PRIME);
  if (end - start > 3) {
    hash = Math.imul(hash ^ folded(text, start + 1), FNV_PRIME);
    hash = Math.imul(hash ^ folded(text, last - 1), FNV_PRIME);
  }
  return (hash ^ (hash >>> 15)) >>> 0;
}

function folded(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= LOWER_A && code <= LOWER_Z ? code ^ CASE_BIT : code;
}

function equalsFolded(upper: string, text: string, start: number, length: number): boolean {
  for (let i = 0; i < length; i++) {
    if (folded(text, start + i) !== upper.charCodeAt(i)) return false;
  }
  return true;
}
