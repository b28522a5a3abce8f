/**
 * What a sweep measures, as the reports (text, JSON, HTML) read it. The JSON report is this
 * object as is, so its shape is the report's schema: change it only with `version`.
 */

export const SWEEP_RESULT_VERSION = 2;

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
  };
  targets: TargetDescription[];
  /** In the order they ran: thread counts ascending, targets interleaved within each. */
  steps: StepResult[];
}
