/**
 * Whether a statement's result may be cached, following the MariaDB query cache (checked against
 * MariaDB 10.11 with query_cache_type=1, see the integration test):
 *
 * Cached: a SELECT (also WITH ... SELECT, a parenthesized SELECT, UNION / INTERSECT / EXCEPT,
 * subqueries, derived tables, views), with `?` placeholders, over at least one table, including
 * FOR SYSTEM_TIME with constant bounds (history only changes by writing the table).
 *
 * Not cached, with the reason given:
 * - 'not a SELECT': any other statement (SHOW, EXPLAIN, DML...);
 * - 'multi-statement': several statements in one text are never cached as a whole;
 * - 'unparsable': the classifier could not follow the statement;
 * - 'ANALYZE', 'SET STATEMENT': a statement run under a wrapper;
 * - 'SQL_NO_CACHE';
 * - 'INTO': SELECT ... INTO OUTFILE / DUMPFILE / @variables has effects beyond its result;
 * - 'locking read': FOR UPDATE, LOCK IN SHARE MODE (they take locks: always the server's);
 * - 'PROCEDURE': PROCEDURE ANALYSE();
 * - 'versioned comment, server version unknown';
 * - 'non-deterministic function X': the clock, randomness, the session, locks, sleep, sequences
 *   (see functions.ts);
 * - 'stored function or UDF X': any function that is no built-in;
 * - 'user variable', 'system variable': values the key does not hold;
 * - 'system schema X': mysql, information_schema, performance_schema, sys;
 * - 'SQL_CALC_FOUND_ROWS': the server caches it along with its found-rows count, so that a later
 *   FOUND_ROWS() is right; a proxy serving the hit cannot set the server's count, so it refuses;
 * - 'no tables': the server caches no SELECT without a table (SELECT 1, FROM DUAL, VALUES).
 *
 * Left to the caller, which knows the session and the schema: temporary tables and sequences
 * shadowing a name, SERIALIZABLE, transactions, results with warnings, column-level privileges,
 * unqualified tables resolved into a system schema by the current database.
 */
import type { ParseState } from './parse-state.ts';
import type { StatementKind } from './statement-info.ts';
import { isSystemSchema } from './table-ref.ts';

export interface CacheVerdict {
  cacheable: boolean;
  reason: string | null;
}

const CACHEABLE: CacheVerdict = { cacheable: true, reason: null };

export function cacheVerdict(
  kind: StatementKind,
  facts: ParseState,
  uncertainVersionedComment: boolean,
): CacheVerdict {
  const reason = refusal(kind, facts, uncertainVersionedComment);
  return reason === null ? CACHEABLE : { cacheable: false, reason };
}

function refusal(
  kind: StatementKind,
  facts: ParseState,
  uncertainVersionedComment: boolean,
): string | null {
  if (kind !== 'select') return 'not a SELECT';
  if (facts.failed) return 'unparsable';
  if (facts.wrapper !== null) return facts.wrapper;
  if (facts.sqlNoCache) return 'SQL_NO_CACHE';
  if (facts.into) return 'INTO';
  if (facts.lockingRead) return 'locking read';
  if (facts.procedure) return 'PROCEDURE';
  if (uncertainVersionedComment) return 'versioned comment, server version unknown';
  if (facts.nonDeterministic !== null)
    return `non-deterministic function ${facts.nonDeterministic}`;
  const unknown = facts.unknownFunctions[0];
  if (unknown !== undefined) return `stored function or UDF ${unknown}`;
  if (facts.userVariable) return 'user variable';
  if (facts.systemVariable) return 'system variable';
  for (const table of facts.reads) {
    if (table.schema !== null && isSystemSchema(table.schema)) {
      return `system schema ${table.schema}`;
    }
  }
  if (facts.calcFoundRows) return 'SQL_CALC_FOUND_ROWS';
  if (facts.reads.length === 0) return 'no tables';
  if (facts.writes.length > 0 || facts.writesEverything) return 'writes';
  return null;
}
