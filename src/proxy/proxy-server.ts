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
import { FillAdmission } from '../cache/fill-admission.ts';
import { ResultStore } from '../cache/result-store.ts';
import { QueryCache } from '../cache/query-cache.ts';
import { mergeDigests } from '../cache/statement-digests.ts';
import type { DigestRow } from '../cache/statement-digests.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { CacheSettings, TlsCredentials } from './worker-protocol.ts';
import type { Logger } from './log.ts';
import { acquirePortLock } from './port-lock.ts';
import { freeSocketPath } from './socket-path.ts';
import { checkBackendAtStart, holdsGlobally } from './startup-checks.ts';
import type { FromWorker, ToWorker, WorkerConfig } from './worker-protocol.ts';
import { releaseDeadWorker } from './worker-recovery.ts';
import { installTestFaults } from './test-faults.ts';
import type { BinlogFollower } from '../binlog/binlog-follower.ts';
import { startBinlogFollower } from '../binlog/binlog-startup.ts';
import type { BinlogSettings } from '../binlog/binlog-startup.ts';
import { FollowerStatus } from '../binlog/follower-status.ts';

export interface ProxyOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** A Unix socket to listen on as well, by the first worker (--socket); absent or null: none. */
  socketPath?: string | null;
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
  /** TLS offered to clients; absent or null: not offered. */
  tls?: TlsCredentials | null;
  /** Refuse clients that do not start TLS (--require-secure-transport); needs `tls`. */
  requireSecureTransport?: boolean;
  /** Keep per-statement digests (--digests); absent: kept. */
  digests?: boolean;
  /** --binlog and its settings; absent: off. */
  binlog?: BinlogSettings;
  log: Logger;
}

export interface RunningProxy {
  host: string;
  port: number;
  registry: InvalidationRegistry;
  /** The query cache's counters, summed over workers. */
  stats: CacheStats;
  /** The binlog follower, when one runs. */
  follower: BinlogFollower | null;
  /** Workers replaced after they exited, since the start. */
  workerRestarts(): number;
  /** New TLS credentials for the connections accepted from now on (TLS must be on already). */
  reloadTls(credentials: TlsCredentials): void;
  /**
   * Every worker's per-statement digests, merged (empty with --digests off). A worker that does
   * not answer within DIGESTS_WAIT_MS (busy starting, or gone) is left out.
   */
  digests(): Promise<DigestRow[]>;
  /** Stops accepting, lets running commands finish (bounded by drainTimeoutMs), stops workers. */
  close(): Promise<void>;
}

const workerUrl = new URL('./worker.ts', import.meta.url);

/** A worker that dies within this long of its start is restarted after a growing delay. */
const STABLE_RUN_MS = 10_000;
const RESTART_FIRST_DELAY_MS = 100;
const RESTART_MAX_DELAY_MS = 30_000;

/**
 * The --socket path, made free to bind: a stale socket file (a proxy that did not end cleanly)
 * goes; one another process accepts on, or a file that is not a socket, is a refused start.
 */
async function claimSocketPath(path: string, log: Logger): Promise<void> {
  const state = await freeSocketPath(path);
  if (state === 'in-use') throw new Error(`--socket ${path}: another process listens on it`);
  if (state === 'not-a-socket') {
    throw new Error(`--socket ${path}: the path exists and is not a socket; nothing is removed`);
  }
  if (state === 'removed-stale') log.info(`--socket ${path}: removed a stale socket file`);
}

/** How long a read of the digests waits for each worker's answer. */
const DIGESTS_WAIT_MS = 2000;

