/**
 * TLS started in the middle of the MySQL handshake, over a TCP socket the session already reads
 * into its reused buffer (socket-reads.ts), to a client or to the server:
 *
 * - A client sends an SSLRequest (the first 32 bytes of its handshake response) in the clear,
 *   then a TLS ClientHello, then the rest of the login and every command inside TLS. It may
 *   send the ClientHello right behind the SSLRequest, so the first TLS bytes can already sit in
 *   the read that held the SSLRequest.
 * - To a server the proxy does the same: its SSLRequest, then the TLS handshake as a client.
 *
 * Either way the TCP socket's reads are handed to TLS through a duplex stream: what was read is
 * pushed in (copied, as the read buffer is reused), what TLS writes goes to the socket. Reading
 * from the socket pauses while TLS has not taken what was pushed, so a slow session does not
 * buffer a fast peer.
 */
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { TLSSocket, connect as connectTls } from 'node:tls';
import type { SecureContext } from 'node:tls';

export interface TlsOverReads {
  /** The peer as the session now reads and writes it: cleartext over TLS. */
  readonly socket: TLSSocket;
  /** Hands TLS bytes read from the TCP socket to TLS. */
  feed(bytes: Buffer, from: number, to: number): void;
}

/** How the server's certificate is checked (--backend-tls-ca, --backend-tls-verify). */
export interface ServerTlsOptions {
  /** PEM CA certificates to trust instead of the system's; null: the system's. */
  ca: string | null;
  /** Refuse a certificate that is not signed by a trusted CA or does not name the server. */
  verify: boolean;
  /** The name the server was reached by (its host), checked against its certificate. */
  host: string;
}

/** Starts TLS as the server, on `tcp`, whose read buffer holds its first bytes in `[from, to)`. */
export function startClientTls(
  tcp: Socket,
  context: SecureContext,
  first: Buffer,
  from: number,
  to: number,
): TlsOverReads {
  const { transport, feed } = transportOver(tcp);
  const socket = new TLSSocket(transport, { isServer: true, secureContext: context });
  feed(first, from, to);
  return { socket, feed };
}

/** Starts TLS as a client of the server on `tcp` (right after the proxy's SSLRequest). */
export function startServerTls(tcp: Socket, options: ServerTlsOptions): TlsOverReads {
  const { transport, feed } = transportOver(tcp);
  const socket = connectTls({
    socket: transport,
    // SNI takes names only; the certificate is checked against the host either way.
    servername: isIP(options.host) === 0 ? options.host : undefined,
    host: options.host,
    ...(options.ca !== null ? { ca: options.ca } : {}),
    rejectUnauthorized: options.verify,
  });
  return { socket, feed };
}

/** A duplex stream whose reads are what is fed to it and whose writes go to `tcp`. */
function transportOver(tcp: Socket): {
  transport: Duplex;
  feed: (bytes: Buffer, from: number, to: number) => void;
} {
  const transport = new Duplex({
    read() {
      tcp.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (tcp.destroyed) {
        callback(new Error('the connection is closed'));
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
  // A failed TCP connection ends TLS over it: whoever listens to the TLS socket hears of it
  // (and an error with no listener would end the process).
  tcp.on('error', (error) => transport.destroy(error));
  // A write after the peer went away fails here: the session hears of it from the sockets.
  transport.on('error', () => tcp.destroy());
  const feed = (bytes: Buffer, start: number, end: number): void => {
    if (end <= start) return;
    // Copied: the session's read buffer is reused for its next read.
    if (!transport.push(Buffer.from(bytes.subarray(start, end)))) tcp.pause();
  };
  return { transport, feed };
}
