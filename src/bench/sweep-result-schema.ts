/**
 * Checks that a value (typically a JSON report read back) is a `SweepResult` of this version:
 * every field present with its type, numbers that count or measure finite and non-negative, and
 * the cross-references the reports rely on (steps naming declared targets and thread counts, in
 * the order the sweep runs them). Fields the type does not declare are reported too, so a change
 * of shape cannot slip past without a new `version`.
 *
 * Written by hand rather than with a schema library to keep the runtime free of dependencies.
 */
import { SWEEP_RESULT_VERSION } from './sweep-result.ts';

/** The problems found, each as `path: what is wrong`; empty when the value is valid. */
export function validateSweepResult(value: unknown): string[] {
  const problems: string[] = [];
  const check = new Checker(problems);
  const root = check.object(value, '', [
    'version',
    'startedAt',
    'finishedAt',
    'command',
    'machine',
    'options',
    'cpus',
    'clientCpus',
    'targets',
    'steps',
    'probes',
  ]);
  if (root === null) return problems;

  if (root.version === undefined) check.problem('version', 'missing');
  else if (root.version !== SWEEP_RESULT_VERSION) {
    check.problem('version', `expected ${SWEEP_RESULT_VERSION}, got ${describe(root.version)}`);
  }
  const started = check.timestamp(root.startedAt, 'startedAt');
  const finished = check.timestamp(root.finishedAt, 'finishedAt');
  if (started !== null && finished !== null && finished < started) {
    problems.push('finishedAt: earlier than startedAt');
  }
  check.string(root.command, 'command');

  const machine = check.object(root.machine, 'machine', [
    'hostname',
    'cpus',
    'cpuModel',
    'memoryBytes',
    'os',
    'node',
    'nicecache',
  ]);
  if (machine !== null) {
    check.string(machine.hostname, 'machine.hostname');
    check.count(machine.cpus, 'machine.cpus', 1);
    check.string(machine.cpuModel, 'machine.cpuModel');
    check.count(machine.memoryBytes, 'machine.memoryBytes');
    check.string(machine.os, 'machine.os');
    check.string(machine.node, 'machine.node');
    check.string(machine.nicecache, 'machine.nicecache');
  }

  const threads = validateOptions(check, root.options);
  if (root.cpus !== null) {
    const plan = check.object(root.cpus, 'cpus', ['server', 'clientAndProxy']);
    if (plan !== null) {
      check.cpuList(plan.server, 'cpus.server');
      check.cpuList(plan.clientAndProxy, 'cpus.clientAndProxy');
    }
  }
  check.cpuList(root.clientCpus, 'clientCpus');
  const targets = validateTargets(check, root.targets);
  validateSteps(check, root.steps, targets, threads);
  validateProbes(check, root.probes, targets, threads);
  return problems;
}

/** Returns the declared thread counts, or null when they cannot be read. */
function validateOptions(check: Checker, value: unknown): Set<number> | null {
  const options = check.object(value, 'options', [
    'driver',
    'workload',
    'threads',
    'durationSeconds',
    'warmupSeconds',
    'tables',
    'tableSize',
    'rangeSize',
    'skipTrx',
    'psMode',
    'distribution',
    'topology',
    'probeSeconds',
  ]);
  if (options === null) return null;
  check.oneOf(options.driver, 'options.driver', ['builtin', 'sysbench']);
  check.string(options.workload, 'options.workload');
  const list = check.array(options.threads, 'options.threads');
  const threads = list === null ? null : new Set<number>();
  if (list !== null && threads !== null) {
    if (list.length === 0) check.problem('options.threads', 'empty');
    let previous = 0;
    list.forEach((count, index) => {
      const path = `options.threads[${index}]`;
      if (!check.count(count, path, 1)) return;
      if (count <= previous) check.problem(path, 'thread counts must be ascending and distinct');
      previous = count;
      threads.add(count);
    });
  }
  check.measure(options.durationSeconds, 'options.durationSeconds', { positive: true });
  check.measure(options.warmupSeconds, 'options.warmupSeconds');
  check.count(options.tables, 'options.tables', 1);
  check.count(options.tableSize, 'options.tableSize');
  check.count(options.rangeSize, 'options.rangeSize');
  check.boolean(options.skipTrx, 'options.skipTrx');
  check.oneOf(options.psMode, 'options.psMode', ['auto', 'disable']);
  check.string(options.distribution, 'options.distribution');
  check.oneOf(options.topology, 'options.topology', ['colocated', 'split']);
  check.measure(options.probeSeconds, 'options.probeSeconds', { positive: true });
  return threads;
}

