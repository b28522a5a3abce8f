/**
 * The query cache's side of one session: for each statement the client sends, whether it is
 * answered from the cache, relayed and stored, or relayed only, and which writes it announces to
 * the registry. It holds what a cached result depends on in this session: the probed session
 * state, the transaction, temporary tables, prepared statements, and the query_cache_type.
 *
 * Correctness first: whatever the router cannot be sure of goes to the server, and a write whose
 * tables it cannot tell invalidates everything.
 */
import type { FollowerStatus } from '../binlog/follower-status.ts';
import { Bypass, Counter, Latency } from '../cache/cache-stats.ts';
import { NO_ENTRY } from '../cache/query-cache.ts';
import type { QueryCache, QueryCacheType } from '../cache/query-cache.ts';
import { keyHashOf } from '../cache/result-store.ts';
import type { QueuedWriter } from '../cache/result-store.ts';
import { nameHash, nameHashOf } from '../cache/invalidation-registry.ts';
import {
  KEY_PART_SEPARATOR,
  rowBytesHashOf,
  rowHashOf,
  rowKeyValue,
  rowTextHashOf,
} from '../cache/row-slots.ts';
import type { Flight, SingleFlight } from '../cache/single-flight.ts';
import { digestTextOf } from '../cache/statement-digests.ts';
import type { DigestGathering, DigestRecord, DigestTable } from '../cache/statement-digests.ts';
import { Capability, Command, MariaDbCapability, ServerStatus } from '../protocol/constants.ts';
import { REPLY_NEUTRAL_CAPABILITIES } from '../protocol/handshake.ts';
import {
  EXECUTE_HEADER_LENGTH,
  LONG_DATA_HEADER_LENGTH,
  executeLayoutOf,
  executeWithTypes,
  statementIdOf,
} from '../protocol/command-fields.ts';
import type { ExecuteLayout } from '../protocol/command-fields.ts';
import { integerParameter, textParameter, textSpan } from '../protocol/execute-parameters.ts';
import { ProxyError, ProxyErrorCode } from '../protocol/errors.ts';
import { encodeErr } from '../protocol/generic-packets.ts';
import { ReplyShape, replyShapeOf } from '../protocol/reply-tracker.ts';
import type { ReplyTracker } from '../protocol/reply-tracker.ts';
import { isKeyTextBytes } from '../sql/key-text.ts';
import { NameEncoding } from '../sql/name-encoding.ts';
import { KeyKind, keyValueOf } from '../sql/point-access.ts';
import { isSystemSchema } from '../sql/statement-classifier.ts';
import { writesProgramTables } from '../sql/table-ref.ts';
import type {
  StatementControl,
  StatementInfo,
  StatementKind,
  TableRef,
} from '../sql/statement-classifier.ts';
import type { ExecutionKeys, ExecutionPrefix } from './execution-keys.ts';
import { ParameterPoint } from './parameter-point.ts';
import { NicecacheTables } from './nicecache-tables.ts';
import type { OwnTableRead } from './nicecache-tables.ts';
import type { OwedCommits } from './owed-commits.ts';
import { EVERYTHING, METADATA_WAIT_MS, qualify } from './schema-catalog.ts';
import type { PointRead, SchemaCatalog } from './schema-catalog.ts';
import { probeSql, readProbe } from './session-probe.ts';
import { writeFactsOf } from './write-facts.ts';
import type { Isolation, SessionSnapshot } from './session-probe.ts';
import type {
  ClassifyMode,
  MemoEntry,
  PointShape,
  SessionKeys,
  StatementMemo,
} from './statement-memo.ts';
import type { StatusRewrite } from './status-variables.ts';
import { SESSION_STATUS_BITS, TransactionState } from './transaction-state.ts';
import type { ReplyCopy } from './reply-copy.ts';
import { countRows, diagnosticsOf, foundRowsRestorer, restorerRowsSent } from './reply-rows.ts';
import { OwnStatementStatus } from './own-statement-status.ts';
import { DeferredTransaction, ROLLBACK_PAYLOAD, queryPayload } from './deferred-transaction.ts';
import { TransactionReplies } from './transaction-replies.ts';
import type { TransactionReply } from './transaction-replies.ts';
import type { WriteMarks } from './transaction-state.ts';

/** What a worker's sessions share. */
export interface WorkerCache {
  cache: QueryCache;
  catalog: SchemaCatalog;
  memo: StatementMemo;
  sessionKeys: SessionKeys;
  executionKeys: ExecutionKeys;
  flights: SingleFlight;
  /** Begin read transactions in the proxy (see deferred-transaction.ts). */
  deferTransactions: boolean;
  /** What SHOW STATUS tells of the binlog follower. */
  followerStatus: FollowerStatus;
  /** Per-statement statistics (statement-digests.ts); null: none are kept (--digests off). */
  digests: DigestTable | null;
  /** Asks for every worker's digests, for SELECT * FROM nicecache.digests. */
  gatherDigests: () => DigestGathering;
  /** COMMITs answered by the proxy, sent within a delay when no command carries them. */
  owedCommits: OwedCommits;
}

/** A reply on its way that the cache wants to keep. */
export interface FillPlan {
  key: string;
  /** keyHashOf(key): the lookup's, kept for the store. */
  hash: number;
  slots: Int32Array;
  fillSeq: number;
  /** Identical misses of this worker wait for it. */
  flight: Flight;
  /** The statement, and the schema its names are read in: a point read's result may need more. */
  info: StatementInfo;
  schema: string | null;
  /** A point read's distinct keys its slots are the rows of (MemoEntry.readKeys); 0: not known. */
  keys: number;
}

/** What the router needs to hear about a relayed command when its reply has ended. */
export interface CommandPlan {
  command: number;
  info: StatementInfo | null;
  seqBefore: number;
  marks: WriteMarks | null;
  fill: FillPlan | null;
  /**
   * START TRANSACTION WITH CONSISTENT SNAPSHOT, or a read of transactional tables relayed to the
   * server, which took InnoDB's snapshot if its reply shows it read a row (see readTookSnapshot).
   */
  establishesSnapshot: boolean;
  /** What a COM_STMT_PREPARE prepares. */
  prepare: { sql: string; entry: MemoEntry; schema: string | null } | null;
  /** What a PREPARE name FROM 'text' prepares, when its executions may be answered. */
  sqlPrepare: { name: string; prepared: SqlPrepared } | undefined;
  /** The isolation level the session had when the command was sent. */
  isolation: Isolation | null;
  /** SHOW STATUS or a read of information_schema's status tables: how to rewrite its reply. */
  status: StatusRewrite | null;
  /** A COM_REFRESH that flushes status: once the server has done so, so do the counters. */
  flushesStatus: boolean;
  /** BEGIN, COMMIT or ROLLBACK whose reply the session keeps, to answer them itself later. */
  learn: { request: Buffer; sent: Buffer; begins: boolean } | undefined;
  /** The statement's digest record and when it was sent (performance.now()), for its time. */
  digest: DigestRecord | undefined;
  sentAt: number;
  /** A cacheable SELECT that missed: its time goes to the miss latency histogram too. */
  missed: boolean;
}

export type Route =
  /** Answer with these bytes; nothing goes to the server. */
  | { action: 'answer'; bytes: Buffer }
  /** Send the session probe first, then route the command again. */
  | { action: 'probe'; sql: string }
  /**
   * Wait (at most maxWaitMs) for an identical miss in flight, or for the schema metadata being
   * reloaded (`metadata`), then route the command again.
   */
  | { action: 'wait'; flight: Flight; maxWaitMs: number; metadata: boolean }
  /** Send this command (the last hit) first, so the server's diagnostics match, then route. */
  | { action: 'replay'; payload: Buffer }
  /**
   * Send this transaction command of the proxy's own first (starting on the server a
   * transaction the proxy began, or rolling one back), hand its reply to acceptTransactionReply,
   * then route the command again.
   */
  | { action: 'transaction'; payload: Buffer }
  /**
   * Send the command to the server; `payload`, when set, instead of the client's (an execution
   * given the parameter types the client bound before, which the server never received).
   */
  | {
      action: 'forward';
      plan: CommandPlan | null;
      payload?: Buffer;
      /**
       * Send this transaction command of the proxy's own right before the command, without
       * waiting for its reply (see acceptTransactionReply, which may discard the command's).
       */
      opening?: Buffer;
    };

/** Kinds after which the session's variables and schema are as they were. */
const STATE_PRESERVING: ReadonlySet<StatementKind> = new Set([
  'select',
  'insert',
  'replace',
  'update',
  'delete',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'show',
  'truncate',
  'load',
]);

const SCHEMA_CHANGING: ReadonlySet<StatementKind> = new Set(['call', 'execute', 'other']);

/**
 * Kinds that may change the session's state but never its current database: a CALL (USE is
 * refused in stored programs, and a procedure's database is the caller's again when it returns)
 * and a SET.
 */
const SCHEMA_KEEPING: ReadonlySet<StatementKind> = new Set(['call', 'set']);
/** Statements whose SQL EXECUTE is routed as the statement it prepared (see SqlPrepared). */
const ROUTED_AS_PREPARED: ReadonlySet<StatementKind> = new Set([
  'select',
  'insert',
  'replace',
  'update',
  'delete',
]);

/** Kinds that fire triggers on the tables they write. */
const TRIGGER_FIRING: ReadonlySet<StatementKind> = new Set([
  'insert',
  'replace',
  'update',
  'delete',
  'load',
]);

/** No hit to account for (#lastHit, #foundRowsDebt): they hold a hit's row count otherwise. */
const NO_HIT = -1;

/**
 * #readOutcome: nothing of the cache's, or a cacheable read it did not have; a bypass is its
 * reason (Bypass, from 0).
 */
const READ_OTHER = -2;
const READ_MISS = -1;

/**
 * Kinds whose routing reads the session's state: a SELECT's key, the tables a write names (in
 * the current schema), a DDL's schema, the isolation a transaction starts at. See
 * needsSessionState.
 */
const SESSION_STATE_KINDS: ReadonlySet<StatementKind> = new Set([
  'select',
  'insert',
  'replace',
  'update',
  'delete',
  'truncate',
  'load',
  'ddl',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'xa',
  'lock',
  'grant',
]);

/**
 * Does the reply to a read of transactional tables show that InnoDB took the transaction's
 * snapshot for it? InnoDB takes it when it first reads a row, and answers some reads without
 * reading one: `WHERE 1=0`, `LIMIT 0`, an aggregate over either; the snapshot is then taken
 * later, and a hit served before that could be older than what the server shows next. So only
 * a read that surely read a row counts: one whose result rows are rows it read from its one
 * table (StatementInfo.rowsReadFromTable), that returned a row. Other reads leave the
 * transaction's hits waiting for one that does (a transaction the proxy began is started WITH
 * CONSISTENT SNAPSHOT instead: see DeferredTransaction).
 */
function readTookSnapshot(info: StatementInfo | null, tracker: ReplyTracker): boolean {
  return info !== null && info.rowsReadFromTable && tracker.sawRow;
}

/**
 * Whether a statement waits for the session probe when the state may have changed. The probe is
 * a SELECT, and leaves what a SELECT leaves: FOUND_ROWS() (put back, see
 * #foundRowsBeforeProbe) and the row number the server gives warnings raised outside any
 * statement, such as a CALL's arguments cut to fit ("at row 1" where the client would see "at
 * row 0"). So statements routed the same without the state go first, and the probe waits for
 * the next statement that needs it:
 * - those announced as writing everything whatever the state says (CALL, routines' DDL...);
 * - SET, SHOW, DO, USE and the like, which name no table, when their text reads the same in
 *   every sql_mode and character set (the state they were classified under may be gone: a
 *   string misread could hide a function call), their marks as conservative as an unknown
 *   state needs (#writeMarks).
 */
function needsSessionState(entry: MemoEntry): boolean {
  const info = entry.info;
  // The state it is prepared in is recorded with it.
  if (info.control?.kind === 'sql-prepare' && info.control.text !== null) return true;
  if (info.writesEverything && info.kind !== 'select') return false;
  return (
    !entry.modeIndependent ||
    SESSION_STATE_KINDS.has(info.kind) ||
    info.reads.length > 0 ||
    info.writes.length > 0
  );
}

/**
 * A SELECT or a write (INSERT, REPLACE, UPDATE, DELETE) prepared by PREPARE name FROM 'text'.
 * EXECUTE name runs that text, and answers as the text itself does, so it is routed as that
 * statement, a SELECT keyed as it is: while the session's state is the one it was prepared in,
 * which the parse (tables in the current schema, literals in the client's character set)
 * depended on.
 */
interface SqlPrepared {
  entry: MemoEntry;
  sessionKey: string;
}

/** A statement prepared through COM_STMT_PREPARE, for caching its executions. */
interface PreparedStatement {
  sql: string;
  entry: MemoEntry;
  /** The server resolves the statement's tables in the schema current when it was prepared. */
  schema: string | null;
  parameterCount: number;
  /** Parameter types from the last execute that sent them (later ones may omit them). */
  types: Buffer | null;
  /**
   * The server holds `types`. An execution answered from the cache never reached it, so the
   * types it bound may be news to the server: the next execution that reaches the server and
   * omits them is sent with them (see #withServerTypes).
   */
  serverHasTypes: boolean;
  /** COM_STMT_SEND_LONG_DATA was used: the values are not in the execute packet. */
  longData: boolean;
  /** Bounded to one row by a parameter: its executions are invalidated by row. */
  point: ParameterPoint | null;
}

