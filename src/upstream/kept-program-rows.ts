/**
 * The rows of the metadata queries that read stored programs (information_schema.ROUTINES
 * reads every row of mysql.proc, EVENTS every row of mysql.event), kept from one load to the
 * next while the caller's program version stays the same: only DDL that may change routines or
 * events moves it (see InvalidationRegistry.endSchemaChange). Read anew, they cost the whole
 * table on every load of every worker, and the server counts those reads (userstat's
 * TABLE_STATISTICS, INDEX_STATISTICS) next to the reads of the statements a user measures:
 * after each CREATE TABLE the proxy relayed, mysql.proc would show among the tables read.
 *
 * What is derived from them (which routines run no DDL, what events write) depends on views and
 * tables too, read at every load: it is judged again when those changed (see
 * loadSchemaSnapshot).
 */
import type { MetadataConnection } from './schema-metadata.ts';

type Rows = Array<Array<string | null>>;

export class KeptProgramRows {
  #version = NaN;
  readonly #rows = new Map<string, Rows>();

  /**
   * Before a load: rows kept at another version are forgotten, and rows read from now on are
   * kept for `version` (which must have been taken before anything of the load was sent).
   */
  useVersion(version: number): void {
    if (version === this.#version) return;
    this.#version = version;
    this.#rows.clear();
  }

  /** The rows of `sql`: kept ones, or read now and kept. */
  async read(connection: MetadataConnection, sql: string): Promise<Rows> {
    const kept = this.#rows.get(sql);
    if (kept !== undefined) return kept;
    const version = this.#version;
    const rows = await connection.queryRows(sql);
    // A load given up on may answer after the next one began at another version.
    if (version === this.#version) this.#rows.set(sql, rows);
    return rows;
  }
}