/** Short-lived garbage (one miss's buffers and strings) dies young; 8 MB is plenty for it. */
const YOUNG_GENERATION_MB = 8;

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const lock = await acquirePortLock(options.host, options.port, (port) => ({
    pid: process.pid,
    listen: `${options.host}:${port}`,
    backend: `${options.backend.host}:${options.backend.port}`,
    version: options.version,
    since: new Date().toISOString(),
  }));
  const port = lock.port;
  const socketPath = options.socketPath ?? null;
  let adminPrivileges: ReadonlySet<string> | null;
  try {
    adminPrivileges = await checkBackendAtStart({
      backend: options.backend,
      admin: options.cache?.admin ?? null,
      requireBackend: options.requireBackend,
      connectTimeoutMs: options.connectTimeoutMs,
      log: options.log,
    });
    if (socketPath !== null) await claimSocketPath(socketPath, options.log);
  } catch (error) {
    await lock.release();
    throw error;
  }
  // Workers' heaps hold the cache's entries and churn through every miss's garbage. V8's
  // defaults let a heap grow far past what is live (a 64 MB cache left the process 270 MB
  // larger); optimizing for size and a small young generation keep it within the budget plus
  // about 10 MB (bench/cache-memory.ts). Flags set here apply to the isolates created after.
  // Only once the start checks have passed: a flag changed while the main thread's startup
  // code is still being compiled in the background left a start that failed right after it
  // hung in process.exit now and then (V8's platform waiting on a worker thread: seen in 3 of
  // 25 refused starts).
  setFlagsFromString('--optimize-for-size');
  // Two accounting regions per worker: a replacement starts on the spare one while the dead
  // worker's region is still being released. One more for the binlog follower.
  const registryBuffer = InvalidationRegistry.allocate(undefined, 2 * options.workers + 1);
  const registry = new InvalidationRegistry(registryBuffer);
  const statsBuffer = CacheStats.allocate(options.workers);
  // One store for every worker: a result one stored is a hit in all of them.
  const cacheStore =
    options.cache !== null && options.cache.sizeBytes !== 0
      ? {
          buffer: ResultStore.allocate(options.cache.sizeBytes, options.workers),
          admission: FillAdmission.allocate(registry.slots),
          missedBefore: QueryCache.allocateMissedBefore(),
        }
      : null;
  /** The main thread's view of the store: it puts things right when a worker dies. */
  const storeKeeper =
    cacheStore === null
      ? null
      : new ResultStore({ buffer: cacheStore.buffer, worker: options.workers });
  const followerStatusBuffer = FollowerStatus.allocate();
  const binlog = options.binlog ?? { mode: 'off', maxLagMs: 1000, serverId: null };
  const follows = options.cache !== null && options.cache.sizeBytes !== 0 && binlog.mode !== 'off';
  // Until the follower says otherwise, writes made elsewhere may be unseen: the workers start
  // serving at once, and no hit is served before the follower has caught up.
  if (follows) registry.setWritesElsewhereSeen(false);
  let follower: BinlogFollower | null = null;
  const workers = new Set<Worker>();
  /** The running worker of each index, for test faults. */
  const byIndex = new Map<number, Worker>();
  /** Per index: the delay before its next restart (0 while it runs long enough). */
  const restartDelays = new Map<number, number>();
  let workerRestarts = 0;
  /** Per index: the registry region its running worker keeps its marks in. */
  const regions = new Map<number, number>();
  /** Regions whose dead worker's marks are being released. */
  const releasing = new Map<number, Promise<unknown>>();
  let closing = false;
  /** Reads of the digests under way: each worker's answer, by request number. */
  const digestReads = new Map<number, (rows: DigestRow[]) => void>();
  let digestRequests = 0;
  /** What workers get, including workers started after a reload. */
  let tlsCredentials = options.tls ?? null;

  const spawn = (index: number, region = index): Promise<Worker> =>
    new Promise((resolve, reject) => {
      regions.set(index, region);
      const config: WorkerConfig = {
        index,
        registryRegion: region,
        host: options.host,
        port,
        socketPath: index === 0 ? socketPath : null,
        backend: options.backend,
        connectTimeoutMs: options.connectTimeoutMs,
        handshakeTimeoutMs: options.handshakeTimeoutMs,
        registry: registryBuffer,
        cacheStore,
        stats: statsBuffer,
        followerStatus: followerStatusBuffer,
        workers: options.workers,
        cache: options.cache,
        logFormat: options.log.format,
        tls: tlsCredentials,
        requireSecureTransport: options.requireSecureTransport ?? false,
        digests: options.digests ?? true,
      };
      const worker = new Worker(workerUrl, {
        workerData: config,
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      workers.add(worker);
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'digests') {
          digestReads.get(message.request)?.(message.rows);
          return;
        }
        if (message.type === 'digests-wanted') {
          const { request } = message;
          void readDigests().then((rows) =>
            worker.postMessage({ type: 'digests-merged', request, rows } satisfies ToWorker),
          );
          return;
        }
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
      const startedAt = Date.now();
      byIndex.set(index, worker);
      worker.on('exit', (code) => {
        workers.delete(worker);
        // Its pins go; a change it died in the middle of empties the store.
        storeKeeper?.recoverAfterExit(index);
        if (byIndex.get(index) === worker) byIndex.delete(index);
        if (closing) return;
        void restart(index, code, Date.now() - startedAt);
      });
    });

  /**
   * A worker died: the marks its sessions held are released once the server is done with its
   * connections (worker-recovery.ts); meanwhile a new worker takes its place on the spare
   * region — after a growing delay when it keeps dying soon after its start.
   */
  const restart = async (index: number, code: number, ranMs: number): Promise<void> => {
    workerRestarts++;
    const previous = restartDelays.get(index) ?? 0;
    const delay =
      ranMs >= STABLE_RUN_MS
        ? 0
        : Math.min(Math.max(previous * 2, RESTART_FIRST_DELAY_MS), RESTART_MAX_DELAY_MS);
    restartDelays.set(index, delay);
    options.log.warn(
      `worker ${index} exited with code ${code}; releasing its marks and starting a new one${delay > 0 ? ` in ${delay} ms` : ''}`,
    );
    const region = regions.get(index) ?? index;
    const release = releaseDeadWorker(
      registry,
      region,
      options.backend,
      options.cache?.admin ?? null,
      options.log,
    ).then((released) => {
      if (released.slots + released.everything + released.schemaChanges > 0) {
        options.log.warn(
          `worker ${index} held ${released.slots} table mark(s), ${released.everything} "everything" mark(s) and ${released.schemaChanges} schema change(s): released`,
        );
      }
    });
    releasing.set(region, release);
    void release.finally(() => releasing.delete(region));
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    // The spare region is free once an earlier death's release on it is done.
    const spare = region < options.workers ? region + options.workers : region - options.workers;
    await releasing.get(spare);
    if (closing) return;
    spawn(index, spare).catch((error: Error) =>
      options.log.error(`worker ${index} could not restart: ${error.message}`),
    );
  };

  installTestFaults(byIndex);

  try {
    await Promise.all(Array.from({ length: options.workers }, (_, index) => spawn(index)));
    // After the workers bind the port: the port lock's guard is the kernel's between releasing
    // the port and their bind, a window the follower's first connection would widen.
    if (follows) {
      follower = await startBinlogFollower({
        settings: binlog,
        backend: options.backend,
        admin: options.cache!.admin,
        connectTimeoutMs: options.connectTimeoutMs,
        registry: new InvalidationRegistry(registryBuffer, 2 * options.workers),
        status: new FollowerStatus(followerStatusBuffer),
        stats: null,
        log: options.log,
      });
    }
    if (
      follower === null &&
      options.cache !== null &&
      options.cache.sizeBytes !== 0 &&
      adminPrivileges !== null &&
      !holdsGlobally(adminPrivileges, 'EVENT')
    ) {
      // With EVENT the metadata lists enabled events and their tables are never cached; without
      // it only the binary log would show their runs.
      options.log.warn(
        `the admin account lacks EVENT and the binary log is not followed: a table an event scheduler job writes is cached like any other, and its results stay as they were after each run; grant it with GRANT EVENT ON *.* TO <the admin account>, or follow the binary log (--binlog)`,
      );
    }
  } catch (error) {
    closing = true;
    follower?.stop();
    await Promise.all([...workers].map((worker) => worker.terminate()));
    await lock.release();
    throw error;
  }

  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    follower?.stop();
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

  /** Every worker's digests, merged; a worker that does not answer in time is left out. */
  const readDigests = async (): Promise<DigestRow[]> => {
    const request = ++digestRequests;
    const asked = [...workers];
    const answers: DigestRow[][] = [];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DIGESTS_WAIT_MS);
      digestReads.set(request, (rows) => {
        answers.push(rows);
        if (answers.length < asked.length) return;
        clearTimeout(timer);
        resolve();
      });
      if (asked.length === 0) resolve();
      for (const worker of asked)
        worker.postMessage({ type: 'digests', request } satisfies ToWorker);
    });
    digestReads.delete(request);
    return mergeDigests(answers);
  };

  return {
    host: options.host,
    port,
    registry,
    stats: new CacheStats(statsBuffer, 0),
    follower,
    workerRestarts: () => workerRestarts,
    reloadTls: (credentials) => {
      tlsCredentials = credentials;
      for (const worker of workers)
        worker.postMessage({ type: 'tls', credentials } satisfies ToWorker);
    },
    digests: () => readDigests(),
    close,
  };
}
