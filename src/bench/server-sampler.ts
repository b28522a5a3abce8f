/**
 * The server's own evidence over one step: query-cache counters (deltas of SHOW GLOBAL STATUS)
 * and, where performance_schema records them, waits on the query cache's lock.
 */
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../upstream/mysql-connection.ts';
import type { QueryCacheSample } from './sweep-result.ts';

const COUNTERS = [
  'Qcache_hits',
  'Qcache_inserts',
  'Qcache_not_cached',
  'Qcache_lowmem_prunes',
  'Qcache_admission_declined',
  'Com_select',
];

/**
 * Server options that make performance_schema time the query cache's mutex and condition, so a
 * throwaway server can show the lock the seed experiment inferred from vmstat.
 */
export const LOCK_EVIDENCE_OPTIONS: Record<string, string> = {
  performance_schema: 'ON',
  performance_schema_instrument: 'wait/synch/%/sql/Query_cache%=ON',
};

interface Reading {
  counters: Map<string, number>;
  lockWaits: number | null;
  lockWaitPicoseconds: number | null;
}

async function read(connection: MysqlConnection, lockEvidence: boolean): Promise<Reading> {
  const rows = await connection.queryRows(
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${COUNTERS.map((name) => `'${name}'`).join(', ')})`,
  );
  const counters = new Map(rows.map(([name, value]) => [name!, Number(value)]));
  if (!lockEvidence) return { counters, lockWaits: null, lockWaitPicoseconds: null };
  const [waits] = await connection.queryRows(
    `SELECT COALESCE(SUM(COUNT_STAR), 0), COALESCE(SUM(SUM_TIMER_WAIT), 0)
       FROM performance_schema.events_waits_summary_global_by_event_name
      WHERE EVENT_NAME LIKE 'wait/synch/%/sql/Query_cache%'`,
  );
  return { counters, lockWaits: Number(waits![0]), lockWaitPicoseconds: Number(waits![1]) };
}

export interface ServerSampler {
  /** Starts the measurement over: what came before (a warm-up) is not counted. */
  restart(): void;
  /** Ends the measurement; null when the server has no query cache counters at all. */
  finish(): Promise<QueryCacheSample | null>;
}

export async function startServerSample(server: ConnectionOptions): Promise<ServerSampler> {
  const connection = await MysqlConnection.connect({ ...server, database: null });
  const [[enabled]] = (await connection.queryRows('SELECT @@performance_schema')) as [[string]];
  const lockEvidence = enabled === '1';
  let beforeReading = read(connection, lockEvidence);
  await beforeReading;
  return {
    restart() {
      // Commands on one connection run in order, so this reading precedes the final one.
      beforeReading = read(connection, lockEvidence);
      // finish() reports a failure; until then it must not count as unhandled.
      beforeReading.catch(() => {});
    },
    async finish() {
      try {
        const before = await beforeReading;
        const after = await read(connection, lockEvidence);
        if (!after.counters.has('Qcache_hits')) return null;
        const delta = (name: string): number =>
          (after.counters.get(name) ?? 0) - (before.counters.get(name) ?? 0);
        const hits = delta('Qcache_hits');
        const selects = delta('Com_select');
        return {
          hits,
          inserts: delta('Qcache_inserts'),
          notCached: delta('Qcache_not_cached'),
          lowmemPrunes: delta('Qcache_lowmem_prunes'),
          ...(after.counters.has('Qcache_admission_declined')
            ? { admissionDeclined: delta('Qcache_admission_declined') }
            : {}),
          selects,
          hitRatio: hits + selects > 0 ? hits / (hits + selects) : null,
          lockWaits: after.lockWaits === null ? null : after.lockWaits - (before.lockWaits ?? 0),
          lockWaitSeconds:
            after.lockWaitPicoseconds === null
              ? null
              : (after.lockWaitPicoseconds - (before.lockWaitPicoseconds ?? 0)) / 1e12,
        };
      } finally {
        connection.close();
      }
    },
  };
}
