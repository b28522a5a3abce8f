/**
 * A sweep: for each thread count, every target in turn (the order rotating from one thread count
 * to the next, so no target always runs on the warmer machine), each step measured with the
 * system and server samplers around it.
 */
import { hostname, cpus, totalmem, platform, release } from 'node:os';
import { readFileSync } from 'node:fs';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../upstream/mysql-connection.ts';
import { runStep } from './driver.ts';
import type { DriverMeasurement, StepOptions } from './driver.ts';
import { cleanupStatements, prepareStatements } from './oltp-workload.ts';
import type { OltpOptions, WorkloadName } from './oltp-workload.ts';
import { SysbenchRandom } from './random.ts';
import type { RandomOptions } from './random.ts';
import { startServerSample } from './server-sampler.ts';
import { processCpuMicros, startSystemSample } from './system-sampler.ts';
import { runSysbenchStep } from './sysbench-driver.ts';
import { describeTarget, startTargets } from './targets.ts';
import type { RunningTarget, TargetSpec } from './targets.ts';
import { nicecacheCost } from './nicecache-cost.ts';
import { startFloorProcess } from './node-floor-process.ts';
import type { FloorProcess } from './node-floor-process.ts';
import { SWEEP_RESULT_VERSION } from './sweep-result.ts';
import type { ProbeResult, StepResult, SweepResult } from './sweep-result.ts';
import {
  TopologyError,
  formatCpuList,
  ownCpus,
  pinProcess,
  planSplit,
  processCpus,
} from './topology.ts';
import type { CpuPlan, Topology } from './topology.ts';

export interface SweepOptions {
  targets: TargetSpec[];
  threads: number[];
  workload: WorkloadName;
  oltp: OltpOptions;
  random: RandomOptions;
  preparedStatements: boolean;
  durationSeconds: number;
  warmupSeconds: number;
  driver: 'builtin' | 'sysbench';
  /** colocated (the default) or split: the servers on their own CPUs (see topology.ts). */
  topology?: Topology;
  /** Measured seconds of each Node floor and hit probe [2]. */
  probeSeconds?: number;
  database: string;
  command: string;
  log: (line: string) => void;
  onStep: (step: StepResult, index: number, total: number) => void;
}

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

async function withConnection<T>(
  options: ConnectionOptions,
  use: (connection: MysqlConnection) => Promise<T>,
): Promise<T> {
  const connection = await MysqlConnection.connect(options);
  try {
    return await use(connection);
  } finally {
    connection.close();
  }
}

/** Loads the sysbench tables unless each already holds exactly the rows asked for. */
export async function prepareData(
  server: ConnectionOptions,
  database: string,
  oltp: OltpOptions,
  random: RandomOptions,
  log: (line: string) => void,
): Promise<void> {
  await withConnection({ ...server, database: null }, async (connection) => {
    const run = async (sql: string): Promise<void> => {
      const result = await connection.query(sql);
      if (result.error) throw new Error(`${result.error.errno}: ${result.error.message}`);
    };
    await run(`CREATE DATABASE IF NOT EXISTS \`${database}\``);
    await run(`USE \`${database}\``);
    let ready = true;
    for (let table = 1; table <= oltp.tables && ready; table++) {
      const rows = await connection
        .queryRows(`SELECT COUNT(*) FROM sbtest${table}`)
        .catch(() => [['-1']]);
      ready = Number(rows[0]![0]) === oltp.tableSize;
    }
    if (ready) return;
    log(
      `loading ${oltp.tables} table(s) of ${oltp.tableSize} rows into ${server.host}:${server.port}/${database}`,
    );
    for (const sql of cleanupStatements(oltp)) await run(sql);
    for (const sql of prepareStatements(oltp, new SysbenchRandom(random))) await run(sql);
  });
}

export async function cleanupData(
  server: ConnectionOptions,
  database: string,
  oltp: OltpOptions,
): Promise<void> {
  await withConnection({ ...server, database: null }, async (connection) => {
    await connection.query(`USE \`${database}\``);
    for (const sql of cleanupStatements(oltp)) await connection.query(sql);
  });
}

