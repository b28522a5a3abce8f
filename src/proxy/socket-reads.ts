/**
 * Socket reads into a buffer the socket keeps, instead of Node's 'data' path, which mallocs and
 * wraps a 64 KiB buffer for every read and defers through the stream machinery (8–9 µs of a
 * hit's ~30 in a profile of the proxy under sysbench point selects).
 *
 * The one rule that keeps this sound: bytes of a read are gone once the next read lands, so
 * nothing may hold a view of them past the read's handler. Copies the session keeps (held
 * packets, reply copies, split packets the framer assembles) are copies already; the views that
 * do outlive a handler are those written to the other socket that the kernel did not take at once
 * (backpressure). Rather than copy every relayed chunk, the buffer is then given up to that
 * write: the next read gets a new buffer, and the old one lives as long as the write holds it.
 */
import { Socket, connect } from 'node:net';
import type { BoundSocket, OnReadOpts, SocketConstructorOpts, TcpNetConnectOpts } from 'node:net';

/** Receives the bytes of one read: `buffer`'s first `length` bytes, valid until it returns. */
export type ReadHandler = (buffer: Buffer, length: number) => void;

/** Commands are small: a larger one takes more reads, and the framer assembles it. */
export const CLIENT_READ_SIZE = 16 * 1024;
/** Replies can be large: a read as large as Node's own keeps relaying at one read per 64 KiB. */
export const BACKEND_READ_SIZE = 64 * 1024;

/**
 * The buffer one socket reads into, reused from read to read while no write holds a view of it.
 */
export class ReadBuffer {
  readonly #size: number;
  #buffer: Buffer;
  /** Where views of this socket's reads are written: its pending writes may hold them. */
  #writesTo: Socket | null = null;
  /** How many times a write still held the buffer after a read, so the next read got a new one. */
  replaced = 0;

  constructor(size: number) {
    this.#size = size;
    // Not from the pool: the buffer is the socket's alone, and lives as long as it.
    this.#buffer = Buffer.allocUnsafeSlow(size);
  }

  /** Views of this buffer's bytes are written to `socket` (relayed as read). */
  set writesTo(socket: Socket) {
    this.#writesTo = socket;
  }

  /**
   * Where the next read goes; Node asks after every read's handler has returned. A write still
   * queued on the other socket (its writableLength counts every byte not yet handed to the
   * kernel) may point into this buffer: the next read must not overwrite it.
   */
  readonly next = (): Buffer => {
    const target = this.#writesTo;
    if (target !== null && target.writableLength > 0) {
      this.#buffer = Buffer.allocUnsafeSlow(this.#size);
      this.replaced++;
    }
    return this.#buffer;
  };
}

function readOptions(reads: ReadBuffer, onRead: ReadHandler): OnReadOpts {
  return {
    buffer: reads.next,
    callback: (length: number, buffer: Uint8Array): boolean => {
      onRead(buffer as Buffer, length);
      // Flow control is the session's (pause and resume): never stop reading from here.
      return true;
    },
  };
}

/** Opens a connection that reads into `reads`. */
export function connectReading(
  options: TcpNetConnectOpts,
  reads: ReadBuffer,
  onRead: ReadHandler,
): Socket {
  return connect({ ...options, onread: readOptions(reads, onRead) });
}

interface AcceptedSocket {
  _handle?: (BoundSocket & { useUserBuffer?: unknown }) | null;
}

/**
 * Takes over a socket a server accepted (with `pauseOnConnect`, so nothing has been read) as a
 * socket that reads into `reads`. Node 24 has no public `onread` for accepted sockets, but builds
 * them as `new Socket({ handle })`, and that constructor takes `onread` too: the accepted
 * socket's handle is moved to a socket made the same way with `onread`, and the empty shell
 * destroyed (which also gives back its place in the server's connection count). A Node without
 * the handle to move gets the 'data' path: slower, the same bytes.
 */
export function adoptReading(accepted: Socket, reads: ReadBuffer, onRead: ReadHandler): Socket {
  const shell = accepted as unknown as AcceptedSocket;
  const handle = shell._handle;
  if (handle === undefined || handle === null || typeof handle.useUserBuffer !== 'function') {
    accepted.on('data', (chunk: Buffer) => onRead(chunk, chunk.length));
    return accepted;
  }
  shell._handle = null;
  accepted.destroy();
  const options: SocketConstructorOpts & { pauseOnCreate: boolean } = {
    handle,
    readable: true,
    writable: true,
    onread: readOptions(reads, onRead),
    // Paused as the accepted socket was: the session starts reading when it is ready.
    pauseOnCreate: true,
  };
  return new Socket(options);
}
