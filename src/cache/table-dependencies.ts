/**
 * What a statement really reads and writes, beyond the tables its text names: reading a view
 * reads its base tables, writing a table also writes what its triggers write, a parent table
 * whose foreign keys cascade (CASCADE, SET NULL, SET DEFAULT) writes its child tables, and a
 * table whose rows are stored in other tables (a MERGE table's UNION) reads and writes those.
 * The cache keys results by base tables and invalidates the closure of every write.
 *
 * Built from a plain snapshot of the schema (see schema-metadata.ts), so that it can be tested and
 * shipped to workers without a connection. Every name is "schema.table", already normalized per
 * lower_case_table_names by whoever built the snapshot and by whoever asks, in the form the router
 * reads names in (UTF-8 bytes as Latin-1, see name-encoding.ts).
 */

import type { KeyKind } from '../sql/point-access.ts';

/** Stands for "unknown": a view whose definition could not be read, a trigger that may write anything. */
export const UNKNOWN_TABLE = '*';

export interface SchemaSnapshot {
  /** Base tables, "schema.table" normalized per lower_case_table_names, with engine (e.g. 'InnoDB'). */
  baseTables: Map<string, string>;
  /** View "schema.view" → the tables/views its definition reads ("schema.table"); '*' if unknown. */
  views: Map<string, string[]>;
  /** Table "schema.table" → tables its triggers write; '*' in the list means unknown (everything). */
  triggerWrites: Map<string, string[]>;
  /** Parent "schema.table" → child tables written by ON DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT. */
  cascades: Map<string, string[]>;
  /**
   * Views whose reading may write (a stored function in the definition, or a definition that is
   * hidden or not understood): a SELECT of them writes everything as far as anyone can tell.
   */
  writingViews?: Set<string>;
  /**
   * Views that call stored functions known to run no DDL and write no table (through whatever
   * they call): reading one writes nothing, but runs them, which may change the session's
   * variables, as a statement calling them itself may. What the functions read is not in the
   * definition: such a view's reads are unknown ('*'), so no result read through it is stored.
   */
  functionViews?: Set<string>;
  /**
   * Views whose definition says SELECT SQL_CACHE: under query_cache_type DEMAND the server caches
   * a statement that reads one (through any view) as if the statement said SQL_CACHE itself.
   */
  cacheRequestingViews?: Set<string>;
  /**
   * Base tables whose rows are stored in other tables: a MERGE table → its UNION tables. '*' in
   * the list when they cannot be known: a table whose engine may keep its rows anywhere (CONNECT,
   * FEDERATED, SPIDER, OQGRAPH, any engine not known to keep them to itself), or a MERGE table
   * whose UNION could not be read. Reading such a table reads those tables (unknown: not
   * cacheable), writing it writes them (unknown: everything).
   */
  storedIn?: Map<string, string[]>;
  /**
   * Tables written by what the proxy never sees: the bodies of enabled events, run by the
   * server's scheduler; sequences, which an INSERT advances through a column's DEFAULT
   * NEXTVAL(s). Their results must not be cached; '*' in the list when some event's body is not
   * understood (it may write any table).
   */
  writtenBehind?: string[];
  /**
   * Procedures ("schema.name", the name lowered: see routineNameOf) and stored functions
   * ("schema.name()") whose bodies run no DDL, directly or through the routines they call: a
   * CALL of one (a statement calling one) changes no table, view, trigger, foreign key or event,
   * so the metadata stays as it is, and creates no temporary table. One left out may run DDL.
   */
  ddlFreeProcedures?: Set<string>;
  /**
   * Procedure names (lowered) and function names ("name()") all of whose routines, in every
   * schema, are among ddlFreeProcedures (and no loadable function has the name); empty unless
   * the snapshot holds every routine the server has.
   */
  ddlFreeNames?: Set<string>;
  /**
   * Names (lowered) of the loadable functions (UDFs): an unqualified call of one of these runs
   * it, not a stored function. Undefined when they could not be read: any name may be one.
   */
  udfNames?: Set<string>;
  /**
   * Tables with a trigger that may create a table: CREATE TEMPORARY TABLE is allowed in
   * triggers (and in the stored functions and procedures they call). A session that writes one
   * may then read a temporary table the proxy never saw created.
   */
  temporaryTableTriggers?: Set<string>;
  /**
   * Routines among ddlFreeProcedures whose writes are told: the tables ("schema.table") their
   * bodies and the routines they call write, before triggers and cascades. One left out writes
   * what cannot be told.
   */
  procedureWrites?: Map<string, string[]>;
  /**
   * Procedures ("schema.name") whose bodies, and those of the routines they call, run no DDL
   * but CREATE and DROP TEMPORARY TABLE of names they spell: a CALL of one changes no metadata
   * and prepares nothing, and leaves its session with at most those temporary tables.
   */
  temporaryProcedures?: Map<string, TemporaryProcedure>;
  /**
   * Procedure names (lowered) all of whose procedures, in every schema, run no DDL but
   * temporary tables', one of them at least some: what a CALL of the name may do wherever it
   * runs (every one's temporary tables and writes). Empty unless the snapshot holds every
   * routine the server has.
   */
  temporaryProcedureNames?: Map<string, TemporaryProcedure>;
  /**
   * Base tables whose primary key is made of integer columns (TINYINT to BIGINT, signed or not;
   * a primary key is never a generated column) or CHAR and VARCHAR columns of a collation that
   * key-text.ts folds, one or several: a statement bounded to one value of each reads or writes
   * only the row with those values (see point-access.ts), so the cache may invalidate such
   * reads by row.
   */
  pointKeys?: Map<string, PointKey>;
}

