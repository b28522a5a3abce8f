/** What the metrics port reads: the shared counters and what the main thread knows. */
import type { CacheStats } from '../cache/cache-stats.ts';
import type { DigestRow } from '../cache/statement-digests.ts';
import type { FollowerStatus } from '../binlog/follower-status.ts';

export interface MetricsSources {
  /** The shared counters over every worker (the cache's stay 0 while it is off). */
  stats: CacheStats | null;
  /** The cache's budget in bytes (0 when off). */
  budgetBytes: number;
  /** The binlog follower's status; null without one. */
  follower: FollowerStatus | null;
  /** Workers replaced after they exited, since the start. */
  workerRestarts: () => number;
  /** Per-statement digests over every worker, the most executed first (statement-digests.ts). */
  digests: () => Promise<DigestRow[]>;
}
