/** Messages between the main thread and proxy workers (startup and shutdown only, never per query). */
import type { BackendAddress } from './client-session.ts';

export interface WorkerConfig {
  index: number;
  host: string;
  port: number;
  backend: BackendAddress;
  connectTimeoutMs: number;
  registry: SharedArrayBuffer;
}

export type ToWorker = { type: 'drain' };

export type FromWorker =
  { type: 'listening' } | { type: 'listen-failed'; message: string } | { type: 'drained' };
