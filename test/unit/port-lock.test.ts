/**
 * The port lock on its own: the step that catches a second instance in the moment after the
 * first has checked the port and before its workers listen on it.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { PortInUseError, acquirePortLock } from '../../src/proxy/port-lock.ts';

const identity = (listen: string) => (port: number) => ({
  pid: 4242,
  listen: `${listen}:${port}`,
  backend: 'db:3306',
  version: '9.9.9',
  since: '2026-01-01T00:00:00.000Z',
});

describe('port lock', { skip: process.platform !== 'linux' }, () => {
  test('a free port is claimed once: the second claim names the first, even with the port unbound', async () => {
    const first = await acquirePortLock('127.0.0.1', 0, identity('127.0.0.1'));
    try {
      // No worker listens on the port yet, so only the lock can refuse.
      await assert.rejects(
        acquirePortLock('127.0.0.1', first.port, identity('0.0.0.0')),
        (error) => {
          assert.ok(error instanceof PortInUseError);
          assert.equal(
            error.message,
            `port ${first.port} is already served by nicecache 9.9.9 (pid 4242, serving 127.0.0.1:${first.port} in front of db:3306, since 2026-01-01T00:00:00.000Z); stop it first, or give this one another --listen port`,
          );
          return true;
        },
      );
    } finally {
      await first.release();
    }
    // Released: the port can be claimed again.
    const again = await acquirePortLock('127.0.0.1', first.port, identity('127.0.0.1'));
    await again.release();
  });

  test('a port another program listens on is refused with that program named', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = other.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      await assert.rejects(
        acquirePortLock('127.0.0.1', port, identity('127.0.0.1')),
        new RegExp(
          `cannot listen on 127.0.0.1:${port}: the port is already in use by pid ${process.pid}\\b`,
        ),
      );
    } finally {
      other.close();
    }
  });
});
