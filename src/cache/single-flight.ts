/**
 * Identical misses in one worker wait for the first instead of all asking the server (a
 * stampede after an invalidation, say). A flight is one miss on its way to the server; others
 * with the same key wait for it, then look the cache up again. Waiting is bounded: past
 * `maxWaitMs` the waiters go to the server themselves, so one slow query never holds others up
 * for longer than that.
 */
export class Flight {
  readonly startedAt: number;
  /** Made when the first waiter comes: most flights have none. */
  #waiters: Array<() => void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** The waiters were let go: newcomers do not wait for this flight any more. */
  expired = false;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
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

export class SingleFlight {
  readonly #flights = new Map<string, Flight>();
  readonly maxWaitMs: number;

  constructor(maxWaitMs: number) {
    this.maxWaitMs = maxWaitMs;
  }

  /** The flight a miss of `key` may wait for, or null. */
  joinable(key: string, now: number): Flight | null {
    const flight = this.#flights.get(key);
    if (flight === undefined || flight.expired || now - flight.startedAt >= this.maxWaitMs)
      return null;
    return flight;
  }

  start(key: string, now: number): Flight {
    const flight = new Flight(now);
    this.#flights.set(key, flight);
    return flight;
  }

  finish(key: string, flight: Flight): void {
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
    flight.land();
  }
}
