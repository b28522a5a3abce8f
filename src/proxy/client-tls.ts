/**
 * TLS to a client, started in the middle of the MySQL handshake: the client sends an SSLRequest
 * (the first 32 bytes of its handshake response) in the clear, then a TLS ClientHello, then the
 * rest of the login and every command inside TLS.
 *
 * The client's bytes keep arriving through the session's own read of the TCP socket (into its
 * reused buffer, see socket-reads.ts), and a client may send its ClientHello right behind the
 * SSLRequest, so the first TLS bytes can already sit in the read that held the SSLRequest.
 * Both are handed to TLS through a duplex stream: what was read is pushed in (copied, as the
 * read buffer is reused), what TLS writes goes to the socket. Reading from the socket pauses
 * while TLS has not taken what was pushed, so a slow session does not buffer a fast client.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { SecureContext } from 'node:tls';

export interface ClientTls {
  /** The client as the session now reads and writes it: cleartext over TLS. */
  readonly socket: TLSSocket;
  /** Hands TLS bytes read from the client's TCP socket to TLS. */
  feed(bytes: Buffer, from: number, to: number): void;
}

/** Starts TLS on `tcp`, whose read buffer holds the first TLS bytes in `[from, to)` (maybe none). */
export function startClientTls(
  tcp: Socket,
  context: SecureContext,
  first: Buffer,
  from: number,
  to: number,
): ClientTls {
  const transport = new Duplex({
    read() {
      tcp.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (tcp.destroyed) {
        callback(new Error('the client connection is closed'));
        return;
      }
      if (tcp.write(chunk)) callback();
      else tcp.once('drain', () => callback());
    },
    final(callback) {
      tcp.end();
      callback();
    },
    destroy(error, callback) {
      tcp.destroy();
      callback(error);
    },
  });
  tcp.on('close', () => transport.destroy());
  // A write after the client went away fails here: the session hears of it from the sockets.
  transport.on('error', () => tcp.destroy());
  const feed = (bytes: Buffer, start: number, end: number): void => {
    if (end <= start) return;
    // Copied: the session's read buffer is reused for its next read.
    if (!transport.push(Buffer.from(bytes.subarray(start, end)))) tcp.pause();
  };
  const socket = new TLSSocket(transport, { isServer: true, secureContext: context });
  feed(first, from, to);
  return { socket, feed };
}
