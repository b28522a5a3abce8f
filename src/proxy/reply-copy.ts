/**
 * The copy of a reply the cache wants to keep, taken packet by packet while the reply is relayed
 * to its client (the client never waits for it). Past the per-result limit the copy is dropped
 * and the reply only relayed.
 *
 * Copies are taken into scratch buffers reused from one reply to the next: every allocation here
 * is garbage some GC pays for. The cache's store copies a finished reply from the scratch buffer
 * into its own memory (`view`); only a reply kept elsewhere gets a buffer of its own (`finish`).
 */
import type { FramedPacket } from '../protocol/packet-framer.ts';

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

/**
 * Arrays of status offsets kept for reuse, as the scratch buffers are: written by index and
 * never shortened, so a copy's offsets cost no allocation once an array has room for them (a
 * new array grown by its first push took more bytes than anything else a copy made).
 */
const idleOffsets: number[][] = [];
/** An array longer than this (a reply of that many results) is not kept. */
const MAX_KEPT_OFFSETS = 64;
/** An abandoned copy's: never written, as an abandoned copy appends nothing. */
const NO_OFFSETS: number[] = [];

export class ReplyCopy {
  readonly #limit: number;
  #buffer: Buffer | null = takeScratch();
  /** Bytes appended, copied into `#buffer` or still waiting in `#chunk`. */
  #length = 0;
  /** Bytes copied into `#buffer`. */
  #copied = 0;
  /**
   * Packets appended and not copied yet: `[#chunkFrom, #chunkTo)` of the chunk they were read
   * in. Consecutive packets of one chunk are copied with one call when the chunk has been
   * framed (`flush`), not one each: per row, a view and a native call cost more than the bytes.
   */
  #chunk: Buffer | null = null;
  #chunkFrom = 0;
  #chunkTo = 0;
  /** Where the status fields are (statusOffsets): the first `#statusCount` of these. */
  #offsets: number[] = idleOffsets.pop() ?? [];
  #statusCount = 0;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  /**
   * Appends one packet, header included, as framed from `chunk` (the bytes read last, which the
   * packet ends in); `statusAt` is the payload offset of a status field in it, or -1. A packet
   * wholly in `chunk` is only noted: call `flush` before `chunk` is read into again.
   */
  append(packet: FramedPacket, chunk: Buffer, statusAt: number): void {
    if (this.#buffer === null) return;
    const size = 4 + packet.length;
    if (this.#length + size > this.#limit) {
      this.abandon();
      return;
    }
    if (statusAt >= 0) this.#offsets[this.#statusCount++] = this.#length + 4 + statusAt;
    // A packet that began in an earlier chunk has fewer than `size` bytes in this one: the
    // framer collected it whole (`raw`), unless it was too large to keep.
    const start = packet.end - size;
    if (start >= 0) {
      if (this.#chunk === chunk && this.#chunkTo === start) {
        this.#chunkTo = packet.end;
      } else {
        this.flush();
        this.#chunk = chunk;
        this.#chunkFrom = start;
        this.#chunkTo = packet.end;
      }
    } else {
      this.flush();
      const raw = packet.raw;
      if (raw === null) {
        this.abandon();
        return;
      }
      this.#write(raw, 0, raw.length);
    }
    this.#length += size;
  }

  /** Copies the packets still waiting in the chunk they were read in. */
  flush(): void {
    const chunk = this.#chunk;
    if (chunk === null) return;
    this.#chunk = null;
    this.#write(chunk, this.#chunkFrom, this.#chunkTo);
  }

  /**
   * Offsets of the status fields a hit in another transaction state must patch: the first
   * `statusCount` of these. Good until `abandon`, as the view is.
   */
  get statusOffsets(): readonly number[] {
    return this.#offsets;
  }

  get statusCount(): number {
    return this.#statusCount;
  }

  /**
   * The reply's bytes where they were copied, or null when it outgrew the limit: good until
   * `abandon`, for a store that copies them once more into memory of its own.
   */
  view(): Buffer | null {
    this.flush();
    const buffer = this.#buffer;
    return buffer === null ? null : buffer.subarray(0, this.#copied);
  }

  /** The reply's bytes in a buffer of their own size, or null when it outgrew the limit. */
  finish(): Buffer | null {
    this.flush();
    const buffer = this.#buffer;
    if (buffer === null) return null;
    // A buffer of its own: a slice of a shared one would keep all of it alive.
    const exact = Buffer.allocUnsafeSlow(this.#copied);
    buffer.copy(exact, 0, 0, this.#copied);
    this.abandon();
    return exact;
  }

  /** Gives the scratch buffer back; the copy is over. */
  abandon(): void {
    if (this.#buffer !== null) returnScratch(this.#buffer);
    this.#buffer = null;
    this.#chunk = null;
    const offsets = this.#offsets;
    if (offsets !== NO_OFFSETS) {
      if (offsets.length <= MAX_KEPT_OFFSETS && idleOffsets.length < MAX_IDLE_SCRATCH)
        idleOffsets.push(offsets);
      this.#offsets = NO_OFFSETS;
      this.#statusCount = 0;
    }
  }

  #write(source: Buffer, from: number, to: number): void {
    let buffer = this.#buffer!;
    const needed = this.#copied + (to - from);
    if (needed > buffer.length) {
      const grown = Buffer.allocUnsafeSlow(
        Math.min(this.#limit, Math.max(buffer.length * 2, needed)),
      );
      buffer.copy(grown, 0, 0, this.#copied);
      returnScratch(buffer);
      buffer = this.#buffer = grown;
    }
    this.#copied += source.copy(buffer, this.#copied, from, to);
  }
}
