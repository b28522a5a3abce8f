/**
 * Per-statement statistics, as ProxySQL's stats_mysql_query_digest keeps them: per digest (the
 * statement with its literals as `?`), how often it ran, what the cache did with it, and how
 * long the server took when it went there.
 *
 * One table per worker, written only by that worker's thread: nothing is shared or locked, and
 * a statement seen before costs a few field increments (its record hangs off its memo entry, and
 * texts of one shape share their first text's). The main thread asks every worker for a
 * snapshot and merges them by digest (see mergeDigests), which is not on any query's path.
 *
 * The digest of a text with a shape (statement-shape.ts: most SELECT, INSERT, UPDATE, DELETE and
 * REPLACE statements) is its shape, each literal a `?`; any other text is its own digest, as the
 * cache keys it. The table is bounded: past MAX_DIGESTS digests a worker counts new ones under
 * OTHER_DIGEST, and a digest is cut at MAX_DIGEST_LENGTH characters.
 */
import { isLiteralMark } from '../sql/statement-shape.ts';
import { BYPASS_NAMES } from './cache-stats.ts';
import type { Flight } from './single-flight.ts';

/** Digests a worker keeps apart before it counts new ones together. */
export const MAX_DIGESTS = 2000;
/** A longer digest text is cut here (a 16 MB INSERT must not become a 16 MB key). */
export const MAX_DIGEST_LENGTH = 1024;
/** Where a worker counts statements whose digests no longer fit. */
export const OTHER_DIGEST = '(other statements)';

/** One digest's counts, in one worker. */
export class DigestRecord {
  readonly digest: string;
  /** The statement's kind as the classifier says it: select, update, set, ... */
  readonly kind: string;
  /** Executions that reached their end in the proxy (a wait for a miss in flight is not one). */
  count = 0;
  /** Answered from the cache. */
  hits = 0;
  /** Cacheable reads the cache did not have: sent to the server (and stored, unless declined). */
  misses = 0;
  /** Reads sent to the server without looking in the cache, by reason (BYPASS_NAMES). */
  readonly bypasses = new Float64Array(BYPASS_NAMES.length);
  /** Executions sent to the server whose replies have ended, and the time they took. */
  serverCount = 0;
  serverMicros = 0;
  maxServerMicros = 0;
  /** What hits served: rows (what FOUND_ROWS() says after them) and reply bytes. */
  rowsServed = 0;
  bytesServed = 0;

  constructor(digest: string, kind: string) {
    this.digest = digest;
    this.kind = kind;
  }

  /** A reply from the server ended `micros` after the statement was sent. */
  addServerTime(micros: number): void {
    this.serverCount++;
    this.serverMicros += micros;
    if (micros > this.maxServerMicros) this.maxServerMicros = micros;
  }
}

/** A digest's counts as plain data: what a worker sends and what the API answers. */
export interface DigestRow {
  digest: string;
  kind: string;
  count: number;
  hits: number;
  misses: number;
  bypasses: number;
  /** The reason most of its bypasses had; null without any. */
  mainBypassReason: string | null;
  /** Bypasses by reason, the reasons with none left out. */
  bypassReasons: Record<string, number>;
  /** Replies from the server that ended, and their times in microseconds. */
  serverCount: number;
  serverMicros: number;
  maxServerMicros: number;
  rowsServed: number;
  bytesServed: number;
}

/**
 * A read of every worker's digests from a session (SELECT * FROM nicecache.digests): the flight
 * lands when the merged rows are in `rows`, which stay null if they never came.
 */
export interface DigestGathering {
  readonly flight: Flight;
  rows: DigestRow[] | null;
}

/** One worker's digests. */
export class DigestTable {
  readonly #records = new Map<string, DigestRecord>();
  #other: DigestRecord | null = null;

