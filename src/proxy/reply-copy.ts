/**
 * The copy of a reply the cache wants to keep, taken packet by packet while the reply is relayed
 * to its client (the client never waits for it). Past the per-result limit the copy is dropped
 * and the reply only relayed.
 *
 * Copies are taken into scratch buffers reused from one reply to the next: every allocation here
 * is garbage some GC pays for. The cache's store copies a finished reply from the scratch buffer
 * into its own memory (`view`); only a reply kept elsewhere gets a buffer of its own (`finish`).
 */
const SCRATCH_SIZE = 16 * 1024;
/** Scratch buffers kept for reuse in this thread; more are made when many copies run at once. */
const MAX_IDLE_SCRATCH = 64;
const idleScratch: Buffer[] = [];

function takeScratch(): Buffer {
  return idleScratch.pop() ?? Buffer.allocUnsafeSlow(SCRATCH_SIZE);
}

function returnScratch(buffer: Buffer): void {
  if (buffer.length === SCRATCH_SIZE && idleScratch.length < MAX_IDLE_SCRATCH) {
    idleScratch.push(buffer);
  }
}

export class ReplyCopy {
  readonly #limit: number;
  #buffer: Buffer | null = takeScratch();
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
      this.abandon();
      return;
    }
    if (this.#length + raw.length > buffer.length) {
      const grown = Buffer.allocUnsafeSlow(
        Math.min(this.#limit, Math.max(buffer.length * 2, this.#length + raw.length)),
      );
      buffer.copy(grown, 0, 0, this.#length);
      returnScratch(buffer);
      buffer = this.#buffer = grown;
    }
    if (statusAt >= 0) this.statusOffsets.push(this.#length + 4 + statusAt);
    this.#length += raw.copy(buffer, this.#length);
  }

  /**
   * The reply's bytes where they were copied, or null when it outgrew the limit: good until
   * `abandon`, for a store that copies them once more into memory of its own.
   */
  view(): Buffer | null {
    const buffer = this.#buffer;
    return buffer === null ? null : buffer.subarray(0, this.#length);
  }

  /** The reply's bytes in a buffer of their own size, or null when it outgrew the limit. */
  finish(): Buffer | null {
    const buffer = this.#buffer;
    if (buffer === null) return null;
    // A buffer of its own: a slice of a shared one would keep all of it alive.
    const exact = Buffer.allocUnsafeSlow(this.#length);
    buffer.copy(exact, 0, 0, this.#length);
    this.abandon();
    return exact;
  }

  /** Gives the scratch buffer back; the copy is over. */
  abandon(): void {
    if (this.#buffer !== null) returnScratch(this.#buffer);
    this.#buffer = null;
  }
}