export class StatementRouter {
  readonly #worker: WorkerCache;
  readonly #cache: QueryCache;
  readonly #replyCapabilities: string;
  readonly #serverVersion: string;
  readonly #probeSql: string;
  readonly txn: TransactionState;
  #snapshot: SessionSnapshot | null = null;
  /** The probe must run again before the next statement that depends on session state. */
  #stateDirty = true;
  /**
   * Since the last probe, something ran that may have changed the current database (a USE, a
   * text the router cannot follow...): the snapshot's schema may not be the session's. Unlike
   * #stateDirty it stays false across CALLs and SETs, which cannot change it (USE is refused in
   * stored programs, 1314, and a procedure's database is the caller's again when it returns).
   */
  #schemaUnsure = true;
  #sessionKey = '';
  /** The query_cache_type nicecache applies to this session (see #followServerType). */
  #type: QueryCacheType;
  /**
   * The session set its query_cache_type on the server (which accepted it): nicecache follows
   * the server's session value, as the probe reads it, instead of --query-cache-type.
   */
  #followServerType = false;
  /** The session's query_cache_type at the last probe (null: not probed since login or reset). */
  #probedType: 0 | 1 | 2 | null = null;
  /** Qualified names of this session's temporary tables. */
  readonly #temporary = new Set<string>();
  /**
   * Names that may be this session's temporary tables, or may no longer be: its temporary
   * tables when something may have dropped or renamed them unseen, those a procedure may have
   * created. No read of them is stored or served; a write to them is taken as one of the base
   * table of that name, which it may be.
   */
  readonly #maybeTemporary = new Set<string>();
  /** Something ran that may have created temporary tables unseen (a procedure, say). */
  #hiddenTemporary = false;
  readonly #statements = new Map<number, PreparedStatement>();
  /** SELECTs prepared by SQL PREPARE, by their lowered names. */
  readonly #sqlPrepared = new Map<string, SqlPrepared>();
  /**
   * The rows of the reply last served from the cache, while that was the last command (NO_HIT
   * otherwise): the server never ran it, so what it says about "the previous statement" must be
   * put right before anyone asks.
   */
  #lastHit = NO_HIT;
  /**
   * The rows of the last hit while no SELECT has run on the server since (NO_HIT otherwise):
   * FOUND_ROWS() there still counts an older result, which only a SELECT resets.
   */
  #foundRowsDebt = NO_HIT;
  /**
   * FOUND_ROWS() as the client left it before the probe, whose own row made it 1 on the server:
   * put back before the next statement unless that statement is a SELECT, which sets it anew.
   */
  #foundRowsBeforeProbe: number | null = null;
  /**
   * The server's warning list may hold entries: the last statement that used a table had some,
   * or one after it did (statements that read no table keep the list and add to it).
   */
  #serverMayHoldWarnings = true;
  /**
   * A hit was served while the server's list may hold entries, and no statement that uses a
   * table has reached the server since: a reader of warnings must have them emptied first.
   */
  #warningsDebt = false;
  /** LOCK TABLES is in force: the server refuses tables not locked, which a hit would not. */
  #tablesLocked = false;
  /** The command being routed waited for a flight already: it does not wait again. */
  #waited = false;
  /** The command being routed waited for the metadata already: it does not wait again. */
  #waitedForMetadata = false;
  /** False while routing a command that must reach the server whatever the cache holds. */
  #mayHit = true;
  /**
   * A COM_STMT_CLOSE too short to name its statement reached the server, which then closes
   * whichever statement the bytes after the packet happen to name: executions are no longer
   * answered from the cache (the statement may be gone) until the session starts over.
   */
  #statementsUncertain = false;

  /** A transaction the proxy began without the server (see deferred-transaction.ts), or null. */
  #deferred: DeferredTransaction | null = null;
  readonly #deferredState = new DeferredTransaction();
  /** The deferred transaction whose start on the server awaits its reply. */
  #opening: DeferredTransaction | null = null;
  /** Its start was sent together with the command that needed it (see #openWith). */
  #pipelined = false;
  /** The transaction the proxy started on the server has run plain reads only. */
  #readsOnly = false;
  /** The client's COMMIT, answered by the proxy, that the server has not been sent yet. */
  #commitOwed: Buffer | null = null;
  readonly #flushOwedCommit: () => boolean;
  /** Owed COMMITs sent whose replies are still to come. */
  #commitsInFlight = 0;
  /** The hits a started transaction served no longer hold: it is to be rolled back. */
  #rollbackDue = false;
  #rollingBack = false;
  /** The proxy's own answer to the command routed next (after a transaction command). */
  #owed: Buffer | null = null;
  /**
   * A COMMIT or ROLLBACK the proxy answered while it is the last command: the server never saw
   * it, so it is sent before anything reads what "the previous statement" left.
   */
  #endReplay: Buffer | null = null;
  readonly #transactionReplies = new TransactionReplies();

