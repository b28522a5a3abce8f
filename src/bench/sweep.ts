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
import { SWEEP_RESULT_VERSION } from './sweep-result.ts';
import type { StepResult, SweepResult } from './sweep-result.ts';

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
  };
}

function difference(before: number | null, after: number | null): number | null {
  return before === null || after === null ? null : after - before;
}

function perUnit(micros: number | null, count: number): number | null {
  return micros === null || count === 0 ? null : micros / count;
}

export async function runSweep(options: SweepOptions): Promise<SweepResult> {
  const startedAt = new Date().toISOString();
  const targets = await startTargets(options.targets, options.database, options.log);
  try {
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
    const total = options.threads.length * targets.length;
    for (const [round, threads] of options.threads.entries()) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        const step = await measureStep(target, threads, options);
        steps.push(step);
        options.onStep(step, steps.length - 1, total);
      }
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
      },
      targets: descriptions,
      steps,
    };
  } finally {
    await Promise.all(targets.map((target) => target.stop()));
  }
}