  /** The record of `digest` (a statement of `kind`), made on first use while there is room. */
  recordOf(digest: string, kind: string): DigestRecord {
    const known = this.#records.get(digest);
    if (known !== undefined) return known;
    if (this.#records.size >= MAX_DIGESTS) {
      this.#other ??= new DigestRecord(OTHER_DIGEST, 'other');
      return this.#other;
    }
    const record = new DigestRecord(digest, kind);
    this.#records.set(digest, record);
    return record;
  }

  /** Every digest with its counts, as plain data (for postMessage). */
  snapshot(): DigestRow[] {
    const rows: DigestRow[] = [];
    for (const record of this.#records.values()) rows.push(rowOf(record));
    if (this.#other !== null) rows.push(rowOf(this.#other));
    return rows;
  }
}

/**
 * The digest of a statement: its shape with each literal a `?` when it has one, else its key
 * text; cut at MAX_DIGEST_LENGTH.
 */
export function digestTextOf(shape: string | null, keyText: string): string {
  let text = keyText;
  if (shape !== null) {
    text = '';
    let copied = 0;
    for (let at = 0; at < shape.length; at++) {
      const code = shape.charCodeAt(at);
      if (isLiteralMark(code)) {
        text += `${shape.slice(copied, at)}?`;
        copied = at + 1;
      }
    }
    text = (text + shape.slice(copied)).trim();
    while (text.endsWith(';')) text = text.slice(0, -1).trimEnd();
  }
  return text.length > MAX_DIGEST_LENGTH ? text.slice(0, MAX_DIGEST_LENGTH) : text;
}

function rowOf(record: DigestRecord): DigestRow {
  const bypassReasons: Record<string, number> = {};
  let bypasses = 0;
  for (let reason = 0; reason < BYPASS_NAMES.length; reason++) {
    const count = record.bypasses[reason]!;
    if (count === 0) continue;
    bypassReasons[BYPASS_NAMES[reason]!] = count;
    bypasses += count;
  }
  return {
    digest: record.digest,
    kind: record.kind,
    count: record.count,
    hits: record.hits,
    misses: record.misses,
    bypasses,
    mainBypassReason: mainReason(bypassReasons),
    bypassReasons,
    serverCount: record.serverCount,
    serverMicros: Math.round(record.serverMicros),
    maxServerMicros: Math.round(record.maxServerMicros),
    rowsServed: record.rowsServed,
    bytesServed: record.bytesServed,
  };
}

function mainReason(reasons: Record<string, number>): string | null {
  let main: string | null = null;
  for (const [reason, count] of Object.entries(reasons)) {
    if (main === null || count > reasons[main]!) main = reason;
  }
  return main;
}

/**
 * Every worker's rows merged by digest (and kind), the most executed first: counts add up, the
 * maximum time is the largest, and the main bypass reason is that of the merged counts.
 */
export function mergeDigests(perWorker: readonly DigestRow[][]): DigestRow[] {
  const merged = new Map<string, DigestRow>();
  for (const rows of perWorker) {
    for (const row of rows) {
      const key = `${row.kind}\u0000${row.digest}`;
      const into = merged.get(key);
      if (into === undefined) {
        merged.set(key, { ...row, bypassReasons: { ...row.bypassReasons } });
        continue;
      }
      into.count += row.count;
      into.hits += row.hits;
      into.misses += row.misses;
      into.bypasses += row.bypasses;
      for (const [reason, count] of Object.entries(row.bypassReasons)) {
        into.bypassReasons[reason] = (into.bypassReasons[reason] ?? 0) + count;
      }
      into.mainBypassReason = mainReason(into.bypassReasons);
      into.serverCount += row.serverCount;
      into.serverMicros += row.serverMicros;
      into.maxServerMicros = Math.max(into.maxServerMicros, row.maxServerMicros);
      into.rowsServed += row.rowsServed;
      into.bytesServed += row.bytesServed;
    }
  }
  return [...merged.values()].sort(
    (a, b) => b.count - a.count || (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0),
  );
}
