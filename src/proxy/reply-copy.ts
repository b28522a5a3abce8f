/**
 * The copy of a reply the cache wants to keep, taken packet by packet while the reply is relayed
 * to its client (the client never waits for it). Past the per-result limit the copy is dropped
 * and the reply only relayed.
 */
const INITIAL_SIZE = 1024;

export class ReplyCopy {
  readonly #limit: number;
  #buffer: Buffer | null = Buffer.allocUnsafe(INITIAL_SIZE);
  #length = 0;
  /** Offsets of the status fields a hit in another transaction state must patch. */
  readonly statusOffsets: number[] = [];

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  /**
   * Appends one packet (header included; null when the framer did not keep its bytes, which only
   * happens for payloads too big to keep anyway). `statusAt` is the payload offset of a status
   * field in it, or -1.
   */
  append(raw: Buffer | null, statusAt: number): void {
    let buffer = this.#buffer;
    if (buffer === null) return;
    if (raw === null || this.#length + raw.length > this.#limit) {
      this.#buffer = null;
      return;
    }
    if (this.#length + raw.length > buffer.length) {
      const grown = Buffer.allocUnsafe(
        Math.min(this.#limit, Math.max(buffer.length * 2, this.#length + raw.length)),
      );
      buffer.copy(grown, 0, 0, this.#length);
      buffer = this.#buffer = grown;
    }
    if (statusAt >= 0) this.statusOffsets.push(this.#length + 4 + statusAt);
    this.#length += raw.copy(buffer, this.#length);
  }

  /** The reply's bytes in a buffer of their own size, or null when it outgrew the limit. */
  finish(): Buffer | null {
    const buffer = this.#buffer;
    if (buffer === null) return null;
    this.#buffer = null;
    // A buffer of its own: a slice of the shared pool would keep the whole 8 KB slab alive.
    const exact = Buffer.allocUnsafeSlow(this.#length);
    buffer.copy(exact, 0, 0, this.#length);
    return exact;
  }
}
