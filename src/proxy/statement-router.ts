/**
 * The query cache's side of one session: for each statement the client sends, whether it is
 * answered from the cache, relayed and stored, or relayed only, and which writes it announces to
 * the registry. It holds what a cached result depends on in this session: the probed session
 * state, the transaction, temporary tables, prepared statements, and the query_cache_type.
 *
 * Correctness first: whatever the router cannot be sure of goes to the server, and a write whose
 * tables it cannot tell invalidates everything.
 */
import { Bypass, Counter } from '../cache/cache-stats.ts';
import type { CachedResult, QueryCache, QueryCacheType } from '../cache/query-cache.ts';
import type { Flight, SingleFlight } from '../cache/single-flight.ts';
import { Command, ServerStatus } from '../protocol/constants.ts';
import { encodeOk } from '../protocol/generic-packets.ts';
import type { ReplyTracker } from '../protocol/reply-tracker.ts';
import type { StatementInfo, StatementKind, TableRef } from '../sql/statement-classifier.ts';
import { EVERYTHING, qualify } from './schema-catalog.ts';
import type { SchemaCatalog } from './schema-catalog.ts';
import { probeSql, readProbe } from './session-probe.ts';
import type { SessionSnapshot } from './session-probe.ts';
import type { MemoEntry, SessionKeys, StatementMemo } from './statement-memo.ts';
import { parseShowStatus } from './status-variables.ts';
import type { StatusStatement } from './status-variables.ts';
import { SESSION_STATUS_BITS, TransactionState } from './transaction-state.ts';
import type { WriteMarks } from './transaction-state.ts';

/** What a worker's sessions share. */
export interface WorkerCache {
  cache: QueryCache;
  catalog: SchemaCatalog;
  memo: StatementMemo;
  sessionKeys: SessionKeys;
  flights: SingleFlight;
}

/** A reply on its way that the cache wants to keep. */
export interface FillPlan {
  key: string;
  slots: Int32Array;
  fillSeq: number;
  /** Identical misses of this worker wait for it. */
  flight: Flight;
}

/** What the router needs to hear about a relayed command when its reply has ended. */
export interface CommandPlan {
  command: number;
  info: StatementInfo | null;
  seqBefore: number;
  marks: WriteMarks | null;
  fill: FillPlan | null;
  /** A read of transactional tables relayed to the server: InnoDB has taken its snapshot. */
  establishesSnapshot: boolean;
  /** What a COM_STMT_PREPARE prepares. */
  prepare: { sql: string; entry: MemoEntry } | null;
  /** For SHOW STATUS: the statement, to rewrite its reply. */
  status: StatusStatement | null;
}

export type Route =
  /** Answer with these bytes; nothing goes to the server. */
  | { action: 'answer'; bytes: Buffer }
  /** Send the session probe first, then route the command again. */
  | { action: 'probe'; sql: string }
  /** Wait for an identical miss in flight, then route the command again. */
  | { action: 'wait'; flight: Flight }
  /** Send this command (the last hit) first, so the server's diagnostics match, then route. */
  | { action: 'replay'; payload: Buffer }
  | { action: 'forward'; plan: CommandPlan | null };

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

/** Statements that read what the previous statement left: they must see the server's truth. */
function readsDiagnostics(sql: string): boolean {
  // Every statement after a hit is asked: the substring tests keep the regular expression off
  // the common path.
  if (!sql.includes('_') && !SHOW_OR_GET.test(sql)) return false;
  return READS_DIAGNOSTICS.test(sql);
}

const SHOW_OR_GET = /^\s*(?:show|get)\s/i;
const READS_DIAGNOSTICS =
  /\b(?:found_rows|row_count|warning_count|error_count)\b|^\s*(?:show\s+(?:warnings|errors|count)|get\s+(?:current\s+|stacked\s+)?diagnostics)\b/i;

const SET_PREFIX = /^\s*SET\s/i;
const SET_QUERY_CACHE_TYPE =
  /^\s*SET\s+(?:SESSION\s+|LOCAL\s+|@@SESSION\.|@@LOCAL\.|@@)?query_cache_type\s*:?=\s*'?(0|1|2|OFF|ON|DEMAND)'?\s*;?\s*$/i;
