/**
 * Latencies in fixed log-spaced buckets (about 2% wide, from 1 µs to ~1 hour): recording is one
 * array increment, histograms of many threads merge by adding arrays, and percentiles are exact
 * to within a bucket. Values are milliseconds.
 */

const BUCKETS_PER_DOUBLING = 36;
const MIN_MS = 0.001;
const BUCKETS = BUCKETS_PER_DOUBLING * 32;
const LOG_BASE = Math.log(2) / BUCKETS_PER_DOUBLING;

export class LatencyHistogram {
  readonly counts: Float64Array;
  count = 0;
  sum = 0;
  max = 0;

  constructor(counts?: ArrayLike<number>) {
    this.counts = new Float64Array(BUCKETS);
    if (counts) this.counts.set(counts);
    if (counts) for (let i = 0; i < BUCKETS; i++) this.count += this.counts[i]!;
  }

  record(ms: number, times = 1): void {
    const index =
      ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(ms / MIN_MS) / LOG_BASE));
    this.counts[index]! += times;
    this.count += times;
    this.sum += ms * times;
    if (ms > this.max) this.max = ms;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sum += other.sum;
    if (other.max > this.max) this.max = other.max;
  }

  /** The value below which `fraction` of the recordings fall (upper edge of its bucket). */
  percentile(fraction: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(fraction * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(this.max, MIN_MS * Math.exp((i + 1) * LOG_BASE));
    }
    return this.max;
  }

  get average(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }
}
