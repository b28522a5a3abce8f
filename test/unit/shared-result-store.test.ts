/**
 * The entry store under concurrency: several worker threads fill, read, delete and hold views of
 * one store at once, on a budget small enough that records are evicted and moved all the time.
 * Every reply found is the key's, byte for byte, with its own metadata; a view held as if queued
 * on a socket never changes while held; a result one thread stored is a hit in the others; and
 * afterwards the store's accounting matches what it holds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { NO_ENTRY, ResultStore } from '../../src/cache/result-store.ts';
import { checkReply } from '../support/store-hammer.ts';
import type { HammerConfig, HammerReport } from '../support/store-hammer.ts';

const WORKERS = 3;
const KEYS = 2_000;

function hammer(config: HammerConfig): Promise<HammerReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('../support/store-hammer.ts', import.meta.url), {
      workerData: config,
    });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`hammer ${config.worker} exited with ${code}`));
    });
  });
}

describe('one store, several threads', () => {
  test('replies stay whole, held views stay put, results cross threads, accounting adds up', async () => {
    // About a third of what the keys' replies take: fills evict and move records throughout.
    const buffer = ResultStore.allocate(256 * 1024, WORKERS);
    const reports = await Promise.all(
      Array.from({ length: WORKERS }, (_, worker) =>
        hammer({
          buffer,
          worker,
          workers: WORKERS,
          keys: KEYS,
          operations: 150_000,
          seed: 7 + worker,
        }),
      ),
    );
    const errors = reports.flatMap((report) => report.errors);
    assert.deepEqual(errors, []);
    const sum = (pick: (report: HammerReport) => number): number =>
      reports.reduce((total, report) => total + pick(report), 0);
    assert.ok(sum((r) => r.hits) > 10_000, `only ${sum((r) => r.hits)} hits`);
    assert.ok(sum((r) => r.crossHits) > 1_000, `only ${sum((r) => r.crossHits)} cross-thread hits`);
    assert.ok(sum((r) => r.evictions) > 1_000, `only ${sum((r) => r.evictions)} evictions`);
    assert.ok(sum((r) => r.held) > 100, `only ${sum((r) => r.held)} views held`);

    // The main thread's view, as the proxy's main thread has one.
    const store = new ResultStore({ buffer, worker: WORKERS });
    let held = 0;
    let charged = 0;
    for (let key = 0; key < KEYS; key++) {
      const name = `SELECT * FROM t WHERE k = ${key} /* ${'x'.repeat(key % 40)} */`;
      const id = store.find(name);
      if (id === NO_ENTRY) continue;
      const reply = store.replyOf(id);
      assert.equal(checkReply(key, reply, store.fillSeqOf(id), store.rowsOf(id)), null);
      held++;
      charged += ResultStore.chargeOf(name, reply.length, 1);
    }
    assert.ok(held > 100, `only ${held} results held`);
    assert.equal(store.size, held);
    assert.equal(store.bytesUsed, charged);
    assert.ok(store.boundBytes <= store.budgetBytes);
  });

  test('a worker that died holding the writers’ lock leaves an empty, working store', () => {
    const buffer = ResultStore.allocate(1 << 20, 2);
    const first = new ResultStore({ buffer, worker: 0 });
    const second = new ResultStore({ buffer, worker: 1 });
    const input = {
      bytes: Buffer.alloc(40, 7),
      statusOffsets: [],
      slots: Int32Array.of(1),
      fillSeq: 1,
      rows: 1,
    };
    assert.ok(first.set('a', input));
    // As if worker 0 were terminated inside a fill: its lock word stays set.
    new Int32Array(buffer, 0, 1)[0] = 1;
    const keeper = new ResultStore({ buffer, worker: 2 });
    keeper.recoverAfterExit(0);
    assert.equal(second.size, 0);
    assert.equal(second.find('a'), NO_ENTRY);
    assert.ok(second.set('b', input));
    assert.notEqual(second.find('b'), NO_ENTRY);
  });
});
