/**
 * Failures on request, for tests only: with NICECACHE_TEST_FAULTS=1 the main thread reads lines
 * like `crash 0` on its standard input and makes that worker die of an uncaught error, the way a
 * bug would kill it. Off (and stdin untouched) otherwise.
 */
import type { Worker } from 'node:worker_threads';
import type { ToWorker } from './worker-protocol.ts';

export function installTestFaults(workers: ReadonlyMap<number, Worker>): void {
  if (process.env['NICECACHE_TEST_FAULTS'] !== '1') return;
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      const match = /^crash (\d+)$/.exec(line);
      if (match !== null)
        workers.get(Number(match[1]))?.postMessage({ type: 'fault' } satisfies ToWorker);
    }
  });
  // Reading stdin must not keep a proxy that is shutting down alive.
  (process.stdin as { unref?: () => void }).unref?.();
}
