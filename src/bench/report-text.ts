/**
 * The sweep as plain text, in the shape of the classic query-cache write-up: a throughput table
 * with targets as rows and thread counts as columns, then one line per run with the numbers that
 * explain it (qps per thread, latency, where the CPU went). Plain text so it can be pasted into an
 * issue or a mail as is.
 */
import type { NicecacheCost, StepResult, SweepResult } from './sweep-result.ts';

/** The thread counts a sweep covers, ascending: the ones asked for and any a step ran with. */
export function threadColumns(result: SweepResult): number[] {
  const all = new Set<number>(result.options.threads);
  for (const step of result.steps) all.add(step.threads);
  return [...all].sort((a, b) => a - b);
}

/**
 * The targets in the order they were declared, plus any a step names without a declaration, so a
 * damaged result still shows every number it holds.
 */
export function targetNames(result: SweepResult): string[] {
  const names = result.targets.map((target) => target.name);
  for (const step of result.steps) if (!names.includes(step.target)) names.push(step.target);
  return names;
}

/** The step of one target at one thread count; the last one if a step was repeated. */
export function stepAt(result: SweepResult, target: string, threads: number): StepResult | null {
  let found: StepResult | null = null;
  for (const step of result.steps) {
    if (step.target === target && step.threads === threads) found = step;
  }
  return found;
}

/** One line saying what was measured, which every report starts with. */
export function describeWorkload(result: SweepResult): string {
  const { options } = result;
  const tables = `${options.tables} ${options.tables === 1 ? 'table' : 'tables'}`;
  const trx = options.skipTrx ? ', no BEGIN/COMMIT' : '';
  const placement =
    result.cpus === null
      ? 'colocated'
      : `split: server on CPU ${result.cpus.server}, client and proxy on CPU ${result.cpus.clientAndProxy}`;
  return (
    `${options.workload}: ${tables} of ${options.tableSize} rows, ` +
    `${formatSeconds(options.durationSeconds)} per step after ` +
    `${formatSeconds(options.warmupSeconds)} warm-up, ${options.distribution} distribution, ` +
    `ps-mode ${options.psMode}${trx}, ${options.driver} driver, ${placement}`
  );
}

/**
 * The seed's table: throughput in transactions per second, rounded, one row per target and one
 * column per thread count; then each target's throughput relative to the first target, which is
 * the comparison the experiment is about (the first target is the baseline, e.g. the server
 * with its query cache off).
 */
export function seedTable(result: SweepResult): string {
  const threads = threadColumns(result);
  const targets = targetNames(result);
  const lines = [describeWorkload(result), '', 'Throughput in transactions per second:'];
  lines.push(
    ...alignTable(
      threads.map(String),
      targets.map((target) => ({
        label: target,
        cells: threads.map((count) => {
          const step = stepAt(result, target, count);
          return step === null ? '-' : String(Math.round(step.tps));
        }),
      })),
    ),
  );
  const [baseline, ...others] = targets;
  if (baseline !== undefined && others.length > 0) {
    lines.push('', `Throughput relative to ${baseline}:`);
    lines.push(
      ...alignTable(
        threads.map(String),
        others.map((target) => ({
          label: `${target} / ${baseline}`,
          cells: threads.map((count) => {
            const step = stepAt(result, target, count);
            const base = stepAt(result, baseline, count);
            if (step === null || base === null || !(base.tps > 0)) return '-';
            return (step.tps / base.tps).toFixed(2);
          }),
        })),
      ),
    );
  }
  lines.push(...costTables(result));
  return lines.join('\n');
}

/**
 * What the proxy and the server spent, beside the Node floor of the same run: the floor's CPU per
 * query; each nicecache target's proxy CPU per query, per hit and per miss as multiples of it;
 * every target's server CPU per transaction, and through nicecache as a share of direct.
 */
