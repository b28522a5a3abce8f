/**
 * The same step through the installed sysbench 1.0, as a cross-check of the built-in driver:
 * same workload options, sysbench's own output parsed into the same measurement.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { DriverMeasurement, StepOptions } from './driver.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import { processCpuMicros } from './system-sampler.ts';

export function sysbenchArgs(options: StepOptions): string[] {
  const { connection, oltp, random } = options;
  return [
    options.workload,
    '--db-driver=mysql',
    `--mysql-host=${connection.host}`,
    `--mysql-port=${connection.port}`,
    `--mysql-user=${connection.user}`,
    `--mysql-password=${connection.password}`,
    `--mysql-db=${connection.database ?? ''}`,
    `--tables=${oltp.tables}`,
    `--table-size=${oltp.tableSize}`,
    `--range-size=${oltp.rangeSize}`,
    `--skip-trx=${oltp.skipTrx ? 'on' : 'off'}`,
    `--db-ps-mode=${options.preparedStatements ? 'auto' : 'disable'}`,
    `--rand-type=${random.type}`,
    `--rand-spec-iter=${random.specIter}`,
    `--rand-spec-pct=${random.specPct}`,
    `--rand-spec-res=${random.specRes}`,
    `--rand-pareto-h=${random.paretoH}`,
    `--threads=${options.threads}`,
    `--time=${options.warmupSeconds + options.durationSeconds}`,
    `--warmup-time=${options.warmupSeconds}`,
    '--histogram=on',
    'run',
  ];
}

function field(output: string, label: string): number {
  const match = new RegExp(`${label}:\\s+([\\d.]+)(?:\\s+\\(([\\d.]+) per sec\\.\\))?`).exec(
    output,
  );
  if (match === null) throw new Error(`sysbench printed no '${label}':\n${output}`);
  return Number(match[2] ?? match[1]);
}

export async function runSysbenchStep(options: StepOptions): Promise<DriverMeasurement> {
  if (options.random.type === 'zipfian') {
    throw new Error('sysbench 1.0 has no zipfian distribution; use the built-in driver');
  }
  const child = spawn('sysbench', sysbenchArgs(options), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // sysbench's CPU time while it measures, read from /proc while it still runs.
  let cpuAtStart: { micros: number; at: number } | null = null;
  let cpuLast: { micros: number; at: number } | null = null;
  const sampler = setInterval(() => {
    try {
      const sample = { micros: processCpuMicros(child.pid!), at: performance.now() };
      if (performance.now() >= measureFrom) cpuAtStart ??= sample;
      cpuLast = sample;
    } catch {
      // The process has just exited.
    }
  }, 250);
  const measureFrom = performance.now() + options.warmupSeconds * 1000;
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error('sysbench is not installed: apt-get install sysbench')
          : error,
      ),
    );
    child.once('exit', resolve);
  });
  clearInterval(sampler);
  if (code !== 0) throw new Error(`sysbench exited with ${code}:\n${output}`);
  const latency = new LatencyHistogram();
  const histogram = output.slice(output.indexOf('Latency histogram'));
  for (const match of histogram.matchAll(/^\s+([\d.]+)\s+\|\*+\s+(\d+)$/gm)) {
    latency.record(Number(match[1]), Number(match[2]));
  }
  const seconds = options.durationSeconds;
  const start = cpuAtStart as { micros: number; at: number } | null;
  const last = cpuLast as { micros: number; at: number } | null;
  const driverCpu =
    start !== null && last !== null && last.at > start.at
      ? (100 * (last.micros - start.micros)) /
        ((last.at - start.at) * 1000 * availableParallelism())
      : 0;
  return {
    seconds,
    transactions: Math.round(field(output, 'transactions') * seconds),
    queries: Math.round(field(output, 'queries') * seconds),
    errors: 0,
    ignoredErrors: Math.round(field(output, 'ignored errors') * seconds),
    reconnects: Math.round(field(output, 'reconnects') * seconds),
    latency,
    driverCpu,
    errorSamples: [],
  };
}
