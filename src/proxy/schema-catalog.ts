/**
 * Turns the tables a statement names into registry slots, knowing what the text does not say:
 * views read their base tables, triggers and cascading foreign keys write further tables.
 *
 * With an admin account (--admin-user) each worker reads that from information_schema at start
 * and again after DDL; while DDL runs or the metadata is reloading, every write invalidates
 * everything and no result is stored (a view's definition may just have changed). Without an
 * admin account the catalog is conservative for good: every write invalidates everything, so a
 * result only depends on the names it reads. Hits on results stored earlier stay safe either way.
 */
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import { TableDependencies } from '../cache/table-dependencies.ts';
import { isSystemSchema } from '../sql/statement-classifier.ts';
import type { TableRef } from '../sql/statement-classifier.ts';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import { loadSchemaSnapshot } from '../upstream/schema-metadata.ts';
import type { BackendAddress } from './client-session.ts';
import type { Logger } from './log.ts';

export interface AdminAccount {
  user: string;
  password: string;
}

/** Writes whose tables cannot be told apart. */
export const EVERYTHING = 'everything';

/** After a failed load, how long before trying again. */
const RETRY_MS = 2000;
/**
 * A name the metadata does not know may be a table created behind the proxy's back (by another
 * client, or before the proxy started): the metadata is read again, at most this often.
 */
const UNKNOWN_NAME_RELOAD_MS = 1000;

export class SchemaCatalog {
  readonly #registry: InvalidationRegistry;
  readonly #backend: BackendAddress;
  readonly #admin: AdminAccount | null;
  readonly #log: Logger;
  #dependencies: TableDependencies | null = null;
  #generation = 0;
  #loadedVersion = -1;
  #loading = false;
  #retryAt = 0;
  #loadedAt = 0;

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
  }

  /** Trusted only when loaded at the current schema version with no DDL running. */
  get current(): TableDependencies | null {
    const registry = this.#registry;
    if (registry.schemaChangesInFlight() !== 0) return null;
    if (this.#loadedVersion !== registry.schemaVersion()) {
      this.#reload();
      return null;
    }
    return this.#dependencies;
  }

  /**
   * Changes whenever what readSlots() answers may change; -1 while the metadata is not trusted.
   * Callers may keep slots computed under one generation for as long as it lasts.
   */
  get generation(): number {
    if (this.#admin === null) return 0;
    return this.current === null ? -1 : this.#generation;
  }

  /** Starts loading at once (the proxy's startup), instead of at the first statement. */
  warmUp(): void {
    this.#reload();
  }

  /**
   * The slots a read of `tables` depends on, or null when one of them is unknown (a table or view
   * created since the load, or the metadata is not trusted now): such a result is not stored.
   */
  readSlots(tables: readonly TableRef[], schema: string | null): Int32Array | null {
    if (this.#admin === null) return this.#ownSlots(tables, schema);
    const dependencies = this.current;
    if (dependencies === null) return null;
    const slots: number[] = [];
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) return null;
      const bases = dependencies.readsOf(name);
      if (bases === null) {
        // System schemas are never in the metadata: their names are not news.
        const owner = table.schema ?? schema;
        if (
          owner !== null &&
          !isSystemSchema(owner) &&
          dependencies.engineOf(name) === undefined &&
          !dependencies.isView(name)
        ) {
          this.#reloadForUnknownName();
        }
        return null;
      }
      this.#addSlot(slots, name);
      for (const base of bases) this.#addSlot(slots, base);
    }
    return Int32Array.from(slots);
  }

  /** The slots a write of `tables` invalidates, or EVERYTHING. */
  writeSlots(tables: readonly TableRef[], schema: string | null): Int32Array | typeof EVERYTHING {
    const dependencies = this.current;
    if (dependencies === null) return EVERYTHING;
    const slots: number[] = [];
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null) return EVERYTHING;
      // A name the metadata does not know may be a view created behind our back, or spelt in
      // another character set: its writes cannot be traced.
      if (dependencies.engineOf(name) === undefined && dependencies.readsOf(name) === null)
        return EVERYTHING;
      const written = dependencies.writesOf(name);
      if (written === 'everything') return EVERYTHING;
      this.#addSlot(slots, name);
      for (const other of written) this.#addSlot(slots, other);
    }
    return Int32Array.from(slots);
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
      if (dependencies === null) {
        // While the metadata reloads, a name it did not know may be a new view of any kind.
        if (this.#dependencies?.engineOf(name) === undefined) return true;
        continue;
      }
      if (dependencies.readMayWrite(name)) return true;
    }
    return false;
  }

  /** May a write to these tables fire triggers (which may change session variables too)? */
  mayHaveTriggers(tables: readonly TableRef[], schema: string | null): boolean {
    const dependencies = this.#admin === null ? null : this.current;
    if (dependencies === null) return tables.length > 0;
    for (const table of tables) {
      const name = qualify(table, schema);
      if (name === null || dependencies.hasTriggers(name)) return true;
    }
    return false;
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
    if (Date.now() - this.#loadedAt >= UNKNOWN_NAME_RELOAD_MS) this.#reload();
  }

  #reload(): void {
    if (this.#admin === null || this.#loading || Date.now() < this.#retryAt) return;
    this.#loading = true;
    const version = this.#registry.schemaVersion();
    void this.#load(this.#admin)
      .then((dependencies) => {
        // DDL that ran while loading may not be in what was read: load again later.
        if (this.#registry.schemaChangesInFlight() !== 0) return;
        this.#dependencies = dependencies;
        this.#generation++;
        this.#loadedAt = Date.now();
        this.#loadedVersion = version;
      })
      .catch((error: unknown) => {
        this.#retryAt = Date.now() + RETRY_MS;
        this.#log.warn(`cannot read schema metadata: ${(error as Error).message}`);
      })
      .finally(() => {
        this.#loading = false;
      });
  }

  async #load(admin: AdminAccount): Promise<TableDependencies> {
    const connection = await MysqlConnection.connect({
      host: this.#backend.host,
      port: this.#backend.port,
      user: admin.user,
      password: admin.password,
      database: null,
    });
    try {
      // The loader asks the server for lower_case_table_names and its version itself.
      const snapshot = await loadSchemaSnapshot(connection, {});
      return new TableDependencies(snapshot);
    } finally {
      connection.close();
    }
  }
}

/** "schema.table", or null for an unqualified name with no current schema. */
export function qualify(table: TableRef, schema: string | null): string | null {
  const owner = table.schema ?? schema;
  return owner === null ? null : `${owner}.${table.name}`;
}
