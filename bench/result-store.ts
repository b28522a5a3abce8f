/**
 * What the result store costs per operation, away from sockets and the kernel's loopback work
 * that make a proxy-level bench (hit-cost.sh) too noisy to see a few hundred nanoseconds: keys and
 * replies the size of a sysbench point select's (a session id, then the statement; a reply of
 * one 120-character row), stored, found and missed in one thread. Optionally side by side with
 * another checkout's store (OTHER=<checkout>), rounds interleaved in one process.
 *
 *   [OTHER=<checkout>] node bench/result-store.ts [entries per round, default 200000] [rounds, default 5] [budget MB, default 256]
 *
 * Each round, per target:
 * - fill, fresh: `set` of new keys into a store just allocated, whose memory the kernel makes
 *   resident as records and index buckets are first written (what a proxy pays in its first
 *   minutes, and what `MISSES=1 bash bench/hit-cost.sh` measures);
 * - fill, full: the same into a store of a sixteenth of the budget that has been filled round
 *   its ring before (untimed): every `set` evicts or moves older records, into memory used
 *   before, as in a proxy whose store has filled once;
 * - hit: `find` of each stored key, then its reply (the view a hit writes);
 * - miss: `find` of keys never stored.
 * Prints the CPU time (user + system) and the minor page faults per operation, medians of the
 * rounds.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ResultStore } from '../src/cache/result-store.ts';
import type { ResultInput } from '../src/cache/result-store.ts';

const perRound = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 5);
const budget = Number(process.argv[4] ?? 256) * 2 ** 20;

interface Store {
  set(key: string, input: ResultInput): boolean;
  find(key: string): number;
  replyOf(id: number): Buffer;
}
type StoreClass = new (options: { budgetBytes: number }) => Store;

const targets: Array<{ name: string; Store: StoreClass }> = [{ name: 'this', Store: ResultStore }];
if (process.env.OTHER) {
  const url = pathToFileURL(resolve(process.env.OTHER, 'src/cache/result-store.ts')).href;
  const other = (await import(url)) as { ResultStore: StoreClass };
  targets.push({ name: 'other', Store: other.ResultStore });
}

/** A session id as the router makes it (16 characters), then the statement. */
const SESSION = 'AbCdEfGhIjKlMnOp\u0000';
// Flat strings, as a key is once hashed: no operation timed below flattens one.
const keysOf = (from: number, count = perRound): string[] =>
  Array.from({ length: count }, (_, i) =>
    Buffer.from(`${SESSION}SELECT c FROM sbtest1 WHERE id=${from + i}`, 'latin1').toString(
      'latin1',
    ),
  );
// A column definition and one row of 120 characters, with their headers: about a point
// select's reply.
const REPLY = Buffer.alloc(200, 0x61);
const value: ResultInput = {
  bytes: REPLY,
  statusOffsets: [196],
  slots: Int32Array.of(3, 1234),
  fillSeq: 0,
  rows: 1,
};

const PHASES = ['fill, fresh', 'fill, full', 'hit', 'miss'] as const;
type Phase = (typeof PHASES)[number];
const cpu = new Map<string, number[]>();
const faults = new Map<string, number[]>();
const record = (name: string, phase: Phase, started: NodeJS.CpuUsage, faulted: number): void => {
  const { user, system } = process.cpuUsage(started);
  const id = `${name}\u0000${phase}`;
  (cpu.get(id) ?? cpu.set(id, []).get(id)!).push(((user + system) * 1e3) / perRound);
  (faults.get(id) ?? faults.set(id, []).get(id)!).push(
    (process.resourceUsage().minorPageFault - faulted) / perRound,
  );
};

// More than a store of a sixteenth of the budget holds (a record is over 250 bytes): it wraps
// round its ring.
const prefill = keysOf(2e9, Math.ceil(budget / 16 / 250));
for (let round = 0; round < rounds; round++) {
  const stored = keysOf(round * perRound);
  const missing = keysOf(1e9 + round * perRound);
  // The order rotates, so neither target always runs right after the other.
  for (let turn = 0; turn < targets.length; turn++) {
    const { name, Store } = targets[(round + turn) % targets.length]!;
    const store = new Store({ budgetBytes: budget });
    let started = process.cpuUsage();
    let faulted = process.resourceUsage().minorPageFault;
    for (const key of stored) store.set(key, value);
    record(name, 'fill, fresh', started, faulted);
    const full = new Store({ budgetBytes: budget / 16 });
    for (const key of prefill) full.set(key, value);
    started = process.cpuUsage();
    faulted = process.resourceUsage().minorPageFault;
    for (const key of stored) full.set(key, value);
    record(name, 'fill, full', started, faulted);
    let bytes = 0;
    started = process.cpuUsage();
    faulted = process.resourceUsage().minorPageFault;
    for (const key of stored) bytes += store.replyOf(store.find(key)).length;
    record(name, 'hit', started, faulted);
    if (bytes !== perRound * REPLY.length) throw new Error(`${name}: a stored key was not found`);
    started = process.cpuUsage();
    faulted = process.resourceUsage().minorPageFault;
    for (const key of missing) if (store.find(key) !== -1) throw new Error('found a missing key');
    record(name, 'miss', started, faulted);
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
console.log(
  `${perRound} entries a round, ${rounds} rounds, a ${budget / 2 ** 20} MB store; medians of the rounds`,
);
console.log('');
console.log(`| operation | ${targets.map(({ name }) => `${name}: CPU ns | faults`).join(' | ')} |`);
console.log(`|---|${targets.map(() => '---|---|').join('')}`);
for (const phase of PHASES) {
  const cells = targets.map(({ name }) => {
    const id = `${name}\u0000${phase}`;
    return `${median(cpu.get(id)!).toFixed(0)} | ${median(faults.get(id)!).toFixed(3)}`;
  });
  console.log(`| ${phase} | ${cells.join(' | ')} |`);
}
