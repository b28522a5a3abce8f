/**
 * How long the statement classifier takes on what sysbench's oltp_read_write sends.
 *
 *   node bench/sql-classifier.ts [classifications per shape, default 1000000]
 *
 * The statements are the ones the benchmark harness generates, with values inlined as sysbench
 * sends them with --db-ps-mode=disable (the COM_QUERY text the proxy classifies). For each of the
 * workload's statement shapes a pool of texts with different values is classified round-robin,
 * so nothing is measured on one string only. Prints nanoseconds per classify() and per
 * cacheKeyText() (the tokenizer alone), by shape and on average.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_OLTP_OPTIONS, inlineParams, oltpTransaction } from '../src/bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS, SysbenchRandom } from '../src/bench/random.ts';
import { classify } from '../src/sql/statement-classifier.ts';
import type { ClassifyOptions } from '../src/sql/statement-classifier.ts';
import { cacheKeyText } from '../src/sql/tokenizer.ts';

const iterations = Number(process.argv[2] ?? 1_000_000);
const POOL = 1024;
const options: ClassifyOptions = { ansiQuotes: false, lowerCaseTableNames: 0 };

const random = new SysbenchRandom({ ...DEFAULT_RANDOM_OPTIONS, seed: 1 });
const pools = new Map<string, string[]>();
while ([...pools.values()].some((pool) => pool.length < POOL) || pools.size === 0) {
  for (const statement of oltpTransaction('oltp_read_write', DEFAULT_OLTP_OPTIONS, random)) {
    const pool = pools.get(statement.kind) ?? [];
    pools.set(statement.kind, pool);
    // Decoded from bytes, as the proxy gets it from a packet: a flat string, not a concatenation.
    if (pool.length < POOL) pool.push(Buffer.from(inlineParams(statement)).toString());
  }
}

function nanosecondsPer(work: (text: string) => unknown, texts: string[]): number {
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < iterations; i++) {
    if (work(texts[i & (POOL - 1)]!) !== null) sink++;
  }
  const elapsed = performance.now() - started;
  if (sink < 0) console.log(sink);
  return (elapsed * 1e6) / iterations;
}

const toClassify = (text: string): unknown => classify(text, options);
const toKey = (text: string): unknown => cacheKeyText(text, options);

// Warm up every shape first, so the optimiser sees the whole mix before anything is timed.
for (const texts of pools.values()) {
  for (let round = 0; round < 20; round++) for (const text of texts) toClassify(text);
}

console.log(`${pools.size} statement shapes, ${iterations} classifications each\n`);
console.log(
  `${'shape'.padEnd(18)} ${'classify ns'.padStart(12)} ${'tokenize ns'.padStart(12)}  example`,
);
let classifyTotal = 0;
let tokenizeTotal = 0;
for (const [kind, texts] of pools) {
  const classifyNs = nanosecondsPer(toClassify, texts);
  const tokenizeNs = nanosecondsPer(toKey, texts);
  classifyTotal += classifyNs;
  tokenizeTotal += tokenizeNs;
  const example = texts[0]!.length > 60 ? texts[0]!.slice(0, 57) + '...' : texts[0]!;
  console.log(
    `${kind.padEnd(18)} ${classifyNs.toFixed(0).padStart(12)} ${tokenizeNs.toFixed(0).padStart(12)}  ${example}`,
  );
}
console.log(
  `${'mean'.padEnd(18)} ${(classifyTotal / pools.size).toFixed(0).padStart(12)} ${(tokenizeTotal / pools.size).toFixed(0).padStart(12)}`,
);
