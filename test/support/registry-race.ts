/**
 * Threads racing writes on one invalidation registry, as proxy workers do: each thread
 * (registry-race-worker.ts) builds its own InvalidationRegistry over the same
 * SharedArrayBuffer, and the test steers them through a few shared control words.
 */
import { Worker } from 'node:worker_threads';

export interface RaceWorkerData {
  registry: SharedArrayBuffer;
  /** Control words: see the *_WORD constants. */
  control: SharedArrayBuffer;
  /** A table slot, or -1 for writes whose tables cannot be known. */
  slot: number;
}

/** Set to 1 by the test: every thread stops. */
export const STOP_WORD = 0;
/** Incremented by each thread once it runs, so the test starts with all of them up. */
export const READY_WORD = 1;
/** The round the test has opened. */
export const ROUND_WORD = 2;
/** Threads whose write of the current round has ended. */
export const ROUND_DONE_WORD = 3;
export const CONTROL_WORDS = 4;

export interface Race {
  control: Int32Array;
  /** Stops every thread; resolves with the writes each finished. */
  stop(): Promise<number[]>;
}

/** Starts race threads over one registry and waits until all of them run. */
export async function race(threads: RaceWorkerData[]): Promise<Race> {
  const workerUrl = new URL('./registry-race-worker.ts', import.meta.url);
  const control = new Int32Array(threads[0]!.control);
  const workers = threads.map((data) => new Worker(workerUrl, { workerData: data }));
  const results = workers.map(
    (worker) =>
      new Promise<number>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  );
  while (Atomics.load(control, READY_WORD) < threads.length) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return {
    control,
    stop: async () => {
      Atomics.store(control, STOP_WORD, 1);
      const counts = await Promise.all(results);
      await Promise.all(workers.map((worker) => worker.terminate()));
      return counts;
    },
  };
}

export function newControl(): SharedArrayBuffer {
  return new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT);
}