async function measureStep(
  target: RunningTarget,
  threads: number,
  options: SweepOptions,
): Promise<StepResult> {
  // Asked through the target itself: a nicecache target will answer with its own counters
  // (today it relays the question to its server).
  const serverSample = await startServerSample(target.connection);
  // The machine, the server and the proxy are sampled over the measured window, not the warm-up.
  const proxyCpuNow = (): number | null =>
    target.proxyPid === null ? null : processCpuMicros(target.proxyPid);
  const serverCpuNow = (): number | null =>
    target.serverPid === null ? null : processCpuMicros(target.serverPid);
  let proxyCpuBefore = proxyCpuNow();
  let serverCpuBefore = serverCpuNow();
  let systemSample = startSystemSample();
  const stepOptions: StepOptions = {
    connection: target.connection,
    threads,
    workload: options.workload,
    oltp: options.oltp,
    random: options.random,
    preparedStatements: options.preparedStatements,
    warmupSeconds: options.warmupSeconds,
    durationSeconds: options.durationSeconds,
    onMeasureStart: () => {
      proxyCpuBefore = proxyCpuNow();
      serverCpuBefore = serverCpuNow();
      systemSample = startSystemSample();
      serverSample.restart();
    },
  };
  let measured: DriverMeasurement;
  try {
    measured =
      options.driver === 'sysbench'
        ? await runSysbenchStep(stepOptions)
        : await runStep(stepOptions);
  } catch (error) {
    await serverSample.finish().catch(() => null);
    throw error;
  }
  const system = systemSample();
  const proxyCpu = difference(proxyCpuBefore, proxyCpuNow());
  const serverCpu = difference(serverCpuBefore, serverCpuNow());
  const queryCache = await serverSample.finish();
  for (const sample of measured.errorSamples) options.log(`${target.spec.name}: ${sample}`);
  const latency = measured.latency;
  return {
    target: target.spec.name,
    threads,
    seconds: measured.seconds,
    transactions: measured.transactions,
    queries: measured.queries,
    tps: measured.transactions / measured.seconds,
    qps: measured.queries / measured.seconds,
    latencyMs: {
      p50: latency.percentile(0.5),
      p95: latency.percentile(0.95),
      p99: latency.percentile(0.99),
      max: latency.max,
      avg: latency.average,
    },
    errors: measured.errors,
    ignoredErrors: measured.ignoredErrors,
    reconnects: measured.reconnects,
    driverCpu: measured.driverCpu,
    system,
    queryCache,
    proxyCpuMicrosPerQuery: perUnit(proxyCpu, measured.queries),
    serverCpuMicrosPerTransaction: perUnit(serverCpu, measured.transactions),
    // Filled in once the sweep has the floor, the hit probes and the direct steps.
    nicecache: null,
  };
}

/** Rows a probe's point selects cycle over: few enough that all are cached after a moment. */
const PROBE_ROWS = 8;
const PROBE_WARMUP_SECONDS = 0.5;
const DEFAULT_PROBE_SECONDS = 2;

/**
 * Point selects over PROBE_ROWS rows at `threads` sessions, with the built-in driver and the
 * sweep's ps-mode, measuring the CPU of the process that answers (`pid`). With `counters`, the
 * target's Qcache_hits over the probe give its hit ratio (for nicecache, the proxy's own).
 */
async function measureProbe(
  probe: { kind: ProbeResult['kind']; target: string | null; pid: number | null },
  connection: ConnectionOptions,
  threads: number,
  options: SweepOptions,
  seconds: number,
): Promise<ProbeResult> {
  const counters = probe.kind === 'hits' ? await startServerSample(connection) : null;
  const cpuNow = (): number | null => (probe.pid === null ? null : processCpuMicros(probe.pid));
  let cpuBefore = cpuNow();
  let measured: DriverMeasurement;
  try {
    measured = await runStep({
      connection,
      threads,
      workload: 'oltp_point_select',
      oltp: { ...options.oltp, tables: 1, tableSize: PROBE_ROWS },
      random: { ...options.random, type: 'uniform' },
      preparedStatements: options.preparedStatements,
      warmupSeconds: PROBE_WARMUP_SECONDS,
      durationSeconds: seconds,
      onMeasureStart: () => {
        cpuBefore = cpuNow();
        counters?.restart();
      },
    });
  } catch (error) {
    await counters?.finish().catch(() => null);
    throw error;
  }
  const cpu = difference(cpuBefore, cpuNow());
  const sample = counters === null ? null : await counters.finish();
  return {
    kind: probe.kind,
    target: probe.target,
    threads,
    seconds: measured.seconds,
    queries: measured.queries,
    qps: measured.queries / measured.seconds,
    cpuMicrosPerQuery: perUnit(cpu, measured.queries),
    hitRatio:
      sample === null || measured.queries === 0
        ? null
        : Math.min(1, sample.hits / measured.queries),
    errors: measured.errors,
  };
}

function difference(before: number | null, after: number | null): number | null {
  return before === null || after === null ? null : after - before;
}

function perUnit(micros: number | null, count: number): number | null {
  return micros === null || count === 0 ? null : micros / count;
}

/**
 * Under `split`, pins this process (and so every thread and child it starts later: the driver,
 * the proxies, the floor) to the client's CPUs; returns how to undo it. Servers given by URL are
 * refused: only a server the bench starts can be pinned.
 */
