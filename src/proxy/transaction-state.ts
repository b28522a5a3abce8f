/**
 * A session's transaction as the cache must see it, learned from the status flags of the
 * server's replies rather than from the statements (implicit commits, autocommit=0, XA, errors
 * that roll back: the flags tell what really happened).
 *
 * - Writes inside a transaction stay "in flight" in the registry until the transaction ends, so
 *   no session is served, and no session stores, a result that could miss or include them before
 *   they commit. The tables held are also this session's own writes, which it reads from the
 *   server only.
 * - The snapshot: the registry sequence read before the transaction's first statement was sent.
 *   A REPEATABLE READ transaction sees the data as of a moment no earlier than that, so a cached
 *   result is what it would see when none of its tables moved past the number (and, once stored,
 *   a result read inside it is good exactly as long as that stays true). InnoDB takes the
 *   snapshot when it first reads a row, not at BEGIN, so hits wait until a read is known to
 *   have (StatementRouter's readTookSnapshot), or the transaction began WITH CONSISTENT
 *   SNAPSHOT.
 */
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import { ServerStatus } from '../protocol/constants.ts';
import type { Isolation } from './session-probe.ts';

/** The registry marks a statement set before it was sent. */
export interface WriteMarks {
  slots: Int32Array | null;
  everything: boolean;
  schemaChange: boolean;
  /**
   * A schema change known to leave stored routines and events alone (DDL of a named table,
   * index, sequence, view or trigger outside the mysql schema): they are not read again.
   */
  leavesPrograms: boolean;
  /**
   * What the command changes is not transactional (COM_REFRESH's FLUSH): it is in force at its
   * reply, so the marks go then, even when the session's transaction state is unknown after an
   * error and the transaction's own writes stay held.
   */
  untilReply?: boolean;
  /**
   * A CALL of a procedure that runs no DDL but temporary tables': the ones it may have created
   * ("schema.table"), whether it succeeded or not.
   */
  temporaries?: readonly string[];
  /**
   * It writes the tables stored programs live in (mysql.proc, mysql.event, mysql.func), by DDL
   * or by hand: the schema catalogs pause before reading them again.
   */
  programTables?: boolean;
  /**
   * Slots this session's own reads take as written, which the registry is not told of: an
   * INSERT that only adds rows marks its table's "some row" for everyone, but the session that
   * wrote reads the rows it added before they are committed, whichever rows they are, so none
   * of its reads of the table is served or stored until they are.
   */
  ownSlots?: Int32Array;
}

/** Status bits a cached reply must carry as the session's, not as they were when it was stored. */
export const SESSION_STATUS_BITS =
  ServerStatus.IN_TRANS | ServerStatus.AUTOCOMMIT | ServerStatus.IN_TRANS_READONLY;

export class TransactionState {
  readonly #registry: InvalidationRegistry;
  /** The last status flags the server reported. */
  status: number = ServerStatus.AUTOCOMMIT;
  snapshotSeq = 0;
  snapshotEstablished = false;
  /** The level the open transaction runs at (null: unknown); SET SESSION does not change it. */
  isolation: Isolation | null = null;
  /**
   * SET TRANSACTION (without SESSION) set an isolation level for the next transaction only,
   * which the probe cannot see: no caching until a transaction has ended.
   */
  isolationOverride = false;
  readonly #held = new Set<number>();
  #heldEverything = false;
  /** Own slots (WriteMarks.ownSlots) of writes sent and not answered yet, each with a count. */
  readonly #ownSent = new Map<number, number>();
  /** Own slots of this transaction's answered writes, until it ends. */
  readonly #ownHeld = new Set<number>();
  /** This session wrote the program tables: counted in the registry until it closes. */
  #wroteProgramTables = false;

  constructor(registry: InvalidationRegistry) {
    this.#registry = registry;
  }

  get inTransaction(): boolean {
    return (this.status & ServerStatus.IN_TRANS) !== 0;
  }

  get autocommit(): boolean {
    return (this.status & ServerStatus.AUTOCOMMIT) !== 0;
  }

