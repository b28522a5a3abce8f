/**
 * A proxy worker thread: its own listener on the shared port (SO_REUSEPORT lets the kernel spread
 * connections over workers; the main thread's port lock keeps other instances off it) and its
 * own sessions. It shares only the invalidation registry.
 */
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import { parentPort, workerData } from 'node:worker_threads';
import { FollowerStatus } from '../binlog/follower-status.ts';
import { CacheStats, Counter } from '../cache/cache-stats.ts';
import { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import { QueryCache } from '../cache/query-cache.ts';
import { Flight, SingleFlight } from '../cache/single-flight.ts';
import { DigestTable } from '../cache/statement-digests.ts';
import type { DigestGathering } from '../cache/statement-digests.ts';
import { ClientSession } from './client-session.ts';
import { ExecutionKeys } from './execution-keys.ts';
import { createLogger } from './log.ts';
import { SchemaCatalog } from './schema-catalog.ts';
import { OwedCommits } from './owed-commits.ts';
import { RelayDigests } from './relay-digests.ts';
import { freeSocketPath } from './socket-path.ts';
import { SessionKeys, StatementMemo } from './statement-memo.ts';
import type { WorkerCache } from './statement-router.ts';
import type { FromWorker, ToWorker, WorkerConfig } from './worker-protocol.ts';

const config = workerData as WorkerConfig;
const log = createLogger({ format: config.logFormat, worker: config.index });
const port = parentPort!;
const send = (message: FromWorker): void => port.postMessage(message);
const registry = new InvalidationRegistry(config.registry, config.registryRegion);
/**
 * Built once per worker, and again when the main thread sends new credentials: the TLS sessions
 * of this worker share it (and its session cache).
 */
let secureContext = config.tls === null ? null : createSecureContext(config.tls);
/** How often a worker drops results writes made stale, so Qcache_queries_in_cache falls. */
const STALE_SWEEP_INTERVAL_MS = 200;
/**
 * How long a COMMIT the proxy answered may wait for the session's next command to carry it to
 * the server (see OwedCommits): the server's transaction keeps its read view and metadata locks
 * until then, and DDL on its tables waits for them.
 */
const COMMIT_FLUSH_MS = 10;

/** This worker's per-statement digests (statement-digests.ts); null with --digests off. */
const digests = config.digests ? new DigestTable() : null;

function createCache(): WorkerCache | null {
  const settings = config.cache;
  if (settings === null || settings.sizeBytes === 0 || config.cacheStore === null) return null;
  const catalog = new SchemaCatalog(registry, config.backend, settings.admin, log);
  catalog.warmUp();
  return {
    cache: new QueryCache(registry, new CacheStats(config.stats, config.index), {
      type: settings.type,
      store: { ...config.cacheStore, worker: config.index },
      limitBytes: settings.limitBytes,
      ttlMs: settings.ttlMs,
      sweepIntervalMs: STALE_SWEEP_INTERVAL_MS,
    }),
    catalog,
    memo: new StatementMemo(),
    sessionKeys: new SessionKeys(),
    executionKeys: new ExecutionKeys(),
    flights: new SingleFlight(settings.singleFlightWaitMs),
    deferTransactions: settings.deferTransactions,
    followerStatus: new FollowerStatus(config.followerStatus),
    digests,
    gatherDigests,
    owedCommits: new OwedCommits(COMMIT_FLUSH_MS),
  };
}

/** Reads of every worker's digests asked of the main thread, by request number. */
const gatherings = new Map<number, DigestGathering>();
let gatheringRequests = 0;

/** Asks the main thread for every worker's digests; the gathering's flight lands with them. */
function gatherDigests(): DigestGathering {
  const request = ++gatheringRequests;
  const gathering: DigestGathering = { flight: new Flight(0), rows: null };
  gatherings.set(request, gathering);
  send({ type: 'digests-wanted', request });
  return gathering;
}
const cache = createCache();
/** Without the cache, the relay counts the digests itself (the cache's router counts its own). */
const relayDigests =
  cache === null && digests !== null ? new RelayDigests(digests, gatherDigests) : null;

const sessions = new Set<ClientSession>();
/** Connection counters, in this worker's region of the shared stats (cache on or off). */
const connectionStats = new CacheStats(config.stats, config.index);
const countBackendUnreachable = (): void => connectionStats.add(Counter.BACKEND_UNREACHABLE);
const countLingering = (change: 1 | -1): void =>
  connectionStats.add(Counter.SESSIONS_LINGERING, change);
let draining = false;

/** A client accepted on the TCP port or (`unixSocket`) on the --socket path. */
function serveClient(socket: Socket, unixSocket: boolean): void {
  if (draining) {
    socket.destroy();
    return;
  }
  log.debug(
    unixSocket
      ? `client connected on ${config.socketPath}`
      : `client connected from ${socket.remoteAddress}:${socket.remotePort}`,
  );
  const session = new ClientSession(socket, {
    backend: config.backend,
    tls: secureContext,
    requireSecureTransport: config.requireSecureTransport,
    unixSocket,
    log,
    connectTimeoutMs: config.connectTimeoutMs,
    handshakeTimeoutMs: config.handshakeTimeoutMs,
    cache,
    relayDigests,
    onBackendUnreachable: countBackendUnreachable,
    onLinger: countLingering,
  });
  sessions.add(session);
  connectionStats.add(Counter.CONNECTIONS);
  connectionStats.set(Counter.CLIENTS_CONNECTED, sessions.size);
  session.onClose = () => {
    sessions.delete(session);
    connectionStats.set(Counter.CLIENTS_CONNECTED, sessions.size);
    if (draining && sessions.size === 0) finish();
  };
}

// Paused on connect: a session reads its client into a buffer of its own (socket-reads.ts).
const server = createServer({ noDelay: true, pauseOnConnect: true }, (socket) =>
  serveClient(socket, false),
);
/**
 * --socket, on the first worker only: a path cannot be bound twice, and a worker thread cannot
 * hand an accepted connection to another. The main thread freed the path before the start.
 */
const socketServer =
  config.socketPath === null
    ? null
    : createServer({ pauseOnConnect: true }, (socket) => serveClient(socket, true));

/**
 * The main thread holds the port lock (see port-lock.ts), so a refusal here is at worst another
 * instance's brief exclusive check of the port, which gives up when it finds the lock taken:
 * a few retries ride it out instead of failing both starts.
 */
const LISTEN_RETRIES = 20;
const LISTEN_RETRY_MS = 50;
let listenAttempts = 0;

server.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE' && ++listenAttempts < LISTEN_RETRIES) {
    setTimeout(listen, LISTEN_RETRY_MS);
    return;
  }
  send({ type: 'listen-failed', message: error.message });
});

