/**
 * The main thread of the proxy: claims the port for this instance alone, checks the backend and
 * the admin account once, allocates the shared invalidation registry, starts the worker threads
 * that each listen on the same port, replaces a worker that dies, and drains them all on
 * shutdown.
 */
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { CacheStats } from '../cache/cache-stats.ts';
import { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import type { BackendAddress } from './client-session.ts';
import type { CacheSettings } from './worker-protocol.ts';
import type { Logger } from './log.ts';
import { acquirePortLock } from './port-lock.ts';
import { checkBackendAtStart } from './startup-checks.ts';
import type { FromWorker, ToWorker, WorkerConfig } from './worker-protocol.ts';

export interface ProxyOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  backend: BackendAddress;
  workers: number;
  connectTimeoutMs: number;
  /** A client not logged in this long after its greeting is dropped. */
  handshakeTimeoutMs: number;
  /** Refuse to start when the backend does not greet (otherwise: log it and start). */
  requireBackend: boolean;
  /** Told to a second instance that wants the same port. */
  version: string;
  /** How long a drain waits for commands in flight before connections are cut. */
  drainTimeoutMs: number;
  /** The query cache; null makes the proxy a plain relay. */
  cache: CacheSettings | null;
  log: Logger;
}

export interface RunningProxy {
  host: string;
  port: number;
  registry: InvalidationRegistry;
  /** The query cache's counters, summed over workers. */
  stats: CacheStats;
  /** Stops accepting, lets running commands finish (bounded by drainTimeoutMs), stops workers. */
  close(): Promise<void>;
}

const workerUrl = new URL('./worker.ts', import.meta.url);

/** Short-lived garbage (one miss's buffers and strings) dies young; 8 MB is plenty for it. */
const YOUNG_GENERATION_MB = 8;

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  // Workers' heaps hold the cache's entries and churn through every miss's garbage. V8's
  // defaults let a heap grow far past what is live (a 64 MB cache left the process 270 MB
  // larger); optimizing for size and a small young generation keep it within the budget plus
  // about 10 MB (bench/cache-memory.ts). Flags set here apply to the isolates created after.
  setFlagsFromString('--optimize-for-size');
  const lock = await acquirePortLock(options.host, options.port, (port) => ({
    pid: process.pid,
    listen: `${options.host}:${port}`,
    backend: `${options.backend.host}:${options.backend.port}`,
    version: options.version,
    since: new Date().toISOString(),
  }));
  const port = lock.port;
  try {
    await checkBackendAtStart({
      backend: options.backend,
      admin: options.cache?.admin ?? null,
      requireBackend: options.requireBackend,
      connectTimeoutMs: options.connectTimeoutMs,
      log: options.log,
    });
  } catch (error) {
    await lock.release();
    throw error;
  }
  const registryBuffer = InvalidationRegistry.allocate();
  const registry = new InvalidationRegistry(registryBuffer);
  const statsBuffer = CacheStats.allocate(options.workers);
  const workers = new Set<Worker>();
  let closing = false;

  const spawn = (index: number): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const config: WorkerConfig = {
        index,
        host: options.host,
        port,
        backend: options.backend,
        connectTimeoutMs: options.connectTimeoutMs,
        handshakeTimeoutMs: options.handshakeTimeoutMs,
        registry: registryBuffer,
        stats: statsBuffer,
        workers: options.workers,
        cache: options.cache,
      };
      const worker = new Worker(workerUrl, {
        workerData: config,
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      workers.add(worker);
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'listening') resolve(worker);
        if (message.type === 'listen-failed') {
          reject(new Error(`cannot listen on ${options.host}:${port}: ${message.message}`));
          void worker.terminate();
        }
      });
      worker.on('error', (error: Error) => {
        options.log.error(`worker ${index} failed: ${error.stack ?? error.message}`);
        reject(error);
      });
      worker.on('exit', (code) => {
        workers.delete(worker);
        if (closing) return;
        options.log.warn(`worker ${index} exited with code ${code}; starting a new one`);
        spawn(index).catch((error: Error) =>
          options.log.error(`worker ${index} could not restart: ${error.message}`),
        );
      });
    });

  try {
    await Promise.all(Array.from({ length: options.workers }, (_, index) => spawn(index)));
  } catch (error) {
    closing = true;
    await Promise.all([...workers].map((worker) => worker.terminate()));
    await lock.release();
    throw error;
  }

  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    const drained = [...workers].map(
      (worker) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            options.log.warn('drain timed out; closing the remaining connections');
            void worker.terminate().then(() => resolve());
          }, options.drainTimeoutMs);
          worker.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          worker.postMessage({ type: 'drain' } satisfies ToWorker);
        }),
    );
    await Promise.all(drained);
    await lock.release();
  };

  return { host: options.host, port, registry, stats: new CacheStats(statsBuffer, 0), close };
}
