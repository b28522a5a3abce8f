/**
 * The COMMITs the proxy answered for clients and still owes the server (see
 * StatementRouter.takeOwedCommit), sent within a delay when no command of the session's has
 * carried them: the server's transaction would otherwise keep its read view and metadata locks
 * while the session is idle, and DDL on its tables would wait for them.
 *
 * One timer per worker, armed only while some session owes a COMMIT: an idle worker sets none,
 * where a polling interval would wake it a hundred times a second for nothing.
 */
export class OwedCommits {
  readonly #delayMs: number;
  /** Each owing session's flush: sends its COMMIT if it can, and says whether one is still owed. */
  readonly #owing = new Set<() => boolean>();
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(delayMs: number) {
    this.#delayMs = delayMs;
  }

  /**
   * A session began owing a COMMIT: `flush` runs within the delay. A session busy then (a reply
   * still coming) is asked again one delay later, until it has sent it or no longer owes it.
   */
  add(flush: () => boolean): void {
    this.#owing.add(flush);
    if (this.#timer !== null) return;
    this.#timer = setTimeout(this.#fire, this.#delayMs);
    this.#timer.unref();
  }

  /** Sessions waiting for the timer (for tests). */
  get size(): number {
    return this.#owing.size;
  }

  /** Is the timer set (for tests: it is only while some session owes a COMMIT)? */
  get armed(): boolean {
    return this.#timer !== null;
  }

  readonly #fire = (): void => {
    this.#timer = null;
    const owing = [...this.#owing];
    this.#owing.clear();
    for (const flush of owing) if (flush()) this.add(flush);
  };
}