function listen(): void {
  server.listen({ host: config.host, port: config.port, reusePort: true }, () => {
    if (socketServer === null) send({ type: 'listening' });
    else listenOnSocket();
  });
}
listen();

function listenOnSocket(): void {
  const path = config.socketPath!;
  socketServer!.once('error', (error: NodeJS.ErrnoException) => {
    // A first worker started again after a crash may find its predecessor's file still there.
    if (error.code === 'EADDRINUSE' && ++listenAttempts < LISTEN_RETRIES) {
      void freeSocketPath(path).then(
        () => setTimeout(listenOnSocket, LISTEN_RETRY_MS),
        (cause: Error) => send({ type: 'listen-failed', message: `${path}: ${cause.message}` }),
      );
      return;
    }
    send({ type: 'listen-failed', message: `${path}: ${error.message}` });
  });
  // Anyone on the machine may connect, as to the server's socket: the accounts decide.
  socketServer!.listen({ path, readableAll: true, writableAll: true }, () =>
    send({ type: 'listening' }),
  );
}

function finish(): void {
  send({ type: 'drained' });
  port.close();
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'tls') {
    // Checked by the main thread before it was sent; connections already open keep theirs.
    secureContext = createSecureContext(message.credentials);
    return;
  }
  if (message.type === 'digests-merged') {
    const gathering = gatherings.get(message.request);
    gatherings.delete(message.request);
    if (gathering !== undefined) {
      gathering.rows = message.rows;
      gathering.flight.land();
    }
    return;
  }
  if (message.type === 'digests') {
    // Answered even while draining: what ran before the shutdown is still worth reading.
    send({ type: 'digests', request: message.request, rows: digests?.snapshot() ?? [] });
    return;
  }
  if (message.type === 'fault') {
    if (process.env['NICECACHE_TEST_FAULTS'] !== '1') return;
    // Thrown outside every handler, as a bug would be: the thread dies mid-work.
    setImmediate(() => {
      throw new Error('test fault: worker crashing on request');
    });
    return;
  }
  if (draining) return;
  draining = true;
  server.close();
  socketServer?.close();
  cache?.catalog.stop();
  if (sessions.size === 0) {
    finish();
    return;
  }
  for (const session of [...sessions]) session.drain();
});