/** Returns the declared target names, or null when the list cannot be read. */
function validateTargets(check: Checker, value: unknown): Set<string> | null {
  const list = check.array(value, 'targets');
  if (list === null) return null;
  const names = new Set<string>();
  list.forEach((item, index) => {
    const path = `targets[${index}]`;
    const target = check.object(item, path, [
      'name',
      'spec',
      'kind',
      'serverVersion',
      'serverOptions',
      'serverCpus',
      'proxyCpus',
    ]);
    if (target === null) return;
    if (check.string(target.name, `${path}.name`)) {
      if (target.name === '') check.problem(`${path}.name`, 'empty');
      else if (names.has(target.name)) check.problem(`${path}.name`, `'${target.name}' repeated`);
      names.add(target.name);
    }
    check.string(target.spec, `${path}.spec`);
    check.oneOf(target.kind, `${path}.kind`, ['url', 'mariadb', 'nicecache']);
    check.string(target.serverVersion, `${path}.serverVersion`);
    if (target.serverOptions !== null) {
      const options = check.object(target.serverOptions, `${path}.serverOptions`, null);
      if (options !== null) {
        for (const [name, option] of Object.entries(options)) {
          check.string(option, `${path}.serverOptions.${name}`);
        }
      }
    }
    if (target.serverCpus !== null) check.cpuList(target.serverCpus, `${path}.serverCpus`);
    if (target.proxyCpus !== null) check.cpuList(target.proxyCpus, `${path}.proxyCpus`);
  });
  return names;
}

function validateSteps(
  check: Checker,
  value: unknown,
  targets: Set<string> | null,
  threads: Set<number> | null,
): void {
  const list = check.array(value, 'steps');
  if (list === null) return;
  const seen = new Set<string>();
  let previousThreads = 0;
  list.forEach((item, index) => {
    const path = `steps[${index}]`;
    const step = check.object(item, path, [
      'target',
      'threads',
      'seconds',
      'transactions',
      'queries',
      'tps',
      'qps',
      'latencyMs',
      'errors',
      'ignoredErrors',
      'reconnects',
      'driverCpu',
      'system',
      'queryCache',
      'proxyCpuMicrosPerQuery',
      'serverCpuMicrosPerTransaction',
      'nicecache',
    ]);
    if (step === null) return;
    if (check.string(step.target, `${path}.target`) && targets !== null) {
      if (!targets.has(step.target)) {
        check.problem(`${path}.target`, `'${step.target}' is not a declared target`);
      }
    }
    if (check.count(step.threads, `${path}.threads`, 1)) {
      if (threads !== null && !threads.has(step.threads)) {
        check.problem(`${path}.threads`, `${step.threads} is not in options.threads`);
      }
      // The sweep runs every target at one thread count before the next, ascending.
      if (step.threads < previousThreads) {
        check.problem(
          `${path}.threads`,
          `${step.threads} after ${previousThreads}: steps must run in ascending thread order`,
        );
      }
      previousThreads = step.threads;
      if (typeof step.target === 'string') {
        const key = `${step.target}\u0000${step.threads}`;
        if (seen.has(key)) {
          check.problem(path, `a second step of '${step.target}' at ${step.threads} threads`);
        }
        seen.add(key);
      }
    }
    check.measure(step.seconds, `${path}.seconds`, { positive: true });
    check.count(step.transactions, `${path}.transactions`);
    check.count(step.queries, `${path}.queries`);
    check.measure(step.tps, `${path}.tps`);
    check.measure(step.qps, `${path}.qps`);
    const latency = check.object(step.latencyMs, `${path}.latencyMs`, [
      'p50',
      'p95',
      'p99',
      'max',
      'avg',
    ]);
    if (latency !== null) {
      for (const key of ['p50', 'p95', 'p99', 'max', 'avg']) {
        check.measure(latency[key], `${path}.latencyMs.${key}`);
      }
    }
    check.count(step.errors, `${path}.errors`);
    check.count(step.ignoredErrors, `${path}.ignoredErrors`);
    check.count(step.reconnects, `${path}.reconnects`);
    check.measure(step.driverCpu, `${path}.driverCpu`);
    validateSystem(check, step.system, `${path}.system`);
    if (step.queryCache !== null) validateQueryCache(check, step.queryCache, `${path}.queryCache`);
    if (step.proxyCpuMicrosPerQuery !== null) {
      check.measure(step.proxyCpuMicrosPerQuery, `${path}.proxyCpuMicrosPerQuery`);
    }
    if (step.serverCpuMicrosPerTransaction !== null) {
      check.measure(step.serverCpuMicrosPerTransaction, `${path}.serverCpuMicrosPerTransaction`);
    }
    if (step.nicecache !== null) validateNicecacheCost(check, step.nicecache, `${path}.nicecache`);
  });
}

