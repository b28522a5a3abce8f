/**
 * What would invalidating by row, rather than by table, give sysbench's oltp_read_write? Today a
 * write to sbtest1 makes every stored result over sbtest1 stale, so on this workload (every
 * transaction writes the table) nothing is ever served and admission declines every fill. A
 * point read (`WHERE id = N`) only depends on row N, and sysbench's writes are point writes
 * (`UPDATE … WHERE id = N`, `DELETE … WHERE id = N`, `INSERT … VALUES (N, …)`): with a slot per
 * row, a point read would stay good until its own row is written.
 *
 * This estimates the hit ratio of both rules on the workload's exact statement stream (the
 * harness's sysbench generator), without a server: T sessions run their transactions
 * statement by statement in turn. A result is stored when read outside a window in which its
 * rows are written by a transaction still open, and served when nothing it depends on was
 * committed since it was stored and, inside a transaction, since the transaction's snapshot
 * (taken at BEGIN here: a conservative stand-in for the proxy's deferred snapshot). Ranges
 * depend on every row under both rules (any write makes them stale), point reads on their row
 * under the row rule.
 *
 *   node bench/row-invalidation-estimate.ts [transactions, default 200000] [sessions, default 8] [rows, default 200000]
 */
import { DEFAULT_OLTP_OPTIONS, oltpTransaction } from '../src/bench/oltp-workload.ts';
import type { OltpStatement } from '../src/bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS, SysbenchRandom } from '../src/bench/random.ts';

const transactions = Number(process.argv[2] ?? 200_000);
const sessions = Number(process.argv[3] ?? 8);
const rows = Number(process.argv[4] ?? 200_000);
const options = { ...DEFAULT_OLTP_OPTIONS, tableSize: rows };
type Rule = 'table' | 'row';

interface Session {
  statements: OltpStatement[];
  next: number;
  snapshot: number;
  written: number[];
}

function estimate(rule: Rule): { pointHits: number; points: number; hits: number; reads: number } {
  // Logical clock: one tick a statement. Commit times per row, and of the table as a whole.
  const rowCommitted = new Float64Array(rows + 2);
  let tableCommitted = -1;
  // Open transactions' writes, by row: while a row is written and not committed, reads of it
  // are not stored (the proxy keeps such writes in flight until their transaction ends).
  const rowOpenWriters = new Int32Array(rows + 2);
  let tableOpenWriters = 0;
  // Stored results: the time each was stored.
  const stored = new Map<string, number>();
  const state: Session[] = [];
  // The same stream of transactions for every rule.
  const random = new SysbenchRandom({ ...DEFAULT_RANDOM_OPTIONS, seed: 1 });
  let started = 0;
  const nextTransaction = (): OltpStatement[] | null =>
    started++ < transactions ? oltpTransaction('oltp_read_write', options, random) : null;
  for (let s = 0; s < sessions; s++) {
    state.push({ statements: nextTransaction() ?? [], next: 0, snapshot: 0, written: [] });
  }
  let now = 0;
  let pointHits = 0;
  let points = 0;
  let hits = 0;
  let reads = 0;
  for (let live = sessions; live > 0;) {
    live = 0;
    for (const session of state) {
      if (session.next >= session.statements.length) continue;
      live++;
      now++;
      const statement = session.statements[session.next++]!;
      const kind = statement.kind;
      if (kind === 'begin') {
        session.snapshot = now;
      } else if (kind === 'commit') {
        for (const row of session.written) {
          rowCommitted[row] = now;
          rowOpenWriters[row]!--;
        }
        tableCommitted = now;
        tableOpenWriters--;
        session.written = [];
        const following = nextTransaction();
        if (following !== null) {
          session.statements = following;
          session.next = 0;
        }
      } else if (kind === 'point_selects' || kind.endsWith('_ranges')) {
        reads++;
        const point = kind === 'point_selects';
        if (point) points++;
        const row = statement.params[0] as number;
        // The last commit this result depends on, and whether a write to it is open.
        const changed = point && rule === 'row' ? rowCommitted[row]! : tableCommitted;
        const open = point && rule === 'row' ? rowOpenWriters[row]! > 0 : tableOpenWriters > 0;
        const key = `${kind}:${statement.params.join(',')}`;
        const at = stored.get(key);
        if (at !== undefined && at > changed && changed <= session.snapshot && !open) {
          hits++;
          if (point) pointHits++;
        } else if (!open && changed <= session.snapshot) {
          stored.set(key, now);
        }
      } else {
        const row = statement.params[kind === 'non_index_updates' ? 1 : 0] as number;
        if (session.written.length === 0) tableOpenWriters++;
        session.written.push(row);
        rowOpenWriters[row]!++;
      }
    }
  }
  return { pointHits, points, hits, reads };
}

console.log(
  `oltp_read_write, ${transactions} transactions over ${sessions} sessions in turn, ${rows} rows`,
);
console.log('');
console.log('| invalidation | point selects served | all reads served |');
console.log('|---|---|---|');
for (const rule of ['table', 'row'] as const) {
  const { pointHits, points, hits, reads } = estimate(rule);
  const percent = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`;
  console.log(`| by ${rule} | ${percent(pointHits, points)} | ${percent(hits, reads)} |`);
}