function enterTopology(options: SweepOptions): { plan: CpuPlan | null; leave: () => void } {
  if ((options.topology ?? 'colocated') === 'colocated') return { plan: null, leave: () => {} };
  const running = options.targets.filter((target) => target.kind === 'url');
  if (running.length > 0) {
    throw new TopologyError(
      `--topology split pins the servers the bench starts; ${running.map((t) => `'${t.name}'`).join(', ')} ` +
        'is a running server (give it as NAME=mariadb:options instead)',
    );
  }
  const before = formatCpuList(ownCpus());
  const plan = planSplit(ownCpus());
  pinProcess(process.pid, plan.clientAndProxy);
  return { plan, leave: () => pinProcess(process.pid, before) };
}

function pinTargets(targets: RunningTarget[], plan: CpuPlan): void {
  for (const target of targets) {
    if (target.spec.kind === 'mariadb' && target.serverPid !== null) {
      pinProcess(target.serverPid, plan.server);
    }
    // Started after the bench pinned itself, so already there; said again so it is checked.
    if (target.proxyPid !== null) pinProcess(target.proxyPid, plan.clientAndProxy);
  }
}

export async function runSweep(options: SweepOptions): Promise<SweepResult> {
  const startedAt = new Date().toISOString();
  const probeSeconds = options.probeSeconds ?? DEFAULT_PROBE_SECONDS;
  const topology = enterTopology(options);
  let targets: RunningTarget[] = [];
  let floor: FloorProcess | null = null;
  try {
    targets = await startTargets(options.targets, options.database, options.log);
    if (topology.plan !== null) pinTargets(targets, topology.plan);
    floor = await startFloorProcess();
    if (topology.plan !== null) pinProcess(floor.pid, topology.plan.clientAndProxy);
    const floorConnection: ConnectionOptions = {
      ...targets[0]!.connection,
      host: '127.0.0.1',
      port: floor.port,
    };
    const descriptions = [];
    const servers = new Set<string>();
    for (const target of targets) {
      const key = `${target.server.host}:${target.server.port}`;
      if (!servers.has(key)) {
        servers.add(key);
        await prepareData(
          target.server,
          options.database,
          options.oltp,
          options.random,
          options.log,
        );
      }
      const [[version]] = (await withConnection({ ...target.connection }, (connection) =>
        connection.queryRows('SELECT VERSION()'),
      )) as [[string]];
      descriptions.push(describeTarget(target, version));
    }
    const steps: StepResult[] = [];
    const probes: ProbeResult[] = [];
    const nicecacheTargets = targets.filter((target) => target.spec.kind === 'nicecache');
    const total = options.threads.length * targets.length;
    for (const [round, threads] of options.threads.entries()) {
      probes.push(
        await measureProbe(
          { kind: 'node-floor', target: null, pid: floor.pid },
          floorConnection,
          threads,
          options,
          probeSeconds,
        ),
      );
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        const step = await measureStep(target, threads, options);
        steps.push(step);
        options.onStep(step, steps.length - 1, total);
      }
      // After the steps, so the rows it adds to the cache cannot help them.
      for (const target of nicecacheTargets) {
        probes.push(
          await measureProbe(
            { kind: 'hits', target: target.spec.name, pid: target.proxyPid },
            target.connection,
            threads,
            options,
            probeSeconds,
          ),
        );
      }
    }
    for (const step of steps) {
      const spec = targets.find((target) => target.spec.name === step.target)?.spec;
      if (spec?.kind !== 'nicecache') continue;
      const probeAt = (kind: ProbeResult['kind'], target: string | null): ProbeResult | null =>
        probes.find(
          (probe) =>
            probe.kind === kind && probe.target === target && probe.threads === step.threads,
        ) ?? null;
      step.nicecache = nicecacheCost(
        step,
        {
          name: spec.backend,
          step:
            steps.find(
              (other) => other.target === spec.backend && other.threads === step.threads,
            ) ?? null,
        },
        probeAt('node-floor', null),
        probeAt('hits', step.target),
      );
    }
    const cpuInfo = cpus();
    return {
      version: SWEEP_RESULT_VERSION,
      startedAt,
      finishedAt: new Date().toISOString(),
      command: options.command,
      machine: {
        hostname: hostname(),
        cpus: cpuInfo.length,
        cpuModel: cpuInfo[0]?.model ?? 'unknown',
        memoryBytes: totalmem(),
        os: `${platform()} ${release()}`,
        node: process.version,
        nicecache: packageVersion,
      },
      options: {
        driver: options.driver,
        workload: options.workload,
        threads: options.threads,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        tables: options.oltp.tables,
        tableSize: options.oltp.tableSize,
        rangeSize: options.oltp.rangeSize,
        skipTrx: options.oltp.skipTrx,
        psMode: options.preparedStatements ? 'auto' : 'disable',
        distribution: options.random.type,
        topology: options.topology ?? 'colocated',
        probeSeconds,
      },
      cpus: topology.plan,
      clientCpus: processCpus(process.pid) ?? formatCpuList(ownCpus()),
      targets: descriptions,
      steps,
      probes,
    };
  } finally {
    await floor?.stop();
    await Promise.all(targets.map((target) => target.stop()));
    topology.leave();
  }
}
