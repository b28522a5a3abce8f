/**
 * A TCP forwarder that records, for each command a client sends after logging in, the server's
 * reply bytes: what a driver received, so tests compare it byte for byte with the same driver
 * run against another target. Commands are framed as the client sends them, replies followed
 * with a ReplyTracker per command (commands without a reply are skipped).
 */
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Capability, PacketHeader } from '../../src/protocol/constants.ts';
import { restrictGreeting } from '../../src/protocol/handshake.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyShape, ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';

export interface RecordedReply {
  command: number;
  bytes: Buffer;
}

export interface ReplyRecorder {
  port: number;
  /** Replies of every connection, in the order they ended. */
  replies: RecordedReply[];
  close(): Promise<void>;
}

/**
 * `asTheProxy`: the greeting is narrowed to the capabilities the proxy offers (no metadata
 * caching, say), so a driver talks to the server directly as it would through the proxy.
 */
export async function startReplyRecorder(
  targetHost: string,
  targetPort: number,
  asTheProxy = false,
): Promise<ReplyRecorder> {
  const replies: RecordedReply[] = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect({ host: targetHost, port: targetPort });
    sockets.push(client, upstream);
    let loggedIn = false;
    let deprecateEof = false;
    const waiting: Array<{ command: number; tracker: ReplyTracker; chunks: Buffer[] }> = [];
    const fromClient = new PacketFramer((packet) => {
      if (!loggedIn) {
        // HandshakeResponse41 starts with the capabilities the client takes of those offered.
        if (packet.sequenceId === 1 && packet.payload !== null && packet.length >= 4)
          deprecateEof = (packet.payload.readUInt32LE(0) & Capability.DEPRECATE_EOF) !== 0;
        return;
      }
      if (packet.sequenceId !== 0 || packet.continuation) return;
      const command = packet.firstByte;
      const shape = replyShapeOf(command);
      if (shape === null || shape === ReplyShape.NONE) return;
      waiting.push({
        command,
        tracker: new ReplyTracker(shape, deprecateEof, command),
        chunks: [],
      });
    });
    let greeted = false;
    const fromServer = new PacketFramer((packet) => {
      if (!greeted) {
        greeted = true;
        // In place: the payload is a view of the chunk about to be forwarded (a greeting
        // comes in one read).
        if (asTheProxy) restrictGreeting(packet.payload!);
        return;
      }
      if (!loggedIn) {
        // The login ends with the server's OK (after an auth switch, possibly).
        if (packet.firstByte === PacketHeader.OK) loggedIn = true;
        return;
      }
      const head = waiting[0];
      if (head === undefined) return;
      head.chunks.push(Buffer.from(packet.raw!));
      if (head.tracker.feedServer(packet)) {
        waiting.shift();
        replies.push({ command: head.command, bytes: Buffer.concat(head.chunks) });
      }
    });
    client.on('data', (chunk: Buffer) => {
      fromClient.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer.push(chunk);
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
