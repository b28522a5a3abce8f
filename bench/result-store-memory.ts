/**
 * What a cached result really costs in memory, against what ResultStore charges for it.
 *
 *   node --expose-gc [node options] bench/result-store-memory.ts [entries, default 1000000] [budget MB, default 64]
 *
 * Each scenario runs in a fresh child process (with the same node options) so its RSS is its own.
 * Entries are shaped like the proxy's: a 60-character ASCII key built as the proxy builds it (the
 * session's id joined to a slice of the statement decoded from its packet), a 120-byte reply, one
 * table slot, two status offsets.
 *
 * - "unbounded": stores every entry (no budget to speak of) and prints, per entry, the growth of
 *   the live V8 heap and of the memory outside the V8 heap (RSS minus the heap's reservation:
 *   backing stores, their native records, malloc's headers), after a memory-reducing GC, next to
 *   the payload the charge counts. ENTRY_OVERHEAD_BYTES comes from this: cost minus payload.
 * - "bounded": stores every entry into a store with the given budget, so most are evicted, and
 *   prints RSS against the budget: what a worker's RSS does with that many distinct queries.
 *   Eviction turns entries into old-generation garbage, which V8 collects late and whose pages it
 *   keeps pooled until a memory-reducing GC, and whose freed backing stores fragment malloc's heap:
 *   this is the process's overhead on top of the charged bytes, and node options change it a lot
 *   (try --optimize-for-size or --max-semi-space-size=N).
 *
 * Replies are handed over as the proxy copies them, Buffer.allocUnsafe (a view into an 8 KB pool
 * slab, which the store copies into a buffer of its own), or already in a buffer of their own,
 * Buffer.allocUnsafeSlow. The "+ churn" scenario also allocates a short-lived pool buffer after
 * each reply, as the copy a hit sends would be, and re-reads a hot set of early entries so CLOCK
 * keeps them.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ENTRY_OVERHEAD_BYTES, NO_ENTRY, ResultStore } from '../src/cache/result-store.ts';

const KEY_CHARS = 60;
/** The session part of a key: the proxy's id for the session state a result depends on. */
const SESSION_ID = String(17);
/** The statement's length, so that `${SESSION_ID}\0${statement}` is KEY_CHARS long. */
const STATEMENT_CHARS = KEY_CHARS - SESSION_ID.length - 1;
const REPLY_BYTES = 120;
const MB = 1024 * 1024;
/** In the churn scenarios: one hot entry every HOT_SPACING inserts, re-read between inserts. */
const HOT_SPACING = 64;
const HOT_KEYS = 1024;

type Alloc = 'pool' | 'slow';

interface Scenario {
  name: string;
  budgetBytes: number;
  alloc: Alloc;
  churn: boolean;
}

interface Measurement {
  size: number;
  bytesUsed: number;
  evictions: number;
  payloadPerEntry: number;
  chargePerEntry: number;
  /** Growth of the live V8 heap, after full GCs. */
  heapUsed: number;
  /** Growth of memory the V8 heap reserves, live or not. */
  heapTotal: number;
  /** Growth of ArrayBuffer backing stores and other memory V8 is told about. */
  external: number;
  rss: number;
  rssBefore: number;
  /** RSS after ordinary full GCs: V8 keeps the pages it freed, pooled for reuse. */
  rssAfter: number;
  /** RSS after a memory-reducing GC, which gives pooled pages back to the system. */
  rssReduced: number;
  rssPeak: number;
}

function runScenario(entries: number, scenario: Scenario): Measurement {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  const store = new ResultStore({ budgetBytes: scenario.budgetBytes });
  const packet = Buffer.alloc(STATEMENT_CHARS + 1);
  const allocate = (size: number): Buffer =>
    scenario.alloc === 'pool' ? Buffer.allocUnsafe(size) : Buffer.allocUnsafeSlow(size);
  const hot: string[] = [];
  let chargeTotal = 0;
  let hits = 0;
  let rssPeak = 0;

  const reduce = (): void => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  reduce();
  const before = process.memoryUsage();
  for (let i = 0; i < entries; i++) {
    // As the proxy builds a key: the statement decoded from its packet, its text without the
    // final semicolon (a slice of it), joined to the session's id.
    const statement = `SELECT c FROM sbtest${(i % 8) + 1} WHERE id=${i}`;
    packet.write(`${statement.padEnd(STATEMENT_CHARS, ' ')};`, 'latin1');
    const sql = packet.toString('latin1');
    const key = `${SESSION_ID}\0${sql.slice(0, STATEMENT_CHARS)}`;
    const bytes = allocate(REPLY_BYTES);
    bytes.fill(i & 0xff);
    const result = {
      bytes,
      statusOffsets: [REPLY_BYTES - 50, REPLY_BYTES - 2],
      slots: Int32Array.of(i % 8),
      fillSeq: i,
      rows: 1,
    };
    chargeTotal += ResultStore.chargeOf(
      key,
      REPLY_BYTES,
      result.statusOffsets.length + result.slots.length,
    );
    store.set(key, result);
    if (scenario.churn) {
      // Dropped at once, as the copy a hit sends would be: it shares a slab with stored replies.
      Buffer.allocUnsafe(REPLY_BYTES).fill(0);
      if (i % HOT_SPACING === 0 && hot.length < HOT_KEYS) hot.push(key);
      if (hot.length > 0 && store.find(hot[i % hot.length]!) !== NO_ENTRY) hits++;
    }
    if (i % 10_000 === 0) rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }
  gc();
  const rssAfter = process.memoryUsage.rss();
  reduce();
  const after = process.memoryUsage();
  if (scenario.churn && hits === 0) throw new Error('the hot set was never hit');

  return {
    size: store.size,
    bytesUsed: store.bytesUsed,
    evictions: store.evictions,
    payloadPerEntry: chargeTotal / entries - ENTRY_OVERHEAD_BYTES,
    chargePerEntry: chargeTotal / entries,
    heapUsed: after.heapUsed - before.heapUsed,
    heapTotal: after.heapTotal - before.heapTotal,
    external: after.external - before.external,
    rss: after.rss - before.rss,
    rssBefore: before.rss,
    rssAfter,
    rssReduced: after.rss,
    rssPeak: Math.max(rssPeak, rssAfter),
  };
}

