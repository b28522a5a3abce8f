/**
 * The compressed protocol (CLIENT_COMPRESS, zlib). From the end of the login on, every byte either
 * way travels in compressed packets: a 7-byte header (3 bytes: the payload's length on the wire;
 * 1: a sequence number of its own; 3: the payload's length once inflated, 0 when it was sent as
 * it is) and then a zlib stream, or the bytes themselves. A compressed packet frames bytes, not
 * packets: it may carry several MySQL packets, or part of one.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_compression.html
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { ProxyError, ProxyErrorCode } from './errors.ts';

export const COMPRESSED_HEADER_LENGTH = 7;

/**
 * Shorter payloads go as they are: deflate would not make them smaller. The server and its
 * client library draw the line at the same length (MIN_COMPRESS_LENGTH).
 */
export const MIN_COMPRESS_LENGTH = 50;

/** A compressed packet's lengths are 3 bytes: larger writes take several packets. */
const MAX_COMPRESSED_PAYLOAD = 0xffffff;

/** Receives the bytes a compressed packet carried: `bytes`' first `length`, valid until it returns. */
export type InflatedHandler = (bytes: Buffer, length: number) => void;

/**
 * One connection's compressed packets: reads them apart into the bytes they carry, and wraps
 * what is written in them, numbered as the server numbers them.
 */
export class CompressedPackets {
  /**
   * The sequence number of the next packet written. As in the server, each packet read sets it
   * to one past that packet's, and each packet written takes the next.
   */
  #sequence = 0;
  /**
   * Whether packets read must carry the numbers the server expects (see #expectedRead); the
   * proxy's side of a client connection checks them, a test's client does not.
   */
  readonly #checksOrder: boolean;
  /** One past the number of the last packet read: what the next one carries within a command. */
  #lastReadNext = 0;
  /** A command ended since the last packet read: the next packet is numbered from 0 again. */
  #commandEnded = true;
  /** The server asked the client for more within a command: the answer follows what was written. */
  #answerNext = false;
  readonly #header = Buffer.alloc(COMPRESSED_HEADER_LENGTH);
  #headerFill = 0;
  /** Inside a packet's payload: its header has been read. */
  #inPayload = false;
  /** Bytes of the payload still to come. */
  #remaining = 0;
  /** The current packet's length once inflated; 0: it was sent as it is. */
  #inflatedLength = 0;
  /**
   * A deflated payload split across reads, in copies of its pieces: they are inflated together
   * once the last comes. Only what has arrived is held, whatever length the header announced.
   */
  #pieces: Buffer[] = [];

  /**
   * `checksOrder`: packets read out of order end the connection with the server's own error, as
   * the server checks them. MariaDB expects a command's first packet to be numbered 0 (it starts
   * the numbering again when it begins reading a command, even one whose start came in the
   * packet before), each packet after it one more than the last read, and the answer to a
   * request of its own within a command (authentication data, a LOCAL INFILE file) one more than
   * the last it wrote. The caller says where commands end and requests are made.
   */
  constructor(checksOrder = false) {
    this.#checksOrder = checksOrder;
  }

  /** A new command starts the numbering again: what a client does before each command. */
  restartSequence(): void {
    this.#sequence = 0;
  }

  /** The next packet written is numbered `sequence`: a test's client numbering as it chooses. */
  numberNext(sequence: number): void {
    this.#sequence = sequence & 0xff;
  }

  /** A command's last packet has been read: the next command's packets are numbered from 0. */
  commandEnded(): void {
    this.#commandEnded = true;
  }

  /** The server asked the client for more within a command (see the constructor). */
  answerNext(): void {
    this.#answerNext = true;
  }

  /** The number the next packet read must carry. */
  get #expectedRead(): number {
    if (this.#answerNext) return this.#sequence;
    return this.#commandEnded ? 0 : this.#lastReadNext;
  }

