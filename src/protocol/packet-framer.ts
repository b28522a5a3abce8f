/**
 * Splits a byte stream into physical packets, whatever the chunking: a header or payload may be
 * cut anywhere, and a payload of 0xFFFFFF bytes is continued by the next packet.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html
 */
import { MAX_PACKET_PAYLOAD } from './constants.ts';
import { StartViews } from './start-views.ts';

/**
 * One physical packet. The framer reuses a single instance for every packet (no allocation per
 * packet on the hot path), so a handler must copy what it wants to keep.
 */
export interface FramedPacket {
  readonly sequenceId: number;
  /** Payload length of this physical packet. */
  length: number;
  /** This packet carries the rest of a payload whose previous packet was 0xFFFFFF bytes long. */
  continuation: boolean;
  /** First payload byte, or -1 when the payload is empty. */
  firstByte: number;
  /** The payload, when length <= the framer's inspect limit; otherwise null. */
  payload: Buffer | null;
  /** Header and payload as on the wire, when the payload is present. */
  raw: Buffer | null;
  /**
   * Where `raw`'s bytes are, with no view made: the buffer (the chunk the packet was read in, or
   * one of its own) that holds them from `start`. Absent or null where `raw` is made otherwise.
   */
  readonly source?: Buffer | null;
  readonly start?: number;
  /** Offset in the chunk just pushed where this packet ends. */
  end: number;
}

export type PacketHandler = (packet: FramedPacket) => void;

/**
 * The framer's one reusable packet. Its views are made only when asked for: relaying a result
 * asks for none for most rows, and two Buffer objects per row were most of a relay's garbage.
 */
class ReusedPacket implements FramedPacket {
  sequenceId = 0;
  length = 0;
  continuation = false;
  firstByte = -1;
  end = 0;
  /** Where the packet's bytes are: a chunk (from `start`), or a buffer of its own. */
  #source: Buffer | null = null;
  #start = 0;
  #raw: Buffer | null = null;
  #payload: Buffer | null = null;
  /**
   * Views of packets at the start of a chunk, with their headers and of their payloads: a
   * session reads each command into the same buffer, so a command of a length seen before
   * gets the views made then. A cache hit makes no view at all, and a relayed command none of
   * its own.
   */
  readonly #raws = new StartViews(0);
  readonly #payloads = new StartViews(4);

  get source(): Buffer | null {
    return this.#source;
  }

  get start(): number {
    return this.#start;
  }

  reset(source: Buffer | null, start: number): void {
    this.#source = source;
    this.#start = start;
    this.#raw = null;
    this.#payload = null;
  }

  get raw(): Buffer | null {
    if (this.#raw === null && this.#source !== null) {
      this.#raw =
        this.#start === 0
          ? this.#raws.of(this.#source, 4 + this.length)
          : this.#source.subarray(this.#start, this.#start + 4 + this.length);
    }
    return this.#raw;
  }

  get payload(): Buffer | null {
    if (this.#payload === null && this.#source !== null) {
      this.#payload =
        this.#start === 0
          ? this.#payloads.of(this.#source, 4 + this.length)
          : this.#source.subarray(this.#start + 4, this.#start + 4 + this.length);
    }
    return this.#payload;
  }
}

export class PacketFramer {
  readonly #inspectLimit: number;
  readonly #onPacket: PacketHandler;
  readonly #header = Buffer.alloc(4);
  #headerFill = 0;
  #inPayload = false;
  #length = 0;
  #sequenceId = 0;
  #remaining = 0;
  #firstByte = -1;
  /** Header and payload of a packet split across chunks, when it is to be inspected. */
  #collect: Buffer | null = null;
  #collectFill = 0;
  #nextIsContinuation = false;
  readonly #packet = new ReusedPacket();

  /**
   * @param inspectLimit payloads up to this length are handed over whole (copied only when split
   *   across chunks); longer ones only by their first byte, so relaying a large row costs no copy.
   */
  constructor(onPacket: PacketHandler, inspectLimit = MAX_PACKET_PAYLOAD) {
    this.#onPacket = onPacket;
    this.#inspectLimit = inspectLimit;
  }

  /** True when no packet is partly received. */
  get idle(): boolean {
    return !this.#inPayload && this.#headerFill === 0;
  }

  /**
   * Frames `chunk`'s first `size` bytes (all of it by default): a socket that reads into a reused
   * buffer hands over the buffer and the length read, with no view made per read.
   */
  push(chunk: Buffer, size: number = chunk.length): void {
    let pos = 0;
    while (pos < size) {
      if (this.#inPayload) {
        const take = Math.min(this.#remaining, size - pos);
        if (this.#firstByte === -1) this.#firstByte = chunk[pos]!;
        if (this.#collect !== null) {
          chunk.copy(this.#collect, this.#collectFill, pos, pos + take);
          this.#collectFill += take;
        }
        this.#remaining -= take;
        pos += take;
        if (this.#remaining === 0) {
          this.#inPayload = false;
          const raw = this.#collect;
          this.#collect = null;
          this.#emit(this.#length, this.#sequenceId, this.#firstByte, raw, 0, pos);
        }
        continue;
      }
      if (this.#headerFill === 0 && pos + 4 <= size) {
        const length = chunk[pos]! | (chunk[pos + 1]! << 8) | (chunk[pos + 2]! << 16);
        const sequenceId = chunk[pos + 3]!;
        const end = pos + 4 + length;
        if (end <= size) {
          // The common case: the whole packet is in this chunk, hand out a view.
          const firstByte = length === 0 ? -1 : chunk[pos + 4]!;
          const start = pos;
          pos = end;
          this.#emit(
            length,
            sequenceId,
            firstByte,
            length <= this.#inspectLimit ? chunk : null,
            start,
            pos,
          );
          continue;
        }
        chunk.copy(this.#header, 0, pos, pos + 4);
        pos += 4;
        this.#begin(length, sequenceId);
        continue;
      }
      const take = Math.min(4 - this.#headerFill, size - pos);
      chunk.copy(this.#header, this.#headerFill, pos, pos + take);
      this.#headerFill += take;
      pos += take;
      if (this.#headerFill < 4) break;
      this.#headerFill = 0;
      const length = this.#header.readUIntLE(0, 3);
      if (length === 0) {
        this.#emit(0, this.#header[3]!, -1, Buffer.from(this.#header), 0, pos);
      } else {
        this.#begin(length, this.#header[3]!);
      }
    }
  }

  #begin(length: number, sequenceId: number): void {
    this.#inPayload = true;
    this.#length = length;
    this.#sequenceId = sequenceId;
    this.#remaining = length;
    this.#firstByte = -1;
    if (length <= this.#inspectLimit) {
      this.#collect = Buffer.allocUnsafe(length + 4);
      this.#header.copy(this.#collect, 0, 0, 4);
      this.#collectFill = 4;
    } else {
      this.#collect = null;
    }
  }

  /** `source` holds the packet (header included) from `start`, or is null past the limit. */
  #emit(
    length: number,
    sequenceId: number,
    firstByte: number,
    source: Buffer | null,
    start: number,
    end: number,
  ): void {
    const packet = this.#packet;
    packet.sequenceId = sequenceId;
    packet.length = length;
    packet.continuation = this.#nextIsContinuation;
    packet.firstByte = firstByte;
    packet.reset(source, start);
    packet.end = end;
    this.#nextIsContinuation = length === MAX_PACKET_PAYLOAD;
    this.#onPacket(packet);
  }
}