/**
 * A base table's point key: its primary key, of integer or string columns
 * (SchemaSnapshot.pointKeys).
 */
export interface PointKey {
  /** The key's columns, lowercased, in the key's order. */
  columns: readonly string[];
  /** What each of them holds (integers, strings or bytes), in order. */
  kinds: readonly KeyKind[];
  /**
   * The largest value each integer column's type holds (at most Number.MAX_SAFE_INTEGER), the
   * most characters each string column holds, the most bytes each column of bytes holds, in
   * order.
   */
  max: readonly number[];
  /**
   * The primary key is the table's one unique key: a row that REPLACE or ON DUPLICATE KEY
   * UPDATE collides with can only be the row of the new one's key.
   */
  soleUniqueKey: boolean;
  /**
   * A BEFORE INSERT or UPDATE trigger of the table may set a key column (NEW.column): a write
   * bounded by the key's value may land on another row.
   */
  movedByTriggers: boolean;
}

/** What a procedure of SchemaSnapshot.temporaryProcedures does. */
export interface TemporaryProcedure {
  /** The temporary tables it may create ("schema.table"), in the schemas its bodies name. */
  temporaries: string[];
  /** The tables it writes, as procedureWrites; null: untold. */
  writes: string[] | null;
}

export class TableDependencies {
  readonly #snapshot: SchemaSnapshot;
  readonly #mayWrite = new Map<string, boolean>();
  readonly #requestsCache = new Map<string, boolean>();
  readonly #callsFunctions = new Map<string, boolean>();
  // Both are asked once per table per statement on the hot path: each answer is computed once.
  // An answer is only ever stored for the name it was asked for, after its whole closure has been
  // walked, so a cycle never leaves a partial answer behind for another name.
  readonly #reads = new Map<string, readonly string[] | null>();
  readonly #writes = new Map<string, readonly string[] | 'everything'>();
  readonly #writtenBehind: ReadonlySet<string>;
  readonly #nameWrites = new Map<string, readonly string[] | null>();

  constructor(snapshot: SchemaSnapshot) {
    this.#snapshot = snapshot;
    this.#writtenBehind = new Set(snapshot.writtenBehind ?? []);
  }

  /** Does reading `qualified` (a view, through any view it reads) possibly write? */
  readMayWrite(qualified: string): boolean {
    return this.#throughViews(qualified, this.#snapshot.writingViews, this.#mayWrite);
  }

  /** Does `qualified` say SQL_CACHE (a view, through any view it reads)? */
  requestsCache(qualified: string): boolean {
    return this.#throughViews(qualified, this.#snapshot.cacheRequestingViews, this.#requestsCache);
  }

  /** Are there views that call stored functions (functionViews)? */
  get hasFunctionViews(): boolean {
    return (this.#snapshot.functionViews?.size ?? 0) > 0;
  }

  /** Does reading `qualified` (a view, through any view it reads) run stored functions? */
  readCallsFunctions(qualified: string): boolean {
    return this.#throughViews(qualified, this.#snapshot.functionViews, this.#callsFunctions);
  }

  /** Is `qualified` among `views`, or a view reading one, through any view it reads? */
  #throughViews(
    qualified: string,
    views: ReadonlySet<string> | undefined,
    answers: Map<string, boolean>,
  ): boolean {
    if (views === undefined || views.size === 0) return false;
    let answer = answers.get(qualified);
    if (answer === undefined) {
      answer = this.#reachesView(qualified, views, new Set());
      answers.set(qualified, answer);
    }
    return answer;
  }

  #reachesView(name: string, among: ReadonlySet<string>, seen: Set<string>): boolean {
    const reads = this.#snapshot.views.get(name);
    if (reads === undefined || seen.has(name)) return false;
    if (among.has(name)) return true;
    seen.add(name);
    return reads.some((read) => this.#reachesView(read, among, seen));
  }

