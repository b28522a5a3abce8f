/**
 * Messages between the main thread and proxy workers: startup, shutdown and reads of what the
 * workers keep (per-statement digests), never per query.
 */
import type { QueryCacheType } from '../cache/query-cache.ts';
import type { DigestRow } from '../cache/statement-digests.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { AdminAccount } from './schema-catalog.ts';
import type { LogFormat } from './log.ts';

/** The query cache's options, as given to the proxy. */
export interface CacheSettings {
  type: QueryCacheType;
  /** --query-cache-size for the whole proxy: one store every worker shares. */
  sizeBytes: number;
  limitBytes: number;
  ttlMs: number;
  /** How long an identical miss waits for the first before it asks the server itself. */
  singleFlightWaitMs: number;
  /** Begin read transactions in the proxy (--defer-transactions). */
  deferTransactions: boolean;
  /** The account that reads schema metadata; null: every write invalidates everything. */
  admin: AdminAccount | null;
}

export interface WorkerConfig {
  index: number;
  /** The invalidation registry's accounting region this worker keeps its marks in. */
  registryRegion: number;
  host: string;
  port: number;
  /** A Unix socket this worker listens on as well (--socket: the first worker only); or null. */
  socketPath: string | null;
  backend: BackendAddress;
  connectTimeoutMs: number;
  handshakeTimeoutMs: number;
  registry: SharedArrayBuffer;
  /** The query cache's store and admission scores, every worker's; null with the cache off. */
  cacheStore: {
    buffer: SharedArrayBuffer;
    admission: SharedArrayBuffer;
    missedBefore: SharedArrayBuffer;
  } | null;
  stats: SharedArrayBuffer;
  /** What SHOW STATUS tells of the binlog follower (see binlog/follower-status.ts). */
  followerStatus: SharedArrayBuffer;
  workers: number;
  cache: CacheSettings | null;
  /** The main thread's --log-format. */
  logFormat: LogFormat;
  /** What clients that ask for TLS get; null: TLS is not offered. */
  tls: TlsCredentials | null;
  /** Clients that do not start TLS are refused. */
  requireSecureTransport: boolean;
  /** Keep per-statement digests (--digests). */
  digests: boolean;
}

/** A PEM certificate (chain) and its private key, as read from --tls-cert and --tls-key. */
export interface TlsCredentials {
  cert: string;
  key: string;
}

/** `fault`: a test-only failure (NICECACHE_TEST_FAULTS): the worker dies of an uncaught error. */
export type ToWorker =
  | { type: 'drain' }
  | { type: 'fault' }
  /** New TLS credentials (SIGHUP): connections accepted from now on get them. */
  | { type: 'tls'; credentials: TlsCredentials }
  /** Send your per-statement digests, answering with the same `request`. */
  | { type: 'digests'; request: number }
  /** Every worker's digests, merged, that this worker asked for with `request`. */
  | { type: 'digests-merged'; request: number; rows: DigestRow[] };

export type FromWorker =
  | { type: 'listening' }
  | { type: 'listen-failed'; message: string }
  | { type: 'drained' }
  | { type: 'digests'; request: number; rows: DigestRow[] }
  /** A session reads the digests: gather every worker's and answer with 'digests-merged'. */
  | { type: 'digests-wanted'; request: number };
