/**
 * What a sweep measures, as the reports (text, JSON, HTML) read it. The JSON report is this
 * object as is, so its shape is the report's schema: change it only with `version`.
 */

export const SWEEP_RESULT_VERSION = 3;

/** CPU shares (percent of all cores) and context switches, from /proc/stat over one step. */
export interface SystemSample {
  user: number;
  system: number;
  idle: number;
  iowait: number;
  contextSwitchesPerSecond: number;
}

/** The server's query-cache counters over one step (deltas), where the target exposes them. */
export interface QueryCacheSample {
  hits: number;
  inserts: number;
  notCached: number;
  lowmemPrunes: number;
  /**
   * nicecache's Qcache_admission_declined: cacheable SELECTs relayed without being stored,
   * because results over their tables die unread. Absent for targets that do not report it.
   */
  admissionDeclined?: number;
  /** Com_select: SELECTs the server executed (a query-cache hit is not counted there). */
  selects: number;
  /** hits / (hits + selects), or null when nothing was read. */
  hitRatio: number | null;
  /** Waits on the query cache's lock from performance_schema, when the server records them. */
  lockWaits: number | null;
  lockWaitSeconds: number | null;
}

/** One target at one thread count. */
export interface StepResult {
  target: string;
  threads: number;
  /** Measured seconds (warm-up excluded). */
  seconds: number;
  transactions: number;
  queries: number;
  tps: number;
  qps: number;
  /** Transaction latency in milliseconds. */
  latencyMs: { p50: number; p95: number; p99: number; max: number; avg: number };
  errors: number;
  /** Errors sysbench also ignores and retries (deadlocks, lock wait timeouts). */
  ignoredErrors: number;
  reconnects: number;
  /** The benchmark driver's own CPU use, as a share of all cores (percent). */
  driverCpu: number;
  system: SystemSample;
  queryCache: QueryCacheSample | null;
  /** For a nicecache target: the proxy's CPU time per query in microseconds. */
  proxyCpuMicrosPerQuery: number | null;
  /**
   * The database server's CPU time per transaction in microseconds (null when it runs elsewhere):
   * for a nicecache target, what the cache left the server to do.
   */
  serverCpuMicrosPerTransaction: number | null;
  /** For a nicecache target: its cost split by hits and misses, against the floor and direct. */
  nicecache: NicecacheCost | null;
}

/**
 * What a nicecache target cost at one thread count, set against the Node floor and the hit probe
 * measured at the same thread count in the same run, and against the target it fronts.
 */
export interface NicecacheCost {
  /** The target it fronts: its step at the same thread count is "direct". */
  direct: string;
  /** Queries the proxy answered from its cache (its own Qcache_hits over the step). */
  hits: number;
  /** Queries it sent to the server: SELECTs it did not answer, BEGIN, COMMIT, writes. */
  misses: number;
  /** The Node floor's CPU per query at this thread count (its probe). */
  floorCpuMicrosPerQuery: number | null;
  /** proxyCpuMicrosPerQuery ÷ the floor's. */
  perQueryToFloor: number | null;
  /** The hit probe's proxy CPU per query at this thread count (null unless nearly all hit). */
  proxyCpuMicrosPerHit: number | null;
  perHitToFloor: number | null;
  /**
   * The step's proxy CPU left once its hits are charged at the probe's cost, per miss: an
   * estimate (the step's hits may be larger results than the probe's one row).
   */
  proxyCpuMicrosPerMiss: number | null;
  perMissToFloor: number | null;
  /** serverCpuMicrosPerTransaction ÷ the direct step's: the share of the server's work left. */
  serverCpuToDirect: number | null;
}

/**
 * A short probe at one thread count, point selects over a few rows: against the Node floor (the
 * least a Node server spends per request/response) or through a nicecache target (every query a
 * hit once each row is cached).
 */
export interface ProbeResult {
  kind: 'node-floor' | 'hits';
  /** The nicecache target of a hit probe; null for the floor. */
  target: string | null;
  threads: number;
  seconds: number;
  queries: number;
  qps: number;
  /** The answering process's (floor or proxy) CPU per query, in microseconds. */
  cpuMicrosPerQuery: number | null;
  /** A hit probe's hits ÷ queries, from the proxy's counters; null for the floor. */
  hitRatio: number | null;
  errors: number;
}

export interface TargetDescription {
  name: string;
  /** How it was given: a URL (password hidden), `mariadb:options`, or `nicecache:target`. */
  spec: string;
  kind: 'url' | 'mariadb' | 'nicecache';
  /** The server behind it: version string. */
  serverVersion: string;
  /** Server options of a throwaway MariaDB, as passed. */
  serverOptions: Record<string, string> | null;
  /** The CPUs the server's threads were allowed (Cpus_allowed_list), when it runs here. */
  serverCpus: string | null;
  /** The same for the proxy of a nicecache target. */
  proxyCpus: string | null;
}

export interface SweepResult {
  version: typeof SWEEP_RESULT_VERSION;
  startedAt: string;
  finishedAt: string;
  /** The command line that produced it. */
  command: string;
  machine: {
    hostname: string;
    cpus: number;
    cpuModel: string;
    memoryBytes: number;
    os: string;
    node: string;
    nicecache: string;
  };
  options: {
    driver: 'builtin' | 'sysbench';
    workload: string;
    threads: number[];
    durationSeconds: number;
    warmupSeconds: number;
    tables: number;
    tableSize: number;
    rangeSize: number;
    skipTrx: boolean;
    psMode: 'auto' | 'disable';
    distribution: string;
    topology: 'colocated' | 'split';
    /** Measured seconds of each probe (after half a second of warm-up). */
    probeSeconds: number;
  };
  /** Under `split`: the CPUs asked for each side; null when colocated. */
  cpus: { server: string; clientAndProxy: string } | null;
  /** The CPUs the bench's own threads (the load generator) were allowed. */
  clientCpus: string;
  targets: TargetDescription[];
  /** In the order they ran: thread counts ascending, targets interleaved within each. */
  steps: StepResult[];
  /** The Node floor and hit probes, one of each kind per thread count (and nicecache target). */
  probes: ProbeResult[];
}
