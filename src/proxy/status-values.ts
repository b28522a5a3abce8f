/**
 * The values SHOW STATUS reports for the query cache: the server's Qcache_* names with the
 * proxy-wide totals, and nicecache's own counters that explain what was not cached and why.
 * Counters count from the last FLUSH STATUS, as the server's do; the gauges say how the cache is
 * now, so this worker first drops the results a write has made stale from the store every worker
 * shares.
 */
import { BYPASS_NAMES, Counter } from '../cache/cache-stats.ts';
import type { QueryCache } from '../cache/query-cache.ts';
import type { FollowerStatus } from '../binlog/follower-status.ts';
import type { StatusValues } from './status-variables.ts';

export function statusValues(cache: QueryCache, follower: FollowerStatus | null): StatusValues {
  cache.sweepForStatus();
  const stats = cache.stats;
  const shown = (counter: number): string => String(stats.shown(counter));
  const inCache = stats.total(Counter.QUERIES_IN_CACHE);
  const budget = cache.budgetBytes;
  const serverNamed: Array<readonly [string, string]> = [
    ['Qcache_free_blocks', '0'],
    ['Qcache_free_memory', String(Math.max(0, budget - stats.total(Counter.BYTES_USED)))],
    ['Qcache_hits', shown(Counter.HITS)],
    ['Qcache_inserts', shown(Counter.INSERTS)],
    ['Qcache_lowmem_prunes', shown(Counter.LOWMEM_PRUNES)],
    ['Qcache_not_cached', shown(Counter.NOT_CACHED)],
    ['Qcache_queries_in_cache', String(inCache)],
    // One block per result, and no free blocks: the store does not fragment.
    ['Qcache_total_blocks', String(inCache)],
  ];
  const own = new Map(serverNamed.map(([name, value]) => [name.toUpperCase(), value]));
  const extra: Array<readonly [string, string]> = [
    // A server without a query cache (MySQL 8) has none of these rows: they are added then.
    ...serverNamed,
    ['Qcache_invalidations', shown(Counter.INVALIDATIONS)],
    ['Qcache_invalidations_all', shown(Counter.INVALIDATIONS_ALL)],
    ['Qcache_too_large', shown(Counter.TOO_LARGE)],
    ['Qcache_stale_fills_refused', shown(Counter.STALE_FILLS_REFUSED)],
    ['Qcache_stale_hits_refused', shown(Counter.STALE_HITS_REFUSED)],
    ['Qcache_single_flight_hits', shown(Counter.SINGLE_FLIGHT_HITS)],
    ['Qcache_admission_declined', shown(Counter.ADMISSION_DECLINED)],
    ['Qcache_admission_unseen', shown(Counter.ADMISSION_UNSEEN)],
    ['Qcache_transactions_deferred', shown(Counter.TRANSACTIONS_DEFERRED)],
    ['Qcache_transactions_in_proxy', shown(Counter.TRANSACTIONS_IN_PROXY)],
    ['Qcache_transaction_conflicts', shown(Counter.TRANSACTION_CONFLICTS)],
    ['Qcache_commits_deferred', shown(Counter.COMMITS_DEFERRED)],
    ['Qcache_used_memory', String(stats.total(Counter.BYTES_USED))],
    ['Qcache_sessions_lingering', String(stats.total(Counter.SESSIONS_LINGERING))],
    // Which worker thread serves this connection: every worker shares the store, but not its
    // statement memo, single flights or admission, which is where a workload may differ.
    ['Nicecache_worker', String(stats.worker)],
    ...BYPASS_NAMES.map(
      (name, index) => [`Qcache_bypass_${name}`, String(stats.shownBypass(index))] as const,
    ),
    ...(follower?.rows() ?? []),
  ];
  return { own, extra };
}