  isView(qualified: string): boolean {
    return this.#snapshot.views.has(qualified);
  }

  /** The table's point key (SchemaSnapshot.pointKeys), if it has one. */
  pointKeyOf(qualified: string): PointKey | undefined {
    return this.#snapshot.pointKeys?.get(qualified);
  }

  /**
   * Does a row event of the base table `qualified` change its own rows only, as far as readers
   * of other tables can tell? Not when its foreign keys cascade (InnoDB does not log what a
   * cascade writes) or its rows are stored in other tables (a MERGE table). Its triggers may
   * write: what they write is logged as row events of its own.
   */
  rowEventsWriteItselfOnly(qualified: string): boolean {
    const { baseTables, cascades, storedIn } = this.#snapshot;
    return (
      baseTables.has(qualified) &&
      (cascades.get(qualified)?.length ?? 0) === 0 &&
      (storedIn?.get(qualified)?.length ?? 0) === 0
    );
  }

  /**
   * May a write to `qualified` change the table again, beyond the rows it names: is it among
   * what one of the tables it writes (writesOf, itself included) writes in turn, through a
   * trigger, a cascading foreign key (to itself too) or a MERGE table's UNION, directly or
   * through a view? True when that cannot be told.
   */
  writesBackInto(qualified: string): boolean {
    const written = this.writesOf(qualified);
    if (written === 'everything') return true;
    const { views, triggerWrites, cascades, storedIn } = this.#snapshot;
    const isBack = (target: string): boolean =>
      target === qualified ||
      (views.has(target) && (this.readsOf(target)?.includes(qualified) ?? true));
    return written.some(
      (table) =>
        (triggerWrites.get(table) ?? []).some(isBack) ||
        (cascades.get(table) ?? []).some(isBack) ||
        (storedIn?.get(table) ?? []).some(isBack),
    );
  }

  /** Has the table triggers (which may also change session variables)? */
  hasTriggers(qualified: string): boolean {
    return this.#snapshot.triggerWrites.has(qualified);
  }

  /**
   * The base tables behind a name: itself for a base table (with the tables its rows are stored
   * in, for a MERGE table), a view's tables with views expanded recursively. null when the name is
   * neither a known base table nor a known view, when some view or table on the way could not
   * be read or reads such a name, or when a table on the way is written behind the proxy's back
   * (by an event): the caller must not cache then.
   * The array is shared between calls and frozen.
   */
  readsOf(qualified: string): readonly string[] | null {
    let answer = this.#reads.get(qualified);
    if (answer === undefined) {
      answer = this.#computeReads(qualified);
      this.#reads.set(qualified, answer);
    }
    return answer;
  }

  /**
   * Every table a write to `qualified` may change: itself, what its triggers write, the children
   * its cascading foreign keys write, the tables its rows are stored in (a MERGE table's UNION),
   * and so on transitively (each table once, cycles included).
   * A view stands for its base tables, since writing through a view writes one of them.
   * 'everything' when a trigger on the way may write anything, a view on the way is unknown, or a
   * table on the way may store its rows anywhere.
   * A name the snapshot does not know (a table created since, a temporary table) writes itself.
   *
   * Cascaded changes do not fire triggers on MySQL and MariaDB 10.11, yet the children's triggers
   * are followed too: a server that fires them would otherwise leave stale results, and the cost
   * is only an extra invalidation. The array is shared between calls and frozen.
   */
  writesOf(qualified: string): readonly string[] | 'everything' {
    let answer = this.#writes.get(qualified);
    if (answer === undefined) {
      answer = this.#computeWrites(qualified);
      this.#writes.set(qualified, answer);
    }
    return answer;
  }

  /** Is the procedure `qualified` ("schema.name", the name lowered) known to run no DDL? */
  runsNoDdl(qualified: string): boolean {
    return this.#snapshot.ddlFreeProcedures?.has(qualified) ?? false;
  }

  /**
   * May a write to `qualified` fire a trigger that creates a table: its own, or one of a table
   * its triggers write, and so on (every table's, when those writes are not known)?
   */
  writeMayCreateTables(qualified: string): boolean {
    const creating = this.#snapshot.temporaryTableTriggers;
    if (creating === undefined || creating.size === 0) return false;
    const written = this.writesOf(qualified);
    if (written === 'everything') return true;
    return written.some((table) => creating.has(table));
  }