const QUERY_CACHE_TYPE_VALUES: Record<string, QueryCacheType> = {
  '0': 0,
  OFF: 0,
  '1': 1,
  ON: 1,
  '2': 2,
  DEMAND: 2,
};

const RESET_QUERY_CACHE = /^\s*RESET\s+QUERY\s+CACHE\s*;?\s*$/i;
const SET_TRANSACTION = /^\s*SET\s+TRANSACTION\b/i;
const CONSISTENT_SNAPSHOT = /\bCONSISTENT\s+SNAPSHOT\b/i;
const DROP = /^\s*DROP\b/i;
const XA_COMMIT = /^\s*XA\s+COMMIT\b/i;
const SCHEMA_CHANGING: ReadonlySet<StatementKind> = new Set(['call', 'execute', 'other']);

/** A statement prepared through COM_STMT_PREPARE, for caching its executions. */
interface PreparedStatement {
  sql: string;
  entry: MemoEntry;
  parameterCount: number;
  /** Parameter types from the last execute that sent them (later ones may omit them). */
  types: string | null;
  /** The types the server last received: a hit never carries others, or the server would not know them. */
  serverTypes: string | null;
  /** COM_STMT_SEND_LONG_DATA was used: the values are not in the execute packet. */
  longData: boolean;
}

export class StatementRouter {
  readonly #worker: WorkerCache;
  readonly #cache: QueryCache;
  readonly #capabilities: number;
  readonly #serverVersion: string;
  readonly #probeSql: string;
  readonly txn: TransactionState;
  #snapshot: SessionSnapshot | null = null;
  /** The probe must run again before the next statement that depends on session state. */
  #stateDirty = true;
  #sessionKey = '';
  #type: QueryCacheType;
  /** Qualified names of this session's temporary tables. */
  readonly #temporary = new Set<string>();
  /** Something ran that may have created temporary tables unseen (a procedure, say). */
  #hiddenTemporary = false;
  readonly #statements = new Map<number, PreparedStatement>();
  /**
   * The last answer served from the cache, while it is the last command: its SQL text, or the
   * payload of its COM_STMT_EXECUTE.
   */
  #lastHit: string | Buffer | null = null;
  /** The command being routed waited for a flight already: it does not wait again. */
  #waited = false;
  /** False while routing a command that must reach the server whatever the cache holds. */
  #mayHit = true;

  constructor(worker: WorkerCache, serverVersion: string, capabilities: number, status: number) {
    this.#worker = worker;
    this.#serverVersion = serverVersion;
    this.#probeSql = probeSql(serverVersion);
    this.#cache = worker.cache;
    this.#capabilities = capabilities;
    this.#type = worker.cache.type;
    this.txn = new TransactionState(worker.cache.registry);
    if (status >= 0) this.txn.status = status;
  }

  /** Decides what happens to a client command (`payload` without header, `raw` with). */
  route(payload: Buffer, raw: Buffer, othersInFlight: boolean): Route {
    const route = this.#route(payload, raw, othersInFlight);
    // A command that waits comes back here once the flight has landed, and then must not wait.
    this.#waited = route.action === 'wait';
    return route;
  }

