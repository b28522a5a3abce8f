/**
 * One thread of the shared store's concurrency test (test/unit/shared-result-store.test.ts):
 * fills, reads, deletes and holds views of one store alongside the other threads, checking every
 * reply it finds byte for byte, and every view it holds for as long as it holds it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NO_ENTRY, ResultStore } from '../../src/cache/result-store.ts';
import type { QueuedWriter, ResultInput } from '../../src/cache/result-store.ts';
import { seeded } from './seeded-random.ts';

export interface HammerConfig {
  buffer: SharedArrayBuffer;
  worker: number;
  workers: number;
  keys: number;
  operations: number;
  seed: number;
}

export interface HammerReport {
  errors: string[];
  hits: number;
  /** Hits on a version another thread stored. */
  crossHits: number;
  fills: number;
  evictions: number;
  held: number;
}

/** The reply of key `key` at version `version`: its length and every byte follow from both. */
export function replyOf(key: number, version: number): Buffer {
  const length = 16 + ((key * 37) % 300) + (version % 50);
  const bytes = Buffer.alloc(length);
  bytes.writeUInt32LE(key, 0);
  bytes.writeUInt32LE(version, 4);
  for (let j = 8; j < length; j++) bytes[j] = (key * 31 + version * 7 + j) & 0xff;
  return bytes;
}

/** What is wrong with `reply` as key `key`'s (found with `fillSeq` and `rows`), or null. */
export function checkReply(
  key: number,
  reply: Buffer,
  fillSeq: number,
  rows: number,
): string | null {
  if (reply.length < 8) return `key ${key}: a reply of ${reply.length} bytes`;
  const version = reply.readUInt32LE(4);
  if (reply.readUInt32LE(0) !== key) return `key ${key}: the reply of key ${reply.readUInt32LE(0)}`;
  const expected = replyOf(key, version);
  if (!expected.equals(reply)) return `key ${key} v${version}: bytes differ`;
  if (fillSeq !== version || rows !== key)
    return `key ${key} v${version}: fillSeq ${fillSeq}, rows ${rows}`;
  return null;
}

function run(config: HammerConfig): HammerReport {
  const store = new ResultStore({ buffer: config.buffer, worker: config.worker });
  const random = seeded(config.seed);
  const report: HammerReport = {
    errors: [],
    hits: 0,
    crossHits: 0,
    fills: 0,
    evictions: 0,
    held: 0,
  };
  const sent: QueuedWriter = { writableLength: 0, destroyed: false };
  /** Views "queued on a socket": their copy, and when they are sent. */
  const heldViews: Array<{
    view: Buffer;
    copy: Buffer;
    writer: { writableLength: number; destroyed: boolean };
    until: number;
  }> = [];
  let version = config.worker;
  for (let op = 0; op < config.operations && report.errors.length < 10; op++) {
    const key = Math.floor(random() * config.keys);
    const name = `SELECT * FROM t WHERE k = ${key} /* ${'x'.repeat(key % 40)} */`;
    const draw = random();
    if (draw < 0.3) {
      version += config.workers;
      const input: ResultInput = {
        bytes: replyOf(key, version),
        statusOffsets: [],
        slots: Int32Array.of(key & 0xff),
        fillSeq: version,
        rows: key,
      };
      if (store.set(name, input)) report.fills++;
    } else if (draw < 0.33) {
      store.delete(name);
    } else {
      const id = store.find(name);
      if (id === NO_ENTRY) continue;
      const view = store.replyOf(id);
      const wrong = checkReply(key, view, store.fillSeqOf(id), store.rowsOf(id));
      if (wrong !== null) report.errors.push(`worker ${config.worker} op ${op}: ${wrong}`);
      report.hits++;
      if (view.readUInt32LE(4) % config.workers !== config.worker) report.crossHits++;
      if (random() < 0.05 && heldViews.length < 50) {
        const writer = { writableLength: view.length, destroyed: false };
        store.pinIfQueued(view, writer);
        heldViews.push({
          view,
          copy: Buffer.from(view),
          writer,
          until: op + 50 + Math.floor(random() * 2000),
        });
        report.held++;
      } else {
        store.pinIfQueued(view, sent);
      }
    }
    for (let i = heldViews.length - 1; i >= 0; i--) {
      const held = heldViews[i]!;
      if (!held.view.equals(held.copy))
        report.errors.push(`worker ${config.worker} op ${op}: a held view changed`);
      if (op >= held.until) {
        held.writer.writableLength = 0;
        heldViews.splice(i, 1);
      }
    }
  }
  report.evictions = store.evictions;
  return report;
}

if (parentPort !== null) parentPort.postMessage(run(workerData as HammerConfig));