  /** Has any table a trigger that may create a table? */
  anyTriggerMayCreateTables(): boolean {
    return (this.#snapshot.temporaryTableTriggers?.size ?? 0) > 0;
  }

  /** What the procedure `qualified` does, when it runs no DDL but temporary tables'. */
  temporaryProcedure(qualified: string): TemporaryProcedure | null {
    return this.#snapshot.temporaryProcedures?.get(qualified) ?? null;
  }

  /** What the procedures called `name` (lowered) do, when they run no DDL but temporary tables'. */
  temporaryProcedureName(name: string): TemporaryProcedure | null {
    return this.#snapshot.temporaryProcedureNames?.get(name) ?? null;
  }

  /** The tables the procedure `qualified` writes (see procedureWrites), or null: untold. */
  procedureWrites(qualified: string): readonly string[] | null {
    return this.#snapshot.procedureWrites?.get(qualified) ?? null;
  }

  /**
   * The tables the procedures called `name` (lowered) write, in whichever schema a CALL runs
   * one; null when one of them writes what cannot be told, or runs DDL.
   */
  nameWrites(name: string): readonly string[] | null {
    if (!this.nameRunsNoDdl(name)) return null;
    let answer = this.#nameWrites.get(name);
    if (answer === undefined) {
      answer = this.#computeNameWrites(name);
      this.#nameWrites.set(name, answer);
    }
    return answer;
  }

  #computeNameWrites(name: string): readonly string[] | null {
    // Every procedure of that name is a key ending in ".name" (one of another, dotted name that
    // ends so only adds writes).
    const suffix = `.${name}`;
    const tables = new Set<string>();
    for (const procedure of this.#snapshot.ddlFreeProcedures ?? []) {
      if (!procedure.endsWith(suffix)) continue;
      const written = this.procedureWrites(procedure);
      if (written === null) return null;
      for (const table of written) tables.add(table);
    }
    return [...tables];
  }

  /** Is the function name `name` ("name()", lowered) known to be no loadable function's? */
  nameIsNoUdf(name: string): boolean {
    const udfs = this.#snapshot.udfNames;
    return udfs !== undefined && !udfs.has(name.endsWith('()') ? name.slice(0, -2) : name);
  }

  /** Is every procedure called `name` (lowered), in whatever schema, known to run no DDL? */
  nameRunsNoDdl(name: string): boolean {
    return this.#snapshot.ddlFreeNames?.has(name) ?? false;
  }

  /**
   * The engine of a base table ('InnoDB', 'MRG_MyISAM'...; '' when the server did not say);
   * undefined for a view or an unknown name.
   */
  engineOf(qualified: string): string | undefined {
    return this.#snapshot.baseTables.get(qualified);
  }

  #computeReads(root: string): readonly string[] | null {
    const { baseTables, views, storedIn } = this.#snapshot;
    const tables: string[] = [];
    // The server refuses a view that reads itself, but a snapshot is taken table by table while
    // others may alter views: the walk must end whatever it is given.
    const seen = new Set<string>([root]);
    const pending = [root];
    for (let next = 0; next < pending.length; next++) {
      const name = pending[next]!;
      let reads: readonly string[] | undefined;
      if (baseTables.has(name)) {
        // Written behind the proxy's back: whatever is stored may already be stale.
        if (this.#writtenBehind.has(name) || this.#writtenBehind.has(UNKNOWN_TABLE)) return null;
        tables.push(name);
        // A MERGE table's rows are its UNION tables' rows.
        reads = storedIn?.get(name);
        if (reads === undefined) continue;
      } else {
        reads = views.get(name);
        if (reads === undefined) return null;
      }
      for (const read of reads) {
        if (read === UNKNOWN_TABLE) return null;
        if (!seen.has(read)) {
          seen.add(read);
          pending.push(read);
        }
      }
    }
    return Object.freeze(tables);
  }

  #computeWrites(root: string): readonly string[] | 'everything' {
    const { baseTables, views, triggerWrites, cascades, storedIn } = this.#snapshot;
    const tables: string[] = [];
    const seen = new Set<string>([root]);
    const pending = [root];
    const visit = (name: string): void => {
      if (!seen.has(name)) {
        seen.add(name);
        pending.push(name);
      }
    };
    for (let next = 0; next < pending.length; next++) {
      const name = pending[next]!;
      if (!baseTables.has(name) && views.has(name)) {
        const behind = this.readsOf(name);
        if (behind === null) return 'everything';
        for (const table of behind) visit(table);
        continue;
      }
      tables.push(name);
      for (const written of triggerWrites.get(name) ?? []) {
        if (written === UNKNOWN_TABLE) return 'everything';
        visit(written);
      }
      for (const child of cascades.get(name) ?? []) visit(child);
      for (const store of storedIn?.get(name) ?? []) {
        if (store === UNKNOWN_TABLE) return 'everything';
        visit(store);
      }
    }
    return Object.freeze(tables);
  }
}
