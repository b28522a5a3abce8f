/**
 * Whether a miss should copy its reply into the store at all: per table, is a stored result read
 * again before a write to its table makes it stale?
 *
 * A stored result pays only if it is served: each hit saves a relay and the server's work, while
 * each result that dies unread cost a copy of the reply, a store entry and its removal for
 * nothing. On a table written faster than its results are read again (sysbench oltp_read_write:
 * every transaction writes the one table) almost every fill is wasted, and a cache that copies
 * them all is slower than the same proxy as a plain relay. So each table (its invalidation
 * registry slot) has a score, from what happened to the results stored over it:
 *
 * - the first hit of a stored result raises the score of each table it read by SERVED_CREDIT;
 * - a result removed as stale without ever having been served lowers the score of each table
 *   whose write made it stale by 1.
 *
 * The score is bounded on both sides, so it follows what the table does now rather than its
 * whole history (a table that turns read-mostly recovers after a few served results, one that
 * turns write-heavy loses its credit after a few dozen wasted ones). While any table a statement
 * reads is at or below DECLINE_AT, its misses are relayed without a copy; one in PROBE_EVERY of
 * them is stored anyway, so the score keeps hearing what its results would have done.
 *
 * SERVED_CREDIT is the break-even of that trade, measured on this machine (BENCHMARKS.md,
 * "Admission"): a stored result that is hit once saves about four times what a wasted fill costs
 * (a hit saves a relay, ~55-80 µs of proxy CPU, plus the server's ~95 µs; a fill that is never
 * read costs ~25-45 µs more than relaying). A result served more than once is counted once:
 * counting each hit would put a write on every hit; under-crediting only makes the cache store
 * slightly less eagerly on tables where most results die unread anyway.
 *
 * Why per table and not per query (a count-min sketch of keys, TinyLFU's doorkeeper): what makes
 * a fill worthless here is the write rate of its tables, which a key's frequency does not see (an
 * oltp_read_write key is read again often, but always after the next write), while a doorkeeper
 * on oltp_read_only declines every key's first fill and costs one extra miss per key, which
 * measured as a loss of hit ratio on the uniform keys sysbench draws. The scores are this
 * worker's own (plain typed-array writes, nothing shared): they judge this worker's store, which
 * is the one that pays for the copies.
 *
 * Admission only ever declines to store: what is served is decided by the registry as before.
 */

/** What the first hit of a stored result is worth, in wasted fills. */
export const SERVED_CREDIT = 4;
/** A table at or below this score has its results relayed without being stored. */
export const DECLINE_AT = -8;
/** The score's bounds: how much history it keeps. */
export const SCORE_MIN = -32;
export const SCORE_MAX = 32;
/** One declined fill in this many is stored anyway, so a declining table can recover. */
export const PROBE_EVERY = 16;

export class FillAdmission {
  readonly #scores: Int8Array;
  readonly #mask: number;
  #declined = 0;

  /** `slots` is the invalidation registry's slot count (a power of two). */
  constructor(slots: number) {
    this.#scores = new Int8Array(slots);
    this.#mask = slots - 1;
  }

  /**
   * Should a miss over these slots be copied and stored? False only when a table it reads has
   * been wasting its fills, and this is not a probe.
   */
  admits(slots: Int32Array): boolean {
    const scores = this.#scores;
    for (let i = 0; i < slots.length; i++) {
      if (scores[slots[i]! & this.#mask]! <= DECLINE_AT) {
        return this.#declined++ % PROBE_EVERY === PROBE_EVERY - 1;
      }
    }
    return true;
  }

  /** A stored result over `slots` was served for the first time. */
  served(slots: Int32Array): void {
    const scores = this.#scores;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]! & this.#mask;
      scores[slot] = Math.min(SCORE_MAX, scores[slot]! + SERVED_CREDIT);
    }
  }

  /** A result never served was made stale by a write to `slot`. */
  wasted(slot: number): void {
    const scores = this.#scores;
    const at = slot & this.#mask;
    if (scores[at]! > SCORE_MIN) scores[at]!--;
  }

  /** A table's score now (for tests and diagnostics). */
  score(slot: number): number {
    return this.#scores[slot & this.#mask]!;
  }

  /** RESET QUERY CACHE: start again with no history. */
  reset(): void {
    this.#scores.fill(0);
    this.#declined = 0;
  }
}
