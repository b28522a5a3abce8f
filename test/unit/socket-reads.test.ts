/**
 * socket-reads.ts on real loopback sockets: an accepted socket taken over really reads into its
 * one buffer (Node's internals could change under it, and the 'data' path would then be taken
 * silently), and a buffer a queued write still holds is never read into again.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { ReadBuffer, adoptReading } from '../../src/proxy/socket-reads.ts';

/** A server whose one accepted socket is taken over by adoptReading. */
async function adoptingServer(
  size: number,
  onRead: (socket: Socket, buffer: Buffer, length: number) => void,
): Promise<{ server: Server; reads: ReadBuffer; adopted: Promise<Socket> }> {
  const reads = new ReadBuffer(size);
  let resolve!: (socket: Socket) => void;
  const adopted = new Promise<Socket>((done) => (resolve = done));
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    const socket: Socket = adoptReading(accepted, reads, (buffer, length) =>
      onRead(socket, buffer, length),
    );
    resolve(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, reads, adopted };
}

test('an adopted socket reads into one buffer, starting paused', async () => {
  const buffers = new Set<Buffer>();
  let received = '';
  const { server, adopted } = await adoptingServer(64, (_socket, buffer, length) => {
    buffers.add(buffer);
    received += buffer.toString('latin1', 0, length);
  });
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  const socket = await adopted;
  client.write('before resume;');
  await sleep(50);
  assert.equal(received, '', 'nothing is read before the session resumes');
  socket.resume();
  for (let index = 0; index < 20; index++) {
    client.write(`chunk ${index};`);
    await sleep(2);
  }
  await sleep(50);
  assert.equal(
    received,
    'before resume;' + Array.from({ length: 20 }, (_, index) => `chunk ${index};`).join(''),
  );
  assert.equal(buffers.size, 1, 'every read lands in the same buffer');
  client.destroy();
  socket.destroy();
  server.close();
});

test('a read buffer held by a queued write is not read into again', async () => {
  // The adopted socket echoes every read as a view to a peer that does not read: its writes
  // queue up, and each read must then land in a new buffer.
  const peerServer = createServer({ pauseOnConnect: true });
  peerServer.listen(0, '127.0.0.1');
  await once(peerServer, 'listening');
  const peerAccepted = once(peerServer, 'connection');
  const peer = connect((peerServer.address() as AddressInfo).port, '127.0.0.1');
  await once(peer, 'connect');
  const [slowReader] = (await peerAccepted) as [Socket];

  let read = 0;
  const { server, reads, adopted } = await adoptingServer(1024, (_socket, buffer, length) => {
    read += length;
    peer.write(buffer.subarray(0, length));
  });
  reads.writesTo = peer;
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  const socket = await adopted;
  socket.resume();
  const closeAll = (): void => {
    for (const closing of [client, socket, peer, slowReader]) closing.destroy();
    server.close();
    peerServer.close();
  };
  try {
    await echoUnread(client, () => read, peer, reads, slowReader);
  } finally {
    closeAll();
  }
});

/** More than the kernel's socket buffers hold, so the echo's writes must queue. */
const TOTAL = 8_000_000;

async function echoUnread(
  client: Socket,
  readSoFar: () => number,
  peer: Socket,
  reads: ReadBuffer,
  slowReader: Socket,
): Promise<void> {
  const sent: Buffer[] = [];
  for (let index = 0; index < TOTAL / 1000; index++) {
    const chunk = Buffer.alloc(1000, index % 251);
    sent.push(chunk);
    client.write(chunk);
    if (index % 20 === 0) await sleep(0);
  }
  while (readSoFar() < TOTAL) await sleep(10);
  // Checked before the bytes: without queued writes the test would prove nothing.
  assert.ok(peer.writableLength > 0, 'the peer does not read: writes queue');
  const replaced = reads.replaced;
  // What the slow reader finally gets is every byte as sent.
  const got: Buffer[] = [];
  slowReader.on('data', (chunk: Buffer) => got.push(chunk));
  slowReader.resume();
  let received = 0;
  slowReader.on('data', (chunk: Buffer) => (received += chunk.length));
  while (received < TOTAL) await sleep(10);
  assert.ok(Buffer.concat(got).equals(Buffer.concat(sent)), 'every byte arrives as sent');
  assert.ok(replaced > 0, 'reads moved to new buffers while writes held the old');
}
