/**
 * What SHOW STATUS tells of the binlog follower, shared by the main thread (its only writer, plain
 * stores) with the workers that answer SHOW STATUS, in one small SharedArrayBuffer.
 */

export const FollowerState = {
  /** --binlog off, or no binlog to follow: writes made elsewhere are not seen. */
  OFF: 0,
  CONNECTING: 1,
  /** Streaming and within the lag bound: hits are served. */
  FOLLOWING: 2,
  /** Streaming but further behind than --binlog-max-lag: no hits until it catches up. */
  BEHIND: 3,
  /** The link is down; reconnecting. No hits meanwhile. */
  DISCONNECTED: 4,
} as const;
const STATE_NAMES = ['off', 'connecting', 'following', 'behind', 'disconnected'];

const STATE = 0;
const EVENTS = 1;
const TRANSACTIONS = 2;
const RECONNECTS = 3;
const LAG_MS = 4;
const INVALIDATIONS_ALL = 5;
const GTID_DOMAIN = 6;
const GTID_SERVER = 7;
const GTID_SEQUENCE = 8;
const VISIBILITY_CHECKS = 9;
const UNCONFIRMED = 10;
const WORDS = 11;

export class FollowerStatus {
  readonly buffer: SharedArrayBuffer;
  readonly #words: Float64Array;

  static allocate(): SharedArrayBuffer {
    const buffer = new SharedArrayBuffer(WORDS * Float64Array.BYTES_PER_ELEMENT);
    new Float64Array(buffer)[GTID_DOMAIN] = -1;
    return buffer;
  }

  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#words = new Float64Array(buffer);
  }

  set state(state: number) {
    this.#words[STATE] = state;
  }

  get state(): number {
    return this.#words[STATE]!;
  }

  countEvent(): void {
    this.#words[EVENTS]!++;
  }

  countTransaction(): void {
    this.#words[TRANSACTIONS]!++;
  }

  countReconnect(): void {
    this.#words[RECONNECTS]!++;
  }

  countInvalidationAll(): void {
    this.#words[INVALIDATIONS_ALL]!++;
  }

  countVisibilityCheck(): void {
    this.#words[VISIBILITY_CHECKS]!++;
  }

  /** Batches of commits read but not yet shown visible by the server. */
  set unconfirmed(batches: number) {
    this.#words[UNCONFIRMED] = batches;
  }

  set lagMs(lag: number) {
    this.#words[LAG_MS] = lag;
  }

  /** The last transaction seen committed. */
  setPosition(domain: number, serverId: number, sequence: bigint): void {
    this.#words[GTID_DOMAIN] = domain;
    this.#words[GTID_SERVER] = serverId;
    this.#words[GTID_SEQUENCE] = Number(sequence);
  }

  get events(): number {
    return this.#words[EVENTS]!;
  }

  get transactions(): number {
    return this.#words[TRANSACTIONS]!;
  }

  get reconnects(): number {
    return this.#words[RECONNECTS]!;
  }

  get invalidationsAll(): number {
    return this.#words[INVALIDATIONS_ALL]!;
  }

  /** A lower bound of how far behind the last commit read was; Infinity before any. */
  get lagMs(): number {
    return this.#words[LAG_MS]!;
  }

  /** Streaming within the lag bound: hits are served. */
  get following(): boolean {
    return this.#words[STATE] === FollowerState.FOLLOWING;
  }

  get visibilityChecks(): number {
    return this.#words[VISIBILITY_CHECKS]!;
  }

  /** SHOW STATUS rows, by name. */
  rows(): Array<readonly [string, string]> {
    const words = this.#words;
    const domain = words[GTID_DOMAIN]!;
    const lag = words[LAG_MS]!;
    return [
      ['Nicecache_binlog_state', STATE_NAMES[words[STATE]!] ?? 'unknown'],
      [
        'Nicecache_binlog_position',
        domain < 0 ? '' : `${domain}-${words[GTID_SERVER]!}-${words[GTID_SEQUENCE]!}`,
      ],
      ['Nicecache_binlog_events', String(words[EVENTS]!)],
      ['Nicecache_binlog_transactions', String(words[TRANSACTIONS]!)],
      ['Nicecache_binlog_reconnects', String(words[RECONNECTS]!)],
      ['Nicecache_binlog_lag_ms', Number.isFinite(lag) ? String(Math.round(lag)) : ''],
      ['Nicecache_binlog_invalidations_all', String(words[INVALIDATIONS_ALL]!)],
      ['Nicecache_binlog_visibility_checks', String(words[VISIBILITY_CHECKS]!)],
      ['Nicecache_binlog_unconfirmed_batches', String(words[UNCONFIRMED]!)],
    ];
  }
}