function report(name: string, m: Measurement, budget: string): void {
  const per = (bytes: number): string => (bytes / m.size).toFixed(0);
  const mb = (bytes: number): string => (bytes / MB).toFixed(1);
  // Outside the V8 heap: backing stores, their native bookkeeping, malloc's own overhead.
  const outside = m.rss - m.heapTotal;
  const cost = m.heapUsed + outside;
  console.log(`\n${name}`);
  console.log(
    `  held ${m.size} entries (${m.evictions} evicted), charged ${mb(m.bytesUsed)} MB of ${budget}`,
  );
  console.log(
    `  per held entry: live heap ${per(m.heapUsed)} B + outside the heap ${per(outside)} B ` +
      `(external ${per(m.external)} B) = ${per(cost)} B; ` +
      `payload ${m.payloadPerEntry.toFixed(0)} B, charge ${m.chargePerEntry.toFixed(0)} B; ` +
      `overhead ${((cost - m.payloadPerEntry * m.size) / m.size).toFixed(0)} B`,
  );
  console.log(
    `  RSS ${mb(m.rssBefore)} MB before; at the end ${mb(m.rssAfter)} MB after a full GC ` +
      `(peak ${mb(m.rssPeak)} MB), ${mb(m.rssReduced)} MB after a memory-reducing one ` +
      `(grew ${mb(m.rss)} MB); V8 heap reserved ${mb(m.heapTotal)} MB more, for ${mb(m.heapUsed)} MB live`,
  );
}

function main(): void {
  const [first, second, third] = process.argv.slice(2);
  if (first === '--child') {
    const scenario = JSON.parse(third!) as Scenario;
    process.stdout.write(JSON.stringify(runScenario(Number(second), scenario)));
    return;
  }
  const entries = Number(first ?? 1_000_000);
  const budgetBytes = Number(second ?? 64) * MB;
  const unbounded = Number.MAX_SAFE_INTEGER;
  const scenarios: Scenario[] = [
    {
      name: 'unbounded, allocUnsafe (copied by the store)',
      budgetBytes: unbounded,
      alloc: 'pool',
      churn: false,
    },
    { name: 'unbounded, allocUnsafeSlow', budgetBytes: unbounded, alloc: 'slow', churn: false },
    { name: 'bounded, allocUnsafe', budgetBytes, alloc: 'pool', churn: false },
    { name: 'bounded, allocUnsafe + churn', budgetBytes, alloc: 'pool', churn: true },
  ];
  // Node options given to this process (--max-semi-space-size...) apply to the scenarios too.
  const nodeOptions = [...new Set(['--expose-gc', ...process.execArgv])];
  console.log(
    `${entries} distinct entries: ${KEY_CHARS}-char keys, ${REPLY_BYTES}-byte replies, ` +
      `1 slot, 2 status offsets; ENTRY_OVERHEAD_BYTES = ${ENTRY_OVERHEAD_BYTES}; ` +
      `node ${process.version} ${nodeOptions.join(' ')}`,
  );
  const self = fileURLToPath(import.meta.url);
  for (const scenario of scenarios) {
    const child = spawnSync(
      process.execPath,
      [...nodeOptions, self, '--child', String(entries), JSON.stringify(scenario)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: MB },
    );
    if (child.status !== 0) throw new Error(`${scenario.name}: child exited ${child.status}`);
    const budget =
      scenario.budgetBytes === unbounded ? 'no bound' : `${(budgetBytes / MB).toFixed(0)} MB`;
    report(scenario.name, JSON.parse(child.stdout) as Measurement, budget);
  }
}

main();
