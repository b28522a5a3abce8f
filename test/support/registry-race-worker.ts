/**
 * A thread that races writes on a shared invalidation registry, as proxy workers do: it builds
 * its own InvalidationRegistry over the same SharedArrayBuffer (see registry-race.ts). One write
 * per round: it spins until the test opens the next round, so every thread of a round ends its
 * write at nearly the same instant and their raises collide; the test sleeps on the done word
 * meanwhile, leaving the cores to them. It reports how many writes it finished.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';
import { READY_WORD, ROUND_DONE_WORD, ROUND_WORD, STOP_WORD } from './registry-race.ts';
import type { RaceWorkerData } from './registry-race.ts';

const data = workerData as RaceWorkerData;
const registry = new InvalidationRegistry(data.registry);
const control = new Int32Array(data.control);

Atomics.add(control, READY_WORD, 1);
let finished = 0;
let round = 0;
while (Atomics.load(control, STOP_WORD) === 0) {
  const open = Atomics.load(control, ROUND_WORD);
  if (open === round) continue;
  round = open;
  if (data.slot < 0) {
    registry.beginWriteEverything();
    registry.endWriteEverything();
  } else {
    registry.beginWrite(data.slot);
    registry.endWrite(data.slot);
  }
  finished++;
  Atomics.add(control, ROUND_DONE_WORD, 1);
  Atomics.notify(control, ROUND_DONE_WORD);
}
parentPort!.postMessage(finished);
