import { keyHashOf } from './result-store.ts';

/**
 * Identical misses in one worker wait for the first instead of all asking the server (a
 * stampede after an invalidation, say). A flight is one miss on its way to the server; others
 * with the same key wait for it, then look the cache up again. Waiting is bounded: past
 * `maxWaitMs` the waiters go to the server themselves, so one slow query never holds others up
 * for longer than that.
 *
 * Flights are kept by the key's hash (keyHashOf, which the lookup computed already), not by the
 * key: a miss's key is a new string, and a Map keyed by it has V8 hash its characters once more.
 * Nor in a Map by the hash: every miss adds and removes an entry, and a Map's table, full of
 * removed entries, is made anew every few misses. They are in a fixed table of places, by the
 * hash's low bits, many more than misses a worker has in flight at once. Two keys of one place
 * share it: a miss joins a flight only of its own key, and a flight started for another key takes
 * the place over (the earlier one's waiters still wake; a miss of its key asks the server itself).
 */
export class Flight {
  readonly startedAt: number;
  /** The key and its hash: none for a flight that is no miss's (a reload, a digest gathering). */
  readonly key: string;
  readonly hash: number;
  /** Made when the first waiter comes: most flights have none. */
  #waiters: Array<() => void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** The waiters were let go: newcomers do not wait for this flight any more. */
  expired = false;

  constructor(startedAt: number, key = '', hash = 0) {
    this.startedAt = startedAt;
    this.key = key;
    this.hash = hash;
  }

  wait(wake: () => void, maxWaitMs: number): void {
    (this.#waiters ??= []).push(wake);
    this.#timer ??= setTimeout(() => this.land(), maxWaitMs);
  }

  /** The reply is in (stored or not), or the flight was abandoned: every waiter goes on. */
  land(): void {
    this.expired = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const waiters = this.#waiters;
    if (waiters === null) return;
    this.#waiters = null;
    // Each waiter is another session: it resumes on its own turn of the event loop, not inside
    // the session whose reply just ended.
    for (const wake of waiters) setImmediate(wake);
  }
}

/** Places for flights (a power of two). */
const PLACES = 4096;

export class SingleFlight {
  readonly #places = new Array<Flight | undefined>(PLACES);
  readonly maxWaitMs: number;

  constructor(maxWaitMs: number) {
    this.maxWaitMs = maxWaitMs;
  }

  /** The flight a miss of `key` may wait for, or null; `hash` is keyHashOf(key). */
  joinable(key: string, now: number, hash: number = keyHashOf(key)): Flight | null {
    const flight = this.#places[hash & (PLACES - 1)];
    if (
      flight === undefined ||
      flight.expired ||
      now - flight.startedAt >= this.maxWaitMs ||
      flight.key !== key
    )
      return null;
    return flight;
  }

  start(key: string, now: number, hash: number = keyHashOf(key)): Flight {
    const flight = new Flight(now, key, hash);
    this.#places[hash & (PLACES - 1)] = flight;
    return flight;
  }

  finish(flight: Flight): void {
    const place = flight.hash & (PLACES - 1);
    if (this.#places[place] === flight) this.#places[place] = undefined;
    flight.land();
  }
}
