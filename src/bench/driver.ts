/**
 * The built-in driver: runs one step (a workload at a thread count against one target) on
 * several driver threads, and merges what they measured.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ConnectionOptions } from '../upstream/mysql-connection.ts';
import type { DriverWorkerConfig, DriverWorkerResult } from './driver-worker.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import type { OltpOptions, WorkloadName } from './oltp-workload.ts';
import type { RandomOptions } from './random.ts';

export interface StepOptions {
  connection: ConnectionOptions;
  threads: number;
  workload: WorkloadName;
  oltp: OltpOptions;
  random: RandomOptions;
  preparedStatements: boolean;
  warmupSeconds: number;
  durationSeconds: number;
  /** Called when the warm-up ends and measuring begins, so samplers can cover the same window. */
  onMeasureStart?: () => void;
}

export interface DriverMeasurement {
  seconds: number;
  transactions: number;
  queries: number;
  errors: number;
  ignoredErrors: number;
  reconnects: number;
  latency: LatencyHistogram;
  /** CPU the driver process used while measuring, as a share of all cores (percent). */
  driverCpu: number;
  errorSamples: string[];
}

const workerUrl = new URL('./driver-worker.ts', import.meta.url);

function runWorker(config: DriverWorkerConfig): Promise<DriverWorkerResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { workerData: config });
    worker.once(
      'message',
      (message: { ok: true; result: DriverWorkerResult } | { ok: false; message: string }) => {
        if (message.ok) resolve(message.result);
        else reject(new Error(message.message));
      },
    );
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`driver thread exited with code ${code}`));
    });
  });
}

export async function runStep(options: StepOptions): Promise<DriverMeasurement> {
  // One driver thread per core at most: more would only compete with the system under test.
  const threads = Math.min(options.threads, availableParallelism());
  const start = Date.now() + 200; // time for the threads to start
  const measureFrom = start + options.warmupSeconds * 1000;
  const endAt = measureFrom + options.durationSeconds * 1000;
  let cpuAtStart = process.cpuUsage();
  const cpuTimer = setTimeout(() => {
    cpuAtStart = process.cpuUsage();
    options.onMeasureStart?.();
  }, measureFrom - Date.now());
  const results = await Promise.all(
    Array.from({ length: threads }, (_, index) => {
      const clients =
        Math.floor(options.threads / threads) + (index < options.threads % threads ? 1 : 0);
      const firstClient =
        index * Math.floor(options.threads / threads) + Math.min(index, options.threads % threads);
      return runWorker({
        connection: options.connection,
        clients,
        firstClient,
        workload: options.workload,
        oltp: options.oltp,
        random: options.random,
        preparedStatements: options.preparedStatements,
        measureFrom,
        endAt,
      });
    }),
  );
  clearTimeout(cpuTimer);
  const cpu = process.cpuUsage(cpuAtStart);
  const latency = new LatencyHistogram();
  const merged: DriverMeasurement = {
    seconds: options.durationSeconds,
    transactions: 0,
    queries: 0,
    errors: 0,
    ignoredErrors: 0,
    reconnects: 0,
    latency,
    driverCpu:
      (100 * (cpu.user + cpu.system)) / (options.durationSeconds * 1e6 * availableParallelism()),
    errorSamples: [],
  };
  for (const result of results) {
    merged.transactions += result.transactions;
    merged.queries += result.queries;
    merged.errors += result.errors;
    merged.ignoredErrors += result.ignoredErrors;
    merged.reconnects += result.reconnects;
    const histogram = new LatencyHistogram(result.latencyCounts);
    histogram.sum = result.latencySum;
    histogram.max = result.latencyMax;
    latency.merge(histogram);
    for (const sample of result.errorSamples) {
      if (merged.errorSamples.length < 5 && !merged.errorSamples.includes(sample))
        merged.errorSamples.push(sample);
    }
  }
  return merged;
}
