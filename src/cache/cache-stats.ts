/**
 * The query cache's counters, for the whole proxy. Each worker writes only its own region of one
 * SharedArrayBuffer (plain stores, no atomics: one writer per word), and whoever answers
 * SHOW STATUS sums the regions. A hit costs one increment and no cross-thread traffic.
 *
 * FLUSH STATUS does not touch the workers' regions (another thread may be adding to them): it
 * records the totals at that moment in one more region, and SHOW STATUS shows what was added
 * since. As on the server, it resets the counters and leaves the gauges (results and memory in
 * the cache now) alone.
 *
 * Each region also holds the latency histograms /metrics serves (Latency): a bucket's count, and
 * the sum of the observations, per histogram. They are totals Prometheus takes differences of:
 * FLUSH STATUS leaves them alone.
 */

/** Counters, each one word per worker. */
export const Counter = {
  /** Qcache_hits: results served from the cache. */
  HITS: 0,
  /** Qcache_inserts: results stored. */
  INSERTS: 1,
  /** Qcache_not_cached: SELECTs sent to the server that could not be stored. */
  NOT_CACHED: 2,
  /** Qcache_lowmem_prunes: results evicted to make room. */
  LOWMEM_PRUNES: 3,
  /** Results in the store now (a gauge). */
  QUERIES_IN_CACHE: 4,
  /** Bytes charged to the store now (a gauge). */
  BYTES_USED: 5,
  /** Writes that invalidated tables. */
  INVALIDATIONS: 6,
  /** Writes whose tables could not be known, which invalidated everything. */
  INVALIDATIONS_ALL: 7,
  /** Results not stored because they grew past --query-cache-limit. */
  TOO_LARGE: 8,
  /** Results not stored because a write finished while they were read. */
  STALE_FILLS_REFUSED: 9,
  /** Stored results found but not served: a write, a snapshot or a TTL made them unusable. */
  STALE_HITS_REFUSED: 10,
  /** SELECTs that waited for an identical one in flight and were served its result. */
  SINGLE_FLIGHT_HITS: 11,
  /**
   * Cacheable SELECTs relayed without a copy: results over their tables die unread, made stale
   * by writes before anyone reads them again (fill-admission.ts). Also counted in NOT_CACHED.
   */
  ADMISSION_DECLINED: 12,
  /** BEGINs answered by the proxy, the transaction begun without the server (see deferred-transaction.ts). */
  TRANSACTIONS_DEFERRED: 13,
  /** Of those, transactions that ended in the proxy too: the server never saw them. */
  TRANSACTIONS_IN_PROXY: 14,
  /** Deferred transactions whose hits no longer matched the server's snapshot: rolled back, ER_CHECKREAD. */
  TRANSACTION_CONFLICTS: 15,
  /**
   * COMMITs of read-only transactions answered by the proxy, the server's sent with the
   * session's next command (or within the worker's COMMIT_FLUSH_MS when there is none).
   */
  COMMITS_DEFERRED: 16,
  /** Client connections accepted (counted with the cache on or off). */
  CONNECTIONS: 17,
  /** Client connections open now (a gauge). */
  CLIENTS_CONNECTED: 18,
  /** Clients told the server could not be reached (connect, greeting or early loss). */
  BACKEND_UNREACHABLE: 19,
  /**
   * Cacheable SELECTs relayed without a copy because the store was nearly full and their
   * statement had not missed recently: a result read once would only push out one read again
   * (query-cache.ts, admits). Also counted in NOT_CACHED.
   */
  ADMISSION_UNSEEN: 20,
  /**
   * Sessions whose client left while writes it sent still ran on the server (a gauge): their
   * tables stay marked as written until the server answers them or closes the connection.
   */
  SESSIONS_LINGERING: 21,
} as const;
const COUNTERS = 22;

/** Why a SELECT was sent to the server without consulting the cache. */
export const Bypass = {
  /** The server's rules: non-deterministic functions, variables, system tables, ... */
  UNCACHEABLE: 0,
  /** SQL_NO_CACHE, or query_cache_type DEMAND without SQL_CACHE, or the cache is off. */
  NOT_REQUESTED: 1,
  /** A locking read, SERIALIZABLE, or READ UNCOMMITTED. */
  ISOLATION: 2,
  /** The session wrote the table in its open transaction. */
  OWN_WRITES: 3,
  /** The session has a temporary table (or may have one) of that name. */
  TEMPORARY_TABLE: 4,
  /** A table the schema metadata does not know (a new table or view, or metadata is reloading). */
  UNKNOWN_TABLE: 5,
  /** The session's state (character set, sql_mode, ...) is unknown or unsupported. */
  SESSION_STATE: 6,
  /** The reply was an error, had warnings, or was not a single result set. */
  REPLY: 7,
  /** The binlog follower is disconnected or behind its lag bound: writes elsewhere may be unseen. */
  BINLOG_BEHIND: 8,
} as const;
export const BYPASS_NAMES = [
  'uncacheable',
  'not_requested',
  'isolation',
  'own_writes',
  'temporary_table',
  'unknown_table',
  'session_state',
  'reply',
  'binlog_behind',
] as const;