  readonly #deprecateEof: boolean;
  readonly #extendedMetadata: boolean;
  /** What the proxy's own statements added to the session's status counters. */
  readonly #ownStatus = new OwnStatementStatus();
  /** The nicecache schema's tables, answered by the proxy (SELECT * FROM nicecache.digests). */
  readonly #ownTables: NicecacheTables;
  /** The route of every hit (see #routeSelect). */
  readonly #answerRoute: { action: 'answer'; bytes: Buffer } = {
    action: 'answer',
    bytes: Buffer.alloc(0),
  };
  /** The statement being routed, for its digest (null for commands that are not one). */
  #digestEntry: MemoEntry | null = null;
  /** What the cache did with it: a miss, or a bypass (its reason); hits are told by the route. */
  #readOutcome: number = READ_OTHER;

  constructor(
    worker: WorkerCache,
    serverVersion: string,
    capabilities: number,
    mariaDbCapabilities: number,
    status: number,
    /** Sends the session's owed COMMIT if it can; says whether one is still owed. */
    flushOwedCommit: () => boolean,
  ) {
    this.#flushOwedCommit = flushOwedCommit;
    this.#ownTables = new NicecacheTables(worker.gatherDigests);
    this.#deprecateEof = (capabilities & Capability.DEPRECATE_EOF) !== 0;
    this.#extendedMetadata = (mariaDbCapabilities & MariaDbCapability.EXTENDED_METADATA) !== 0;
    this.#worker = worker;
    this.#serverVersion = serverVersion;
    this.#probeSql = probeSql(serverVersion);
    this.#cache = worker.cache;
    // What shapes the reply bytes: sessions that differ only in login or transport bits share
    // results; MariaDB's extended capabilities (extended metadata in column definitions) count.
    this.#replyCapabilities = `${(capabilities & ~REPLY_NEUTRAL_CAPABILITIES) >>> 0}.${mariaDbCapabilities}`;
    this.#type = worker.cache.type;
    this.txn = new TransactionState(worker.cache.registry);
    if (status >= 0) this.txn.status = status;
  }

  /** After an answer was written to `writer`: a hit's bytes stay as they are while queued. */
  pinIfQueued(answer: Buffer, writer: QueuedWriter): void {
    this.#cache.pinIfQueued(answer, writer);
  }

  /** Decides what happens to a client command (its payload, without the packet header). */
  route(payload: Buffer): Route {
    // Any command but another hit makes the last hit no longer the last statement, except those
    // that leave the server's diagnostics alone.
    const lastHit = this.#lastHit;
    const endReplay = this.#endReplay;
    const command = payload[0];
    if (
      command !== Command.STMT_CLOSE &&
      command !== Command.STMT_RESET &&
      command !== Command.STMT_SEND_LONG_DATA
    ) {
      this.#lastHit = NO_HIT;
      this.#endReplay = null;
    }
    this.#digestEntry = null;
    this.#readOutcome = READ_OTHER;
    const special = this.#routeTransaction(payload, lastHit, endReplay);
    if (special !== null) {
      if (this.#digestEntry !== null) this.#countDigest(special);
      return special;
    }
    const route = this.#route(payload, lastHit);
    // A command that waits comes back here once the flight has landed, and then must not wait.
    if (route.action === 'wait') {
      if (route.metadata) this.#waitedForMetadata = true;
      else this.#waited = true;
      this.#lastHit = lastHit;
      return route;
    }
    this.#waited = false;
    this.#waitedForMetadata = false;
    if (this.#digestEntry !== null) this.#countDigest(route);
    return route;
  }

  /**
   * Counts the routed statement in its digest: a hit, a miss or a bypass; a statement sent to
   * the server is timed until its reply ends (see onReply). Only an answer or a forward ends a
   * statement's routing: after a probe, a transaction command or a replay it is routed again.
   */
  #countDigest(route: Route): void {
    const digests = this.#worker.digests;
    if (digests === null || (route.action !== 'answer' && route.action !== 'forward')) return;
    const entry = this.#digestEntry!;
    let record = entry.digest;
    if (record === null) {
      const info = entry.info;
      record = digests.recordOf(digestTextOf(entry.shape, entry.keyText), info.kind);
      entry.digest = record;
    }
    record.count++;
    if (route === this.#answerRoute) {
      record.hits++;
      record.rowsServed += this.#lastHit;
      record.bytesServed += route.bytes.length;
      return;
    }
    if (this.#readOutcome === READ_MISS) record.misses++;
    else if (this.#readOutcome >= 0) record.bypasses[this.#readOutcome]!++;
    if (route.action === 'forward' && route.plan !== null) {
      route.plan.digest = record;
      // A miss that fills read the clock for its flight a moment ago: once is enough.
      route.plan.sentAt = route.plan.fill?.flight.startedAt ?? performance.now();
      route.plan.missed = this.#readOutcome === READ_MISS;
    }
  }

  // --- transactions the proxy begins (see deferred-transaction.ts) ---------------------------

  /**
   * What a command gets before the usual routing, because of a transaction the proxy began or
   * ended itself; null when nothing of that is under way (one field test, the common case).
   */
  #routeTransaction(payload: Buffer, lastHit: number, endReplay: Buffer | null): Route | null {
    if (this.#rollbackDue) {
      this.#rollbackDue = false;
      this.#rollingBack = true;
      return { action: 'transaction', payload: ROLLBACK_PAYLOAD };
    }
    const owed = this.#owed;
    if (owed !== null) {
      this.#owed = null;
      return { action: 'answer', bytes: owed };
    }
    if (this.#deferred !== null) return this.#routeDeferred(payload, lastHit);
    if (endReplay !== null && this.#readsDiagnostics(payload)) {
      return { action: 'replay', payload: endReplay };
    }
    return null;
  }

  /**
   * A command inside a transaction the server has not seen: a hit, or the plain COMMIT or
   * ROLLBACK that ends it, is answered; commands whose replies say nothing of transactions go
   * their usual way; anything else needs the server, which starts the transaction first.
   */
  #routeDeferred(payload: Buffer, lastHit: number): Route | null {
    const command = payload[0];
    switch (command) {
      case Command.QUERY: {
        const entry = this.#worker.memo.classifyBytes(
          payload,
          1,
          this.#modeIndex(),
          this.#classifyMode,
          this.#serverVersion,
        );
        return this.#deferredStatement(payload, lastHit, entry, this.#snapshot?.schema ?? null);
      }
      case Command.STMT_EXECUTE: {
        const statement =
          payload.length < EXECUTE_HEADER_LENGTH
            ? undefined
            : this.#statements.get(payload.readUInt32LE(1));
        if (statement === undefined) return this.#openDeferred(lastHit);
        return this.#deferredStatement(
          payload,
          lastHit,
          statement.entry,
          statement.schema,
          statement,
        );
      }
      // No reply, or one without status flags (which would say "no transaction"): COM_PING and
      // COM_STMT_RESET answer with an OK that carries them, so they start it like the rest.
      case Command.STMT_CLOSE:
      case Command.STMT_SEND_LONG_DATA:
      case Command.STATISTICS:
      case Command.QUIT:
        return null;
      case Command.RESET_CONNECTION:
      case Command.CHANGE_USER:
        // The server starts the session over, and had no transaction to roll back.
        this.#deferred = null;
        return null;
      default:
        return this.#openDeferred(lastHit);
    }
  }

  /**
   * A BEGIN the proxy begins itself, or a COMMIT (ROLLBACK) it answers now, text or execution
   * (its kept reply found by `payload`); null when the server must have it.
   */
  #answerTransactionStatement(payload: Buffer, control: StatementControl | null): Route | null {
    if (control?.kind === 'end-transaction') return this.#commitLater(payload);
    if (control?.kind === 'begin') return this.#deferBegin(payload, control.access);
    return null;
  }

  /**
   * A statement inside the deferred transaction, as a text (`statement` null) or an execution
   * of `statement`: the COMMIT or ROLLBACK that ends it, a hit, or the start of the server's
   * transaction (in the same write as the statement when it surely goes to the server).
   */
  #deferredStatement(
    payload: Buffer,
    lastHit: number,
    entry: MemoEntry,
    schema: string | null,
    statement: PreparedStatement | null = null,
  ): Route {
    this.#digestEntry = entry;
    const info = entry.info;
    if (info.control?.kind === 'end-transaction') {
      const reply = this.#transactionReplies.get(payload);
      if (reply !== undefined) return this.#endDeferred(reply);
    } else if (
      info.kind === 'select' &&
      info.control === null &&
      !info.readsDiagnostics &&
      !(this.#foundRowsDebt !== NO_HIT && info.readsFoundRows)
    ) {
      const hit =
        statement === null
          ? this.#deferredHit(entry)
          : this.#deferredExecutionHit(statement, payload);
      if (hit !== null) return hit;
    }
    if (this.#pipelinable(entry, schema)) {
      return this.#openWith(payload, lastHit, !info.lockingRead);
    }
    return this.#openDeferred(lastHit);
  }

  /** The COMMIT or ROLLBACK of a transaction the server never saw: the server's own reply. */
  #endDeferred(reply: TransactionReply): Route {
    this.#deferred = null;
    this.txn.status = reply.status;
    this.#endReplay = reply.sent;
    this.#cache.stats.add(Counter.TRANSACTIONS_IN_PROXY);
    return { action: 'answer', bytes: reply.bytes };
  }

  /** A hit of a text inside a deferred transaction, or null (nothing counted, nothing started). */
  #deferredHit(entry: MemoEntry): Route | null {
    this.#ensureKey(entry);
    return this.#deferredLookup(
      entry,
      this.#snapshot?.schema ?? null,
      entry.key,
      entry.keyHash,
      null,
    );
  }

  /**
   * A hit of an execution inside a deferred transaction, keyed and bounded to its row as in
   * #routeExecute; or null.
   */
  #deferredExecutionHit(statement: PreparedStatement, payload: Buffer): Route | null {
    if (this.#statementsUncertain) return null;
    const layout = executeLayoutOf(payload, statement.parameterCount);
    const key = this.#executeKey(statement, payload, layout);
    if (key === null) return null;
    const bound = statement.point !== null && this.#executionRows(statement, payload, layout);
    const rowSlots = bound ? statement.point!.readSlots() : null;
    const hit = this.#deferredLookup(
      statement.entry,
      statement.schema,
      key,
      keyHashOf(key),
      rowSlots,
    );
    // The types it bound are the statement's from now on, as for any execution.
    if (hit !== null && layout!.typesSent) this.#bindTypes(statement, payload, layout!);
    return hit;
  }

  /**
   * A hit inside a deferred transaction of the read `entry` keyed `key` (`rowSlots`: an
   * execution's own slots), or null: nothing counted, nothing started.
   */
  #deferredLookup(
    entry: MemoEntry,
    schema: string | null,
    key: string,
    hash: number,
    rowSlots: Int32Array | null,
  ): Route | null {
    const deferred = this.#deferred!;
    if (this.#stateDirty) return null;
    if (this.#writeMarks(entry, schema) !== null) return null;
    if (this.#hitBlocker(entry, schema, null, rowSlots) >= 0) return null;
    const slots = rowSlots ?? entry.readSlots!;
    // A hit here is one more table that must not change before the server's snapshot is taken:
    // not worth the risk on a table written faster than its results are read again.
    if (deferred.repeatableRead && this.#cache.writtenOften(slots)) return null;
    const cache = this.#cache;
    const id = cache.lookup(key, deferred.repeatableRead ? deferred.snapshotSeq : null, hash);
    if (id === NO_ENTRY) return null;
    cache.stats.add(Counter.HITS);
    // The transaction keeps what its hits read until the server's snapshot is checked: an
    // execution's row slots are rewritten by the statement's next execution, so it keeps a copy.
    // A point read that found no row was stored with more slots than it was looked up with
    // (#storedSlots): then those.
    deferred.served(
      cache.slotCountOf(id) !== slots.length
        ? cache.slotsOf(id)
        : rowSlots === null
          ? slots
          : Int32Array.from(rowSlots),
      entry.info.reads,
    );
    this.#lastHit = this.#foundRowsDebt = cache.rowsOf(id);
    if (this.#serverMayHoldWarnings) this.#warningsDebt = true;
    const answer = this.#answerRoute;
    answer.bytes = cache.replyOf(id, this.txn.status & SESSION_STATUS_BITS, SESSION_STATUS_BITS);
    return answer;
  }

  /**
   * The deferred transaction needs the server: it is started there, and the command routed
   * again once it has (then the diagnostics a hit left are put right, after the start).
   */
  #openDeferred(lastHit: number): Route {
    const deferred = this.#deferred!;
    this.#deferred = null;
    this.#opening = deferred;
    this.#lastHit = lastHit;
    this.#readsOnly = true;
    deferred.seqBeforeOpening = this.#cache.registry.sequence();
    return { action: 'transaction', payload: deferred.opening() };
  }

  /**
   * A SELECT routed at once in a transaction started on the server right before it, when its
   * route is sure to be a forward: no diagnostics to put right first, nothing to wait for.
   */
  #pipelinable(entry: MemoEntry, schema: string | null): boolean {
    const info = entry.info;
    return (
      info.kind === 'select' &&
      info.control === null &&
      !info.readsDiagnostics &&
      !info.readsFoundRows &&
      !this.#stateDirty &&
      this.#foundRowsBeforeProbe === null &&
      this.#worker.catalog.generation >= 0 &&
      this.#writeMarks(entry, schema) === null
    );
  }

  /**
   * Starts the deferred transaction on the server and sends the command right after it, in one
   * write: the command is routed as it will be once the transaction is open (no hit, which the
   * transaction's start could still refuse, and no waiting). `plainRead`: the command is a
   * SELECT that locks nothing (see DeferredTransaction.opensWithRead).
   */
  #openWith(payload: Buffer, lastHit: number, plainRead: boolean): Route {
    const deferred = this.#deferred!;
    deferred.opensWithRead = plainRead;
    this.#deferred = null;
    this.#opening = deferred;
    this.#pipelined = true;
    this.#readsOnly = true;
    const txn = this.txn;
    deferred.seqBeforeOpening = this.#cache.registry.sequence();
    txn.snapshotSeq = deferred.seqBeforeOpening;
    txn.snapshotEstablished = deferred.needsSnapshot;
    this.#mayHit = false;
    this.#waited = true;
    const route = this.#route(payload, lastHit);
    this.#mayHit = true;
    this.#waited = false;
    if (route.action !== 'forward') {
      throw new Error(`a pipelined statement was routed to ${route.action}`);
    }
    route.opening = deferred.opening();
    return route;
  }

  /** The reply to a transaction command of the proxy's own (`reply`: its first packet). */
  acceptTransactionReply(tracker: ReplyTracker, reply: Buffer | null): TransactionOutcome {
    const txn = this.txn;
    // A COMMIT answered earlier goes before anything else the proxy sends: its reply comes first.
    if (this.#commitsInFlight > 0) {
      this.#commitsInFlight--;
      // A read-only transaction's COMMIT does not fail; if it did, nothing is known any more.
      if (tracker.failed) this.#markDirty();
      return TransactionOutcome.GO_ON;
    }
    if (this.#rollingBack) {
      this.#rollingBack = false;
      if (tracker.failed) this.#markDirty();
      else txn.onReply(tracker.status, 0, null, false, false, null);
      return TransactionOutcome.GO_ON;
    }
    const opened = this.#opening;
    const pipelined = this.#pipelined;
    this.#opening = null;
    this.#pipelined = false;
    if (opened === null) return TransactionOutcome.GO_ON;
    if (tracker.failed || reply === null) {
      // The server would not start it: the command that needed it gets the server's answer
      // (sent after it, the command ran outside any transaction: its reply is not the client's).
      txn.status &= ~(ServerStatus.IN_TRANS | ServerStatus.IN_TRANS_READONLY);
      if (reply !== null) {
        const owed = Buffer.from(reply);
        owed[3] = 1;
        this.#owed = owed;
      }
      return pipelined ? TransactionOutcome.DISCARD_NEXT : TransactionOutcome.GO_ON;
    }
    txn.status = tracker.status;
    txn.snapshotSeq = opened.seqBeforeOpening;
    txn.snapshotEstablished = opened.needsSnapshot;
    if (!opened.needsSnapshot) return TransactionOutcome.GO_ON;
    const changed = opened.changedTable(this.#cache.registry);
    if (changed === null) return TransactionOutcome.GO_ON;
    // What the hits served no longer equals the snapshot the server took: InnoDB's own answer
    // to a snapshot that cannot go on, with the transaction rolled back.
    this.#cache.stats.add(Counter.TRANSACTION_CONFLICTS);
    this.#rollbackDue = true;
    this.#owed = encodeErr(
      new ProxyError(
        ProxyErrorCode.SNAPSHOT_CHANGED,
        `Record has changed since last read in table '${changed}'`,
      ).toErrInfo(),
      1,
    );
    return pipelined ? TransactionOutcome.DISCARD_NEXT : TransactionOutcome.GO_ON;
  }

  /**
   * The reply to a command sent right after a transaction start that failed or whose snapshot
   * the hits do not match has ended, unseen by the client: what the client gets instead, and
   * the ROLLBACK to send first when the transaction is to be undone.
   */
  acceptDiscarded(plan: CommandPlan | null, tracker: ReplyTracker): Discarded {
    if (plan !== null) {
      if (plan.fill !== null) this.#worker.flights.finish(plan.fill.flight);
      this.onReply(plan, tracker);
    }
    const answer = this.#owed ?? EMPTY_ANSWER;
    this.#owed = null;
    const rollback = this.#rollbackDue;
    this.#rollbackDue = false;
    if (rollback) this.#rollingBack = true;
    return { answer, rollback: rollback ? ROLLBACK_PAYLOAD : null };
  }

  /**
   * BEGIN answered by the proxy, when the server's reply to it is known and the transaction
   * starts from a state the proxy knows: autocommit on, no transaction, no locked tables, a
   * known isolation level whose reads the cache can answer.
   */
  #deferBegin(payload: Buffer, access: 'read-only' | 'read-write' | null): Route | null {
    if (!this.#worker.deferTransactions) return null;
    const reply = this.#transactionReplies.get(payload);
    if (reply === undefined) return null;
    const txn = this.txn;
    const isolation = this.#snapshot?.isolation ?? null;
    if (
      txn.inTransaction ||
      !txn.autocommit ||
      txn.isolationOverride ||
      this.#stateDirty ||
      this.#tablesLocked ||
      this.#type === 0 ||
      (isolation !== 'REPEATABLE-READ' && isolation !== 'READ-COMMITTED')
    ) {
      return null;
    }
    const deferred = this.#deferredState;
    deferred.start(
      reply.sent,
      access,
      isolation === 'REPEATABLE-READ',
      this.#cache.registry.sequence(),
    );
    this.#deferred = deferred;
    txn.status = reply.status;
    txn.snapshotSeq = deferred.snapshotSeq;
    txn.snapshotEstablished = true;
    txn.isolation = isolation;
    this.#cache.stats.add(Counter.TRANSACTIONS_DEFERRED);
    return { action: 'answer', bytes: reply.bytes };
  }

  /**
   * A BEGIN, or a COMMIT or ROLLBACK, sent from the state in which the proxy would answer it
   * itself: its reply is to be kept (once per session and text).
   */
  #learnReply(
    plan: CommandPlan,
    payload: Buffer,
    begins: boolean,
    prepared: PreparedStatement | null = null,
  ): void {
    const txn = this.txn;
    if (
      !this.#worker.deferTransactions ||
      this.#stateDirty ||
      !txn.autocommit ||
      txn.inTransaction === begins
    )
      return;
    if (this.#transactionReplies.get(payload) !== undefined) return;
    const request = Buffer.from(payload);
    const sent = prepared === null ? request : queryPayload(prepared.sql);
    plan.learn = { request, sent, begins };
  }

  /**
   * The COMMIT (or ROLLBACK) of a transaction the proxy began and then started on the server,
   * which has only read since: answered now, with the server's own reply to the same text, and
   * sent to the server with the session's next command, or within a delay (see OwedCommits and
   * takeOwedCommit). Ending a transaction that only read changes nothing but the read view it
   * holds, so the client may go on at once; what it sends next reaches the server after it.
   */
  #commitLater(payload: Buffer): Route | null {
    const txn = this.txn;
    if (!this.#readsOnly || !txn.inTransaction || !txn.autocommit || this.#stateDirty) return null;
    if (!this.#worker.deferTransactions || this.#tablesLocked) return null;
    const reply = this.#transactionReplies.get(payload);
    if (reply === undefined) return null;
    this.#readsOnly = false;
    this.#commitOwed = reply.sent;
    this.#worker.owedCommits.add(this.#flushOwedCommit);
    txn.onReply(reply.status, 0, null, false, false, null);
    this.#cache.stats.add(Counter.COMMITS_DEFERRED);
    return { action: 'answer', bytes: reply.bytes };
  }

  /**
   * What SHOW SESSION STATUS and SESSION_STATUS take out of the server's values: what the
   * proxy's own statements on this session added (see OwnStatementStatus).
   */
  ownStatusLess(): Map<string, number> {
    return this.#ownStatus.less();
  }

  /** FLUSH STATUS went through: the cache's counters and this session's start over. */
  #flushStatus(): void {
    this.#cache.stats.flush();
    this.#ownStatus.reset();
  }

  /** A COMMIT answered by the proxy and not yet sent, if any. */
  get owesCommit(): boolean {
    return this.#commitOwed !== null;
  }

  /**
   * The COMMIT the server is owed, to send before anything else goes to it (the session calls
   * this before every command it sends); null when none is owed.
   */
  takeOwedCommit(): Buffer | null {
    const owed = this.#commitOwed;
    if (owed === null) return null;
    this.#commitOwed = null;
    this.#commitsInFlight++;
    return owed;
  }

  /** The reply of a BEGIN, COMMIT or ROLLBACK sent to be kept (see CommandPlan.learn). */
  learn(plan: CommandPlan, reply: Buffer | null): void {
    const learn = plan.learn;
    if (learn === undefined) return;
    const begins = learn.begins;
    this.#transactionReplies.learn(learn.request, learn.sent, reply, (status) =>
      begins
        ? (status & ServerStatus.IN_TRANS) !== 0 && (status & ServerStatus.AUTOCOMMIT) !== 0
        : (status & ServerStatus.IN_TRANS) === 0 && (status & ServerStatus.AUTOCOMMIT) !== 0,
    );
  }

  /** Does the command read what the previous statement left (diagnostics, ROW_COUNT())? */
  #readsDiagnostics(payload: Buffer): boolean {
    switch (payload[0]) {
      case Command.QUERY:
        return this.#worker.memo.classifyBytes(
          payload,
          1,
          this.#modeIndex(),
          this.#classifyMode,
          this.#serverVersion,
        ).info.readsDiagnostics;
      case Command.STMT_EXECUTE: {
        const statement =
          payload.length < EXECUTE_HEADER_LENGTH
            ? undefined
            : this.#statements.get(payload.readUInt32LE(1));
        return statement === undefined || statement.entry.info.readsDiagnostics;
      }
      case Command.PING:
      case Command.STATISTICS:
      case Command.QUIT:
      case Command.STMT_CLOSE:
      case Command.STMT_RESET:
      case Command.STMT_SEND_LONG_DATA:
        return false;
      default:
        return true;
    }
  }

  #route(payload: Buffer, lastHit: number): Route {
    const command = payload[0]!;
    switch (command) {
      case Command.QUERY:
        return this.#routeQuery(payload, lastHit);
      case Command.STMT_PREPARE:
        return this.#routePrepare(payload, lastHit);
      case Command.STMT_EXECUTE:
        return this.#routeExecute(payload, lastHit);
      case Command.STMT_SEND_LONG_DATA: {
        // Cut short, the server ignores it without a reply; so does the router.
        if (payload.length < LONG_DATA_HEADER_LENGTH) return FORWARD;
        const statement = this.#statements.get(payload.readUInt32LE(1));
        if (statement !== undefined) statement.longData = true;
        return FORWARD;
      }
      case Command.STMT_CLOSE: {
        const id = statementIdOf(payload);
        if (id < 0) this.#statementsUncertain = true;
        else {
          this.#statements.delete(id);
          // A later statement given the same id (the server does not, but nothing says it
          // never will) must not be answered with this one's reply.
          this.#transactionReplies.forgetExecutions(id);
        }
        return FORWARD;
      }
      case Command.STMT_RESET: {
        // Cut short, the server resets whatever the bytes after it name, or answers 1243: long
        // data flags the router keeps set only make executions bypass the cache.
        const statement = this.#statements.get(statementIdOf(payload));
        if (statement !== undefined) statement.longData = false;
        return FORWARD;
      }
      case Command.BINLOG_DUMP:
      case Command.BINLOG_DUMP_GTID:
        // A dump reads the binary log and writes nothing; the server ends the connection after
        // it, or refuses it (no REPLICATION SLAVE) and reads the next command.
        return FORWARD;
      case Command.PING:
      case Command.STATISTICS:
      case Command.FIELD_LIST:
      case Command.STMT_FETCH:
      case Command.PROCESS_INFO:
      case Command.QUIT:
      case Command.SLEEP:
      case Command.TIME:
      case Command.DEBUG:
      case Command.PROCESS_KILL:
        return FORWARD;
      case Command.INIT_DB:
      case Command.SET_OPTION:
      case Command.CHANGE_USER:
      case Command.RESET_CONNECTION:
        return this.#forward(command, null, null, false);
      case Command.REFRESH: {
        // FLUSH privileges, tables, logs, status...: it may change what any result says (a
        // privilege, say), never a view, trigger or foreign key, and nothing of it waits for a
        // transaction's end. The server commits the open transaction first, even when it then
        // refuses (1227): its error says nothing of that, so the transaction's own marks stay
        // held until the next reply, but this one goes with its reply.
        const route = this.#forward(command, null, REFRESH_MARKS, false);
        // COM_REFRESH with REFRESH_STATUS is FLUSH STATUS.
        if (((payload[1] ?? 0) & REFRESH_STATUS) !== 0) route.plan!.flushesStatus = true;
        return route;
      }
      default: {
        // A command with no reply could never release a mark: none of them writes.
        if (replyShapeOf(command) === ReplyShape.NONE) return FORWARD;
        // COM_DROP_DB, bulk execution and anything else that may write. A command byte the
        // proxy knows no reply shape for gets "Unknown command" from MariaDB: it is announced as
        // a write of everything all the same, but not as a schema change, so that garbage does
        // not make every worker reload its metadata.
        return this.#forwardUnknown(command, replyShapeOf(command) !== null);
      }
    }
  }

  /**
   * The first packet of a command of 16 MB or more, whose rest follows in continuation packets:
   * the router does not assemble it, so it cannot say what the statement does. It is announced
   * as a write of everything (schema included), and the session's state, temporary tables and
   * diagnostics are taken as unknown after it. COM_STMT_SEND_LONG_DATA is routed as usual: only
   * its header is read.
   */
  routeUnassembled(payload: Buffer): Route {
    const command = payload[0]!;
    if (command === Command.STMT_SEND_LONG_DATA) return this.route(payload);
    const lastHit = this.#lastHit;
    this.#lastHit = NO_HIT;
    // The server must hold the diagnostics a hit left before it runs a statement the router
    // cannot read (it may be a SELECT that resets FOUND_ROWS(), or not).
    const debt = lastHit !== NO_HIT ? lastHit : this.#foundRowsDebt;
    if (debt !== NO_HIT) return this.#settleDiagnostics(debt);
    this.#waited = false;
    this.#temporariesUnseen();
    if (command === Command.STMT_PREPARE) {
      // Not registered: its executions count as those of an unknown statement.
      this.#markDirty();
      return this.#forward(command, null, null, false);
    }
    if (command === Command.STMT_EXECUTE) {
      const statement = this.#statements.get(statementIdOf(payload));
      const primer = statement === undefined ? null : this.#typesPrimer(statement, payload);
      if (primer !== null) return { action: 'replay', payload: primer };
      // The types it binds are not all seen: the statement is forgotten, and its later
      // executions count as those of an unknown statement.
      this.#statements.delete(statementIdOf(payload));
    }
    return this.#forwardUnknown(command, true);
  }

  /**
   * An execution of 16 MB or more that omits the types while the server never received those
   * the client bound (executions answered from the cache): it cannot be rewritten without
   * reframing every continuation, so the server is given the types first, by an execution of
   * the same statement with every parameter NULL whose reply the client never sees. It is a
   * cacheable SELECT (only those hit): what it leaves in the session (diagnostics, FOUND_ROWS())
   * the real execution replaces right after.
   */
  #typesPrimer(statement: PreparedStatement, payload: Buffer): Buffer | null {
    const count = statement.parameterCount;
    const types = statement.types;
    const bitmapEnd = EXECUTE_HEADER_LENGTH + ((count + 7) >> 3);
    if (count === 0 || types === null || statement.serverHasTypes) return null;
    if (payload.length <= bitmapEnd || payload[bitmapEnd] !== 0) return null;
    statement.serverHasTypes = true;
    const primer = Buffer.alloc(bitmapEnd + 1 + types.length);
    payload.copy(primer, 0, 0, EXECUTE_HEADER_LENGTH);
    primer[5] = 0;
    primer.fill(0xff, EXECUTE_HEADER_LENGTH, bitmapEnd);
    primer[bitmapEnd] = 1;
    types.copy(primer, bitmapEnd + 1);
    return primer;
  }

  /** A command whose effect the router cannot tell: a write of everything, state re-probed. */
  #forwardUnknown(command: number, schemaChange: boolean): Route & { action: 'forward' } {
    this.#markDirty();
    // It may be a procedure that prepares statements.
    this.#sqlPrepared.clear();
    const marks: WriteMarks = {
      slots: null,
      everything: true,
      schemaChange,
      leavesPrograms: false,
    };
    return this.#forward(command, null, marks, false);
  }

  /** The session probe's reply: its first row, or null when it failed. */
  acceptProbe(row: ReadonlyArray<string | null> | undefined): void {
    this.#ownStatus.selected(row === undefined ? null : 1);
    this.#stateDirty = false;
    this.#schemaUnsure = false;
    // What the server answers BEGIN and COMMIT with may have changed with the state.
    this.#transactionReplies.forget();
    this.#snapshot = readProbe(row);
    if (this.#snapshot === null) return;
    const serverType = this.#snapshot.queryCacheType;
    // Changed by something the proxy did not read as a SET (a procedure, a multi-statement text).
    if (this.#probedType !== null && serverType !== null && serverType !== this.#probedType) {
      this.#followServerType = true;
    }
    this.#probedType = serverType;
    if (this.#followServerType && serverType !== null) {
      // nicecache's own setting is its global value: a session cannot turn on what it turned off.
      this.#type = this.#cache.type === 0 ? 0 : serverType;
    }
    const before = this.#snapshot.foundRowsBefore;
    this.#foundRowsBeforeProbe = before !== null && before !== 1 ? before : null;
    this.#sessionKey = this.#worker.sessionKeys.idOf(
      `${this.#snapshot.digest}\u0002${this.#replyCapabilities}`,
    );
  }

  /** The reply to a relayed command has ended. */
  onReply(plan: CommandPlan, tracker: ReplyTracker): void {
    const info = plan.info;
    if (plan.digest !== undefined) {
      const micros = (performance.now() - plan.sentAt) * 1000;
      plan.digest.addServerTime(micros);
      if (plan.missed) this.#cache.stats.observe(Latency.MISS, micros / 1e6);
    }
    const failed = tracker.failed;
    if (failed || tracker.warnings !== 0) {
      // A statement that raises warnings (or fails) starts the list anew, with its own.
      this.#serverMayHoldWarnings = true;
      this.#warningsDebt = false;
    } else if (info !== null && (info.reads.length > 0 || info.writes.length > 0)) {
      this.#serverMayHoldWarnings = false;
    }
    this.txn.onReply(
      tracker.status,
      plan.seqBefore,
      plan.marks,
      plan.establishesSnapshot &&
        !failed &&
        (info?.control?.kind === 'consistent-snapshot' || readTookSnapshot(info, tracker)),
      info?.control?.kind === 'set-transaction',
      plan.isolation,
    );
    if (plan.flushesStatus && !failed) this.#flushStatus();
    // A CALL of a procedure that writes nothing invalidates nothing.
    if (plan.marks !== null && (plan.marks.slots === null || plan.marks.slots.length > 0)) {
      this.#cache.stats.add(
        plan.marks.everything ? Counter.INVALIDATIONS_ALL : Counter.INVALIDATIONS,
      );
    }
    switch (plan.command) {
      case Command.STMT_PREPARE:
        if (!failed && plan.prepare !== null) {
          this.#statements.set(tracker.statementId, {
            sql: plan.prepare.sql,
            entry: plan.prepare.entry,
            schema: plan.prepare.schema,
            parameterCount: tracker.parameterCount,
            types: null,
            serverHasTypes: false,
            longData: false,
            point: ParameterPoint.of(plan.prepare.entry.info),
          });
        }
        return;
      case Command.CHANGE_USER:
      case Command.RESET_CONNECTION:
        if (!failed) {
          // The server starts the session over: so does everything the router knew of it.
          this.#temporary.clear();
          this.#maybeTemporary.clear();
          this.#hiddenTemporary = false;
          this.#statements.clear();
          this.#sqlPrepared.clear();
          this.#tablesLocked = false;
          this.#statementsUncertain = false;
          this.#type = this.#cache.type;
          this.#followServerType = false;
          this.#probedType = null;
          this.#ownStatus.reset();
        }
        this.#markDirty();
        return;
      case Command.INIT_DB:
      case Command.SET_OPTION:
        this.#markDirty();
        return;
    }
    if (info === null) return;
    const schema = plan.prepare?.schema ?? this.#snapshot?.schema ?? null;
    // A text of data statements (StatementInfo.dataOnly) keeps the session's state as each does.
    const preserving = STATE_PRESERVING.has(info.kind) || info.dataOnly;
    if (
      !preserving ||
      info.unknownFunctions.length > 0 ||
      // A trigger may set session variables too.
      (info.writes.length > 0 && this.#worker.catalog.mayHaveTriggers(info.writes, schema)) ||
      // So may the stored functions of a view it reads or writes through.
      (info.reads.length > 0 && this.#worker.catalog.readsCallFunctions(info.reads, schema)) ||
      (info.writes.length > 0 && this.#worker.catalog.readsCallFunctions(info.writes, schema))
    ) {
      // A stored function or a trigger may change the session's variables, never its current
      // database (USE is refused in stored programs); nor may a SET in a followable text.
      this.#markDirty(SCHEMA_KEEPING.has(info.kind) || preserving || info.followable);
    }
    if (!failed && info.kind === 'lock') this.#tablesLocked = true;
    // UNLOCK TABLES, and BEGIN, which releases table locks.
    if (!failed && (info.kind === 'unlock' || info.kind === 'begin')) this.#tablesLocked = false;
    // PREPARE runs nothing: what it prepares is known when it is executed. A procedure known to
    // run no DDL (its marks change no schema) creates no table and prepares nothing.
    const ddlFreeCall = info.kind === 'call' && plan.marks !== null && !plan.marks.schemaChange;
    for (const name of plan.marks?.temporaries ?? NO_NAMES) this.#mayBeTemporary(name);
    if ((info.kind === 'call' && !ddlFreeCall) || info.kind === 'execute') {
      this.#temporariesUnseen();
    } else if (
      (info.multiStatement && !info.followable) ||
      (info.unknownFunctions.length > 0 && !this.#callsDdlFreeFunctions(plan, info, schema)) ||
      // A trigger may create a temporary table too; a procedure's writes may fire any.
      ((ddlFreeCall ||
        ((TRIGGER_FIRING.has(info.kind) || info.followable) && info.writes.length > 0)) &&
        this.#worker.catalog.writesMayCreateTables(ddlFreeCall ? null : info.writes, schema)) ||
      // So may the stored functions of a view it read (such a statement writes everything).
      (plan.marks?.everything === true &&
        info.reads.length > 0 &&
        this.#worker.catalog.readsKnownWritingView(info.reads, schema))
    ) {
      this.#temporariesUnseen();
    }
    if (!ddlFreeCall) this.#trackSqlPrepared(plan, info, failed);
    if (!failed && info.kind === 'ddl') {
      this.#trackTemporary(info, schema);
      // A table defined anew (CREATE, DROP, ALTER, RENAME): what admission learned of results
      // over its name, and over its rows', was learned of another table, or of this one before
      // the change. Its slots cannot all be named (one per key value), so every table starts
      // over, as after RESET QUERY CACHE: DDL is rare, and a table whose results still die
      // unread is declined again after -DECLINE_AT of them.
      if (info.ddlObject === 'table' && !info.temporary) this.#cache.admission.reset();
    }
    if (!failed && plan.command !== Command.STMT_PREPARE) this.#onControl(info);
  }

  /**
   * What PREPARE, DEALLOCATE PREPARE and whatever may run them (a procedure, an EXECUTE of an
   * unknown statement, a text of several statements) did to the session's SQL prepared
   * statements. A failed PREPARE drops the statement of that name too.
   */
  #trackSqlPrepared(plan: CommandPlan, info: StatementInfo, failed: boolean): void {
    const control = info.control;
    if (control?.kind === 'sql-prepare' || control?.kind === 'sql-deallocate') {
      if (control.name === null) this.#sqlPrepared.clear();
      else this.#sqlPrepared.delete(control.name);
      const prepared = plan.sqlPrepare;
      if (!failed && prepared !== undefined)
        this.#sqlPrepared.set(prepared.name, prepared.prepared);
      return;
    }
    const knownExecute =
      control?.kind === 'sql-execute' &&
      control.name !== null &&
      this.#sqlPrepared.has(control.name);
    if (
      (info.multiStatement && !info.followable) ||
      (info.writesEverything && SCHEMA_CHANGING.has(info.kind) && !knownExecute)
    ) {
      this.#sqlPrepared.clear();
    }
  }

  /**
   * The prepared statement an EXECUTE name runs, when it may be routed as that statement:
   * prepared in the session's current state (before the probe has told, it is assumed to be, so
   * that the probe runs; after it, compared). A SELECT only without USING (see
   * #executedSelectUsing); a write with USING or without: the values choose its rows, not its
   * tables. Routed as itself, it writes those tables and runs nothing else (a procedure, DDL, a
   * temporary table) an unknown EXECUTE might.
   */
  #executedStatement(entry: MemoEntry): MemoEntry | null {
    const control = entry.info.control;
    if (control?.kind !== 'sql-execute') return null;
    const prepared = this.#preparedStatement(control.name);
    return prepared !== null && control.using && prepared.info.kind === 'select' ? null : prepared;
  }

  /**
   * The prepared SELECT an EXECUTE name USING @var, ... runs, under the same conditions. Its
   * values are the server's, so it is never answered from the cache; but it is the SELECT, which
   * reads what it reads and runs nothing else (a procedure, DDL) an unknown EXECUTE might.
   */
  #executedSelectUsing(entry: MemoEntry): MemoEntry | null {
    const control = entry.info.control;
    if (control?.kind !== 'sql-execute' || !control.using) return null;
    const prepared = this.#preparedStatement(control.name);
    return prepared?.info.kind === 'select' ? prepared : null;
  }

  #preparedStatement(name: string | null): MemoEntry | null {
    if (name === null) return null;
    const prepared = this.#sqlPrepared.get(name);
    if (prepared === undefined) return null;
    if (!this.#stateDirty && prepared.sessionKey !== this.#sessionKey) return null;
    return prepared.entry;
  }

  /**
   * What a PREPARE name FROM 'text' prepares, when it is a SELECT its executions may answer or a
   * write they may be routed as.
   */
  #sqlPrepare(info: StatementInfo): CommandPlan['sqlPrepare'] {
    const control = info.control;
    if (control?.kind !== 'sql-prepare' || control.name === null || control.text === null) {
      return undefined;
    }
    if (this.#stateDirty || this.#snapshot === null) return undefined;
    const entry = this.#classify(control.text);
    const prepared = entry.info;
    // A status read is rewritten by its own statement's kind: left to the server's EXECUTE.
    if (
      !ROUTED_AS_PREPARED.has(prepared.kind) ||
      prepared.multiStatement ||
      prepared.control !== null
    ) {
      return undefined;
    }
    return { name: control.name, prepared: { entry, sessionKey: this.#sessionKey } };
  }

  /** What the proxy does itself once the server has accepted a control statement. */
  #onControl(info: StatementInfo): void {
    const control = info.control;
    if (control === null) return;
    switch (control.kind) {
      case 'reset-query-cache':
        this.#cache.clear();
        return;
      case 'flush':
        if (control.status) this.#flushStatus();
        return;
      case 'set-query-cache-type':
        // The server's variable: the probe that follows reads the value now in force. DEFAULT
        // hands the session back to nicecache's own --query-cache-type.
        if (control.scope === 'session') {
          this.#followServerType = control.value !== 'default';
          if (!this.#followServerType) this.#type = this.#cache.type;
        }
        return;
    }
  }

  /** The connection is gone; `unanswered` are the plans whose replies never came. */
  onClose(unanswered: readonly CommandPlan[]): void {
    this.abandon(unanswered);
    this.txn.releaseAll();
  }

  /** Commands whose replies will never come: the server never ran them, or the link is gone. */
  abandon(plans: readonly CommandPlan[]): void {
    for (const plan of plans) {
      if (plan.marks !== null) this.txn.abandon(plan.marks);
      if (plan.fill !== null) this.#worker.flights.finish(plan.fill.flight);
    }
  }

  /**
   * Stores a fill's complete reply, as its copy took it, when it may be; its bytes may be
   * changed (status bits), and are copied if kept.
   */
  store(fill: FillPlan, tracker: ReplyTracker, copy: ReplyCopy): void {
    this.#store(fill, tracker, copy);
    this.#worker.flights.finish(fill.flight);
  }

  #store(fill: FillPlan, tracker: ReplyTracker, copy: ReplyCopy): void {
    const bytes = copy.view();
    const stats = this.#cache.stats;
    if (bytes === null) {
      stats.add(Counter.TOO_LARGE);
      stats.add(Counter.NOT_CACHED);
      return;
    }
    if (
      tracker.failed ||
      tracker.results !== 1 ||
      tracker.warnings !== 0 ||
      tracker.status & ServerStatus.CURSOR_EXISTS
    ) {
      stats.bypass(Bypass.REPLY);
      stats.add(Counter.NOT_CACHED);
      return;
    }
    // Flags about this one execution, not the result: a hit must not repeat them.
    const offsets = copy.statusOffsets;
    const count = copy.statusCount;
    for (let i = 0; i < count; i++) {
      const offset = offsets[i]!;
      bytes.writeUInt16LE(bytes.readUInt16LE(offset) & ~ONE_TIME_STATUS_BITS, offset);
    }
    const rows = countRows(bytes, this.#deprecateEof);
    const slots = this.#storedSlots(fill, rows);
    if (slots === null) {
      stats.bypass(Bypass.UNKNOWN_TABLE);
      stats.add(Counter.NOT_CACHED);
      return;
    }
    this.#cache.store(fill.key, bytes, offsets, slots, fill.fillSeq, rows, fill.hash, count);
  }

  /**
   * What a result read with `fill` depends on, given its `rows`: a point read depends on its
   * table and its rows, and also on the table's "new rows" unless its result shows its rows
   * exist (one row per matching row, and a row for each of its keys): an INSERT that only adds
   * rows marks no row (SchemaCatalog.rowsAddedTo), and may add a row a read found missing, or
   * change what an aggregate over no row says. Null when the names cannot be read now.
   */
  #storedSlots(fill: FillPlan, rows: number): Int32Array | null {
    const info = fill.info;
    const point = info.point;
    if (point === null || info.kind !== 'select') return fill.slots;
    // An IN list's rows found are as many as its keys only when each key's row is there (the
    // key is the primary key). One value's row is there when there is a row.
    const found = point.inList ? fill.keys > 0 && rows >= fill.keys : rows > 0;
    if (found && point.rowPerMatch) return fill.slots;
    const newRows = this.#worker.catalog.newRowsSlotsOf(info.reads, fill.schema);
    return newRows === null ? null : concatSlots(fill.slots, newRows);
  }

  // --- COM_QUERY ------------------------------------------------------------------------------

  #routeQuery(payload: Buffer, lastHit: number): Route {
    // Looked up by its bytes: a statement seen before builds no string (statement-memo.ts).
    const classified = this.#worker.memo.classifyBytes(
      payload,
      1,
      this.#modeIndex(),
      this.#classifyMode,
      this.#serverVersion,
    );
    this.#digestEntry = classified;
    const executedUsing = this.#executedSelectUsing(classified);
    const entry = executedUsing ?? this.#executedStatement(classified) ?? classified;
    const info = entry.info;
    // With --digests off nothing of the nicecache schema is the proxy's: the server answers.
    if (info.control?.kind === 'nicecache-table' && this.#worker.digests !== null)
      return this.#answerOwnTable(info.control);
    const diagnostics = info.readsDiagnostics && (lastHit !== NO_HIT || this.#stateDirty);
    if (diagnostics && lastHit !== NO_HIT) return this.#settleDiagnostics(lastHit);
    if (this.#foundRowsDebt !== NO_HIT && (info.readsFoundRows || this.#owesWarnings(info))) {
      return this.#settleDiagnostics(this.#foundRowsDebt);
    }
    // The probe would change what FOUND_ROWS() and ROW_COUNT() say: diagnostics go first.
    if (this.#stateDirty && !diagnostics && needsSessionState(entry)) {
      return { action: 'probe', sql: this.#probeSql };
    }
    const restore = this.#restoreFoundRows(info);
    if (restore !== null) return restore;
    if (info.control?.kind === 'show-status') {
      return this.#withStatus(this.#forward(Command.QUERY, info, null, false), info, false);
    }
    const metadataWait = this.#metadataWait(info);
    if (metadataWait !== null) return metadataWait;
    const marks = this.#writeMarks(entry, this.#snapshot?.schema ?? null);
    if (info.kind !== 'select') {
      const control = info.control;
      const answered = this.#answerTransactionStatement(payload, control);
      if (answered !== null) return answered;
      const route = this.#forward(Command.QUERY, info, marks, false);
      if (control?.kind === 'begin' || control?.kind === 'end-transaction')
        this.#learnReply(route.plan!, payload, control.kind === 'begin');
      const prepared = this.#sqlPrepare(info);
      if (prepared !== undefined) route.plan!.sqlPrepare = prepared;
      return route;
    }
    if (this.#stateDirty) return this.#bypass(Bypass.SESSION_STATE, info, marks);
    if (executedUsing !== null) return this.#bypass(Bypass.UNCACHEABLE, info, marks);
    this.#ensureKey(entry);
    const route = this.#routeSelect(
      entry,
      entry.key,
      entry.keyHash,
      this.#snapshot?.schema ?? null,
      marks,
      Command.QUERY,
    );
    return info.control === null ? route : this.#withStatus(route, info, false);
  }

  /**
   * SHOW STATUS, or a read of information_schema's status tables: the reply gets nicecache's
   * counters, unless nicecache's cache is off, when the server's own are the ones in force.
   */
  #withStatus(route: Route, info: StatementInfo, binary: boolean): Route {
    const statement = info.control;
    if (
      route.action === 'forward' &&
      route.plan !== null &&
      this.#cache.type !== 0 &&
      (statement?.kind === 'show-status' || statement?.kind === 'status-table')
    ) {
      route.plan.status = { statement, binary };
    }
    return route;
  }

  // --- prepared statements --------------------------------------------------------------------

  #routePrepare(payload: Buffer, lastHit: number): Route {
    const sql = payload.toString('latin1', 1);
    const entry = this.#classify(sql);
    // Preparing a reader of diagnostics right after a hit: put them right before, as the
    // execution that follows may come at once.
    if (entry.info.readsDiagnostics && lastHit !== NO_HIT) return this.#settleDiagnostics(lastHit);
    // After the probe the command is routed again, and classified under the sql_mode it found.
    // Not before a reader of diagnostics: it would read the probe's (it reads no cached table).
    if (this.#stateDirty && !entry.info.readsDiagnostics) {
      return { action: 'probe', sql: this.#probeSql };
    }
    // Preparing runs no SELECT: FOUND_ROWS() must be right before it.
    const restore = this.#restoreFoundRows(null);
    if (restore !== null) return restore;
    const route = this.#forward(Command.STMT_PREPARE, entry.info, null, false);
    route.plan!.prepare = { sql, entry, schema: this.#snapshot?.schema ?? null };
    return route;
  }

  #routeExecute(payload: Buffer, lastHit: number): Route {
    // Cut short, the server answers 1835 (Malformed communication packet); the router cannot
    // tell which statement it names, so it is announced as an unknown one.
    const statement =
      payload.length < EXECUTE_HEADER_LENGTH
        ? undefined
        : this.#statements.get(payload.readUInt32LE(1));
    if (statement === undefined) {
      // Not prepared through this session's commands as far as we saw (or id 0xFFFFFFFF, "the
      // last one prepared"): it may write anything, or change the session's state.
      this.#markDirty();
      this.#sqlPrepared.clear();
      return this.#forward(
        Command.STMT_EXECUTE,
        null,
        { slots: null, everything: true, schemaChange: false, leavesPrograms: false },
        false,
      );
    }
    this.#digestEntry = statement.entry;
    const info = statement.entry.info;
    // A prepared reader of diagnostics reads the server's too: as for text, they are put right.
    if (info.readsDiagnostics && lastHit !== NO_HIT) return this.#settleDiagnostics(lastHit);
    if (this.#foundRowsDebt !== NO_HIT && (info.readsFoundRows || this.#owesWarnings(info))) {
      return this.#settleDiagnostics(this.#foundRowsDebt);
    }
    // The probe would change what the statement reads: diagnostics go first, as for text.
    if (this.#stateDirty && !info.readsDiagnostics && needsSessionState(statement.entry)) {
      return { action: 'probe', sql: this.#probeSql };
    }
    const restore = this.#restoreFoundRows(info);
    if (restore !== null) return restore;
    const metadataWait = this.#metadataWait(info);
    if (metadataWait !== null) return metadataWait;
    const layout = executeLayoutOf(payload, statement.parameterCount);
    const bound = statement.point !== null && this.#executionRows(statement, payload, layout);
    const marks = this.#writeMarks(
      statement.entry,
      statement.schema,
      bound && info.kind !== 'select' ? statement.point!.writeSlots() : null,
    );
    // A cursor's rows come through COM_STMT_FETCH, which is not rewritten.
    const binaryStatus = info.control !== null && payload[5] === 0;
    if (layout !== null && layout.typesSent) this.#bindTypes(statement, payload, layout);
    if (info.kind !== 'select') {
      // A prepared BEGIN, COMMIT or ROLLBACK (sysbench's, with --db-ps-mode=auto): the proxy
      // answers it as it answers the text.
      const control = info.control;
      const answered = this.#answerTransactionStatement(payload, control);
      if (answered !== null) return answered;
      statement.longData = false;
      const route = this.#withServerTypes(
        this.#forward(Command.STMT_EXECUTE, info, marks, false),
        statement,
        payload,
        layout,
      );
      if (
        (control?.kind === 'begin' || control?.kind === 'end-transaction') &&
        route.action === 'forward' &&
        route.payload === undefined
      )
        this.#learnReply(route.plan!, payload, control.kind === 'begin', statement);
      return binaryStatus ? this.#withStatus(route, info, true) : route;
    }
    const key = this.#executeKey(statement, payload, layout);
    statement.longData = false;
    if (key === null) {
      const route = this.#bypass(Bypass.UNCACHEABLE, info, marks, Command.STMT_EXECUTE);
      return this.#withServerTypes(route, statement, payload, layout);
    }
    const rowSlots = bound ? statement.point!.readSlots() : null;
    // The key is the statement and its parameters as the client bound them, whether or not the
    // server has seen those types: a fresh statement hits from its first execution.
    // (Not when routed to follow a transaction start in the same write: see #openWith.)
    const mayHit = this.#mayHit;
    this.#mayHit = mayHit && !this.#statementsUncertain;
    const route = this.#routeSelect(
      statement.entry,
      key,
      keyHashOf(key),
      statement.schema,
      marks,
      Command.STMT_EXECUTE,
      rowSlots,
      bound ? statement.point!.keys : 0,
    );
    this.#mayHit = mayHit;
    const sent = this.#withServerTypes(route, statement, payload, layout);
    return binaryStatus ? this.#withStatus(sent, info, true) : sent;
  }

  /**
   * Sets the rows an execution of a statement bounded by parameters is bounded to (its point's
   * `rows` and `keys`), or returns false when it is bounded to none known (then its slots are
   * the statement's, as for any other): the metadata is not trusted now, the table has no point
   * key or the statement is no point access of it, no parameter binds one of the key's
   * candidates (literals alone: the statement's own slots hold), or a value (bound or literal)
   * is NULL, not a whole number, out of the column's range, or an INSERT's 0 (AUTO_INCREMENT's
   * "next value").
   */
  #executionRows(
    statement: PreparedStatement,
    payload: Buffer,
    layout: ExecuteLayout | null,
  ): boolean {
    const point = statement.point!;
    // Long data is not in the packet: the values after it are not where the types say.
    if (layout === null || statement.longData) return false;
    const catalog = this.#worker.catalog;
    const generation = catalog.generation;
    if (generation < 0) return false;
    const info = statement.entry.info;
    if (point.generation !== generation || point.schema !== statement.schema) {
      const target =
        info.kind === 'select'
          ? catalog.pointRead(info.reads, statement.schema, info.point!)
          : catalog.pointWrite(info.writes, statement.schema, info.point!);
      point.bind(target, info);
      point.generation = generation;
      point.schema = statement.schema;
    }
    const target = point.target;
    const parameters = point.parameters;
    if (target === null || parameters.length === 0) return false;
    const types = layout.typesSent ? payload : statement.types;
    if (types === null) return false;
    const rows = point.rows;
    const values = point.values;
    const composite = target.width > 1;
    const typesAt = layout.typesSent ? layout.bitmapEnd + 1 : 0;
    // A row's name is every column's value in the key's order (row-slots.ts): its hash so far.
    let hash = target.rowHash;
    let keys = 0;
    for (let i = 0; i < parameters.length; i++) {
      const parameter = parameters[i]!;
      if (composite && i > 0) hash = nameHashOf(hash, KEY_PART_SEPARATOR);
      const from = composite ? hash : target.rowHash;
      const kind = target.kinds[i]!;
      if (kind !== KeyKind.INTEGER) {
        const literal = point.literalTexts[i]!;
        if (parameter < 0) {
          if (literal === null) return false;
          hash = nameHash(from, literal);
          point.textStarts[i] = -1;
        } else {
          const count = statement.parameterCount;
          if (!textParameter(payload, count, types, typesAt, layout.valuesStart, parameter))
            return false;
          const { start, end } = textSpan;
          const max = target.max[i]!;
          if (end - start > max) return false;
          if (kind === KeyKind.TEXT) {
            if (!isKeyTextBytes(payload, start, end)) return false;
            hash = rowTextHashOf(from, payload, start, end);
          } else {
            hash = rowBytesHashOf(
              from,
              payload,
              start,
              end,
              kind === KeyKind.FIXED_BYTES ? max : 0,
            );
          }
          point.textStarts[i] = start;
          point.textEnds[i] = end;
        }
        values[i] = NaN;
        if (composite) continue;
        rows[i] = catalog.rowSlotOfHash(hash);
        if (!point.textSeenBefore(i, payload)) keys++;
        continue;
      }
      const value =
        parameter < 0
          ? point.literals[i]!
          : integerParameter(
              payload,
              statement.parameterCount,
              types,
              typesAt,
              layout.valuesStart,
              parameter,
            );
      // A literal that is no whole number (`id = 'abc'`) is NaN: no row's.
      if (!(value >= 0) || value > target.max[i]! || (value === 0 && info.point!.insert))
        return false;
      values[i] = value;
      hash = rowHashOf(from, value);
      if (composite) continue;
      rows[i] = catalog.rowSlotOfHash(hash);
      let seen = false;
      for (let j = 0; j < i && !seen; j++) seen = values[j] === value;
      if (!seen) keys++;
    }
    if (composite) {
      rows[0] = catalog.rowSlotOfHash(hash);
      keys = 1;
    }
    point.keys = keys;
    return true;
  }

  /** The types an execution carries become the statement's: later executions may omit them. */
  #bindTypes(statement: PreparedStatement, payload: Buffer, layout: ExecuteLayout): void {
    const from = layout.bitmapEnd + 1;
    const length = layout.valuesStart - from;
    const types = statement.types;
    if (types !== null && types.length === length) {
      let same = true;
      for (let index = 0; index < length; index++) {
        if (types[index] !== payload[from + index]) {
          same = false;
          break;
        }
      }
      if (same) return;
    }
    statement.types = Buffer.from(payload.subarray(from, layout.valuesStart));
    statement.serverHasTypes = false;
  }

  /**
   * An execution on its way to the server: the server then holds the types the client bound.
   * One that omits them while the server never received them (executions that bound them were
   * answered from the cache) is sent with them, which is what the client meant: the server
   * would otherwise run it with older types, or none.
   */
  #withServerTypes(
    route: Route,
    statement: PreparedStatement,
    payload: Buffer,
    layout: ExecuteLayout | null,
  ): Route {
    // Cut short, the server refuses the packet and keeps the types it had.
    if (route.action !== 'forward' || layout === null) return route;
    if (layout.typesSent) {
      statement.serverHasTypes = true;
      return route;
    }
    const types = statement.types;
    if (types === null || statement.serverHasTypes || statement.parameterCount === 0) return route;
    statement.serverHasTypes = true;
    return { ...route, payload: executeWithTypes(payload, layout.bitmapEnd, types) };
  }

  /**
   * The key of an execution: the statement's prefix (session key, schema, text) and everything
   * after the new-params-bound flag's place (null bitmap, types, values). Types the client did
   * not resend are those of the last execution that sent them. Null when the execution cannot
   * be cached.
   */
  #executeKey(
    statement: PreparedStatement,
    payload: Buffer,
    layout: ExecuteLayout | null,
  ): string | null {
    const flags = payload[5];
    // A cursor's rows come through COM_STMT_FETCH; long data is not in the packet.
    if (layout === null || flags !== 0 || statement.longData) return null;
    const prefix = this.#executePrefix(statement);
    const keys = this.#worker.executionKeys;
    const { bitmapEnd, typesSent } = layout;
    if (statement.parameterCount === 0) {
      return keys.keyOf(prefix, payload, bitmapEnd, bitmapEnd, null, payload.length);
    }
    if (typesSent)
      return keys.keyOf(prefix, payload, EXECUTE_HEADER_LENGTH, bitmapEnd, null, bitmapEnd + 1);
    if (statement.types === null) return null;
    return keys.keyOf(
      prefix,
      payload,
      EXECUTE_HEADER_LENGTH,
      bitmapEnd,
      statement.types,
      bitmapEnd + 1,
    );
  }

  /**
   * What every execution's key of this statement starts with, built once per statement text,
   * session key and schema. Lengths make it unambiguous: a schema or text may hold any byte.
   */
  #executePrefix(statement: PreparedStatement): ExecutionPrefix {
    const entry = statement.entry;
    const session = this.#sessionKey;
    const schema = statement.schema;
    if (
      entry.executePrefix === null ||
      entry.executePrefixSession !== session ||
      entry.executePrefixSchema !== schema
    ) {
      const schemaPart = schema === null ? '' : `${schema.length}:${schema}`;
      entry.executePrefix = this.#worker.executionKeys.prefix(
        `${session}\u0001${schemaPart}\u0001${statement.sql.length}:${statement.sql}`,
      );
      entry.executePrefixSession = session;
      entry.executePrefixSchema = schema;
    }
    return entry.executePrefix;
  }

  // --- reads ----------------------------------------------------------------------------------

  /**
   * Sets `entry.key` and `entry.keyHash` for this session's key, unless they are already: a
   * repeated text then costs no string and no hash.
   */
  #ensureKey(entry: MemoEntry): void {
    if (entry.keySession === this.#sessionKey) return;
    entry.keySession = this.#sessionKey;
    entry.key = `${this.#sessionKey}\u0000${entry.keyText}`;
    entry.keyHash = keyHashOf(entry.key);
  }

  /**
   * `rowSlots`: an execution's own [table, rows…] slots (#executionRows), which replace the
   * statement's, and `rowKeys` how many distinct keys those rows are; null to read with the
   * statement's.
   */
  #routeSelect(
    entry: MemoEntry,
    key: string,
    hash: number,
    schema: string | null,
    marks: WriteMarks | null,
    command: number,
    rowSlots: Int32Array | null = null,
    rowKeys = 0,
  ): Route {
    const info = entry.info;
    const txn = this.txn;
    const stats = this.#cache.stats;
    const blocker = this.#hitBlocker(entry, schema, marks, rowSlots);
    if (blocker >= 0) return this.#bypass(blocker, info, marks, command);
    const slots = rowSlots ?? entry.readSlots!;
    const isolation = txn.inTransaction ? txn.isolation : (this.#snapshot?.isolation ?? null);

    const inTransaction = txn.inTransaction;
    const repeatableRead = isolation === 'REPEATABLE-READ';
    let snapshotSeq: number | null = null;
    // With autocommit=0 outside a transaction, this statement starts one (and its snapshot).
    let mayHit = this.#mayHit && (inTransaction || txn.autocommit);
    if (inTransaction && repeatableRead) {
      snapshotSeq = txn.snapshotSeq;
      // InnoDB takes the snapshot at the first read: until one went to the server, the
      // transaction's view is not pinned and a hit could be older than what follows.
      mayHit &&= txn.snapshotEstablished;
    }
    if (mayHit) {
      const cache = this.#cache;
      const id = cache.lookup(key, snapshotSeq, hash);
      if (id !== NO_ENTRY) {
        stats.add(Counter.HITS);
        if (this.#waited) stats.add(Counter.SINGLE_FLIGHT_HITS);
        this.#lastHit = this.#foundRowsDebt = cache.rowsOf(id);
        if (this.#serverMayHoldWarnings) this.#warningsDebt = true;
        // One route object per session, reused: the session writes its bytes at once (a view
        // of the store's memory, or a copy when the session's status bits differ from it).
        const answer = this.#answerRoute;
        answer.bytes = cache.replyOf(
          id,
          this.txn.status & SESSION_STATUS_BITS,
          SESSION_STATUS_BITS,
        );
        return answer;
      }
    }
    this.#readOutcome = READ_MISS;
    // Results over tables written faster than they are read again are not copied at all, nor
    // waited for: an identical miss in flight would not be stored either. Asked first, so such
    // a miss costs no flight lookup and no clock read.
    if (!this.#cache.admits(key, slots, hash))
      return this.#forward(command, info, null, entry.establishesSnapshot);
    const flights = this.#worker.flights;
    const now = performance.now();
    if (!this.#waited) {
      const flight = flights.joinable(key, now, hash);
      if (flight !== null)
        return { action: 'wait', flight, maxWaitMs: flights.maxWaitMs, metadata: false };
    }
    const registry = this.#cache.registry;
    // Read inside a snapshot, the result is what was committed at the snapshot: it may be kept
    // only as long as nothing was written since, which the snapshot's number says.
    const fillSeq = inTransaction && repeatableRead ? txn.snapshotSeq : registry.sequence();
    const route = this.#forward(command, info, null, entry.establishesSnapshot);
    // An execution's row slots are rewritten by the statement's next execution: a result keeps
    // its own (the store copies them when the reply is in, but nothing else need keep them).
    const kept = rowSlots === null ? slots : Int32Array.from(rowSlots);
    route.plan!.fill = {
      key,
      hash,
      slots: kept,
      fillSeq,
      flight: flights.start(key, now, hash),
      info,
      schema,
      keys: rowSlots === null ? entry.readKeys : rowKeys,
    };
    return route;
  }

  /**
   * Why the cache may not answer a read (a Bypass reason), or -1 when it may look it up, its
   * slots then in `entry.readSlots` (or `rowSlots`, an execution's own). Nothing is counted here.
   */
  #hitBlocker(
    entry: MemoEntry,
    schema: string | null,
    marks: WriteMarks | null,
    rowSlots: Int32Array | null = null,
  ): number {
    const info = entry.info;
    const snapshot = this.#snapshot;
    const txn = this.txn;
    // The reasons the server's own cache would give come first, so the counters tell them apart.
    const type = this.#type;
    if (
      type === 0 ||
      info.sqlCache === 'SQL_NO_CACHE' ||
      (type === 2 &&
        info.sqlCache !== 'SQL_CACHE' &&
        // DEMAND: a view that says SQL_CACHE asks for its readers (rare: not memoised).
        !this.#worker.catalog.requestsCache(info.reads, schema))
    ) {
      return Bypass.NOT_REQUESTED;
    }
    // A transaction runs at the level it began with, whatever SET SESSION said since.
    const isolation = txn.inTransaction ? txn.isolation : (snapshot?.isolation ?? null);
    if (
      info.lockingRead ||
      this.#tablesLocked ||
      txn.isolationOverride ||
      isolation === null ||
      isolation === 'SERIALIZABLE' ||
      isolation === 'READ-UNCOMMITTED'
    ) {
      return Bypass.ISOLATION;
    }
    if (!info.cacheable || marks !== null) return Bypass.UNCACHEABLE;
    if (snapshot === null || snapshot.unsafeCharset) return Bypass.SESSION_STATE;
    if (this.#readsTemporary(info.reads, schema)) return Bypass.TEMPORARY_TABLE;
    const slots = this.#readSlots(entry, schema);
    if (slots === null) return Bypass.UNKNOWN_TABLE;
    if (txn.wrote(rowSlots ?? slots)) return Bypass.OWN_WRITES;
    // Writes made on the server directly may have changed these tables unseen: neither served
    // nor stored until the follower is back within its bound.
    if (!this.#cache.registry.writesElsewhereSeen()) return Bypass.BINLOG_BEHIND;
    return -1;
  }

  /**
   * A statement naming tables, or calling stored routines, while this worker's metadata is
   * behind the schema version (DDL just ran, here or on another worker; or the proxy has just
   * started) waits for the reload under way rather than go the conservative way. For a routine
   * the conservative way lasts: a CALL the metadata cannot judge may have created temporary
   * tables, so none of its session's later reads is cached again. Current metadata costs one
   * atomic load here; DDL still running is not waited for.
   */
  #metadataWait(info: StatementInfo): Route | null {
    if (
      this.#waitedForMetadata ||
      (info.reads.length === 0 &&
        info.writes.length === 0 &&
        info.control?.kind !== 'call' &&
        info.unknownFunctions.length === 0)
    )
      return null;
    const catalog = this.#worker.catalog;
    if (catalog.generation >= 0) return null;
    const flight = catalog.reloading;
    if (flight === null) return null;
    return { action: 'wait', flight, maxWaitMs: METADATA_WAIT_MS, metadata: true };
  }

  /**
   * Right after a probe: puts FOUND_ROWS() back before a statement that is not a SELECT (null
   * info: not a statement), or that reads it. A SELECT sets it anew, on the server or, for a
   * hit, through #foundRowsDebt.
   */
  #restoreFoundRows(info: StatementInfo | null): Route | null {
    const rows = this.#foundRowsBeforeProbe;
    if (rows === null) return null;
    this.#foundRowsBeforeProbe = null;
    if (info !== null && info.kind === 'select' && !info.readsFoundRows) return null;
    this.#ownStatus.selected(restorerRowsSent(rows));
    return { action: 'replay', payload: foundRowsRestorer(rows) };
  }

  /**
   * A reader of the warning list after a hit and statements that read no table since: the hit
   * emptied the client's list, the server still holds what came before it.
   */
  #owesWarnings(info: StatementInfo): boolean {
    return this.#warningsDebt && info.readsWarnings;
  }

  /** Leaves on the server the diagnostics a real run of `hit` would have left. */
  #settleDiagnostics(rows: number): Route {
    this.#lastHit = this.#foundRowsDebt = NO_HIT;
    // The replay reads a derived table: the server's warning list is emptied, as the hit's was.
    this.#warningsDebt = false;
    return { action: 'replay', payload: diagnosticsOf(rows) };
  }

  /** The slots a statement reads, computed once per schema and metadata generation. */
  #readSlots(entry: MemoEntry, schema: string | null): Int32Array | null {
    const catalog = this.#worker.catalog;
    const generation = catalog.generation;
    if (generation < 0) return null;
    if (entry.readGeneration !== generation || entry.readSchema !== schema) {
      const shape = entry.pointShape;
      if (shape !== null && this.#pointReadSlots(entry, shape, schema, generation)) {
        return entry.readSlots;
      }
      entry.readSlots = catalog.readSlots(
        entry.info.reads,
        schema,
        entry.info.point,
        entry.pointValues,
      );
      entry.readKeys = 0;
      entry.readMayWrite = catalog.readsMayWrite(entry.info.reads, schema);
      entry.establishesSnapshot = this.#establishesSnapshot(entry.info.reads, schema);
      // An unknown name is asked again next time: the catalog reloads when it meets one.
      entry.readGeneration = entry.readSlots === null ? -1 : generation;
      entry.readSchema = schema;
    }
    return entry.readSlots;
  }

  /**
   * The read slots of a text of a point statement's shape, from what its reads come to for every
   * text of the shape (worked out once per schema and metadata load) and its own value's row;
   * false when that cannot be known now (an unknown table: the catalog is asked as for any text).
   */
  #pointReadSlots(
    entry: MemoEntry,
    shape: PointShape,
    schema: string | null,
    generation: number,
  ): boolean {
    const catalog = this.#worker.catalog;
    // A join's rows are worked out per text (catalog.readSlots): a shape shares no PointRead.
    if (entry.info.point!.joined !== null) return false;
    if (shape.generation !== generation || shape.schema !== schema) {
      const reads = entry.info.reads;
      const read = catalog.pointRead(reads, schema, entry.info.point!);
      const shared = read === null ? catalog.readSlots(reads, schema) : null;
      if (read === null && shared === null) return false;
      shape.read = read;
      shape.sharedSlots = shared;
      shape.readMayWrite = catalog.readsMayWrite(reads, schema);
      shape.establishesSnapshot = this.#establishesSnapshot(reads, schema);
      shape.generation = generation;
      shape.schema = schema;
    }
    const read = shape.read;
    if (read === null) {
      entry.readSlots = shape.sharedSlots;
      entry.readKeys = 0;
    } else if (read.candidates.length === 1) {
      const value = entry.pointValues?.[read.candidate] ?? null;
      const row = value === null ? null : keyValueOf(value, read.kinds[0]!, read.max[0]!);
      entry.readSlots = Int32Array.of(
        read.tableSlot,
        row !== null ? catalog.rowSlotOfHash(nameHash(read.rowHash, row)) : read.someRowSlot,
      );
      entry.readKeys = row !== null ? 1 : 0;
    } else {
      this.#rowsReadSlots(entry, read);
    }
    entry.readMayWrite = shape.readMayWrite;
    entry.establishesSnapshot = shape.establishesSnapshot;
    entry.readGeneration = generation;
    entry.readSchema = schema;
    return true;
  }

  /**
   * The slots of a read bounded to several values of its point key (an IN list), or to one row
   * of a key of several columns: the table and each row's, as readSlots gives them, and how
   * many distinct keys they are; the table and "some row" when one of them is no row's.
   */
  #rowsReadSlots(entry: MemoEntry, read: PointRead): void {
    const catalog = this.#worker.catalog;
    const values = entry.pointValues;
    const composite = read.width > 1;
    const slots = new Int32Array(composite ? 2 : 1 + read.candidates.length);
    // A string column's values are counted as written: values that differ in letter case may
    // name one row, which counts it twice and only makes its result depend on "new rows"
    // (#storedSlots); counted by their rows' names, values that share a name but are two rows
    // ('a-b' and 'ab') would count once. A column of bytes' are counted as written too (`'ab'`
    // and `X'6162'` count twice). An integer column's are counted by their rows.
    const keys = new Set<string>();
    const rows: string[] = [];
    slots[0] = read.tableSlot;
    for (let i = 0; i < read.candidates.length; i++) {
      const value = values?.[read.candidates[i]!] ?? null;
      const kind = read.kinds[i]!;
      const row = value === null ? null : keyValueOf(value, kind, read.max[i]!);
      if (row === null) {
        entry.readSlots = Int32Array.of(read.tableSlot, read.someRowSlot);
        entry.readKeys = 0;
        return;
      }
      rows.push(row);
      if (composite) continue;
      slots[1 + i] = catalog.rowSlotOfHash(nameHash(read.rowHash, row));
      keys.add(kind !== KeyKind.INTEGER ? value! : row);
    }
    if (composite) slots[1] = catalog.rowSlotOfHash(nameHash(read.rowHash, rowKeyValue(rows)));
    entry.readSlots = slots;
    entry.readKeys = composite ? 1 : keys.size;
  }

  #establishesSnapshot(reads: readonly TableRef[], schema: string | null): boolean {
    for (const table of reads) {
      if (this.#worker.catalog.isTransactional(table, schema)) return true;
    }
    return false;
  }

  #readsTemporary(reads: readonly TableRef[], schema: string | null): boolean {
    if (this.#hiddenTemporary) return true;
    if (this.#temporary.size === 0 && this.#maybeTemporary.size === 0) return false;
    for (const table of reads) {
      const name = qualify(table, schema);
      if (name === null || this.#temporary.has(name) || this.#maybeTemporary.has(name)) {
        return true;
      }
    }
    return false;
  }

  // --- writes ---------------------------------------------------------------------------------

  /**
   * The registry marks a statement needs before it is sent, or null when it writes nothing.
   * `rowSlots`: an execution's own point write slots (#executionRows), which replace the
   * statement's.
   */
  #writeMarks(
    entry: MemoEntry,
    schema: string | null,
    rowSlots: Int32Array | null = null,
  ): WriteMarks | null {
    // A temporary table is this session's alone, and no result read from it is stored.
    if (entry.info.temporary) return null;
    // Writing the tables stored programs live in, even by hand, changes what routines and events
    // are: the metadata must read them again (a schema change that may change programs).
    const programTables = writesProgramTables(entry.info.writes, schema);
    const marks = this.#writeMarksOf(entry, schema, programTables, rowSlots);
    if (programTables && marks !== null) marks.programTables = true;
    return marks;
  }

  #writeMarksOf(
    entry: MemoEntry,
    schema: string | null,
    programTables: boolean,
    rowSlots: Int32Array | null,
  ): WriteMarks | null {
    const info = entry.info;
    const snapshot = this.#snapshot;
    // The text may not say what the server reads in it: under a multi-byte client character set
    // (a byte of a character read as a backslash) or a sql_mode the router has not seen yet, a
    // string misread can hide a function call or a table. Any such text may write anything.
    const misreadable =
      !entry.modeIndependent && (snapshot === null || snapshot.unsafeCharset || this.#stateDirty);
    // Calls of stored functions the metadata knows to run no DDL write what their bodies tell
    // (the text read as the server reads it, for the functions' names): a statement whose
    // only untold writes they are writes that besides what it names.
    let writesEverything = info.writesEverything;
    let functionSlots: Int32Array | null = null;
    if (writesEverything && info.unknownFunctions.length > 0 && !misreadable) {
      functionSlots = this.#worker.catalog.functionWriteSlots(
        info.routineCalls,
        this.#callLookupSchema(schema),
      );
      if (functionSlots !== null && !info.writesEverythingWithoutFunctions) {
        writesEverything = false;
      }
    }
    const functionsWrite = functionSlots !== null && functionSlots.length > 0;
    // Procedures, EXECUTE and multi-statement texts may run DDL the text does not show; a CALL
    // of a procedure the metadata knows to run none does not, nor one of a procedure known to
    // run none but temporary tables' (which the session keeps apart), its arguments calling no
    // stored function.
    const temporaries =
      writesEverything && !misreadable && info.unknownFunctions.length === 0
        ? this.#callTemporaries(info, schema)
        : null;
    const schemaChange =
      info.kind === 'ddl' ||
      programTables ||
      (writesEverything &&
        (SCHEMA_CHANGING.has(info.kind) || info.multiStatement) &&
        temporaries === null &&
        !(!misreadable && this.#callRunsNoDdl(info, schema)));
    const leavesPrograms = schemaChange && leavesStoredPrograms(info, schema);
    // Such a CALL writes what the procedure's body tells, when it tells, and what the functions
    // its arguments call write (marks with no slot: it writes nothing, but is no statement of
    // none).
    if (
      info.control?.kind === 'call' &&
      !schemaChange &&
      (info.unknownFunctions.length === 0 || functionSlots !== null)
    ) {
      const slots = this.#worker.catalog.callWriteSlots(
        info.control.procedure!,
        this.#callLookupSchema(schema),
      );
      if (slots !== null) {
        const marks: WriteMarks = {
          slots: functionsWrite ? concatSlots(slots, functionSlots!) : slots,
          everything: false,
          schemaChange: false,
          leavesPrograms: false,
        };
        if (temporaries !== null) marks.temporaries = temporaries;
        return marks;
      }
      if (temporaries !== null) {
        return {
          slots: null,
          everything: true,
          schemaChange: false,
          leavesPrograms: false,
          temporaries,
        };
      }
    }
    // XA COMMIT publishes writes made before it, possibly in another session, whose marks are gone.
    const commitsXa = info.control?.kind === 'xa-commit';
    const readWrites = info.reads.length > 0 && this.#readsMayWrite(entry, schema);
    if (
      writesEverything ||
      commitsXa ||
      readWrites ||
      snapshot === null ||
      snapshot.unsafeCharset ||
      // Sent before the probe (it reads diagnostics, or was announced as writing everything),
      // after something that may have changed the current database: the names it writes
      // cannot be qualified. (A SET, a CALL, a function cannot change it; a text whose reading
      // the session's state could change is misreadable.)
      this.#schemaUnsure
    ) {
      if (
        misreadable ||
        writesEverything ||
        commitsXa ||
        readWrites ||
        info.writes.length > 0 ||
        schemaChange
      )
        return { slots: null, everything: true, schemaChange, leavesPrograms };
      // Without a known session state, a statement that names no writes writes only what the
      // functions it calls do, whose bodies name their tables in their own schemas.
      if (functionsWrite) {
        return { slots: functionSlots, everything: false, schemaChange, leavesPrograms };
      }
      return null;
    }
    // A write to a temporary table invalidates nothing, unless another statement of the text
    // may have dropped or renamed it before the write runs.
    const writes =
      this.#temporary.size === 0 || info.multiStatement
        ? info.writes
        : info.writes.filter((table) => !this.#temporary.has(qualify(table, schema) ?? ''));
    if (writes.length === 0) {
      if (functionsWrite) {
        return { slots: functionSlots, everything: false, schemaChange, leavesPrograms };
      }
      return schemaChange ? { slots: null, everything: false, schemaChange, leavesPrograms } : null;
    }
    const facts =
      writes === info.writes && rowSlots === null
        ? writeFactsOf(this.#worker.catalog, entry, schema)
        : null;
    const slots =
      facts !== null
        ? facts.writeSlots!
        : writes === info.writes
          ? rowSlots!
          : this.#worker.catalog.writeSlots(writes, schema);
    if (slots === EVERYTHING)
      return { slots: null, everything: true, schemaChange, leavesPrograms };
    const marks: WriteMarks = {
      slots: functionsWrite ? concatSlots(slots, functionSlots!) : slots,
      everything: false,
      schemaChange,
      leavesPrograms,
    };
    if (facts !== null && facts.writeOwnSlots !== null) marks.ownSlots = facts.writeOwnSlots;
    return marks;
  }

  /**
   * A CALL of a procedure the metadata knows to run no DDL, itself or through the procedures it
   * calls: it changes no metadata, creates no table (temporary ones included) and prepares no
   * statement. An unqualified name is looked up in the current database while that is known,
   * else among every schema's procedures of that name (a text the caller has checked is read as
   * the server reads it). A prepared CALL's `schema` is the one it was prepared in: where that
   * is not the current one, it is looked up among every schema's as well.
   */
  #callRunsNoDdl(info: StatementInfo, schema: string | null): boolean {
    const control = info.control;
    if (control?.kind !== 'call' || control.procedure === null) return false;
    return this.#worker.catalog.callRunsNoDdl(control.procedure, this.#callLookupSchema(schema));
  }

  /** The temporary tables a CALL may create, of a procedure that runs no other DDL. */
  #callTemporaries(info: StatementInfo, schema: string | null): readonly string[] | null {
    const control = info.control;
    if (control?.kind !== 'call' || control.procedure === null) return null;
    return this.#worker.catalog.callTemporaries(control.procedure, this.#callLookupSchema(schema));
  }

  /**
   * Were the stored functions a statement called all known to run no DDL (so none created a
   * table), its text read as the server reads it? Its marks tell: they write everything unless
   * #writeMarks followed the functions, which it does only for such a text. A temporary-table
   * statement's marks are none either way: it is not taken to be one.
   */
  #callsDdlFreeFunctions(plan: CommandPlan, info: StatementInfo, schema: string | null): boolean {
    return (
      !info.temporary &&
      plan.marks?.everything !== true &&
      this.#worker.catalog.functionsRunNoDdl(info.routineCalls, this.#callLookupSchema(schema))
    );
  }

  /** `schema` while it is known to be the current one; undefined (every schema's) otherwise. */
  #callLookupSchema(schema: string | null): string | null | undefined {
    const snapshot = this.#snapshot;
    return snapshot !== null && !this.#schemaUnsure && snapshot.schema === schema
      ? schema
      : undefined;
  }

  /**
   * The session's state may have changed: the probe runs again before the next statement that
   * depends on it. `schemaKept`: by a statement that cannot change the current database.
   */
  #markDirty(schemaKept = false): void {
    this.#stateDirty = true;
    if (!schemaKept) this.#schemaUnsure = true;
  }

  /** The reads of a statement may write (a view calling a stored function)? */
  #readsMayWrite(entry: MemoEntry, schema: string | null): boolean {
    const catalog = this.#worker.catalog;
    if (catalog.generation < 0) return catalog.readsMayWrite(entry.info.reads, schema);
    if (entry.info.kind !== 'select')
      return writeFactsOf(this.#worker.catalog, entry, schema).writeReadsMayWrite;
    this.#readSlots(entry, schema);
    return entry.readMayWrite;
  }

  #trackTemporary(info: StatementInfo, schema: string | null): void {
    const names: string[] = [];
    for (const table of info.writes) {
      const name = qualify(table, schema);
      if (name !== null) names.push(name);
    }
    // A session has at most one temporary table of a name: once dropped, the name is a base
    // table's, or nothing.
    if (info.control?.kind === 'drop') {
      for (const name of names) {
        this.#temporary.delete(name);
        this.#maybeTemporary.delete(name);
      }
      return;
    }
    if (info.temporary) {
      for (const name of names) {
        this.#temporary.add(name);
        this.#maybeTemporary.delete(name);
      }
      return;
    }
    // A temporary table renamed (ALTER ... RENAME, RENAME TABLE): each name involved may now be
    // one, or no longer be one.
    if (names.some((name) => this.#temporary.has(name) || this.#maybeTemporary.has(name))) {
      for (const name of names) this.#mayBeTemporary(name);
    }
  }

  /**
   * `name` may or may not be a temporary table of the session now: its reads go to the server,
   * and a write to it is taken as a write to the base table of that name, which it may be.
   */
  #mayBeTemporary(name: string): void {
    this.#temporary.delete(name);
    this.#maybeTemporary.add(name);
  }

  /**
   * Something ran that may have created or dropped temporary tables unseen (a procedure, say):
   * no read of the session's is cached from here, and no name is known to be a temporary table
   * (a write to one of them may be to the base table now).
   */
  #temporariesUnseen(): void {
    this.#hiddenTemporary = true;
    for (const name of this.#temporary) this.#maybeTemporary.add(name);
    this.#temporary.clear();
  }

  // --- the proxy's own tables -----------------------------------------------------------------

  /**
   * SELECT * FROM nicecache.digests, answered by the proxy: the session waits while every
   * worker's digests are gathered (at most DIGESTS_GATHER_MS), then gets them as a result set.
   * Other statements over the nicecache schema get the server's errors for what they ask.
   */
  #answerOwnTable(control: OwnTableRead): Route {
    const answer = this.#ownTables.answer(control, {
      deprecateEof: this.#deprecateEof,
      extendedMetadata: this.#extendedMetadata,
      status: this.txn.status,
    });
    if (answer.action === 'answer') return answer;
    return { ...answer, metadata: false };
  }

  // --- helpers --------------------------------------------------------------------------------

  #classify(sql: string): MemoEntry {
    return this.#worker.memo.classify(sql, this.#classifyMode(), this.#serverVersion);
  }

  /** How statements read in this session (made only when a text must be classified). */
  readonly #classifyMode = (): ClassifyMode => {
    const snapshot = this.#snapshot;
    return {
      ansiQuotes: snapshot?.ansiQuotes ?? false,
      noBackslashEscapes: this.#noBackslashEscapes(),
      lowerCaseTableNames: snapshot?.lowerCaseTableNames ?? 0,
      names: snapshot?.names ?? NameEncoding.OTHER,
    };
  };

  /** The memo's index of #classifyMode(), without making the object. */
  #modeIndex(): number {
    const snapshot = this.#snapshot;
    return (
      (snapshot?.ansiQuotes === true ? 1 : 0) +
      (this.#noBackslashEscapes() ? 2 : 0) +
      (snapshot?.lowerCaseTableNames ?? 0) * 4 +
      (snapshot?.names ?? NameEncoding.OTHER) * 12
    );
  }

  #noBackslashEscapes(): boolean {
    return (
      this.#snapshot?.noBackslashEscapes ??
      (this.txn.status & ServerStatus.NO_BACKSLASH_ESCAPES) !== 0
    );
  }

  #bypass(
    reason: number,
    info: StatementInfo,
    marks: WriteMarks | null,
    command: number = Command.QUERY,
  ): Route {
    const stats = this.#cache.stats;
    stats.bypass(reason);
    stats.add(Counter.NOT_CACHED);
    this.#readOutcome = reason;
    // A locking read reads the latest rows, not a snapshot: InnoDB takes none for it.
    const establishes =
      !info.lockingRead && this.#establishesSnapshot(info.reads, this.#snapshot?.schema ?? null);
    return this.#forward(command, info, marks, establishes);
  }

  #forward(
    command: number,
    info: StatementInfo | null,
    marks: WriteMarks | null,
    establishesSnapshot: boolean,
  ): Route & { action: 'forward' } {
    // Anything but a plain read makes the transaction's COMMIT the server's to answer.
    if (
      this.#readsOnly &&
      (info === null || info.kind !== 'select' || marks !== null || info.lockingRead)
    ) {
      this.#readsOnly = false;
    }
    // The server runs a SELECT: FOUND_ROWS() is its again.
    if (info?.kind === 'select') this.#foundRowsDebt = NO_HIT;
    // A statement that uses a table empties the server's warning list.
    if (info !== null && (info.reads.length > 0 || info.writes.length > 0))
      this.#warningsDebt = false;
    if (info?.control?.kind === 'consistent-snapshot') {
      establishesSnapshot = true;
    }
    // The marks go up before the command is sent: the caller sends it right after this.
    if (marks !== null) this.txn.begin(marks);
    return {
      action: 'forward',
      plan: {
        command,
        info,
        seqBefore: this.#cache.registry.sequence(),
        marks,
        fill: null,
        establishesSnapshot,
        prepare: null,
        // Not known while the state may have changed: a transaction this starts never hits.
        isolation: this.#stateDirty ? null : (this.#snapshot?.isolation ?? null),
        status: null,
        // Every field from the start: one object shape for every plan, whatever it gets later.
        sqlPrepare: undefined,
        flushesStatus: false,
        learn: undefined,
        digest: undefined,
        sentAt: 0,
        missed: false,
      },
    };
  }
}

