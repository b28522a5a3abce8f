/**
 * Turns the tables a statement names into registry slots, knowing what the text does not say:
 * views read their base tables, triggers and cascading foreign keys write further tables.
 *
 * With an admin account (--admin-user) each worker reads that from information_schema at start
 * and again after DDL; while DDL runs or the metadata is reloading, every write invalidates
 * everything and no result is stored (a view's definition may just have changed). Without an
 * admin account the catalog is conservative for good: every write invalidates everything, so a
 * result only depends on the names it reads. Hits on results stored earlier stay safe either way.
 *
 * The metadata is trusted while the registry's schema version is the one it was read at (one
 * atomic load per question). Every worker watches that version: DDL anywhere wakes them all, and
 * each reloads as soon as the DDL has its reply, so a statement arriving meanwhile can wait for
 * the reload (`reloading`) instead of going the conservative way. A load that fails or hangs is
 * retried by itself with backoff: the catalog never stays without metadata because of one error.
 */
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import {
  keySignature,
  newRowsName,
  rowKeyValue,
  rowNameHash,
  rowSlotName,
  someRowName,
} from '../cache/row-slots.ts';
import { Flight } from '../cache/single-flight.ts';
import { TableDependencies } from '../cache/table-dependencies.ts';
import type { PointKey, TemporaryProcedure } from '../cache/table-dependencies.ts';
import { isAscii, isUnresolvableName, routineNameOf } from '../sql/name-encoding.ts';
import { KeyKind, keyValueOf } from '../sql/point-access.ts';
import { isSystemSchema } from '../sql/statement-classifier.ts';
import type { TableRef } from '../sql/statement-classifier.ts';
import type { PointAccess } from '../sql/statement-info.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import { loadSchemaSnapshot } from '../upstream/schema-metadata.ts';
import { KeptProgramRows } from '../upstream/kept-program-rows.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { Logger } from './log.ts';

export interface AdminAccount {
  user: string;
  password: string;
}

/** Writes whose tables cannot be told apart. */
export const EVERYTHING = 'everything';

/** After a failed load, how long before trying again; doubled after each failure, up to the max. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 10_000;
/** A load that takes longer is given up and retried: a wedged connection must not stall it. */
const LOAD_TIMEOUT_MS = 10_000;
/**
 * How long a statement that needs metadata waits for a reload under way before it goes the
 * conservative way (a read is not cached, a write invalidates everything).
 */
export const METADATA_WAIT_MS = 2000;
/**
 * A name the metadata does not know may be a table created behind the proxy's back (by another
 * client, or before the proxy started): the metadata is read again, at most this often.
 */
const UNKNOWN_NAME_RELOAD_MS = 1000;
/**
 * After a statement wrote the tables stored programs live in (mysql.proc, mysql.event,
 * mysql.func), the metadata is read again only once every session that wrote them has closed,
 * or this long after the last such write if one stays open. Whoever writes them by hand or
 * alters them is repairing, upgrading or testing them, and often works on their files next
 * (copies them back, replaces a broken .frm, FLUSH TABLE between steps): a read of them meanwhile
 * opens the table the server just flushed and keeps the old definition open, so the next
 * statement sees that instead of the files put in place (MariaDB's own sp-destruct test fails
 * that way). Meanwhile the catalog goes the conservative way: no result is stored, writes
 * invalidate all.
 */
export const PROGRAM_TABLES_PAUSE_MS = 30_000;
/** How often a paused catalog looks whether those sessions have closed. */
const PROGRAM_TABLES_POLL_MS = 100;

const NO_TEMPORARIES: readonly string[] = [];

/** What a point read of one base table needs besides its value (SchemaCatalog.pointRead). */
export interface PointRead {
  /** The table, qualified. */
  table: string;
  tableSlot: number;
  /** The slot every write of a row marks (for a text whose value is no row's). */
  someRowSlot: number;
  /**
   * What each of `candidates`' columns holds, and the largest value of its integer type or the
   * most characters or bytes it holds, in their order (keyValueOf).
   */
  kinds: readonly KeyKind[];
  max: readonly number[];
  /** Which of the statement's point candidates bounds it (the first of `candidates`). */
  candidate: number;
  /**
   * The statement's candidates that bound it to rows, `candidate` first (keyCandidates): with a
   * key of one column, each is a row's value, and the rows read or written are among them
   * (more than one with an IN list, or `=` twice); with a key of several, one per column in
   * the key's order, together one row's value.
   */
  candidates: readonly number[];
  /** How many columns the table's point key has. */
  width: number;
  /** rowNameHash of the table (see rowSlotOfHash). */
  rowHash: number;
  /**
   * For a point write, the slots of the other tables it writes whole besides its rows: what the
   * table's triggers and cascades write (empty for a read).
   */
  alsoWrites: Int32Array;
}

const NO_SLOTS = new Int32Array(0);

/** What a write of rows of a point table marks besides each row's slot (SchemaCatalog.rowWrite). */
export interface RowWrite {
  someRowSlot: number;
  /** rowNameHash of the table (see rowSlotOfHash). */
  rowHash: number;
}

