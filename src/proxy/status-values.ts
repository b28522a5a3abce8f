/**
 * The values SHOW STATUS reports for the query cache: the server's Qcache_* names with the
 * proxy-wide totals, and nicecache's own counters that explain what was not cached and why.
 */
import { BYPASS_NAMES, Counter } from '../cache/cache-stats.ts';
import type { QueryCache } from '../cache/query-cache.ts';

/** [values replacing the server's (by upper-case name), rows the server does not have]. */
export function statusValues(
  cache: QueryCache,
): [Map<string, string>, Array<readonly [string, string]>] {
  const stats = cache.stats;
  const total = (counter: number): string => String(stats.total(counter));
  const inCache = stats.total(Counter.QUERIES_IN_CACHE);
  const budget = cache.budgetBytes * stats.workers;
  const own = new Map<string, string>([
    ['QCACHE_HITS', total(Counter.HITS)],
    ['QCACHE_INSERTS', total(Counter.INSERTS)],
    ['QCACHE_NOT_CACHED', total(Counter.NOT_CACHED)],
    ['QCACHE_LOWMEM_PRUNES', total(Counter.LOWMEM_PRUNES)],
    ['QCACHE_QUERIES_IN_CACHE', String(inCache)],
    // One block per result, and no free blocks: the store does not fragment.
    ['QCACHE_TOTAL_BLOCKS', String(inCache)],
    ['QCACHE_FREE_BLOCKS', '0'],
    ['QCACHE_FREE_MEMORY', String(Math.max(0, budget - stats.total(Counter.BYTES_USED)))],
  ]);
  const extra: Array<readonly [string, string]> = [
    ['Qcache_invalidations', total(Counter.INVALIDATIONS)],
    ['Qcache_invalidations_all', total(Counter.INVALIDATIONS_ALL)],
    ['Qcache_too_large', total(Counter.TOO_LARGE)],
    ['Qcache_stale_fills_refused', total(Counter.STALE_FILLS_REFUSED)],
    ['Qcache_stale_hits_refused', total(Counter.STALE_HITS_REFUSED)],
    ['Qcache_single_flight_hits', total(Counter.SINGLE_FLIGHT_HITS)],
    ['Qcache_used_memory', total(Counter.BYTES_USED)],
    ...BYPASS_NAMES.map(
      (name, index) => [`Qcache_bypass_${name}`, String(stats.totalBypass(index))] as const,
    ),
  ];
  return [own, extra];
}