  /**
   * Takes one read's bytes (the first `length` of `buffer`) and hands the bytes the packets
   * carry to `deliver`, in order: what was sent as it is as views of the read, as it arrives
   * (the framer after it assembles packets cut anywhere); a deflated payload once it is whole,
   * inflated. Throws a ProxyError for a payload that does not inflate to the length its header
   * says, and (when it checks the order) for a packet numbered otherwise than the server expects.
   */
  read(buffer: Buffer, length: number, deliver: InflatedHandler): void {
    let at = 0;
    while (at < length) {
      if (!this.#inPayload) {
        let header: Buffer;
        let from: number;
        if (this.#headerFill === 0 && length - at >= COMPRESSED_HEADER_LENGTH) {
          // The common case: the header is whole in the read.
          header = buffer;
          from = at;
          at += COMPRESSED_HEADER_LENGTH;
        } else {
          const take = Math.min(COMPRESSED_HEADER_LENGTH - this.#headerFill, length - at);
          buffer.copy(this.#header, this.#headerFill, at, at + take);
          this.#headerFill += take;
          at += take;
          if (this.#headerFill < COMPRESSED_HEADER_LENGTH) return;
          this.#headerFill = 0;
          header = this.#header;
          from = 0;
        }
        this.#remaining = header.readUIntLE(from, 3);
        const sequence = header[from + 3]!;
        if (this.#checksOrder && sequence !== this.#expectedRead) {
          throw new ProxyError(ProxyErrorCode.MALFORMED_PACKET, 'Got packets out of order');
        }
        this.#answerNext = this.#commandEnded = false;
        this.#sequence = this.#lastReadNext = (sequence + 1) & 0xff;
        this.#inflatedLength = header.readUIntLE(from + 4, 3);
        this.#inPayload = true;
      }
      const take = Math.min(this.#remaining, length - at);
      const piece = buffer.subarray(at, at + take);
      at += take;
      this.#remaining -= take;
      const whole = this.#remaining === 0;
      if (whole) this.#inPayload = false;
      if (this.#inflatedLength === 0) {
        if (take > 0) deliver(piece, take);
      } else if (whole && this.#pieces.length === 0) {
        this.#inflate(piece, deliver);
      } else {
        this.#pieces.push(Buffer.from(piece));
        if (whole) {
          const payload = Buffer.concat(this.#pieces);
          this.#pieces = [];
          this.#inflate(payload, deliver);
        }
      }
    }
  }

  #inflate(payload: Buffer, deliver: InflatedHandler): void {
    const inflatedLength = this.#inflatedLength;
    let inflated: Buffer;
    try {
      // Bounded by the header's word: a small packet cannot inflate into gigabytes.
      inflated = inflateSync(payload, { maxOutputLength: inflatedLength });
    } catch (error) {
      throw uncompressError(`${(error as Error).message}`);
    }
    if (inflated.length !== inflatedLength) {
      throw uncompressError(
        `${inflated.length} bytes inflated where the header said ${inflatedLength}`,
      );
    }
    deliver(inflated, inflatedLength);
  }

  /**
   * `bytes` in compressed packets, in one buffer of their own (so `bytes` may be reused as soon
   * as this returns): deflated, unless they are short or do not shrink.
   */
  wrap(bytes: Buffer): Buffer {
    if (bytes.length <= MAX_COMPRESSED_PAYLOAD) return this.#wrapOne(bytes);
    const parts: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += MAX_COMPRESSED_PAYLOAD) {
      parts.push(this.#wrapOne(bytes.subarray(at, at + MAX_COMPRESSED_PAYLOAD)));
    }
    return Buffer.concat(parts);
  }

  #wrapOne(bytes: Buffer): Buffer {
    const sequence = this.#sequence;
    this.#sequence = (sequence + 1) & 0xff;
    if (bytes.length >= MIN_COMPRESS_LENGTH) {
      const deflated = deflateSync(bytes);
      if (deflated.length < bytes.length) {
        const packet = Buffer.allocUnsafe(COMPRESSED_HEADER_LENGTH + deflated.length);
        writeHeader(packet, deflated.length, sequence, bytes.length);
        deflated.copy(packet, COMPRESSED_HEADER_LENGTH);
        return packet;
      }
    }
    const packet = Buffer.allocUnsafe(COMPRESSED_HEADER_LENGTH + bytes.length);
    writeHeader(packet, bytes.length, sequence, 0);
    bytes.copy(packet, COMPRESSED_HEADER_LENGTH);
    return packet;
  }
}

function writeHeader(
  packet: Buffer,
  wireLength: number,
  sequence: number,
  inflatedLength: number,
): void {
  packet.writeUIntLE(wireLength, 0, 3);
  packet[3] = sequence;
  packet.writeUIntLE(inflatedLength, 4, 3);
}

function uncompressError(detail: string): ProxyError {
  return new ProxyError(
    ProxyErrorCode.BAD_COMPRESSED_PACKET,
    `Couldn't uncompress communication packet (${detail})`,
  );
}