const FORWARD: Route = { action: 'forward', plan: null };
const NO_NAMES: readonly string[] = [];
const EMPTY_ANSWER = Buffer.alloc(0);

/** What the session does after the reply to a transaction command of the proxy's own. */
export const TransactionOutcome = {
  /** Nothing more: the next reply is the client's as usual. */
  GO_ON: 0,
  /** The next reply (a command sent with the start) is not the client's: see acceptDiscarded. */
  DISCARD_NEXT: 1,
} as const;
export type TransactionOutcome = (typeof TransactionOutcome)[keyof typeof TransactionOutcome];

/** The slots of both (a slot in both is marked twice, which TransactionState allows). */
function concatSlots(first: Int32Array, second: Int32Array): Int32Array {
  const slots = new Int32Array(first.length + second.length);
  slots.set(first);
  slots.set(second, first.length);
  return slots;
}

/**
 * DDL known to leave stored routines and events alone: it defines a named table, index,
 * sequence, view or trigger, none in a system schema (mysql.proc and mysql.event are tables).
 */
function leavesStoredPrograms(info: StatementInfo, schema: string | null): boolean {
  // A trigger's body may end before the text does, and a routine be created after it.
  if (info.ddlObject === null || info.multiStatement) return false;
  for (const table of info.writes) {
    const owner = table.schema ?? schema;
    if (owner === null || isSystemSchema(owner)) return false;
  }
  return true;
}

/** What replaces a discarded reply (see acceptDiscarded). */
export interface Discarded {
  answer: Buffer;
  rollback: Buffer | null;
}
/** COM_REFRESH: everything, at once. */
const REFRESH_MARKS: WriteMarks = {
  slots: null,
  everything: true,
  schemaChange: false,
  leavesPrograms: false,
  untilReply: true,
};

/** COM_REFRESH's flag for FLUSH STATUS. */
const REFRESH_STATUS = 0x10;

/** The first execution after DDL says the metadata changed; a slow one says it was slow. */
const ONE_TIME_STATUS_BITS = ServerStatus.METADATA_CHANGED | ServerStatus.QUERY_WAS_SLOW;