/**
 * What a CALL runs when its procedure runs no DDL but temporary tables': the procedure's (`key`),
 * or with `key` null every procedure's of that name.
 */
function temporaryCall(target: {
  dependencies: TableDependencies;
  name: string;
  key: string | null;
}): TemporaryProcedure | null {
  const { dependencies, name, key } = target;
  return key === null
    ? dependencies.temporaryProcedureName(name)
    : dependencies.temporaryProcedure(key);
}

/**
 * The point key of table `name` that bounds `point` to rows: none when the table has none,
 * when the statement assigns a column of it (an UPDATE or ON DUPLICATE KEY UPDATE moving a
 * row), or when it is an upsert and the table has another unique key (the row it collides with
 * may be any).
 */
function boundingKey(
  dependencies: TableDependencies,
  name: string,
  point: PointAccess,
): PointKey | null {
  const key = dependencies.pointKeyOf(name);
  if (key === undefined || key.columns.some((column) => point.assigned.includes(column))) {
    return null;
  }
  return point.upsert && !key.soleUniqueKey ? null : key;
}

/**
 * Which of `point`'s candidates bound it to rows of `key`, in order: with a key of one column,
 * every candidate of that column (each a row's value: an IN list, or `=` twice); with a key of
 * several, the one candidate of each column, in the key's order (together one row's value).
 * Null when there is none, or a column of a key of several has none or more than one (an IN
 * list, several rows: the rows would be a product of values, not kept by row here).
 */
function keyCandidates(key: PointKey, point: PointAccess, table = 0): number[] | null {
  const candidates: number[] = [];
  const all = point.candidates;
  if (key.columns.length === 1) {
    const column = key.columns[0]!;
    for (let i = 0; i < all.length; i++) {
      if (all[i]!.column === column && all[i]!.table === table) candidates.push(i);
    }
    return candidates.length === 0 ? null : candidates;
  }
  for (const column of key.columns) {
    let found = -1;
    for (let i = 0; i < all.length; i++) {
      if (all[i]!.column !== column || all[i]!.table !== table) continue;
      if (found >= 0) return null;
      found = i;
    }
    if (found < 0) return null;
    candidates.push(found);
  }
  return candidates;
}

export class SchemaCatalog {
  readonly #registry: InvalidationRegistry;
  readonly #backend: BackendAddress;
  readonly #admin: AdminAccount | null;
  readonly #log: Logger;
  #dependencies: TableDependencies | null = null;
  #generation = 0;
  /** The schema version the metadata was read at; NaN before the first load. */
  #loadedVersion = NaN;
  #loading = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #retryMs = RETRY_FIRST_MS;
  #loadedAt = 0;
  /** Statements waiting for the reload under way. */
  #reloaded: Flight | null = null;
  /** The schema version being watched for a change, or NaN. */
  #watching = NaN;
  #stopped = false;
  /** Routines and events as last read: read again only after DDL that may change them. */
  readonly #programRows = new KeptProgramRows();
  /** The registry's count of writes to the program tables when this catalog last looked. */
  #programTableWrites: number;
  /** When this catalog saw the last of those writes (Date.now()); NaN when not paused for them. */
  #programTablesWrittenAt = NaN;

  constructor(
    registry: InvalidationRegistry,
    backend: BackendAddress,
    admin: AdminAccount | null,
    log: Logger,
  ) {
    this.#registry = registry;
    this.#backend = backend;
    this.#admin = admin;
    this.#log = log;
    this.#programTableWrites = registry.programTableWrites();
  }

