/**
 * The tables of the `nicecache` schema, answered by the proxy itself on a session's connection:
 * `SELECT * FROM nicecache.digests` gets every worker's per-statement digests as a result set,
 * so clients and GUIs can read them as SQL. Any other statement over the schema gets the error
 * the server would give for a table or a form it does not have.
 *
 * The digests live in every worker: the session waits (at most DIGESTS_GATHER_MS) while the main
 * thread gathers them, then is answered. The same for a session with the cache and a plain relay.
 */
import type { DigestGathering, DigestRow } from '../cache/statement-digests.ts';
import type { Flight } from '../cache/single-flight.ts';
import { ProxyError, ProxyErrorCode } from '../protocol/errors.ts';
import { encodeErr } from '../protocol/generic-packets.ts';
import { encodeTextResultSet } from '../protocol/result-set.ts';
import type { ResultColumn, ResultSetOptions } from '../protocol/result-set.ts';

/** How long SELECT * FROM nicecache.digests waits for the workers' digests. */
export const DIGESTS_GATHER_MS = 3000;

/** The columns of nicecache.digests (see DigestRow). */
const DIGEST_COLUMNS: readonly ResultColumn[] = [
  { name: 'digest', type: 'text' },
  { name: 'kind', type: 'text' },
  { name: 'count', type: 'unsigned' },
  { name: 'hits', type: 'unsigned' },
  { name: 'misses', type: 'unsigned' },
  { name: 'bypasses', type: 'unsigned' },
  { name: 'main_bypass_reason', type: 'text' },
  { name: 'server_count', type: 'unsigned' },
  { name: 'server_micros', type: 'unsigned' },
  { name: 'max_server_micros', type: 'unsigned' },
  { name: 'rows_served', type: 'unsigned' },
  { name: 'bytes_served', type: 'unsigned' },
];

/** A statement over the nicecache schema, as the classifier reads it. */
export interface OwnTableRead {
  name: string;
  /** Exactly SELECT * FROM the table, nothing else. */
  plain: boolean;
}

/** What the session does with such a statement: answer it now, or wait and ask again. */
export type OwnTableAnswer =
  { action: 'answer'; bytes: Buffer } | { action: 'wait'; flight: Flight; maxWaitMs: number };

/** One per session: the gathering its statement waits for, between the two times it is asked. */
export class NicecacheTables {
  readonly #gather: () => DigestGathering;
  #gathering: DigestGathering | null = null;

  /** `gather` asks the main thread for every worker's digests. */
  constructor(gather: () => DigestGathering) {
    this.#gather = gather;
  }

  /**
   * The answer to `read`; `format` says how the client reads result sets (and the status the
   * reply carries). The first time a SELECT * FROM nicecache.digests is asked, it waits for the
   * gathering; asked again once that has landed, it is answered with the rows.
   */
  answer(
    read: OwnTableRead,
    format: Pick<ResultSetOptions, 'deprecateEof' | 'extendedMetadata' | 'status'>,
  ): OwnTableAnswer {
    if (read.name !== 'digests') {
      return ownError(
        new ProxyError(
          ProxyErrorCode.NO_SUCH_TABLE,
          `Table 'nicecache.${read.name}' doesn't exist`,
        ),
      );
    }
    if (!read.plain) {
      return ownError(
        new ProxyError(
          ProxyErrorCode.NOT_SUPPORTED,
          "This version of nicecache doesn't yet support 'anything but SELECT * FROM nicecache.digests'",
        ),
      );
    }
    const gathering = this.#gathering;
    if (gathering === null) {
      const started = this.#gather();
      this.#gathering = started;
      return { action: 'wait', flight: started.flight, maxWaitMs: DIGESTS_GATHER_MS };
    }
    this.#gathering = null;
    if (gathering.rows === null) {
      return ownError(
        new ProxyError(
          ProxyErrorCode.NOT_GATHERED,
          `nicecache could not gather the digests of every worker within ${DIGESTS_GATHER_MS} ms`,
        ),
      );
    }
    const rows = gathering.rows.map((row: DigestRow) => [
      row.digest,
      row.kind,
      row.count,
      row.hits,
      row.misses,
      row.bypasses,
      row.mainBypassReason,
      row.serverCount,
      row.serverMicros,
      row.maxServerMicros,
      row.rowsServed,
      row.bytesServed,
    ]);
    return {
      action: 'answer',
      bytes: encodeTextResultSet(DIGEST_COLUMNS, rows, {
        ...format,
        schema: 'nicecache',
        table: 'digests',
      }),
    };
  }
}

function ownError(error: ProxyError): OwnTableAnswer {
  return { action: 'answer', bytes: encodeErr(error.toErrInfo(), 1) };
}
