/**
 * What the statement memo costs per statement on what sysbench's oltp_read_write sends with
 * --db-ps-mode=disable: texts whose literals are new nearly every time, looked up by their bytes
 * as the router looks every COM_QUERY up. Optionally side by side with another checkout's memo
 * (OTHER=<checkout>), rounds interleaved in one process so both see the same machine.
 *
 *   [OTHER=<checkout>] node bench/statement-memo.ts [statements per round, default 200000] [rounds, default 5]
 *
 * Each round is a new stream of transactions (the harness's generator, seeded), the same for
 * every target, through memos that have seen the streams before it: shapes are known, and texts
 * repeat as often as they do in that many statements of the workload (the default, about 15 s
 * of it at 700 transactions per second). Prints the CPU time (user + system, which on a shared
 * machine leaves out time stolen by other guests) per statement per round, and the medians.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_OLTP_OPTIONS, inlineParams, oltpTransaction } from '../src/bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS, SysbenchRandom } from '../src/bench/random.ts';
import { StatementMemo } from '../src/proxy/statement-memo.ts';
import type { ClassifyMode } from '../src/proxy/statement-memo.ts';
import { NameEncoding } from '../src/sql/name-encoding.ts';

const perRound = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 5);
const VERSION = '10.11.19-MariaDB';
const MODE: ClassifyMode = {
  ansiQuotes: false,
  noBackslashEscapes: false,
  lowerCaseTableNames: 0,
  names: NameEncoding.UTF8MB4,
};
const mode = (): ClassifyMode => MODE;

interface Memo {
  classifyBytes(
    payload: Buffer,
    from: number,
    index: number,
    mode: () => ClassifyMode,
    version: string,
  ): unknown;
}

/** `count` COM_QUERY payloads of oltp_read_write transactions, as a client sends them. */
function payloads(count: number, seed: number): Buffer[] {
  const random = new SysbenchRandom({ ...DEFAULT_RANDOM_OPTIONS, seed });
  const out: Buffer[] = [];
  while (out.length < count) {
    for (const statement of oltpTransaction('oltp_read_write', DEFAULT_OLTP_OPTIONS, random)) {
      out.push(Buffer.concat([Buffer.of(3), Buffer.from(inlineParams(statement), 'latin1')]));
    }
  }
  return out;
}

const targets: Array<{ name: string; memo: Memo }> = [{ name: 'this', memo: new StatementMemo() }];
if (process.env.OTHER) {
  const url = pathToFileURL(resolve(process.env.OTHER, 'src/proxy/statement-memo.ts')).href;
  const other = (await import(url)) as { StatementMemo: new () => Memo };
  targets.push({ name: 'other', memo: new other.StatementMemo() });
}

const warmUp = payloads(200_000, 1);
for (const { memo } of targets)
  for (const payload of warmUp) memo.classifyBytes(payload, 1, 0, mode, VERSION);

const results = new Map<string, number[]>(targets.map(({ name }) => [name, []]));
for (let round = 0; round < rounds; round++) {
  const stream = payloads(perRound, 2 + round);
  // The order rotates, so neither target always runs right after the other.
  for (let turn = 0; turn < targets.length; turn++) {
    const { name, memo } = targets[(round + turn) % targets.length]!;
    const started = process.cpuUsage();
    for (const payload of stream) memo.classifyBytes(payload, 1, 0, mode, VERSION);
    const { user, system } = process.cpuUsage(started);
    results.get(name)!.push(((user + system) * 1e3) / stream.length);
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (const [name, values] of results) {
  console.log(
    `${name.padEnd(6)} CPU ns per statement: ${values.map((value) => value.toFixed(0)).join(', ')}; median ${median(values).toFixed(0)}`,
  );
}
if (targets.length === 2) {
  console.log(
    `this ÷ other (medians): ${(median(results.get('this')!) / median(results.get('other')!)).toFixed(2)}`,
  );
}