function costTables(result: SweepResult): string[] {
  const threads = threadColumns(result);
  const header = threads.map(String);
  const lines: string[] = [];
  const floors = threads.map(
    (count) =>
      result.probes.find((probe) => probe.kind === 'node-floor' && probe.threads === count) ?? null,
  );
  if (floors.some((probe) => probe !== null)) {
    lines.push('', 'Node floor (point selects, same sessions), CPU µs per query:');
    lines.push(
      ...alignTable(header, [
        {
          label: 'node floor',
          cells: floors.map((probe) => fixed(probe?.cpuMicrosPerQuery ?? null, 1)),
        },
      ]),
    );
  }
  const nicecacheTargets = result.targets
    .filter((target) => target.kind === 'nicecache')
    .map((target) => target.name);
  const costAt = (target: string, count: number): NicecacheCost | null =>
    stepAt(result, target, count)?.nicecache ?? null;
  if (nicecacheTargets.length > 0 && floors.some((probe) => probe !== null)) {
    lines.push('', 'Proxy CPU ÷ Node floor (a miss is what the step spent beyond its hits):');
    const rows: TableRow[] = [];
    for (const target of nicecacheTargets) {
      const row = (label: string, pick: (cost: NicecacheCost) => number | null): TableRow => ({
        label: `${target} ${label}`,
        cells: threads.map((count) => {
          const cost = costAt(target, count);
          return fixed(cost === null ? null : pick(cost), 2);
        }),
      });
      rows.push(
        row('per query', (cost) => cost.perQueryToFloor),
        row('per hit', (cost) => cost.perHitToFloor),
        row('per miss', (cost) => cost.perMissToFloor),
        {
          label: `${target} hits ÷ queries`,
          cells: threads.map((count) => {
            const step = stepAt(result, target, count);
            const cost = step?.nicecache ?? null;
            if (step === null || cost === null || step.queries === 0) return '-';
            return `${Math.round((100 * cost.hits) / step.queries)}%`;
          }),
        },
      );
    }
    lines.push(...alignTable(header, rows));
  }
  const targets = targetNames(result);
  if (result.steps.some((step) => step.serverCpuMicrosPerTransaction !== null)) {
    lines.push('', 'Server CPU per transaction, µs (through nicecache ÷ direct below):');
    const rows: TableRow[] = targets.map((target) => ({
      label: target,
      cells: threads.map((count) =>
        fixed(stepAt(result, target, count)?.serverCpuMicrosPerTransaction ?? null, 0),
      ),
    }));
    for (const target of nicecacheTargets) {
      const direct = result.steps.find((step) => step.target === target)?.nicecache?.direct;
      if (direct === undefined) continue;
      rows.push({
        label: `${target} / ${direct}`,
        cells: threads.map((count) => fixed(costAt(target, count)?.serverCpuToDirect ?? null, 2)),
      });
    }
    lines.push(...alignTable(header, rows));
  }
  return lines;
}

function fixed(value: number | null, digits: number): string {
  return value === null ? '-' : value.toFixed(digits);
}

/** One line per step, in the order the steps ran. */
export function perRunLines(result: SweepResult): string[] {
  return result.steps.map(perRunLine);
}

