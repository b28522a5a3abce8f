/**
 * The same step through the installed sysbench 1.0, as a cross-check of the built-in driver:
 * same workload options, sysbench's own output parsed into the same measurement.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { DriverMeasurement, StepOptions } from './driver.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import { processCpuMicros } from './system-sampler.ts';

export function sysbenchArgs(options: StepOptions, seconds: number): string[] {
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
    `--time=${seconds}`,
    '--histogram=on',
    'run',
  ];
}

/** Runs sysbench to its end; `whileRunning` gets its pid and returns a function to call at exit. */
function runSysbench(
  args: string[],
  whileRunning: (pid: number) => () => void = () => () => {},
): Promise<string> {
  const child = spawn('sysbench', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = child.pid === undefined ? () => {} : whileRunning(child.pid);
  return new Promise((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      stop();
      reject(
        error.code === 'ENOENT'
          ? new Error('sysbench is not installed: apt-get install sysbench')
          : error,
      );
    });
    child.once('exit', (code) => {
      stop();
      if (code === 0) resolve(output);
      else reject(new Error(`sysbench exited with ${code}:\n${output}`));
    });
  });
}

function field(output: string, label: string): number {
  const match = new RegExp(`${label}:\\s+([\\d.]+)(?:\\s+\\(([\\d.]+) per sec\\.\\))?`).exec(
    output,
  );
  if (match === null) throw new Error(`sysbench printed no '${label}':\n${output}`);
  return Number(match[2] ?? match[1]);
}

/** Samples a process's CPU time every 250 ms; the share of all cores it used between samples. */
function sampleCpu(pid: number, onDone: (share: number) => void): () => void {
  let first: { micros: number; at: number } | null = null;
  let last: { micros: number; at: number } | null = null;
  const timer = setInterval(() => {
    try {
      last = { micros: processCpuMicros(pid), at: performance.now() };
      first ??= last;
    } catch {
      // The process has just exited; the last sample stands.
    }
  }, 250);
  return () => {
    clearInterval(timer);
    const start = first;
    const end = last;
    onDone(
      start !== null && end !== null && end.at > start.at
        ? (100 * (end.micros - start.micros)) /
            ((end.at - start.at) * 1000 * availableParallelism())
        : 0,
    );
  };
}

export async function runSysbenchStep(options: StepOptions): Promise<DriverMeasurement> {
  if (options.random.type === 'zipfian') {
    throw new Error('sysbench 1.0 has no zipfian distribution; use the built-in driver');
  }
  // sysbench 1.0.20 has no --warmup-time: the warm-up is a run of its own.
  if (options.warmupSeconds > 0) await runSysbench(sysbenchArgs(options, options.warmupSeconds));
  let driverCpu = 0;
  options.onMeasureStart?.();
  const output = await runSysbench(sysbenchArgs(options, options.durationSeconds), (pid) =>
    sampleCpu(pid, (share) => (driverCpu = share)),
  );
  const latency = new LatencyHistogram();
  const histogram = output.slice(output.indexOf('Latency histogram'));
  for (const match of histogram.matchAll(/^\s+([\d.]+)\s+\|\*+\s+(\d+)$/gm)) {
    latency.record(Number(match[1]), Number(match[2]));
  }
  const seconds = options.durationSeconds;
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
