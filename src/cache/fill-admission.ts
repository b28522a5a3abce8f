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
 * SERVED_CREDIT is the trade's break-even, from sysbench oltp_read_write through one worker on
 * this machine (BENCHMARKS.md, "Admission"): declining the fills cut the proxy's CPU by about
 * 10 µs per SELECT (the copy, the entry, its removal and their garbage), while a hit saves the
 * relay of the query (~25-30 µs of proxy CPU) and the server's work (~95 µs): one served result
 * is worth about ten wasted fills; 8 is that, rounded down for a rough estimate. A result served
 * more than once is credited once: crediting each hit would put a write on every hit, and
 * under-crediting only declines tables whose results are seldom served anyway.
 *
 * Why per table and not per key (a count-min sketch of key hashes, TinyLFU): what makes a fill
 * worthless here is the write rate of its tables, which a key's frequency does not see (an
 * oltp_read_write key is read again, but after the next write to its table), and a doorkeeper
 * that stores a key only from its second miss costs every key one more miss. That is worth it
 * only once the store is full, when each result stored pushes another out: the query cache then
 * asks one as well (QueryCache.admits), after these scores.
 *
 * The scores judge the store every worker shares, so they are shared too (one byte per registry
 * slot in a SharedArrayBuffer of their own, not on the registry's words that every hit reads): a
 * result is credited by the first hit of any worker and debited by whichever worker drops it.
 * They are written with plain reads and writes: two workers changing one score at once may lose
 * one of the changes, which a bounded estimate of this kind does not notice.
 *
 * Admission only ever declines to store: what is served is decided by the registry as before.
 */

/** What the first hit of a stored result is worth, in wasted fills. */
export const SERVED_CREDIT = 8;
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
  /** This worker's declines, for its probes. */
  #declined = 0;

  /** Scores for `slots` registry slots (a power of two), to give every worker. */
  static allocate(slots: number): SharedArrayBuffer {
    return new SharedArrayBuffer(slots);
  }

  /**
   * `slots` is the invalidation registry's slot count (a power of two); `scores` the shared
   * scores (allocate), or absent for scores of this thread's own.
   */
  constructor(slots: number, scores?: SharedArrayBuffer) {
    this.#scores = new Int8Array(scores ?? FillAdmission.allocate(slots));
    if (this.#scores.length !== slots)
      throw new RangeError(`admission scores for ${this.#scores.length} slots, not ${slots}`);
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

  /** Is a table among `slots` wasting its fills (written faster than read again)? Counts nothing. */
  declines(slots: Int32Array): boolean {
    const scores = this.#scores;
    for (let i = 0; i < slots.length; i++) {
      if (scores[slots[i]! & this.#mask]! <= DECLINE_AT) return true;
    }
    return false;
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

  /**
   * RESET QUERY CACHE, or a table defined anew: start again with no history (every worker's
   * scores).
   */
  reset(): void {
    this.#scores.fill(0);
    this.#declined = 0;
  }
}