/** The latency histograms. */
export const Latency = {
  /**
   * Commands the proxy answered itself (hits, mostly), from routing to the reply handed to the
   * socket: timed for one routed command in ANSWER_SAMPLE_EVERY (a clock read on every hit
   * would be the hit path's one timer read).
   */
  ANSWER: 0,
  /** Cacheable SELECTs that missed, from being sent to the server to the end of its reply. */
  MISS: 1,
} as const;
export const LATENCY_NAMES = ['answer', 'miss'] as const;
/** One routed command in this many has its answer timed, when the proxy answers it. */
export const ANSWER_SAMPLE_EVERY = 64;

/** Upper bounds of the latency buckets, in seconds (Prometheus's `le`); +Inf follows. */
export const LATENCY_BOUNDS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
  0.25, 0.5, 1, 2.5, 5, 10,
] as const;
/** Per histogram: a count per bucket (+Inf last), then the sum. */
const LATENCY_WORDS = LATENCY_BOUNDS.length + 2;
const LATENCY_BASE = COUNTERS + BYPASS_NAMES.length;
const WORDS_PER_WORKER = LATENCY_BASE + LATENCY_NAMES.length * LATENCY_WORDS;

/** A histogram summed over every worker: cumulative counts per bound (+Inf last), as Prometheus has them. */
export interface LatencyTotals {
  cumulative: number[];
  count: number;
  sum: number;
}

/** Gauges say how things are now: FLUSH STATUS leaves them alone, as the server's NOFLUSH ones. */
const GAUGES: ReadonlySet<number> = new Set([
  Counter.QUERIES_IN_CACHE,
  Counter.BYTES_USED,
  Counter.CLIENTS_CONNECTED,
  Counter.SESSIONS_LINGERING,
]);

export type CounterName = keyof typeof Counter;

export class CacheStats {
  readonly buffer: SharedArrayBuffer;
  readonly workers: number;
  /** This thread's region. */
  readonly worker: number;
  readonly #words: Float64Array;
  readonly #base: number;

  readonly #flushedBase: number;

  /** One region per worker, and one for the totals at the last FLUSH STATUS. */
  static allocate(workers: number): SharedArrayBuffer {
    return new SharedArrayBuffer((workers + 1) * WORDS_PER_WORKER * Float64Array.BYTES_PER_ELEMENT);
  }

  /** `worker` is this thread's region; the main thread may pass 0 to read only. */
  constructor(buffer: SharedArrayBuffer, worker: number) {
    this.buffer = buffer;
    this.#words = new Float64Array(buffer);
    this.workers = this.#words.length / WORDS_PER_WORKER - 1;
    this.worker = worker;
    this.#base = worker * WORDS_PER_WORKER;
    this.#flushedBase = this.workers * WORDS_PER_WORKER;
  }

  add(counter: number, amount = 1): void {
    this.#words[this.#base + counter]! += amount;
  }

  set(counter: number, value: number): void {
    this.#words[this.#base + counter] = value;
  }

  bypass(reason: number): void {
    this.#words[this.#base + COUNTERS + reason]! += 1;
  }

  /** One observation of `seconds` in a Latency histogram. */
  observe(histogram: number, seconds: number): void {
    let bucket = 0;
    while (bucket < LATENCY_BOUNDS.length && seconds > LATENCY_BOUNDS[bucket]!) bucket++;
    const at = this.#base + LATENCY_BASE + histogram * LATENCY_WORDS;
    this.#words[at + bucket]! += 1;
    this.#words[at + LATENCY_WORDS - 1]! += seconds;
  }

  /** A Latency histogram over every worker. */
  latency(histogram: number): LatencyTotals {
    const at = LATENCY_BASE + histogram * LATENCY_WORDS;
    const cumulative: number[] = [];
    let count = 0;
    for (let bucket = 0; bucket <= LATENCY_BOUNDS.length; bucket++) {
      count += this.total(at + bucket);
      cumulative.push(count);
    }
    return { cumulative, count, sum: this.total(at + LATENCY_WORDS - 1) };
  }

  /** One worker's value. */
  of(worker: number, counter: number): number {
    return this.#words[worker * WORDS_PER_WORKER + counter]!;
  }

  /** The sum over every worker. */
  total(counter: number): number {
    let sum = 0;
    for (let w = 0; w < this.workers; w++) sum += this.#words[w * WORDS_PER_WORKER + counter]!;
    return sum;
  }

  totalBypass(reason: number): number {
    return this.total(COUNTERS + reason);
  }

  /** What SHOW STATUS shows: the total, less what it was at the last FLUSH STATUS. */
  shown(counter: number): number {
    return this.total(counter) - this.#words[this.#flushedBase + counter]!;
  }

  shownBypass(reason: number): number {
    return this.shown(COUNTERS + reason);
  }

  /** FLUSH STATUS: every counter starts again from zero; the gauges stay. */
  flush(): void {
    for (let word = 0; word < WORDS_PER_WORKER; word++) {
      if (!GAUGES.has(word)) this.#words[this.#flushedBase + word] = this.total(word);
    }
  }
}
