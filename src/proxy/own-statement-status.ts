/**
 * What the proxy's own statements on a client's connection add to the session's status counters:
 * the session probe (one SELECT, one row) and the SELECT that puts FOUND_ROWS() back after it.
 * The client sent neither, so SHOW SESSION STATUS and INFORMATION_SCHEMA.SESSION_STATUS, which
 * the proxy rewrites anyway (status-variables.ts), take them out of the server's values:
 * Questions, Com_select, Rows_sent and Empty_queries say what the client's own statements did.
 *
 * Counted from the session's start, and again from each FLUSH STATUS, COM_CHANGE_USER and
 * COM_RESET_CONNECTION, which start the server's session counters over too. Left as they are:
 * the global counters (every session's together, where everything the proxy runs counts, its
 * metadata reads too), the byte and time counters, and the temporary tables and handler calls of
 * the rare restorer of more than a thousand rows (a recursive CTE).
 */
export class OwnStatementStatus {
  #questions = 0;
  #selects = 0;
  #rowsSent = 0;
  #emptyQueries = 0;

  /** A SELECT of the proxy's own ran; it sent `rows` rows (null: it failed). */
  selected(rows: number | null): void {
    this.#questions++;
    this.#selects++;
    if (rows === null) return;
    this.#rowsSent += rows;
    if (rows === 0) this.#emptyQueries++;
  }

  /** The server started the session's counters over. */
  reset(): void {
    this.#questions = this.#selects = this.#rowsSent = this.#emptyQueries = 0;
  }

  /** What to take from the server's session values, by upper-case name (only what is not 0). */
  less(): Map<string, number> {
    const less = new Map<string, number>();
    if (this.#questions !== 0) less.set('QUESTIONS', this.#questions);
    if (this.#selects !== 0) less.set('COM_SELECT', this.#selects);
    if (this.#rowsSent !== 0) less.set('ROWS_SENT', this.#rowsSent);
    if (this.#emptyQueries !== 0) less.set('EMPTY_QUERIES', this.#emptyQueries);
    return less;
  }
}