const NICECACHE_RATIOS = [
  'floorCpuMicrosPerQuery',
  'perQueryToFloor',
  'proxyCpuMicrosPerHit',
  'perHitToFloor',
  'proxyCpuMicrosPerMiss',
  'perMissToFloor',
  'serverCpuToDirect',
];

function validateNicecacheCost(check: Checker, value: unknown, path: string): void {
  const cost = check.object(value, path, ['direct', 'hits', 'misses', ...NICECACHE_RATIOS]);
  if (cost === null) return;
  check.string(cost.direct, `${path}.direct`);
  check.count(cost.hits, `${path}.hits`);
  check.count(cost.misses, `${path}.misses`);
  for (const key of NICECACHE_RATIOS) {
    if (cost[key] !== null) check.measure(cost[key], `${path}.${key}`);
  }
}

function validateProbes(
  check: Checker,
  value: unknown,
  targets: Set<string> | null,
  threads: Set<number> | null,
): void {
  const list = check.array(value, 'probes');
  if (list === null) return;
  const seen = new Set<string>();
  list.forEach((item, index) => {
    const path = `probes[${index}]`;
    const probe = check.object(item, path, [
      'kind',
      'target',
      'threads',
      'seconds',
      'queries',
      'qps',
      'cpuMicrosPerQuery',
      'hitRatio',
      'errors',
    ]);
    if (probe === null) return;
    if (check.oneOf(probe.kind, `${path}.kind`, ['node-floor', 'hits'])) {
      if (probe.kind === 'node-floor' && probe.target !== null) {
        check.problem(`${path}.target`, 'the Node floor probe names no target');
      }
      if (probe.kind === 'hits' && check.string(probe.target, `${path}.target`)) {
        if (targets !== null && !targets.has(probe.target)) {
          check.problem(`${path}.target`, `'${probe.target}' is not a declared target`);
        }
      }
    }
    if (check.count(probe.threads, `${path}.threads`, 1)) {
      if (threads !== null && !threads.has(probe.threads)) {
        check.problem(`${path}.threads`, `${probe.threads} is not in options.threads`);
      }
      const key = `${String(probe.kind)}\u0000${String(probe.target)}\u0000${probe.threads}`;
      if (seen.has(key)) check.problem(path, 'a second probe of the same kind and target');
      seen.add(key);
    }
    check.measure(probe.seconds, `${path}.seconds`, { positive: true });
    check.count(probe.queries, `${path}.queries`);
    check.measure(probe.qps, `${path}.qps`);
    if (probe.cpuMicrosPerQuery !== null) {
      check.measure(probe.cpuMicrosPerQuery, `${path}.cpuMicrosPerQuery`);
    }
    if (probe.hitRatio !== null) check.measure(probe.hitRatio, `${path}.hitRatio`, { max: 1 });
    check.count(probe.errors, `${path}.errors`);
  });
}

function validateSystem(check: Checker, value: unknown, path: string): void {
  const system = check.object(value, path, [
    'user',
    'system',
    'idle',
    'iowait',
    'contextSwitchesPerSecond',
  ]);
  if (system === null) return;
  for (const key of ['user', 'system', 'idle', 'iowait']) {
    check.measure(system[key], `${path}.${key}`, { max: 100 });
  }
  check.measure(system.contextSwitchesPerSecond, `${path}.contextSwitchesPerSecond`);
}

function validateQueryCache(check: Checker, value: unknown, path: string): void {
  const cache = check.object(value, path, [
    'hits',
    'inserts',
    'notCached',
    'lowmemPrunes',
    'admissionDeclined',
    'selects',
    'hitRatio',
    'lockWaits',
    'lockWaitSeconds',
  ]);
  if (cache === null) return;
  for (const key of ['hits', 'inserts', 'notCached', 'lowmemPrunes', 'selects']) {
    check.count(cache[key], `${path}.${key}`);
  }
  if (cache.admissionDeclined !== undefined)
    check.count(cache.admissionDeclined, `${path}.admissionDeclined`);
  if (cache.hitRatio !== null) check.measure(cache.hitRatio, `${path}.hitRatio`, { max: 1 });
  if (cache.lockWaits !== null) check.count(cache.lockWaits, `${path}.lockWaits`);
  if (cache.lockWaitSeconds !== null)
    check.measure(cache.lockWaitSeconds, `${path}.lockWaitSeconds`);
}

