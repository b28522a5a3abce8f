/**
 * What the live page (`/` on the metrics port) polls from `/api/live`: the same shared totals
 * /metrics reads, as one JSON object. Totals, not rates: the page takes the differences between
 * two polls, so a missed poll loses no count.
 */
import { Counter } from '../cache/cache-stats.ts';
import type { MetricsSources } from './metrics-sources.ts';

/** How many digests the page lists: the most executed. */
export const LIVE_DIGESTS = 10;

export interface LiveDigest {
  digest: string;
  count: number;
  hits: number;
  misses: number;
  bypasses: number;
  mainBypassReason: string | null;
  /** Mean time of its statements that reached the server, in microseconds (0 when none did). */
  meanServerMicros: number;
}

export interface LiveSnapshot {
  /** When it was read, in milliseconds since the Unix epoch. */
  at: number;
  /** Whether the cache is on (--query-cache-size above 0). */
  cacheOn: boolean;
  hits: number;
  /** SELECTs sent to the server (stored afterwards or not). */
  misses: number;
  invalidations: { write: number; everything: number; binlog: number };
  entries: number;
  bytes: number;
  budgetBytes: number;
  residentBytes: number;
  clients: number;
  /** The binlog follower, when there is one. */
  follower: { lagMs: number; following: boolean } | null;
  digests: LiveDigest[];
}

export async function liveSnapshot(sources: MetricsSources): Promise<LiveSnapshot> {
  const stats = sources.stats;
  const total = (counter: number): number => stats?.total(counter) ?? 0;
  const rows = await sources.digests();
  const follower = sources.follower;
  return {
    at: Date.now(),
    cacheOn: sources.budgetBytes > 0,
    hits: total(Counter.HITS),
    misses: total(Counter.INSERTS) + total(Counter.NOT_CACHED),
    invalidations: {
      write: total(Counter.INVALIDATIONS),
      everything: total(Counter.INVALIDATIONS_ALL),
      binlog: follower?.transactions ?? 0,
    },
    entries: total(Counter.QUERIES_IN_CACHE),
    bytes: total(Counter.BYTES_USED),
    budgetBytes: sources.budgetBytes,
    residentBytes: process.memoryUsage.rss(),
    clients: total(Counter.CLIENTS_CONNECTED),
    follower: follower === null ? null : { lagMs: follower.lagMs, following: follower.following },
    digests: rows.slice(0, LIVE_DIGESTS).map((row) => ({
      digest: row.digest,
      count: row.count,
      hits: row.hits,
      misses: row.misses,
      bypasses: row.bypasses,
      mainBypassReason: row.mainBypassReason,
      meanServerMicros: row.serverCount === 0 ? 0 : Math.round(row.serverMicros / row.serverCount),
    })),
  };
}