  /** Trusted only when loaded at the current schema version (no DDL ran or runs since). */
  get current(): TableDependencies | null {
    if (this.#loadedVersion === this.#registry.schemaVersion()) return this.#dependencies;
    this.#reload();
    return null;
  }

  /**
   * Changes whenever what readSlots() answers may change; -1 while the metadata is not trusted.
   * Callers may keep slots computed under one generation for as long as it lasts.
   */
  get generation(): number {
    if (this.#admin === null) return 0;
    return this.current === null ? -1 : this.#generation;
  }

  /**
   * While the metadata is behind the schema version and a reload is under way (no DDL running:
   * its end cannot be waited for), the flight a statement that needs metadata may wait on; its
   * waiters are woken when the reload lands or fails. Null when there is nothing to wait for.
   */
  get reloading(): Flight | null {
    if (this.#admin === null || this.#loadedVersion === this.#registry.schemaVersion()) return null;
    this.#reload();
    const flight = this.#reloaded;
    // A load slower than the wait bound: later statements do not wait for it either.
    return this.#loading && flight !== null && !flight.expired ? flight : null;
  }

  /** Starts loading at once (the proxy's startup), instead of at the first statement. */
  warmUp(): void {
    this.#reload();
  }

  /** No more reloads or timers (the worker is draining). */
  stop(): void {
    this.#stopped = true;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    this.#land();
  }

  /**
   * The slots a read of `tables` depends on, or null when one of them is unknown (a table or view
   * created since the load, or the metadata is not trusted now): such a result is not stored.
   */
  readSlots(
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess | null = null,
    values: ReadonlyArray<string | null> | null = null,
  ): Int32Array | null {
    if (this.#admin === null) return this.#ownSlots(tables, schema);
    const dependencies = this.current;
    if (dependencies === null) return null;
    const slots: number[] = [];
    // A point read (one base table, bounded to one value of its point key, or a few; or each
    // table of a join so bounded) depends on those values' rows: their row slots, not the
    // table's "some row" slot.
    const rows =
      point === null || values === null
        ? null
        : this.#readRows(dependencies, tables, schema, point, values);
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) return null;
      const bases = dependencies.readsOf(name);
      if (bases === null) {
        // System schemas are never in the metadata, names it cannot hold are never found in
        // it: neither is news.
        const owner = table.schema ?? schema;
        if (
          owner !== null &&
          !isSystemSchema(owner) &&
          !isUnresolvableName(owner) &&
          !isUnresolvableName(table.name) &&
          dependencies.engineOf(name) === undefined &&
          !dependencies.isView(name)
        ) {
          this.#reloadForUnknownName();
        }
        return null;
      }
      this.#addSlot(slots, name);
      for (const base of bases) {
        this.#addSlot(slots, base);
        // Any other read of a table with a point key is made stale by a write to any row,
        // as is a read of it through a view or a MERGE table, even beside a bounded one.
        if (dependencies.pointKeyOf(base) === undefined) continue;
        const bounded = base === name ? rows?.get(base) : undefined;
        if (bounded !== undefined) {
          for (const value of bounded) this.#addSlot(slots, rowSlotName(base, value));
        } else {
          this.#addSlot(slots, someRowName(base));
        }
      }
    }
    return Int32Array.from(slots);
  }

  /**
   * What a point read of `tables` needs besides the value, alike for every text of its shape
   * (statement-memo.ts); null when its reads are no point read under this metadata. A text's
   * slots are then [tableSlot, rowSlot(table, its value)], or [tableSlot, someRowSlot] when its
   * value is not one (out of the column's range), as readSlots gives them.
   */
  pointRead(
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess,
  ): PointRead | null {
    const dependencies = this.#admin === null ? null : this.current;
    if (dependencies === null || tables.length !== 1 || point.joined !== null) return null;
    const name = qualify(tables[0]!, schema);
    if (name === null) return null;
    const key = boundingKey(dependencies, name, point);
    if (key === null) return null;
    const bases = dependencies.readsOf(name);
    if (bases === null || bases.length !== 1 || bases[0] !== name) return null;
    const candidates = keyCandidates(key, point);
    if (candidates === null) return null;
    const width = key.columns.length;
    return {
      table: name,
      tableSlot: this.#registry.slotOf(name),
      someRowSlot: this.#registry.slotOf(someRowName(name)),
      kinds: candidates.map((_, index) => key.kinds[width === 1 ? 0 : index]!),
      max: candidates.map((_, index) => key.max[width === 1 ? 0 : index]!),
      candidate: candidates[0]!,
      candidates,
      width,
      rowHash: rowNameHash(name),
      alsoWrites: NO_SLOTS,
    };
  }

  /**
   * pointRead for a write: also null unless the write changes no row of its table but those it
   * names (#alsoWritten), as writeSlots asks of a point write. The write then marks
   * [someRowSlot, its rows' slots, alsoWrites].
   */
  pointWrite(
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess,
  ): PointRead | null {
    const read = this.pointRead(tables, schema, point);
    const dependencies = this.current;
    if (read === null || dependencies === null) return null;
    const also = this.#alsoWritten(dependencies, read.table);
    return also === null ? null : { ...read, alsoWrites: also };
  }

  /**
   * What an INSERT that only adds rows (StatementInfo.addsRowsOnly) of `tables` marks: when it
   * is one base table with a point key, the table's "some row" and "new rows" slots, and the
   * tables its triggers write, whole (#alsoWritten). Every row it adds is one no row had the key
   * of before (a BEFORE trigger that sets the key only picks which), so it changes no read that
   * found its row; only those that found none (which depend on "new rows", see newRowsSlotsOf)
   * and every read not bounded to one row. `tableSlot` is what the writing session's own reads
   * must take as written: it reads the rows it added before they are committed, whichever they
   * are. Null when the write is a write of the table.
   */
  rowsAddedTo(
    tables: readonly TableRef[],
    schema: string | null,
  ): { slots: Int32Array; tableSlot: number } | null {
    const dependencies = this.#admin === null ? null : this.current;
    if (dependencies === null || tables.length !== 1) return null;
    const name = qualify(tables[0]!, schema);
    if (name === null || dependencies.pointKeyOf(name) === undefined) return null;
    const bases = dependencies.readsOf(name);
    if (bases === null || bases.length !== 1 || bases[0] !== name) return null;
    const also = this.#alsoWritten(dependencies, name, false);
    if (also === null) return null;
    const slots: number[] = [];
    this.#addSlot(slots, someRowName(name));
    this.#addSlot(slots, newRowsName(name));
    for (const slot of also) if (!slots.includes(slot)) slots.push(slot);
    return { slots: Int32Array.from(slots), tableSlot: this.#registry.slotOf(name) };
  }

  /**
   * The "new rows" slots of `tables`: what a point read's result depends on besides its table
   * and row when it does not show its row exists (no row found, or an aggregate), since an
   * INSERT that only adds rows marks no row slot (rowsAddedTo). Null when a name cannot be
   * qualified.
   */
  newRowsSlotsOf(tables: readonly TableRef[], schema: string | null): Int32Array | null {
    const slots = new Int32Array(tables.length);
    for (let i = 0; i < tables.length; i++) {
      const name = qualify(tables[i]!, schema);
      if (name === null) return null;
      slots[i] = this.#registry.slotOf(newRowsName(name));
    }
    return slots;
  }

  /**
   * The slot of a row whose name's hash is `hash`, made without a string: rowHashOf,
   * rowTextHashOf or rowKeyHashOf from a table's rowNameHash (row-slots.ts), or nameHash of the
   * row's value from it (no string of the table's name and the value together).
   */
  rowSlotOfHash(hash: number): number {
    return this.#registry.slotOfHash(hash);
  }

  /**
   * What a row event's write of rows of `table`, known by their values of `columns` (the
   * binlog follower reads them; their keySignature, in the key's order), marks besides each
   * row's slot: null unless `columns` is the table's point key and the event writes no other
   * table unlogged (no cascade, no MERGE over it; a trigger's writes are row events of their
   * own). The table must then be taken as written whole.
   */
  rowWrite(table: TableRef, columns: string): RowWrite | null {
    const dependencies = this.#admin === null ? null : this.current;
    if (dependencies === null) return null;
    const name = qualify(table, null);
    const key = name === null ? undefined : dependencies.pointKeyOf(name);
    if (name === null || key === undefined || keySignature(key.columns, key.kinds) !== columns) {
      return null;
    }
    const bases = dependencies.readsOf(name);
    if (bases === null || bases.length !== 1 || bases[0] !== name) return null;
    if (!dependencies.rowEventsWriteItselfOnly(name)) return null;
    return {
      someRowSlot: this.#registry.slotOf(someRowName(name)),
      rowHash: rowNameHash(name),
    };
  }

  /**
   * The rows each base table a point read bounds is read at (by its qualified name): the one
   * table of a statement of one (#pointRows), or each table of a join that a top-level
   * conjunct bounds by its name or alias, named once among the statement's tables. Null when
   * none is.
   */
  #readRows(
    dependencies: TableDependencies,
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess,
    values: ReadonlyArray<string | null>,
  ): Map<string, string[]> | null {
    const joined = point.joined;
    if (joined === null) {
      if (tables.length !== 1) return null;
      const rows = this.#pointRows(dependencies, tables[0]!, schema, point, values);
      return rows === null ? null : new Map([[rows.table, rows.values]]);
    }
    // Each table by its names lowercased, the default schema's where none is written: a table
    // that two references name (a self-join, however spelt) is bounded by neither, nor is one
    // that two of the statement's tables might be (`C` and `c`, where names are case-sensitive).
    const lowSchema = schema?.toLowerCase() ?? null;
    const keyOf = (owner: string | null, name: string): string => `${owner ?? lowSchema}.${name}`;
    const references = joined.map((table) => keyOf(table.schema, table.name));
    const keys = tables.map((table) =>
      keyOf(table.schema?.toLowerCase() ?? null, table.name.toLowerCase()),
    );
    let bounded: Map<string, string[]> | null = null;
    for (let i = 0; i < tables.length; i++) {
      const key = keys[i]!;
      const reference = references.indexOf(key);
      if (reference < 0 || references.lastIndexOf(key) !== reference) continue;
      if (keys.indexOf(key) !== i || keys.lastIndexOf(key) !== i) continue;
      const rows = this.#pointRows(dependencies, tables[i]!, schema, point, values, reference);
      if (rows !== null) (bounded ??= new Map()).set(rows.table, rows.values);
    }
    return bounded;
  }

  /**
   * The table and row values a point statement is bounded to: the one base table it names,
   * stored in no other, and every value this text gives its point key's candidates (the rows
   * are among them: an IN list's values are each a candidate, point-access.ts), or for a key of
   * several columns the one row their values name (rowKeyValue). Null when the key is not
   * bounded by them, or one value is no row's (out of the column's range, or 0 into
   * AUTO_INCREMENT).
   */
  #pointRows(
    dependencies: TableDependencies,
    table: TableRef,
    schema: string | null,
    point: PointAccess,
    values: ReadonlyArray<string | null>,
    reference = 0,
  ): { table: string; values: string[] } | null {
    const name = qualify(table, schema);
    if (name === null) return null;
    const key = boundingKey(dependencies, name, point);
    if (key === null) return null;
    const bases = dependencies.readsOf(name);
    if (bases === null || bases.length !== 1 || bases[0] !== name) return null;
    const candidates = keyCandidates(key, point, reference);
    if (candidates === null) return null;
    const width = key.columns.length;
    const rows: string[] = [];
    for (let i = 0; i < candidates.length; i++) {
      const value = values[candidates[i]!];
      if (value === null || value === undefined) {
        // Not this text's (a placeholder, or another text of the shape's, see statement-memo.ts):
        // within an IN list, a row it may write unbounded. Beside `=` the other values bound
        // the rows (they are among each's). A key of several columns needs each one's.
        if (point.inList || width > 1) return null;
        continue;
      }
      const column = width === 1 ? 0 : i;
      const kind = key.kinds[column]!;
      const row = keyValueOf(value, kind, key.max[column]!);
      if (row === null || (point.insert && kind === KeyKind.INTEGER && row === '0')) return null;
      rows.push(row);
    }
    if (rows.length === 0) return null;
    return { table: name, values: width === 1 ? rows : [rowKeyValue(rows)] };
  }

  /**
   * The slots a write of `tables` invalidates, or EVERYTHING. A point write (one table with a
   * point key, bounded to one value of it or a few (an IN list), assigning no new one, with no
   * trigger, no cascade and no other table its rows are stored in) invalidates those values' row
   * slots and the table's "some row" slot only: the reads of other rows stay good.
   */
  writeSlots(
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess | null = null,
    values: ReadonlyArray<string | null> | null = null,
  ): Int32Array | typeof EVERYTHING {
    const dependencies = this.current;
    if (dependencies === null) return EVERYTHING;
    const names: string[] = [];
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) return EVERYTHING;
      names.push(name);
    }
    return (
      this.pointWriteSlots(tables, schema, point, values) ?? this.#writeSlotsOf(names, dependencies)
    );
  }

  /**
   * What a point write of `tables` marks, [someRowSlot, its rows' slots] (see writeSlots), or
   * null when it is no point write under this metadata.
   */
  pointWriteSlots(
    tables: readonly TableRef[],
    schema: string | null,
    point: PointAccess | null,
    values: ReadonlyArray<string | null> | null,
  ): Int32Array | null {
    const dependencies = this.current;
    if (
      dependencies === null ||
      tables.length !== 1 ||
      point === null ||
      values === null ||
      this.#admin === null
    ) {
      return null;
    }
    const rows = this.#pointRows(dependencies, tables[0]!, schema, point, values);
    if (rows === null) return null;
    const also = this.#alsoWritten(dependencies, rows.table);
    if (also === null) return null;
    const slots: number[] = [];
    this.#addSlot(slots, someRowName(rows.table));
    for (const value of rows.values) this.#addSlot(slots, rowSlotName(rows.table, value));
    for (const slot of also) if (!slots.includes(slot)) slots.push(slot);
    return Int32Array.from(slots);
  }

  /**
   * What a write of rows of point table `name` bounded by its key marks besides them: the slots
   * of the other tables it writes (its triggers', its cascades', and so on), whole. Null when
   * the write may change rows of the table other than those: when what it writes cannot be told,
   * a trigger or cascade on the way writes the table back (a foreign key to itself, say), or,
   * for a write that names its rows (`named`), a BEFORE trigger may set the key (the row lands
   * elsewhere).
   */
  #alsoWritten(dependencies: TableDependencies, name: string, named = true): Int32Array | null {
    const written = dependencies.writesOf(name);
    if (written === 'everything' || dependencies.writesBackInto(name)) return null;
    if (named && dependencies.pointKeyOf(name)?.movedByTriggers !== false) return null;
    if (written.length === 1) return NO_SLOTS;
    const others = this.#writeSlotsOf(
      written.filter((table) => table !== name),
      dependencies,
    );
    return others === EVERYTHING ? null : others;
  }

  /**
   * The slots writing the tables `names` ("schema.table") invalidates, as for writeSlots.
   * `temporaries`: names a procedure creates as temporary tables, whose writes it writes.
   */
  #writeSlotsOf(
    names: readonly string[],
    dependencies: TableDependencies,
    temporaries: readonly string[] = NO_TEMPORARIES,
  ): Int32Array | typeof EVERYTHING {
    const slots: number[] = [];
    for (const name of names) {
      // A name the metadata does not know may be a view created behind our back, or spelt in
      // another character set: its writes cannot be traced. Unless the procedure creates a
      // temporary table of that name: a write to it then writes that table, or a base table
      // created behind the proxy's back since the load, whose own slot it marks (as for any
      // table, what such a table's triggers write is not known before the next load).
      if (dependencies.engineOf(name) === undefined && dependencies.readsOf(name) === null) {
        if (!temporaries.includes(name)) return EVERYTHING;
        this.#addSlot(slots, name);
        continue;
      }
      const written = dependencies.writesOf(name);
      if (written === 'everything') return EVERYTHING;
      this.#addSlot(slots, name);
      for (const other of written) this.#addSlot(slots, other);
    }
    return Int32Array.from(slots);
  }

  /**
   * The slots a CALL of a procedure known to run no DDL (or none but temporary tables')
   * invalidates: those of the tables its body and the procedures it calls write (see
   * callRunsNoDdl for `schema`), with their triggers' and cascades'; null when that cannot be
   * told (everything).
   */
  callWriteSlots(procedure: TableRef, schema: string | null | undefined): Int32Array | null {
    const target = this.#callTarget(procedure, schema, '');
    if (target === null) return null;
    const { dependencies, name, key } = target;
    const temporary = temporaryCall(target);
    const written =
      (key === null ? dependencies.nameWrites(name) : dependencies.procedureWrites(key)) ??
      temporary?.writes ??
      null;
    if (written === null) return null;
    const slots = this.#writeSlotsOf(written, dependencies, temporary?.temporaries);
    return slots === EVERYTHING ? null : slots;
  }

  /**
   * Without metadata every write invalidates everything, so a result depends on the names it
   * reads alone: a view's base tables cannot change without an "everything" write.
   */
  #ownSlots(tables: readonly TableRef[], schema: string | null): Int32Array | null {
    const slots: number[] = [];
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) return null;
      this.#addSlot(slots, name);
    }
    return Int32Array.from(slots);
  }

  /**
   * May reading these tables write (a view calling a stored function)? Without metadata the
   * names cannot be told apart from base tables: see the README's limits.
   */
  readsMayWrite(tables: readonly TableRef[], schema: string | null): boolean {
    if (this.#admin === null) return false;
    const dependencies = this.current;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) continue;
      // The metadata cannot tell what it is: maybe a view of any kind.
      if (unresolvable(table, schema)) return true;
      if (dependencies === null) {
        // While the metadata reloads, a name it did not know may be a new view of any kind.
        if (this.#dependencies?.engineOf(name) === undefined) return true;
        continue;
      }
      if (dependencies.readMayWrite(name)) return true;
    }
    return false;
  }

  /**
   * Do these tables include a view that calls stored functions (SchemaSnapshot.functionViews),
   * through any view it reads? Asked of the metadata trusted now or, while it reloads, of the
   * last loaded (a name it did not know is judged by readsMayWrite); before any load, of any
   * table: such a read is never stored, and may change the session's variables.
   */
  readsCallFunctions(tables: readonly TableRef[], schema: string | null): boolean {
    if (this.#admin === null) return false;
    const dependencies = this.current ?? this.#dependencies;
    if (dependencies === null) return tables.length > 0;
    // Asked after every statement: most schemas have no such view, and then no name is made.
    if (!dependencies.hasFunctionViews) return false;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name !== null && dependencies.readCallsFunctions(name)) return true;
    }
    return false;
  }

  /**
   * Does reading these tables read a view that says SQL_CACHE? Not while the metadata is
   * unknown: the statement is then not cached under DEMAND, as if no view asked.
   */
  requestsCache(tables: readonly TableRef[], schema: string | null): boolean {
    const dependencies = this.current;
    if (dependencies === null) return false;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name !== null && dependencies.requestsCache(name)) return true;
    }
    return false;
  }

  /** May a write to these tables fire triggers (which may change session variables too)? */
  mayHaveTriggers(tables: readonly TableRef[], schema: string | null): boolean {
    const dependencies = this.#admin === null ? null : this.current;
    if (dependencies === null) return tables.length > 0;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null || unresolvable(table, schema) || dependencies.hasTriggers(name))
        return true;
    }
    return false;
  }

  /**
   * Do `tables` include a view the metadata knows reading may write (a stored function in its
   * definition, through the views it reads), which may create a temporary table as well? Asked
   * of the metadata trusted now or, while it reloads, of the last loaded; a name it does not
   * know is no such view here (readsMayWrite assumes the worst of it for writes).
   */
  readsKnownWritingView(tables: readonly TableRef[], schema: string | null): boolean {
    const dependencies = this.#admin === null ? null : (this.current ?? this.#dependencies);
    if (dependencies === null) return false;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name !== null && dependencies.readMayWrite(name)) return true;
    }
    return false;
  }

  /**
   * May writing `tables` (all tables, for null: a procedure's writes) fire a trigger that
   * creates a temporary table? Asked of the metadata trusted now or, while it reloads (or fails
   * to), of the last loaded: a trigger is made by DDL, which a statement naming tables waits
   * for; true before any load and for a name that cannot be resolved; false without an admin
   * account, which cannot know of triggers at all (README).
   */
  writesMayCreateTables(tables: readonly TableRef[] | null, schema: string | null): boolean {
    if (this.#admin === null) return false;
    const dependencies = this.current ?? this.#dependencies;
    if (dependencies === null) return true;
    // The common case, and no name is built for it.
    if (!dependencies.anyTriggerMayCreateTables()) return false;
    if (tables === null) return true;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null || unresolvable(table, schema)) return true;
      if (dependencies.writeMayCreateTables(name)) return true;
    }
    return false;
  }

  /**
   * Is a CALL of `procedure` known to run no DDL (its body, and the bodies of the procedures it
   * calls, as loaded with the metadata trusted now)? Such a CALL leaves the metadata as it is, so
   * no worker reloads it. An unqualified name is looked up in `schema`, the current database, or
   * when that is not known (undefined) in every schema. False without trusted metadata, and for
   * a procedure it does not know: created since the load, hidden from the metadata account, or
   * named in a way it cannot resolve.
   */
  callRunsNoDdl(procedure: TableRef, schema: string | null | undefined): boolean {
    const target = this.#callTarget(procedure, schema, '');
    if (target === null) return false;
    const { dependencies, name, key } = target;
    return key === null ? dependencies.nameRunsNoDdl(name) : dependencies.runsNoDdl(key);
  }

  /**
   * The temporary tables a CALL of `procedure` may leave its session with, when the procedure
   * runs no DDL but theirs (see SchemaSnapshot.temporaryProcedures); null otherwise. Where
   * `schema` is not known (undefined), every procedure of that name must be such, or free.
   */
  callTemporaries(
    procedure: TableRef,
    schema: string | null | undefined,
  ): readonly string[] | null {
    const target = this.#callTarget(procedure, schema, '');
    return target === null ? null : (temporaryCall(target)?.temporaries ?? null);
  }

  /**
   * Are the stored functions a statement calls (StatementInfo.routineCalls; null: unreadable)
   * all known to run no DDL, as callRunsNoDdl for a procedure? An unqualified name must not be a
   * loadable function's either (which the server would run instead). False for a UDF, a
   * function created since the load, or without trusted metadata.
   */
  functionsRunNoDdl(calls: readonly TableRef[] | null, schema: string | null | undefined): boolean {
    return this.#functionsWrite(calls, schema) !== null;
  }

  /**
   * The slots the stored functions a statement calls invalidate, as callWriteSlots; null when
   * one of them is not known to run no DDL or writes what cannot be told.
   */
  functionWriteSlots(
    calls: readonly TableRef[] | null,
    schema: string | null | undefined,
  ): Int32Array | null {
    const writes = this.#functionsWrite(calls, schema);
    if (writes === null || writes === EVERYTHING) return null;
    const slots = this.#writeSlotsOf(writes.tables, writes.dependencies);
    return slots === EVERYTHING ? null : slots;
  }

  /**
   * What the functions `calls` write, all asked of one metadata load: null when one is not
   * known to run no DDL (see functionsRunNoDdl), EVERYTHING when one writes what it does not tell.
   */
  #functionsWrite(
    calls: readonly TableRef[] | null,
    schema: string | null | undefined,
  ): { tables: string[]; dependencies: TableDependencies } | typeof EVERYTHING | null {
    const dependencies = this.#admin === null || calls === null ? null : this.current;
    if (dependencies === null) return null;
    const tables: string[] = [];
    let untold = false;
    for (const call of calls!) {
      const target = this.#callTarget(call, schema, '()', dependencies);
      if (target === null) return null;
      const { name, key } = target;
      const free =
        key === null
          ? dependencies.nameRunsNoDdl(name)
          : dependencies.runsNoDdl(key) &&
            // Unqualified in a known schema: still no UDF's name.
            (call.schema !== null || dependencies.nameIsNoUdf(name));
      if (!free) return null;
      const written =
        key === null ? dependencies.nameWrites(name) : dependencies.procedureWrites(key);
      if (written === null) untold = true;
      else tables.push(...written);
    }
    return untold ? EVERYTHING : { tables, dependencies };
  }

  /**
   * Where a routine is looked up (see callRunsNoDdl): its key "schema.name" (with `suffix`, "()"
   * for a function), or with `key` null every schema's of its name; null when nowhere.
   */
  #callTarget(
    procedure: TableRef,
    schema: string | null | undefined,
    suffix: '' | '()',
    dependencies = this.#admin === null ? null : this.current,
  ): { dependencies: TableDependencies; name: string; key: string | null } | null {
    const routine = routineNameOf(procedure.name);
    if (routine === null || dependencies === null) return null;
    const name = routine + suffix;
    if (procedure.schema === null && schema === undefined) return { dependencies, name, key: null };
    const owner = procedure.schema ?? schema ?? null;
    // A schema the text spells outside ASCII is the metadata's only for a UTF-8 client.
    const spelt = procedure.schema === null || isAscii(procedure.schema);
    if (owner === null || !spelt || isUnresolvableName(owner)) return null;
    return { dependencies, name, key: `${owner}.${name}` };
  }

  /** Is the table known to take part in InnoDB snapshots? */
  isTransactional(table: TableRef, schema: string | null): boolean {
    const name = qualify(table, schema);
    const engine = name === null ? undefined : this.current?.engineOf(name);
    return engine !== undefined && /^innodb$/i.test(engine);
  }

  #addSlot(slots: number[], name: string): void {
    const slot = this.#registry.slotOf(name);
    if (!slots.includes(slot)) slots.push(slot);
  }

  #reloadForUnknownName(): void {
    if (Date.now() - this.#loadedAt >= UNKNOWN_NAME_RELOAD_MS) this.#reload(true);
  }

  /**
   * Loads the metadata unless a load is under way or a retry is scheduled. `force` loads again
   * even when the metadata is current (a name it did not know).
   */
  #reload(force = false): void {
    if (this.#admin === null || this.#loading || this.#retryTimer !== null || this.#stopped) return;
    const registry = this.#registry;
    // The version first: a change that begins after it moves it, so a load racing it is dropped.
    const version = registry.schemaVersion();
    if (!force && version === this.#loadedVersion) return;
    if (registry.schemaChangesInFlight() !== 0) {
      // DDL runs: what is read now may miss it. Its end moves the version and wakes us.
      this.#land();
      this.#watch(version);
      return;
    }
    if (this.#keepsOffProgramTables()) {
      this.#pause(PROGRAM_TABLES_POLL_MS, force);
      return;
    }
    this.#loading = true;
    this.#reloaded ??= new Flight(performance.now());
    this.#programRows.useVersion(registry.programVersion());
    void this.#loadBounded(this.#admin).then(
      (dependencies) => {
        this.#loading = false;
        if (this.#stopped) return;
        if (registry.schemaVersion() !== version) {
          // DDL began or ended while loading: what was read may not show it.
          this.#reload();
          return;
        }
        this.#dependencies = dependencies;
        this.#generation++;
        this.#loadedAt = Date.now();
        this.#loadedVersion = version;
        this.#retryMs = RETRY_FIRST_MS;
        this.#land();
        this.#watch(version);
      },
      (error: unknown) => {
        this.#loading = false;
        if (this.#stopped) return;
        this.#log.warn(
          `cannot read schema metadata (retrying in ${this.#retryMs} ms): ${(error as Error).message}`,
        );
        this.#pause(this.#retryMs, force);
        this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
      },
    );
  }

  /**
   * Whether the program tables were written and their writer may still be at work on them: a
   * session that wrote them is open, and the last write is less than PROGRAM_TABLES_PAUSE_MS old.
   */
  #keepsOffProgramTables(): boolean {
    const registry = this.#registry;
    const writes = registry.programTableWrites();
    if (writes !== this.#programTableWrites) {
      this.#programTableWrites = writes;
      if (Number.isNaN(this.#programTablesWrittenAt)) {
        this.#log.info(
          'the tables stored programs live in were written: schema metadata is read again once the sessions that wrote them have closed',
        );
      }
      this.#programTablesWrittenAt = Date.now();
    }
    if (Number.isNaN(this.#programTablesWrittenAt)) return false;
    if (
      registry.programTableWritersOpen() &&
      Date.now() - this.#programTablesWrittenAt < PROGRAM_TABLES_PAUSE_MS
    ) {
      return true;
    }
    this.#programTablesWrittenAt = NaN;
    return false;
  }

  /** Wakes the statements waiting for a reload, and loads again only after `ms` (no sooner). */
  #pause(ms: number, force: boolean): void {
    this.#land();
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#reload(force);
    }, ms);
    this.#retryTimer.unref();
  }

  /** Wakes the statements waiting for a reload: they go on, with metadata or without. */
  #land(): void {
    const flight = this.#reloaded;
    this.#reloaded = null;
    flight?.land();
  }

  /**
   * Reloads as soon as the schema version moves from `version`: DDL relayed by any worker wakes
   * every catalog, which then has its metadata back by the time its next statement needs it.
   * The wait holds no handle: it never keeps a draining worker alive.
   */
  #watch(version: number): void {
    if (this.#watching === version || this.#stopped) return;
    this.#watching = version;
    void this.#registry.schemaVersionChange(version, Infinity).then(() => {
      if (this.#watching !== version) return;
      this.#watching = NaN;
      this.#reload();
    });
  }

  /** A load that answers within LOAD_TIMEOUT_MS or fails. */
  async #loadBounded(admin: AdminAccount): Promise<TableDependencies> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${LOAD_TIMEOUT_MS} ms`)),
        LOAD_TIMEOUT_MS,
      );
    });
    try {
      return await Promise.race([this.#load(admin, timeout), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #load(admin: AdminAccount, timeout: Promise<never>): Promise<TableDependencies> {
    const connection = await MysqlConnection.connect({
      host: this.#backend.host,
      port: this.#backend.port,
      tls: this.#backend.tls,
      user: admin.user,
      password: admin.password,
      database: null,
      connectTimeoutMs: LOAD_TIMEOUT_MS,
    });
    // Given up on: the connection goes, so nothing of it lingers on the server.
    timeout.catch(() => connection.destroy());
    try {
      // The loader asks the server for lower_case_table_names and its version itself.
      const snapshot = await loadSchemaSnapshot(connection, { programRows: this.#programRows });
      return new TableDependencies(snapshot);
    } finally {
      connection.close();
    }
  }
}

/** A name the metadata cannot be asked about (see name-encoding.ts). */
function unresolvable(table: TableRef, schema: string | null): boolean {
  const owner = table.schema ?? schema;
  return isUnresolvableName(table.name) || (owner !== null && isUnresolvableName(owner));
}

/** "schema.table", or null for an unqualified name with no current schema. */
export function qualify(table: TableRef, schema: string | null): string | null {
  const owner = table.schema ?? schema;
  return owner === null ? null : `${owner}.${table.name}`;
}