  #route(payload: Buffer, raw: Buffer, othersInFlight: boolean): Route {
    const command = payload[0]!;
    switch (command) {
      case Command.QUERY:
        return this.#routeQuery(payload, raw, othersInFlight);
      case Command.STMT_PREPARE:
        return this.#routePrepare(payload);
      case Command.STMT_EXECUTE:
        return this.#routeExecute(payload, raw, othersInFlight);
      case Command.STMT_SEND_LONG_DATA: {
        const statement = this.#statements.get(payload.readUInt32LE(1));
        if (statement !== undefined) statement.longData = true;
        return FORWARD;
      }
      case Command.STMT_CLOSE:
        this.#statements.delete(payload.readUInt32LE(1));
        return FORWARD;
      case Command.STMT_RESET: {
        const statement = this.#statements.get(payload.readUInt32LE(1));
        if (statement !== undefined) statement.longData = false;
        return FORWARD;
      }
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
      default: {
        // COM_DROP_DB, COM_REFRESH, bulk execution and anything else that may write.
        const marks: WriteMarks = { slots: null, everything: true, schemaChange: true };
        return this.#forward(command, null, marks, false);
      }
    }
  }

  /** The session probe's reply: its first row, or null when it failed. */
  acceptProbe(row: ReadonlyArray<string | null> | undefined): void {
    this.#stateDirty = false;
    this.#snapshot = readProbe(row);
    if (this.#snapshot === null) return;
    if (this.#snapshot.schema !== null && this.#snapshot.lowerCaseTableNames !== 0)
      this.#snapshot.schema = this.#snapshot.schema.toLowerCase();
    this.#sessionKey = this.#worker.sessionKeys.idOf(
      `${this.#snapshot.digest}\u0002${this.#capabilities}`,
    );
  }

  /** The reply to a relayed command has ended. */
  onReply(plan: CommandPlan, tracker: ReplyTracker): void {
    const info = plan.info;
    const failed = tracker.failed;
    this.#lastHit = null;
    this.txn.onReply(
      tracker.status,
      plan.seqBefore,
      plan.marks,
      plan.establishesSnapshot && !failed,
      info !== null && SET_TRANSACTION.test(info.keyText),
    );
    if (plan.marks !== null) {
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
            parameterCount: tracker.parameterCount,
            types: null,
            serverTypes: null,
            longData: false,
          });
        }
        return;
      case Command.CHANGE_USER:
      case Command.RESET_CONNECTION:
        if (!failed) {
          this.#temporary.clear();
          this.#hiddenTemporary = false;
          this.#statements.clear();
        }
        this.#stateDirty = true;
        return;
      case Command.INIT_DB:
      case Command.SET_OPTION:
        this.#stateDirty = true;
        return;
    }
    if (info === null) return;
    if (!STATE_PRESERVING.has(info.kind) || info.unknownFunctions.length > 0) {
      this.#stateDirty = true;
    }
    if (info.kind === 'call' || info.kind === 'execute' || info.kind === 'prepare') {
      this.#hiddenTemporary = true;
    } else if (info.multiStatement || info.unknownFunctions.length > 0) {
      this.#hiddenTemporary = true;
    }
    if (!failed && info.kind === 'ddl') this.#trackTemporary(info);
    if (!failed && plan.command === Command.QUERY && RESET_QUERY_CACHE.test(info.keyText)) {
      this.#cache.clear();
    }
  }

  /** The connection is gone; `unanswered` are the plans whose replies never came. */
  onClose(unanswered: readonly CommandPlan[]): void {
    for (const plan of unanswered) {
      if (plan.marks !== null) this.txn.abandon(plan.marks);
      if (plan.fill !== null) this.#worker.flights.finish(plan.fill.key, plan.fill.flight);
    }
    this.txn.releaseAll();
  }

  /** Stores a complete reply when it may be; `bytes` is a copy the cache may keep. */
  store(fill: FillPlan, tracker: ReplyTracker, bytes: Buffer | null, offsets: number[]): void {
    this.#store(fill, tracker, bytes, offsets);
    this.#worker.flights.finish(fill.key, fill.flight);
  }

  #store(fill: FillPlan, tracker: ReplyTracker, bytes: Buffer | null, offsets: number[]): void {
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
    this.#cache.store(fill.key, bytes, offsets, fill.slots, fill.fillSeq);
  }

  // --- COM_QUERY ------------------------------------------------------------------------------

  #routeQuery(payload: Buffer, raw: Buffer, othersInFlight: boolean): Route {
    // Latin-1 keeps every byte as one character: keys are the exact bytes the client sent.
    const sql = payload.toString('latin1', 1);
    const typeChange = SET_PREFIX.test(sql) ? SET_QUERY_CACHE_TYPE.exec(sql) : null;
    if (typeChange !== null) {
      this.#type = QUERY_CACHE_TYPE_VALUES[typeChange[1]!.toUpperCase()]!;
      return { action: 'answer', bytes: encodeOk({ status: this.txn.status }, 1) };
    }
    const diagnostics = (this.#lastHit !== null || this.#stateDirty) && readsDiagnostics(sql);
    if (diagnostics && this.#lastHit !== null) {
      const hit = this.#lastHit;
      this.#lastHit = null;
      const payload = typeof hit === 'string' ? Buffer.from(`\u0003${hit}`, 'latin1') : hit;
      return { action: 'replay', payload };
    }
    // The probe would change what FOUND_ROWS() and ROW_COUNT() say: diagnostics go first.
    if (this.#stateDirty && !diagnostics) return { action: 'probe', sql: this.#probeSql };
    const entry = this.#classify(sql);
    const info = entry.info;
    if (info.kind === 'show') {
      const status = parseShowStatus(info.keyText);
      if (status !== null && !othersInFlight) {
        const route = this.#forward(Command.QUERY, info, null, false);
        route.plan!.status = status;
        return route;
      }
    }
    const marks = this.#writeMarks(info);
    if (info.kind !== 'select') return this.#forward(Command.QUERY, info, marks, false);
    if (this.#stateDirty) return this.#bypass(Bypass.SESSION_STATE, info, marks);
    if (entry.keySession !== this.#sessionKey) {
      entry.keySession = this.#sessionKey;
      entry.key = `${this.#sessionKey}\u0000${info.keyText}`;
    }
    return this.#routeSelect(entry, entry.key, sql, othersInFlight, marks);
  }

  // --- prepared statements --------------------------------------------------------------------

  #routePrepare(payload: Buffer): Route {
    if (this.#stateDirty) return { action: 'probe', sql: this.#probeSql };
    const sql = payload.toString('latin1', 1);
    const entry = this.#classify(sql);
    const route = this.#forward(Command.STMT_PREPARE, entry.info, null, false);
    route.plan!.prepare = { sql, entry };
    return route;
  }

  #routeExecute(payload: Buffer, raw: Buffer, othersInFlight: boolean): Route {
    const statement = this.#statements.get(payload.readUInt32LE(1));
    if (statement === undefined) {
      // Not prepared through this session's commands as far as we saw: assume the worst.
      return this.#forward(
        Command.STMT_EXECUTE,
        null,
        { slots: null, everything: true, schemaChange: false },
        false,
      );
    }
    if (this.#stateDirty) return { action: 'probe', sql: this.#probeSql };
    const info = statement.entry.info;
    const marks = this.#writeMarks(info);
    if (info.kind !== 'select') {
      statement.longData = false;
      this.#executeKey(statement, payload);
      statement.serverTypes = statement.types;
      return this.#forward(Command.STMT_EXECUTE, info, marks, false);
    }
    const key = this.#executeKey(statement, payload);
    statement.longData = false;
    if (key === null) {
      statement.serverTypes = statement.types;
      return this.#bypass(Bypass.UNCACHEABLE, info, marks, Command.STMT_EXECUTE);
    }
    // Types the server has not seen yet must reach it: later executions may leave them out.
    this.#mayHit = statement.types === statement.serverTypes;
    const route = this.#routeSelect(statement.entry, key, payload, othersInFlight, marks);
    this.#mayHit = true;
    if (route.action === 'forward') statement.serverTypes = statement.types;
    return route;
  }

  /**
   * The key of an execution: the statement's text and everything after the statement id (flags,
   * iteration count, null bitmap, types, values). Types the client did not resend are those of
   * the last execution that sent them. Null when the execution cannot be cached.
   */
  #executeKey(statement: PreparedStatement, payload: Buffer): string | null {
    const flags = payload[5];
    // A cursor's rows come through COM_STMT_FETCH; long data is not in the packet.
    if (flags === undefined || flags !== 0 || statement.longData) return null;
    const count = statement.parameterCount;
    if (count === 0) return `${this.#sessionKey}\u0001${statement.sql}`;
    const bitmapEnd = 10 + ((count + 7) >> 3);
    if (payload.length <= bitmapEnd) return null;
    const bitmap = payload.toString('latin1', 10, bitmapEnd);
    let valuesStart = bitmapEnd + 1;
    if (payload[bitmapEnd] === 1) {
      statement.types = payload.toString('latin1', valuesStart, valuesStart + 2 * count);
      valuesStart += 2 * count;
    }
    if (statement.types === null) return null;
    return `${this.#sessionKey}\u0001${statement.sql}\u0001${bitmap}${statement.types}${payload.toString('latin1', valuesStart)}`;
  }

  // --- reads ----------------------------------------------------------------------------------

  #routeSelect(
    entry: MemoEntry,
    key: string,
    /** The SQL text of a query, or the payload of an execute: kept to replay a hit. */
    command: string | Buffer,
    othersInFlight: boolean,
    marks: WriteMarks | null,
  ): Route {
    const info = entry.info;
    const commandByte = typeof command === 'string' ? Command.QUERY : Command.STMT_EXECUTE;
    const snapshot = this.#snapshot;
    const txn = this.txn;
    const stats = this.#cache.stats;
    if (!info.cacheable || marks !== null)
      return this.#bypass(Bypass.UNCACHEABLE, info, marks, commandByte);
    const type = this.#type;
    if (
      type === 0 ||
      info.sqlCache === 'SQL_NO_CACHE' ||
      (type === 2 && info.sqlCache !== 'SQL_CACHE')
    ) {
      return this.#bypass(Bypass.NOT_REQUESTED, info, marks, commandByte);
    }
    if (snapshot === null || snapshot.unsafeCharset)
      return this.#bypass(Bypass.SESSION_STATE, info, marks, commandByte);
    if (
      info.lockingRead ||
      txn.isolationOverride ||
      snapshot.isolation === 'SERIALIZABLE' ||
      snapshot.isolation === 'READ-UNCOMMITTED'
    ) {
      return this.#bypass(Bypass.ISOLATION, info, marks, commandByte);
    }
    if (othersInFlight) return this.#bypass(Bypass.PIPELINED, info, marks, commandByte);
    if (this.#readsTemporary(info.reads, snapshot.schema)) {
      return this.#bypass(Bypass.TEMPORARY_TABLE, info, marks, commandByte);
    }
    const slots = this.#readSlots(entry, snapshot.schema);
    if (slots === null) return this.#bypass(Bypass.UNKNOWN_TABLE, info, marks, commandByte);
    if (txn.wrote(slots)) return this.#bypass(Bypass.OWN_WRITES, info, marks, commandByte);

    const inTransaction = txn.inTransaction;
    const repeatableRead = snapshot.isolation === 'REPEATABLE-READ';
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
      const result = this.#cache.lookup(key, snapshotSeq);
      if (result !== undefined) {
        stats.add(Counter.HITS);
        if (this.#waited) stats.add(Counter.SINGLE_FLIGHT_HITS);
        this.#lastHit = typeof command === 'string' ? command : Buffer.from(command);
        return { action: 'answer', bytes: this.#withSessionStatus(result) };
      }
    }
    const flights = this.#worker.flights;
    const now = performance.now();
    if (!this.#waited) {
      const flight = flights.joinable(key, now);
      if (flight !== null) return { action: 'wait', flight };
    }
    const registry = this.#cache.registry;
    // Read inside a snapshot, the result is what was committed at the snapshot: it may be kept
    // only as long as nothing was written since, which the snapshot's number says.
    const fillSeq = inTransaction && repeatableRead ? txn.snapshotSeq : registry.sequence();
    const route = this.#forward(commandByte, info, null, entry.establishesSnapshot);
    route.plan!.fill = { key, slots, fillSeq, flight: flights.start(key, now) };
    return route;
  }

  /** The slots a statement reads, computed once per schema and metadata generation. */
  #readSlots(entry: MemoEntry, schema: string | null): Int32Array | null {
    const catalog = this.#worker.catalog;
    const generation = catalog.generation;
    if (generation < 0) return null;
    if (entry.readGeneration !== generation || entry.readSchema !== schema) {
      entry.readSlots = catalog.readSlots(entry.info.reads, schema);
      entry.establishesSnapshot = this.#establishesSnapshot(entry.info.reads, schema);
      entry.readGeneration = generation;
      entry.readSchema = schema;
    }
    return entry.readSlots;
  }

  #establishesSnapshot(reads: readonly TableRef[], schema: string | null): boolean {
    for (const table of reads) {
      if (this.#worker.catalog.isTransactional(table, schema)) return true;
    }
    return false;
  }

  /** A cached reply carries the status bits it had when stored; the session's may differ. */
  #withSessionStatus(result: CachedResult): Buffer {
    const bytes = result.bytes;
    const offsets = result.statusOffsets;
    const wanted = this.txn.status & SESSION_STATUS_BITS;
    let same = true;
    for (const offset of offsets) {
      if ((bytes.readUInt16LE(offset) & SESSION_STATUS_BITS) !== wanted) same = false;
    }
    if (same) return bytes;
    const patched = Buffer.from(bytes);
    for (const offset of offsets) {
      patched.writeUInt16LE((patched.readUInt16LE(offset) & ~SESSION_STATUS_BITS) | wanted, offset);
    }
    return patched;
  }

  #readsTemporary(reads: readonly TableRef[], schema: string | null): boolean {
    if (this.#hiddenTemporary) return true;
    if (this.#temporary.size === 0) return false;
    for (const table of reads) {
      const name = qualify(table, schema);
      if (name === null || this.#temporary.has(name)) return true;
    }
    return false;
  }

  // --- writes ---------------------------------------------------------------------------------

  /** The registry marks a statement needs before it is sent, or null when it writes nothing. */
  #writeMarks(info: StatementInfo): WriteMarks | null {
    // A temporary table is this session's alone, and no result read from it is stored.
    if (info.temporary) return null;
    // Procedures, EXECUTE and multi-statement texts may run DDL the text does not show.
    const schemaChange =
      info.kind === 'ddl' ||
      (info.writesEverything && (SCHEMA_CHANGING.has(info.kind) || info.multiStatement));
    const snapshot = this.#snapshot;
    // XA COMMIT publishes writes made before it, possibly in another session, whose marks are gone.
    const commitsXa = info.kind === 'xa' && XA_COMMIT.test(info.keyText);
    if (info.writesEverything || commitsXa || snapshot === null || snapshot.unsafeCharset) {
      if (info.writesEverything || commitsXa || info.writes.length > 0 || schemaChange)
        return { slots: null, everything: true, schemaChange };
      // Without a known session state, a statement that names no writes still writes nothing.
      return null;
    }
    const writes =
      this.#temporary.size === 0
        ? info.writes
        : info.writes.filter(
            (table) => !this.#temporary.has(qualify(table, snapshot.schema) ?? ''),
          );
    if (writes.length === 0)
      return schemaChange ? { slots: null, everything: false, schemaChange } : null;
    const slots = this.#worker.catalog.writeSlots(writes, snapshot.schema);
    if (slots === EVERYTHING) return { slots: null, everything: true, schemaChange };
    return { slots, everything: false, schemaChange };
  }

  #trackTemporary(info: StatementInfo): void {
    const schema = this.#snapshot?.schema ?? null;
    const dropping = DROP.test(info.keyText);
    for (const table of info.writes) {
      const name = qualify(table, schema);
      if (name === null) continue;
      if (dropping) this.#temporary.delete(name);
      else if (info.temporary) this.#temporary.add(name);
    }
  }

  // --- helpers --------------------------------------------------------------------------------

  #classify(sql: string): MemoEntry {
    const snapshot = this.#snapshot;
    return this.#worker.memo.classify(
      sql,
      {
        ansiQuotes: snapshot?.ansiQuotes ?? false,
        noBackslashEscapes:
          snapshot?.noBackslashEscapes ??
          (this.txn.status & ServerStatus.NO_BACKSLASH_ESCAPES) !== 0,
        lowerCaseTableNames: snapshot?.lowerCaseTableNames ?? 0,
      },
      this.#serverVersion,
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
    return this.#forward(
      command,
      info,
      marks,
      this.#establishesSnapshot(info.reads, this.#snapshot?.schema ?? null),
    );
  }

  #forward(
    command: number,
    info: StatementInfo | null,
    marks: WriteMarks | null,
    establishesSnapshot: boolean,
  ): Route & { action: 'forward' } {
    if (info !== null && info.kind === 'begin' && CONSISTENT_SNAPSHOT.test(info.keyText)) {
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
        status: null,
      },
    };
  }
}

const FORWARD: Route = { action: 'forward', plan: null };
