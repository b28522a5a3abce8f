/**
 * A transaction the proxy has begun for its client without the server: BEGIN was answered
 * with the reply the server gave this session's same BEGIN before, and the SELECTs since have
 * all been hits. While that lasts, a read-only transaction costs the server nothing, not even
 * BEGIN and COMMIT.
 *
 * What the client sees must be one snapshot of the committed state, as InnoDB would give:
 * - Every hit is checked against the sequence number read at BEGIN (`snapshotSeq`): no table it
 *   reads was written since, nor is being written. Its tables are then the same from BEGIN to
 *   the hit, so every hit equals the committed state at any moment in between, the moment
 *   InnoDB would take the snapshot at the first read included.
 * - The first statement the cache cannot answer starts the transaction on the server. If hits
 *   were served, REPEATABLE READ needs the server's snapshot to equal them: it is started WITH
 *   CONSISTENT SNAPSHOT, and once its reply is in (the snapshot is taken), the tables the hits
 *   read are checked again. So it is too when that statement is a plain read sent in the same
 *   write: the proxy must know the snapshot is taken before it serves the hits that follow, and
 *   a read does not always take it (one of a table that is not InnoDB, whose engine the proxy
 *   may not even know without an admin account, and one InnoDB answers without reading a row:
 *   `WHERE 1=0`, `LIMIT 0`). Taken right before that read, it is where InnoDB takes it for a
 *   read that reads a row; otherwise it is earlier than InnoDB's, which the transaction still
 *   sees whole. A write that committed before the server's snapshot was either still marked
 *   in flight or had raised its table's number by then, so it is seen; the
 *   transaction then cannot go on with the results it already gave, and ends the way InnoDB
 *   ends a transaction whose snapshot is no longer valid (ER_CHECKREAD, rolled back).
 * - READ COMMITTED reads anew at every statement: hits only need to be fresh when served, and
 *   the server's transaction is started with the client's own BEGIN.
 */
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import type { TableRef } from '../sql/statement-classifier.ts';

/** One per session, reused from one transaction to the next. */
export class DeferredTransaction {
  /** The client's BEGIN, as the server would have received it. */
  begin: Buffer = EMPTY;
  /** The access mode BEGIN named, if it named one. */
  access: 'read-only' | 'read-write' | null = null;
  repeatableRead = true;
  /** The registry's sequence when BEGIN was answered. */
  snapshotSeq = 0;
  /** The registry's sequence when the server was asked to start it. */
  seqBeforeOpening = 0;
  /**
   * What starts it on the server goes with a plain read (not a locking one) in the same write:
   * it is started WITH CONSISTENT SNAPSHOT even if no hit was served (see the file's comment).
   */
  opensWithRead = false;
  /** The registry slots of every hit served so far (arrays shared with the statement memo). */
  readonly #served: Int32Array[] = [];
  /** What each of those hits read, for the error that names a table. */
  readonly #reads: Array<readonly TableRef[]> = [];

  start(
    begin: Buffer,
    access: 'read-only' | 'read-write' | null,
    repeatableRead: boolean,
    snapshotSeq: number,
  ): void {
    this.begin = begin;
    this.access = access;
    this.repeatableRead = repeatableRead;
    this.snapshotSeq = snapshotSeq;
    this.opensWithRead = false;
    this.#served.length = 0;
    this.#reads.length = 0;
  }

  /** A hit reading `slots` (the tables `reads`) was served in the transaction. */
  served(slots: Int32Array, reads: readonly TableRef[]): void {
    const served = this.#served;
    // Repeated reads of the same tables are common: their arrays are the memo's, so compare.
    if (served.length > 0 && served[served.length - 1] === slots) return;
    served.push(slots);
    this.#reads.push(reads);
  }

  /**
   * Must the server's transaction be started with a snapshot, taken when its start is answered
   * (and the hits served, if any, checked against it)?
   */
  get needsSnapshot(): boolean {
    return this.repeatableRead && (this.#served.length > 0 || this.opensWithRead);
  }

  /** What starts the transaction on the server (a COM_QUERY payload). */
  opening(): Buffer {
    if (!this.needsSnapshot) return this.begin;
    if (this.access === null) return OPEN;
    return this.access === 'read-only' ? OPEN_READ_ONLY : OPEN_READ_WRITE;
  }

  /**
   * Once the server has taken its snapshot: the name of a table a hit read that was written
   * since BEGIN, or is being written (the hits then do not equal the snapshot), or null.
   */
  changedTable(registry: InvalidationRegistry): string | null {
    const seq = this.snapshotSeq;
    const served = this.#served;
    for (let i = 0; i < served.length; i++) {
      if (!registry.isFresh(served[i]!, seq, seq)) return this.#reads[i]![0]?.name ?? '';
    }
    return null;
  }
}

const EMPTY = Buffer.alloc(0);

/** A COM_QUERY payload of `sql` (each character one byte, as the router reads texts). */
export function queryPayload(sql: string): Buffer {
  return Buffer.concat([Buffer.from([0x03]), Buffer.from(sql, 'latin1')]);
}

const OPEN = queryPayload('START TRANSACTION WITH CONSISTENT SNAPSHOT');
const OPEN_READ_WRITE = queryPayload('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE');
const OPEN_READ_ONLY = queryPayload('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
/** Ends a server transaction whose snapshot the hits served before it do not match. */
export const ROLLBACK_PAYLOAD = queryPayload('ROLLBACK');