  /** Did this transaction write any of `slots` (or something it could not name)? */
  wrote(slots: Int32Array): boolean {
    if (this.#heldEverything) return true;
    if (this.#held.size === 0 && this.#ownSent.size === 0 && this.#ownHeld.size === 0) {
      return false;
    }
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (this.#held.has(slot) || this.#ownHeld.has(slot) || this.#ownSent.has(slot)) return true;
    }
    return false;
  }

  /** Marks the registry before a write is sent. */
  begin(marks: WriteMarks): void {
    if (marks.schemaChange) this.#registry.beginSchemaChange();
    if (marks.everything) this.#registry.beginWriteEverything();
    else if (marks.slots !== null) for (const slot of marks.slots) this.#registry.beginWrite(slot);
    const own = marks.ownSlots;
    if (own !== undefined) {
      for (const slot of own) this.#ownSent.set(slot, (this.#ownSent.get(slot) ?? 0) + 1);
    }
  }

  /**
   * A reply ended. `status` is -1 after an error: the transaction state is then kept as it was,
   * since holding marks longer is always safe.
   */
  onReply(
    status: number,
    seqBefore: number,
    marks: WriteMarks | null,
    establishesSnapshot: boolean,
    setsIsolation: boolean,
    isolation: Isolation | null,
  ): void {
    const wasIn = this.inTransaction;
    if (status >= 0) this.status = status;
    const nowIn = status >= 0 ? this.inTransaction : wasIn || !this.autocommit;
    if (!wasIn && nowIn) {
      this.snapshotSeq = seqBefore;
      this.snapshotEstablished = establishesSnapshot;
      this.isolation = this.isolationOverride ? null : isolation;
    } else if (nowIn && establishesSnapshot) {
      this.snapshotEstablished = true;
    }
    if (marks !== null) {
      if (nowIn && marks.untilReply !== true) this.#hold(marks);
      else this.#release(marks);
      if (marks.ownSlots !== undefined) this.#answered(marks.ownSlots, nowIn);
      if (marks.schemaChange) this.#endSchemaChange(marks);
    }
    if (!nowIn) {
      this.#releaseHeld();
      if (!setsIsolation) this.isolationOverride = false;
    }
    // SET TRANSACTION without a scope: the next transaction runs at a level the probe cannot see.
    if (setsIsolation && status >= 0) this.isolationOverride = true;
  }

  /** The connection is gone: the server rolls back, so whatever is held can go. */
  releaseAll(): void {
    this.#releaseHeld();
    if (this.#wroteProgramTables) {
      this.#wroteProgramTables = false;
      this.#registry.closeProgramTableWriter();
    }
  }

  /** Marks of a statement whose reply will never come (connection lost). */
  abandon(marks: WriteMarks): void {
    this.#release(marks);
    if (marks.ownSlots !== undefined) this.#answered(marks.ownSlots, false);
    if (marks.schemaChange) this.#endSchemaChange(marks);
  }

  /** A write with own slots `own` was answered (or never will be): held while `inTransaction`. */
  #answered(own: Int32Array, inTransaction: boolean): void {
    for (const slot of own) {
      const sent = (this.#ownSent.get(slot) ?? 1) - 1;
      if (sent > 0) this.#ownSent.set(slot, sent);
      else this.#ownSent.delete(slot);
      if (inTransaction) this.#ownHeld.add(slot);
    }
  }

  #endSchemaChange(marks: WriteMarks): void {
    const programTables = marks.programTables === true;
    // Counted before the change ends: a catalog woken by its end finds the session open.
    if (programTables && !this.#wroteProgramTables) {
      this.#wroteProgramTables = true;
      this.#registry.openProgramTableWriter();
    }
    this.#registry.endSchemaChange(!marks.leavesPrograms, programTables);
  }

  #hold(marks: WriteMarks): void {
    const registry = this.#registry;
    if (marks.everything) {
      if (this.#heldEverything) registry.endWriteEverything();
      else this.#heldEverything = true;
      return;
    }
    if (marks.slots === null) return;
    for (const slot of marks.slots) {
      // One mark per slot is enough; a second one is released at once.
      if (this.#held.has(slot)) registry.endWrite(slot);
      else this.#held.add(slot);
    }
  }

  #release(marks: WriteMarks): void {
    const registry = this.#registry;
    if (marks.everything) registry.endWriteEverything();
    else if (marks.slots !== null) for (const slot of marks.slots) registry.endWrite(slot);
  }

  /**
   * Runs after every reply outside a transaction, where the sets are nearly always empty: an
   * iterator over an empty Set, and clearing one (V8 gives it a new table), would be garbage
   * made per statement.
   */
  #releaseHeld(): void {
    if (this.#held.size > 0) {
      for (const slot of this.#held) this.#registry.endWrite(slot);
      this.#held.clear();
    }
    if (this.#ownHeld.size > 0) this.#ownHeld.clear();
    if (this.#heldEverything) {
      this.#heldEverything = false;
      this.#registry.endWriteEverything();
    }
  }
}
