/**
 * A TCP forwarder between the proxy and the real server that can cut a connection part-way
 * through a reply, as a crashing or killed server would.
 */
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';

export interface ForwardedConnection {
  /** Bytes the server has sent on this connection so far. */
  fromServer: number;
  client: Socket;
  server: Socket;
  /** Cuts both sides once the server has sent `bytes` more bytes. */
  cutAfter(bytes: number): void;
}

export interface FaultForwarder {
  port: number;
  connections: ForwardedConnection[];
  close(): Promise<void>;
}

export async function startFaultForwarder(
  targetHost: string,
  targetPort: number,
): Promise<FaultForwarder> {
  const connections: ForwardedConnection[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect({ host: targetHost, port: targetPort });
    let cutAt = Infinity;
    const connection: ForwardedConnection = {
      fromServer: 0,
      client,
      server: upstream,
      cutAfter(bytes) {
        cutAt = connection.fromServer + bytes;
      },
    };
    connections.push(connection);
    upstream.on('data', (chunk: Buffer) => {
      const room = cutAt - connection.fromServer;
      if (room <= chunk.length) {
        client.write(chunk.subarray(0, Math.max(0, room)));
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      connection.fromServer += chunk.length;
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) {
          connection.client.destroy();
          connection.server.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