function perRunLine(step: StepResult): string {
  const { system, queryCache } = step;
  const parts = [
    `${step.target}: ${plural(step.threads, 'thread')}`,
    formatSeconds(step.seconds),
    `${step.queries} queries`,
    `${step.qps.toFixed(1)} qps`,
    `${(step.threads > 0 ? step.qps / step.threads : 0).toFixed(1)} qps per thread`,
    `${step.tps.toFixed(1)} tps`,
    `p95 ${formatMs(step.latencyMs.p95)}`,
    // In vmstat's order and rounding, so the line reads like the seed's vmstat excerpt.
    `cpu us/sy/id/wa ${[system.user, system.system, system.idle, system.iowait]
      .map((share) => Math.round(share))
      .join('/')}`,
    `${Math.round(system.contextSwitchesPerSecond)} cs/s`,
    // The driver runs on the same machine; its share is CPU the server did not get.
    `driver cpu ${Math.round(step.driverCpu)}%`,
  ];
  if (step.proxyCpuMicrosPerQuery !== null) {
    parts.push(`proxy ${step.proxyCpuMicrosPerQuery.toFixed(1)} µs cpu per query`);
  }
  if (step.serverCpuMicrosPerTransaction !== null) {
    parts.push(`server ${step.serverCpuMicrosPerTransaction.toFixed(0)} µs cpu per transaction`);
  }
  const cost = step.nicecache;
  if (cost !== null) {
    parts.push(`${cost.hits} hits`, `${cost.misses} misses`);
    const againstFloor = (micros: number | null, toFloor: number | null): string =>
      micros === null
        ? 'n/a'
        : `${micros.toFixed(1)} µs${toFloor === null ? '' : ` (${toFloor.toFixed(2)}× floor)`}`;
    parts.push(
      `proxy per hit ${againstFloor(cost.proxyCpuMicrosPerHit, cost.perHitToFloor)}`,
      `per miss ${againstFloor(cost.proxyCpuMicrosPerMiss, cost.perMissToFloor)}`,
    );
    if (cost.serverCpuToDirect !== null) {
      parts.push(`server cpu ${cost.serverCpuToDirect.toFixed(2)}× ${cost.direct}`);
    }
  }
  if (queryCache !== null) {
    const ratio =
      queryCache.hitRatio === null ? 'n/a' : `${(queryCache.hitRatio * 100).toFixed(1)}%`;
    parts.push(`query cache ${queryCache.hits} hits`, `hit ratio ${ratio}`);
    if (queryCache.lowmemPrunes > 0) parts.push(`${queryCache.lowmemPrunes} lowmem prunes`);
    if ((queryCache.admissionDeclined ?? 0) > 0) {
      parts.push(`${queryCache.admissionDeclined} fills declined`);
    }
    if (queryCache.lockWaits !== null) {
      const waited =
        queryCache.lockWaitSeconds === null ? '' : ` (${queryCache.lockWaitSeconds.toFixed(3)} s)`;
      parts.push(`${queryCache.lockWaits} lock waits${waited}`);
    }
  }
  // Only when there were any: a clean run's line stays short.
  if (step.errors > 0) parts.push(plural(step.errors, 'error'));
  if (step.ignoredErrors > 0) parts.push(plural(step.ignoredErrors, 'ignored error'));
  if (step.reconnects > 0) parts.push(plural(step.reconnects, 'reconnect'));
  return parts.join(', ');
}

/**
 * The terminal line for a finished step. `index` counts from 0 in the order steps run; `total`
 * is how many the sweep has. Columns are padded so consecutive lines line up; `targetWidth` is
 * the width of the target column (the longest target name, when the caller knows it).
 */
export function progressLine(
  step: StepResult,
  index: number,
  total: number,
  targetWidth = 16,
): string {
  const position = String(index + 1).padStart(String(total).length);
  const errors =
    step.ignoredErrors > 0 ? `${step.errors} (+${step.ignoredErrors} ignored)` : `${step.errors}`;
  return [
    `[${position}/${total}]`,
    `${String(step.threads).padStart(3)} ${step.threads === 1 ? 'thread ' : 'threads'}`,
    step.target.padEnd(targetWidth),
    `${step.tps.toFixed(1).padStart(9)} tps`,
    `${String(Math.round(step.qps)).padStart(8)} qps`,
    `p95 ${formatMs(step.latencyMs.p95)}`,
    `idle ${Math.round(step.system.idle)}%`,
    `errors ${errors}`,
  ].join('  ');
}

/** Milliseconds with two decimals below 1 ms, where one decimal would hide the difference. */
export function formatMs(ms: number): string {
  return `${ms < 1 ? ms.toFixed(2) : ms.toFixed(1)} ms`;
}

function formatSeconds(seconds: number): string {
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

interface TableRow {
  label: string;
  cells: string[];
}

/**
 * A label column, left-aligned, then right-aligned columns at least 5 characters wide with a
 * space between, as in the seed: every line comes out the same length.
 */
function alignTable(header: string[], rows: TableRow[]): string[] {
  const labelWidth = Math.max(0, ...rows.map((row) => row.label.length));
  const widths = header.map((title, column) =>
    Math.max(5, title.length, ...rows.map((row) => (row.cells[column] ?? '').length)),
  );
  const line = (label: string, cells: string[]): string =>
    label.padEnd(labelWidth) +
    widths.map((width, column) => ' ' + (cells[column] ?? '').padStart(width)).join('');
  return [line('', header), ...rows.map((row) => line(row.label, row.cells))];
}