/**
 * Collects problems; each check returns whether the value passed. A field that is absent reaches
 * a check as `undefined` and is reported as missing, once, by the check of its type.
 */
class Checker {
  readonly #problems: string[];

  constructor(problems: string[]) {
    this.#problems = problems;
  }

  problem(path: string, message: string): void {
    this.#problems.push(`${path === '' ? '(root)' : path}: ${message}`);
  }

  /** A plain object with no keys but `keys` (null: any keys, for string maps). */
  object(value: unknown, path: string, keys: string[] | null): Record<string, unknown> | null {
    if (!this.#present(value, path)) return null;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.problem(path, `expected an object, got ${describe(value)}`);
      return null;
    }
    const record = value as Record<string, unknown>;
    if (keys !== null) {
      for (const key of Object.keys(record)) {
        if (!keys.includes(key))
          this.problem(`${path === '' ? '' : `${path}.`}${key}`, 'unexpected field');
      }
    }
    return record;
  }

  array(value: unknown, path: string): unknown[] | null {
    if (!this.#present(value, path)) return null;
    if (!Array.isArray(value)) {
      this.problem(path, `expected an array, got ${describe(value)}`);
      return null;
    }
    // Array.isArray says any[]; the elements are as unknown as the value was.
    return value as unknown[];
  }

  string(value: unknown, path: string): value is string {
    if (!this.#present(value, path)) return false;
    if (typeof value !== 'string') {
      this.problem(path, `expected a string, got ${describe(value)}`);
      return false;
    }
    return true;
  }

  boolean(value: unknown, path: string): value is boolean {
    if (!this.#present(value, path)) return false;
    if (typeof value !== 'boolean') {
      this.problem(path, `expected a boolean, got ${describe(value)}`);
      return false;
    }
    return true;
  }

  oneOf(value: unknown, path: string, allowed: string[]): boolean {
    if (!this.#present(value, path)) return false;
    if (typeof value !== 'string' || !allowed.includes(value)) {
      this.problem(path, `expected one of ${allowed.join(', ')}, got ${describe(value)}`);
      return false;
    }
    return true;
  }

  /** A kernel CPU list: `0`, `0-3`, `1,3`. */
  cpuList(value: unknown, path: string): boolean {
    if (!this.string(value, path)) return false;
    if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(value)) {
      this.problem(path, `expected a CPU list such as 0-1, got ${describe(value)}`);
      return false;
    }
    return true;
  }

  /** An ISO 8601 date and time; returns it in milliseconds, or null. */
  timestamp(value: unknown, path: string): number | null {
    if (!this.string(value, path)) return null;
    const time = Date.parse(value);
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value) || Number.isNaN(time)) {
      this.problem(path, `expected an ISO 8601 date and time, got ${describe(value)}`);
      return null;
    }
    return time;
  }

  /** A finite number, at least 0 (above 0 with `positive`), at most `max` when given. */
  measure(
    value: unknown,
    path: string,
    limits: { positive?: boolean; max?: number } = {},
  ): value is number {
    if (!this.#present(value, path)) return false;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.problem(path, `expected a finite number, got ${describe(value)}`);
      return false;
    }
    const positive = limits.positive === true;
    if (positive ? value <= 0 : value < 0) {
      this.problem(
        path,
        `expected a ${positive ? 'positive' : 'non-negative'} number, got ${value}`,
      );
      return false;
    }
    // Shares computed as ratios can land a rounding error past their limit.
    if (limits.max !== undefined && value > limits.max * (1 + 1e-9)) {
      this.problem(path, `expected at most ${limits.max}, got ${value}`);
      return false;
    }
    return true;
  }

  /** A whole number, at least `min`. */
  count(value: unknown, path: string, min = 0): value is number {
    if (!this.#present(value, path)) return false;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      this.problem(path, `expected a whole number, got ${describe(value)}`);
      return false;
    }
    if (value < min) {
      this.problem(path, `expected at least ${min}, got ${value}`);
      return false;
    }
    return true;
  }

  #present(value: unknown, path: string): boolean {
    if (value === undefined) this.problem(path, 'missing');
    return value !== undefined;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
