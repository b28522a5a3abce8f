/**
 * The binlog follower: one per proxy, on the main thread. It reads the server's binary log as a
 * replica and announces every committed transaction's tables to the invalidation registry, the
 * way a write through the proxy announces its own, so results read before a write made
 * elsewhere stop being served once the follower has seen it.
 *
 * - A transaction's writes are collected from its GTID event to its XID (or COMMIT) and
 *   invalidated at once: table maps name the tables of row events; statements (statement-based
 *   or mixed logging, DDL, account statements) go through the classifier and mark what the same
 *   text sent through the proxy marks (write-facts.ts): a point write its rows, an INSERT that
 *   only adds rows its table's "new rows", any other its tables. Tables become slots through
 *   the schema catalog, which adds what triggers, stored functions and cascading foreign keys
 *   write (none of which statement-based logging logs). What cannot be read, or not read as the
 *   server read it, invalidates everything.
 * - Rows: where the table map tells the primary key (`binlog_row_metadata=FULL`) and the catalog
 *   takes it as the table's point key, a row event's keys are read (row-keys.ts) and only
 *   those rows and the table's "some row" are invalidated, as a point write through the proxy
 *   invalidates them; otherwise, or past MAX_ROW_KEYS rows, the whole table.
 * - The server writes a transaction to its binary log, and tells its replicas, before the
 *   storage engine makes it visible. So the tables are marked in flight when the commit is
 *   read and released (numbers raised) only once the server confirms that reads starting now
 *   see it (commit-visibility.ts): a result read while the commit was landing is refused, not
 *   stored, however long the engine takes.
 * - Health: hits are allowed (one shared word, see InvalidationRegistry.writesElsewhereSeen)
 *   only while the follower streams, has heard from the server within --binlog-max-lag (the
 *   server sends heartbeats when idle) and the last commit it read was no older than the bound.
 * - After a lost link it resumes from the last GTID it applied; a position the server no longer
 *   has (purged logs, error 1236) or a corrupt event invalidates everything before hits resume.
 */
import { Counter } from '../cache/cache-stats.ts';
import type { CacheStats } from '../cache/cache-stats.ts';
import type { InvalidationRegistry } from '../cache/invalidation-registry.ts';
import { rowKeyHashOf, rowValueHashOf } from '../cache/row-slots.ts';
import { PacketHeader } from '../protocol/constants.ts';
import { readErr } from '../protocol/generic-packets.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import type { Logger } from '../proxy/log.ts';
import { EVERYTHING } from '../proxy/schema-catalog.ts';
import type { AdminAccount, RowWrite, SchemaCatalog } from '../proxy/schema-catalog.ts';
import { StatementMemo } from '../proxy/statement-memo.ts';
import type { ClassifyMode, MemoEntry } from '../proxy/statement-memo.ts';
import { writeFactsOf } from '../proxy/write-facts.ts';
import { normalizeName } from '../sql/table-ref.ts';
import { NameEncoding, isAscii } from '../sql/name-encoding.ts';
import type { TableRef } from '../sql/table-ref.ts';
import { ServerError } from '../upstream/mysql-connection.ts';
import { openBinlogDump } from './binlog-connection.ts';
import type { BinlogDump } from './binlog-connection.ts';
import {
  CHECKSUM_LENGTH,
  EventType,
  SQL_MODE_ANSI_QUOTES,
  SQL_MODE_NO_BACKSLASH_ESCAPES,
  checksumMatches,
  formatChecksumAlgorithm,
  isRowEvent,
  readEventHeader,
  readGtidEvent,
  readQueryEvent,
  readTableId,
  readsByteByByte,
  readRotateFileName,
  readTableMap,
} from './binlog-events.ts';
import type { EventHeader, GtidEvent } from './binlog-events.ts';
import { FollowerState } from './follower-status.ts';
import type { FollowerStatus } from './follower-status.ts';
import { GtidPosition } from './gtid-position.ts';
import { CommitVisibility, binlogCoordinate, binlogFileNumber } from './commit-visibility.ts';
import type { BinlogCoordinate } from './commit-visibility.ts';
import { readRowKeys, readTableColumns } from './row-keys.ts';
import type { TableColumns } from './row-keys.ts';

export interface FollowerOptions {
  backend: BackendAddress;
  admin: AdminAccount;
  connectTimeoutMs: number;
  /** This replica's server_id. */
  serverId: number;
  /** --binlog-max-lag: beyond this, hits stop. */
  maxLagMs: number;
  /** A view of the registry on a region of the follower's own. */
  registry: InvalidationRegistry;
  catalog: SchemaCatalog;
  status: FollowerStatus;
  /** The follower's invalidations are counted here (its own region). */
  stats: CacheStats | null;
  log: Logger;
  /**
   * Before it has ever streamed, a failure to connect is shown here: true stops the follower
   * (--binlog auto against a server found to have no binary log, say), false retries.
   */
  givesUp?: (error: Error) => boolean;
}

/**
 * The follower's clock: health is looked at every tick, and visibility is checked at most once
 * per tick (one check in flight at a time): a commit read after a quiet spell is checked at
 * once, the commits read while a check is due or running wait for the next.
 */
export const TICK_MS = 25;
/**
 * A check made as a commit is read usually finds the engine not done with it yet: it is asked
 * once more this soon, not a whole tick later. Only once per spell of waiting, so a steady
 * stream of commits is checked once per tick.
 */
const RECHECK_MS = 2;
const RECONNECT_FIRST_MS = 100;
/** Silence this long (heartbeats come every 100 ms at most) means the link is dead. */
const DEAD_LINK_MS = 2000;
const RECONNECT_MAX_MS = 5000;
/** ER_MASTER_FATAL_ERROR_READING_BINLOG: the position is gone (purged, or never written). */
const ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236;

/** Events that change nothing a result depends on. */
const HARMLESS_EVENTS: ReadonlySet<number> = new Set([
  3, // STOP
  5, // INTVAR: values a following statement uses
  9, // APPEND_BLOCK: LOAD DATA's file, applied by its EXECUTE_LOAD_QUERY
  13, // RAND
  14, // USER_VAR
  17, // BEGIN_LOAD_QUERY
  EventType.FORMAT_DESCRIPTION,
  EventType.HEARTBEAT,
  EventType.ANNOTATE_ROWS,
  EventType.BINLOG_CHECKPOINT,
  EventType.GTID_LIST,
  EventType.START_ENCRYPTION,
]);

/**
 * More rows of one table than this in one transaction invalidate the table whole: past a few
 * hundred, a bulk write's row marks would cost more than the reads they keep.
 */
export const MAX_ROW_KEYS = 256;

/** What a table id of the log being read stands for. */
interface MappedTable {
  table: TableRef;
  /** Its rows' shape, when the table map could be read to its end. */
  columns: TableColumns | null;
}

/** The rows of one table a transaction changed, by key (row-keys.ts). */
interface ChangedRows {
  table: TableRef;
  /** The key's columns, lowercased, as the log names them (commas between, in the key's order). */
  column: string;
  /** How many columns the key has. */
  width: number;
  /** A key of one column: the keys (an integer, or a string column's row name). */
  keys: Set<number | string>;
  /** A key of several: each row's values in the key's order, one row after the other. */
  tuples: Array<number | string>;
}

/** The marks of the commits read within one tick, kept until the server shows them visible. */
class SettleBatch {
  readonly slots: number[] = [];
  everything = 0;
  schemaChanges = 0;
  /** Where in the binary log its last commit ends. */
  through: BinlogCoordinate = 0;

  get empty(): boolean {
    return this.slots.length === 0 && this.everything === 0 && this.schemaChanges === 0;
  }
}

/** The transaction being read: from its GTID event to its commit. */
class OpenTransaction {
  /** Tables written whole. */
  readonly tables = new Map<string, TableRef>();
  /** Tables of which only the rows read from row events were written (not in `tables`). */
  readonly rows = new Map<string, ChangedRows>();
  /** The data statements logged as statements, and the default database each ran in. */
  readonly statements: MemoEntry[] = [];
  readonly statementSchemas: Array<string | null> = [];
  everything = false;
  schemaChange = false;
  gtid: GtidEvent | null = null;

  /** `table` ("schema.table" `name`) was written whole. */
  writeTable(name: string, table: TableRef): void {
    this.tables.set(name, table);
    this.rows.delete(name);
  }

  /**
   * `table` had the rows of `keys` written (key columns `column`, `width` of them: each row's
   * values one after the other, as readRowKeys gives them).
   */
  writeRows(
    name: string,
    table: TableRef,
    column: string,
    width: number,
    keys: ReadonlyArray<number | string>,
  ): void {
    if (this.tables.has(name)) return;
    let changed = this.rows.get(name);
    if (changed === undefined) {
      changed = { table, column, width, keys: new Set(), tuples: [] };
      this.rows.set(name, changed);
    } else if (changed.column !== column) {
      // Keyed by another column since (a schema change within the transaction): the whole table.
      this.writeTable(name, table);
      return;
    }
    if (width === 1) for (const key of keys) changed.keys.add(key);
    else for (const value of keys) changed.tuples.push(value);
    if (changed.keys.size + changed.tuples.length / width > MAX_ROW_KEYS) {
      this.writeTable(name, table);
    }
  }

  reset(gtid: GtidEvent | null): void {
    this.tables.clear();
    this.rows.clear();
    this.statements.length = 0;
    this.statementSchemas.length = 0;
    this.everything = false;
    this.schemaChange = false;
    this.gtid = gtid;
  }
}

export class BinlogFollower {
  readonly #options: FollowerOptions;
  readonly #registry: InvalidationRegistry;
  readonly #status: FollowerStatus;
  readonly #memo = new StatementMemo();
  #dump: BinlogDump | null = null;
  /** Where to resume: the last transaction applied (null: the server's current position). */
  #position: GtidPosition | null = null;
  /** Events carry a CRC32, per the last format description (or the server's setting). */
  #checksum = false;
  readonly #tableIds = new Map<number, MappedTable>();
  /** The keys of the row event being read (reused). */
  readonly #keys: Array<number | string> = [];
  /** Said once: the log names no columns, so writes read from it invalidate whole tables. */
  #saidUnnamed = false;
  readonly #transaction = new OpenTransaction();
  /** The transaction in progress is one statement with no COMMIT of its own (DDL...). */
  #standalone = false;
  /** Table name → slots, for one generation of the catalog's metadata. */
  readonly #slotMemo = new Map<string, Int32Array | typeof EVERYTHING>();
  /** Table name and key column → what writing its rows marks (null: the table), likewise. */
  readonly #rowWriteMemo = new Map<string, RowWrite | null>();
  #slotMemoGeneration = -1;
  #current = new SettleBatch();
  /** Closed batches, oldest first, waiting for the server to show their commits visible. */
  readonly #awaiting: SettleBatch[] = [];
  readonly #spareBatches: SettleBatch[] = [];
  readonly #visibility: CommitVisibility;
  #checkingVisibility = false;
  #lastCheckAt = -Infinity;
  /** The one quick second check of this spell of waiting has been made. */
  #rechecked = false;
  #recheckTimer: NodeJS.Timeout | null = null;
  #visibilityFailing = false;
  /** The highest coordinate the server has shown visible. */
  #visibleThrough: BinlogCoordinate = 0;
  /** The sequence number of the binlog file being read (from its rotate event). */
  #fileNumber = 0;
  #streaming = false;
  #everStreamed = false;
  #lastHeardAt = 0;
  /** A lower bound of how far behind the last commit read was, in ms; Infinity: unknown yet. */
  #lagMs = Infinity;
  #healthy = false;
  /** Something went unseen: every result is invalidated before hits resume. */
  #mustClearAll = false;
  #reconnectMs = RECONNECT_FIRST_MS;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #tick: NodeJS.Timeout | null = null;
  #stopped = false;
  /** The dump being opened: told of its first event, or of why it ended before one. */
  #starting: { resolve: () => void; reject: (error: Error) => void } | null = null;
  /** The server's error that ended a dump being opened. */
  #refusal: ServerError | null = null;

  constructor(options: FollowerOptions) {
    this.#options = options;
    this.#registry = options.registry;
    this.#status = options.status;
    this.#visibility = new CommitVisibility(options);
  }

  /** Its counters, as SHOW STATUS shows them. */
  get status(): FollowerStatus {
    return this.#status;
  }

  /**
   * Connects and starts the dump. Throws what stops the follower for good (no binary log, the
   * account refused) and errors of the first connection; the caller decides what they mean.
   */
  async start(): Promise<void> {
    this.#registry.setWritesElsewhereSeen(false);
    this.#status.state = FollowerState.CONNECTING;
    // Ticking first: a dump that never sends its first event is given up on too.
    this.#startTicking();
    await this.#connect();
  }

  /** Keeps retrying from now on, for a server that could not be reached at start. */
  startRetrying(): void {
    this.#registry.setWritesElsewhereSeen(false);
    this.#status.state = FollowerState.DISCONNECTED;
    this.#startTicking();
    this.#scheduleReconnect();
  }

  #startTicking(): void {
    if (this.#tick !== null) return;
    this.#tick = setInterval(() => this.#onTick(), TICK_MS);
    this.#tick.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#tick !== null) clearInterval(this.#tick);
    if (this.#reconnectTimer !== null) clearTimeout(this.#reconnectTimer);
    if (this.#recheckTimer !== null) clearTimeout(this.#recheckTimer);
    this.#dump?.connection.destroy();
    this.#options.catalog.stop();
    this.#visibility.close();
    for (const batch of this.#awaiting) this.#release(batch);
    this.#awaiting.length = 0;
    this.#release(this.#current);
  }

  /** Opens the dump and waits for its first event: a refusal comes as the dump's reply. */
  async #connect(): Promise<void> {
    const options = this.#options;
    const heartbeatMs = Math.max(1, Math.min(100, Math.floor(options.maxLagMs / 4)));
    const started = new Promise<void>((resolve, reject) => (this.#starting = { resolve, reject }));
    // Whichever way it ends, the waiter is told; a rejection nobody awaits yet is not unhandled.
    started.catch(() => {});
    let dump: BinlogDump;
    try {
      dump = await openBinlogDump(
        {
          backend: options.backend,
          admin: options.admin,
          connectTimeoutMs: options.connectTimeoutMs,
          position: this.#position,
          serverId: options.serverId,
          heartbeatMs,
        },
        (payload) => this.#onPacket(payload),
        (error) => this.#onEnd(dump, error),
      );
    } catch (error) {
      this.#starting = null;
      throw error;
    }
    this.#dump = dump;
    this.#position = dump.position;
    this.#checksum = dump.checksum;
    this.#lastHeardAt = performance.now();
    this.#lagMs = Infinity;
    this.#tableIds.clear();
    this.#transaction.reset(null);
    this.#standalone = false;
    await started;
    this.#streaming = true;
    this.#everStreamed = true;
  }

  #onEnd(dump: BinlogDump, error: Error): void {
    if (this.#dump !== dump) return;
    this.#dump = null;
    this.#streaming = false;
    // A transaction read in part is read again from its start after the reconnect.
    this.#transaction.reset(null);
    this.#updateHealth();
    const starting = this.#starting;
    if (starting !== null) {
      this.#starting = null;
      starting.reject(this.#refusal ?? error);
      this.#refusal = null;
      return;
    }
    if (this.#stopped) return;
    this.#options.log.warn(
      `binlog follower: connection lost (${error.message}); hits stop until it is back`,
    );
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnectTimer !== null) return;
    const delay = this.#reconnectMs;
    this.#reconnectMs = Math.min(this.#reconnectMs * 2, RECONNECT_MAX_MS);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      this.#status.countReconnect();
      this.#connect().then(
        () => {
          if (this.#stopped) this.#dump?.connection.destroy();
        },
        (error: Error) => {
          if (!this.#everStreamed && this.#options.givesUp?.(error) === true) {
            this.stop();
            this.#status.state = FollowerState.OFF;
            this.#registry.setWritesElsewhereSeen(true);
            return;
          }
          this.#options.log.warn(`binlog follower: cannot reconnect: ${error.message}`);
          this.#scheduleReconnect();
        },
      );
    }, delay);
    this.#reconnectTimer.unref();
  }

  // --- the stream -------------------------------------------------------------------------

  #onPacket(payload: Buffer): void {
    this.#lastHeardAt = performance.now();
    const first = payload[0];
    if (first === PacketHeader.OK) {
      const starting = this.#starting;
      if (starting !== null) {
        this.#starting = null;
        starting.resolve();
      }
      this.#onEvent(payload.subarray(1));
      return;
    }
    if (first === PacketHeader.ERR) {
      const err = readErr(payload);
      if (this.#starting !== null) this.#refusal = new ServerError(err);
      if (err.errno === ER_MASTER_FATAL_ERROR_READING_BINLOG) {
        // The position is gone: what happened since cannot be known. Start again from now.
        this.#options.log.warn(
          `binlog follower: the server cannot resume from ${this.#position?.toString() ?? 'its position'} (${err.message}); invalidating everything and following from the current position`,
        );
        this.#position = null;
        this.#mustClearAll = true;
      } else {
        this.#options.log.warn(
          `binlog follower: the server ended the dump: ${err.errno} ${err.message}`,
        );
      }
    }
    // An error or EOF ends the dump; the connection goes, and the follower reconnects.
    this.#dump?.connection.destroy();
  }

  #onEvent(event: Buffer): void {
    const header = readEventHeader(event);
    if (
      header === null ||
      (this.#checksum && header.type !== EventType.FORMAT_DESCRIPTION && !checksumMatches(event))
    ) {
      this.#corrupt(header === null ? 'an event shorter than its header' : 'a checksum mismatch');
      return;
    }
    this.#status.countEvent();
    const type = header.type;
    if (type === EventType.FORMAT_DESCRIPTION) {
      // It says itself whether the events of its log carry a checksum.
      this.#checksum = formatChecksumAlgorithm(event) === 1;
      if (this.#checksum && !checksumMatches(event)) {
        this.#corrupt('a checksum mismatch');
        return;
      }
      // A new log: table ids of the previous one mean nothing here.
      this.#tableIds.clear();
      return;
    }
    const bodyEnd = event.length - (this.#checksum ? CHECKSUM_LENGTH : 0);
    if (type === EventType.ROTATE) {
      // The file the following events are in (the dump starts with one such event too).
      const name = readRotateFileName(event, bodyEnd);
      const fileNumber = name === null ? null : binlogFileNumber(name);
      if (fileNumber === null) this.#corrupt(`a rotate to an unnumbered file '${name ?? ''}'`);
      else this.#fileNumber = fileNumber;
      return;
    }
    if (isRowEvent(type)) {
      this.#onRows(event, type, bodyEnd);
      return;
    }
    switch (type) {
      case EventType.TABLE_MAP: {
        const map = readTableMap(event, bodyEnd);
        if (map === null) this.#transaction.everything = true;
        else {
          const lowerCase = this.#dump?.lowerCaseTableNames ?? 0;
          // Lowering UTF-8 bytes read as Latin-1 is not the server's lowering: such a name is
          // not looked up (the metadata leaves it unresolved too). Left unmapped, its row events
          // invalidate everything.
          if (lowerCase !== 0 && !(isAscii(map.schema) && isAscii(map.table))) {
            this.#tableIds.delete(map.tableId);
          } else {
            this.#tableIds.set(map.tableId, {
              table: {
                schema: normalizeName(map.schema, lowerCase),
                name: normalizeName(map.table, lowerCase),
              },
              columns: readTableColumns(event, bodyEnd),
            });
          }
        }
        return;
      }
      case EventType.GTID: {
        const gtid = readGtidEvent(event, header, bodyEnd);
        if (gtid === null) {
          this.#corrupt('an unreadable GTID event');
          return;
        }
        this.#transaction.reset(gtid);
        this.#standalone = gtid.standalone;
        return;
      }
      case EventType.XID:
        this.#commit(header);
        return;
      case EventType.QUERY:
      case EventType.QUERY_COMPRESSED:
        this.#onQuery(event, header, bodyEnd, type === EventType.QUERY_COMPRESSED);
        return;
      case EventType.HEARTBEAT:
        // The server had nothing more to send: everything up to now has been read.
        this.#lagMs = 0;
        this.#status.lagMs = 0;
        return;
      default:
        if (HARMLESS_EVENTS.has(type)) return;
        // LOAD DATA's execution, an incident, a type this reader does not know: anything.
        this.#transaction.everything = true;
        if (this.#transaction.gtid === null || this.#standalone) this.#commit(header);
    }
  }

  /**
   * A row event: its rows' keys when they can be read (MariaDB's compressed ones inflated), else
   * its table whole; a table id no table map named, everything.
   */
  #onRows(event: Buffer, type: number, bodyEnd: number): void {
    const tableId = readTableId(event);
    const mapped = tableId === null ? undefined : this.#tableIds.get(tableId);
    if (mapped === undefined) {
      this.#transaction.everything = true;
      return;
    }
    const { table, columns } = mapped;
    const name = `${table.schema}.${table.name}`;
    if (columns !== null && !columns.named && !this.#saidUnnamed) {
      this.#saidUnnamed = true;
      this.#options.log.info(
        "binlog: the server logs rows without their columns' names (binlog_row_metadata is not FULL): a write read from the log invalidates its whole table; SET GLOBAL binlog_row_metadata = FULL (MariaDB 10.5 and later) lets it invalidate only the rows it changed",
      );
    }
    const keys = this.#keys;
    keys.length = 0;
    if (columns?.key != null && readRowKeys(event, type, bodyEnd, columns, keys)) {
      this.#transaction.writeRows(name, table, columns.key.name, columns.key.indexes.length, keys);
    } else {
      this.#transaction.writeTable(name, table);
    }
  }

  #onQuery(event: Buffer, header: EventHeader, bodyEnd: number, compressed: boolean): void {
    const transaction = this.#transaction;
    const query = readQueryEvent(event, bodyEnd, compressed);
    if (query === null) {
      transaction.everything = true;
      this.#commit(header);
      return;
    }
    const sql = query.sql;
    if (sql === 'BEGIN') return;
    if (sql === 'COMMIT') {
      this.#commit(header);
      return;
    }
    const lowerCaseTableNames = this.#dump?.lowerCaseTableNames ?? 0;
    const mode: ClassifyMode = {
      ansiQuotes: query.sqlMode !== null && (query.sqlMode & SQL_MODE_ANSI_QUOTES) !== 0n,
      noBackslashEscapes:
        query.sqlMode !== null && (query.sqlMode & SQL_MODE_NO_BACKSLASH_ESCAPES) !== 0n,
      lowerCaseTableNames,
      names: NameEncoding.OTHER,
    };
    const entry = this.#memo.classify(sql, mode, this.#dump?.version ?? '');
    const info = entry.info;
    const schema = query.schema === '' ? null : normalizeName(query.schema, lowerCaseTableNames);
    switch (info.kind) {
      case 'commit':
      case 'rollback':
        // ROLLBACK is logged when non-transactional tables kept changes: those are invalidated.
        this.#commit(header);
        return;
      case 'begin':
      case 'savepoint':
      case 'set':
      case 'use':
        return;
      default:
        break;
    }
    // Read byte by byte, as the server read it only where its sql_mode and character set are
    // known and leave no doubt about where its strings end: else a string misread could hide a
    // table, or bound the write to another row than the server's.
    const misread =
      !entry.modeIndependent && (query.sqlMode === null || !readsByteByByte(query.clientCollation));
    if (misread || info.writesEverything || info.control?.kind === 'xa-commit') {
      transaction.everything = true;
    } else {
      transaction.statements.push(entry);
      transaction.statementSchemas.push(schema);
    }
    if (
      !info.temporary &&
      (info.kind === 'ddl' ||
        (info.writesEverything &&
          (info.kind === 'call' ||
            info.kind === 'execute' ||
            info.kind === 'other' ||
            info.multiStatement)))
    ) {
      transaction.schemaChange = true;
    }
    if (transaction.gtid === null || this.#standalone) this.#commit(header);
  }

  /** The transaction committed: its tables are marked now, released after the settle time. */
  #commit(header: EventHeader): void {
    const transaction = this.#transaction;
    const registry = this.#registry;
    const batch = this.#current;
    const stats = this.#options.stats;
    let everything = transaction.everything;
    const start = batch.slots.length;
    if (!everything) {
      for (const table of transaction.tables.values()) {
        const slots = this.#slotsOf(table);
        if (slots === EVERYTHING) {
          everything = true;
          break;
        }
        for (let i = 0; i < slots.length; i++) batch.slots.push(slots[i]!);
      }
    }
    if (!everything) {
      for (const [name, changed] of transaction.rows) {
        if (!this.#markRows(name, changed, batch.slots)) {
          everything = true;
          break;
        }
      }
    }
    const statements = transaction.statements;
    for (let i = 0; i < statements.length && !everything; i++) {
      everything = !this.#markStatement(
        statements[i]!,
        transaction.statementSchemas[i]!,
        batch.slots,
      );
    }
    // Slots first, while the catalog still trusts its metadata; then DDL makes it reload.
    if (transaction.schemaChange) {
      registry.beginSchemaChange();
      batch.schemaChanges++;
    }
    if (everything) {
      batch.slots.length = start;
      registry.beginWriteEverything();
      batch.everything++;
      this.#status.countInvalidationAll();
      stats?.add(Counter.INVALIDATIONS_ALL);
    } else if (batch.slots.length > start) {
      for (let i = start; i < batch.slots.length; i++) registry.beginWrite(batch.slots[i]!);
      stats?.add(Counter.INVALIDATIONS);
    }
    batch.through = binlogCoordinate(this.#fileNumber, header.nextPosition);
    const gtid = transaction.gtid;
    if (gtid !== null) {
      this.#position?.advance(gtid.domain, gtid.serverId, gtid.sequence);
      this.#status.setPosition(gtid.domain, gtid.serverId, gtid.sequence);
    }
    this.#status.countTransaction();
    const clockOffset = this.#dump?.clockOffsetMs ?? 0;
    // The timestamp is in whole seconds: the commit happened no later than its last millisecond.
    this.#lagMs = Math.max(0, Date.now() + clockOffset - (header.timestamp * 1000 + 999));
    this.#status.lagMs = this.#lagMs;
    if (this.#healthy && this.#lagMs > this.#options.maxLagMs) this.#updateHealth();
    transaction.reset(null);
    this.#standalone = false;
    if (!this.#checkingVisibility && performance.now() - this.#lastCheckAt >= TICK_MS) {
      this.#closeBatch();
      this.#checkVisibility();
    }
  }

  /**
   * Pushes what writing `changed`'s rows marks: the table's "some row" and each row's slot when
   * the catalog takes its key columns as the table's point key (and the table writes no other
   * and has no trigger, as for a point write through the proxy); else the table's slots. False
   * for everything.
   */
  #markRows(name: string, changed: ChangedRows, slots: number[]): boolean {
    const catalog = this.#options.catalog;
    if (!this.#memosCurrent()) return false;
    const memoKey = `${name}\u0000${changed.column}`;
    let write = this.#rowWriteMemo.get(memoKey);
    if (write === undefined) {
      write = catalog.rowWrite(changed.table, changed.column);
      this.#rowWriteMemo.set(memoKey, write);
    }
    if (write === null) {
      const whole = this.#slotsOf(changed.table);
      if (whole === EVERYTHING) return false;
      for (let i = 0; i < whole.length; i++) slots.push(whole[i]!);
      return true;
    }
    slots.push(write.someRowSlot);
    for (const key of changed.keys) {
      slots.push(catalog.rowSlotOfHash(rowValueHashOf(write.rowHash, key)));
    }
    const { tuples, width } = changed;
    for (let row = 0; row < tuples.length; row += width) {
      slots.push(catalog.rowSlotOfHash(rowKeyHashOf(write.rowHash, tuples, row, width)));
    }
    return true;
  }

  /**
   * Pushes what a statement read from the log marks, as the same text sent through the proxy
   * would (write-facts.ts). False for everything: the metadata is not trusted, a name cannot be
   * traced, or a view it reads calls a stored function that may write (whose writes statement-
   * based logging does not log: the replica runs the function again).
   */
  #markStatement(entry: MemoEntry, schema: string | null, slots: number[]): boolean {
    if (!this.#memosCurrent()) return false;
    const facts = writeFactsOf(this.#options.catalog, entry, schema);
    const written = facts.writeSlots;
    if (facts.writeReadsMayWrite || written === null || written === EVERYTHING) return false;
    for (let i = 0; i < written.length; i++) slots.push(written[i]!);
    return true;
  }

  /** Clears the memos of slots made under another generation of metadata; false: none trusted. */
  #memosCurrent(): boolean {
    const generation = this.#options.catalog.generation;
    if (generation < 0) return false;
    if (generation !== this.#slotMemoGeneration) {
      this.#slotMemo.clear();
      this.#rowWriteMemo.clear();
      this.#slotMemoGeneration = generation;
    }
    return true;
  }

  #slotsOf(table: TableRef): Int32Array | typeof EVERYTHING {
    const catalog = this.#options.catalog;
    if (!this.#memosCurrent()) return EVERYTHING;
    const name = `${table.schema}.${table.name}`;
    let slots = this.#slotMemo.get(name);
    if (slots === undefined) {
      slots = catalog.writeSlots([table], null);
      this.#slotMemo.set(name, slots);
    }
    return slots;
  }

  /** An event that cannot be trusted: everything is invalidated and the stream read again. */
  #corrupt(what: string): void {
    this.#options.log.warn(`binlog follower: ${what}; invalidating everything and reconnecting`);
    this.#mustClearAll = true;
    this.#dump?.connection.destroy();
  }

  // --- the main thread's clock ------------------------------------------------------------

  #onTick(): void {
    this.#closeBatch();
    if (!this.#checkingVisibility) this.#checkVisibility();
    this.#updateHealth();
  }

  /** The commits read so far wait for the next check. */
  #closeBatch(): void {
    const current = this.#current;
    if (current.empty) return;
    this.#awaiting.push(current);
    this.#current = this.#spareBatches.pop() ?? new SettleBatch();
    this.#status.unconfirmed = this.#awaiting.length;
  }

  /** Asks the server how far commits are visible, and releases the batches that are. */
  #checkVisibility(): void {
    if (this.#awaiting.length === 0) return;
    this.#checkingVisibility = true;
    this.#lastCheckAt = performance.now();
    this.#visibility.visibleThrough().then(
      (through) => {
        this.#checkingVisibility = false;
        this.#visibilityFailing = false;
        this.#status.countVisibilityCheck();
        if (this.#stopped) return;
        // Lower than before: the binary log was reset (RESET MASTER). What was waiting was
        // committed in the old log, before the reset: it is released.
        const reset = through < this.#visibleThrough;
        this.#visibleThrough = through;
        const awaiting = this.#awaiting;
        let released = 0;
        while (released < awaiting.length && (reset || awaiting[released]!.through <= through)) {
          const batch = awaiting[released++]!;
          this.#release(batch);
          this.#spareBatches.push(batch);
        }
        awaiting.splice(0, released);
        this.#status.unconfirmed = awaiting.length;
        if (awaiting.length === 0) this.#rechecked = false;
        else if (!this.#rechecked) {
          this.#rechecked = true;
          this.#recheckTimer = setTimeout(() => {
            this.#recheckTimer = null;
            if (!this.#checkingVisibility && !this.#stopped) this.#checkVisibility();
          }, RECHECK_MS);
          this.#recheckTimer.unref();
        }
      },
      (error: Error) => {
        this.#checkingVisibility = false;
        if (this.#stopped || this.#visibilityFailing) return;
        // Tables stay in flight meanwhile (refused, never stale); said once per failing spell.
        this.#visibilityFailing = true;
        this.#options.log.warn(
          `binlog follower: cannot ask the server which commits are visible (${error.message}); tables written elsewhere are not cached until it can`,
        );
      },
    );
  }

  #release(batch: SettleBatch): void {
    const registry = this.#registry;
    for (let i = 0; i < batch.slots.length; i++) registry.endWrite(batch.slots[i]!);
    for (; batch.everything > 0; batch.everything--) registry.endWriteEverything();
    for (; batch.schemaChanges > 0; batch.schemaChanges--) registry.endSchemaChange();
    batch.slots.length = 0;
  }

  #updateHealth(): void {
    const maxLag = this.#options.maxLagMs;
    const silentMs = performance.now() - this.#lastHeardAt;
    // Heartbeats stopped: the link is dead even if no socket error says so.
    if (this.#dump !== null && silentMs > Math.max(DEAD_LINK_MS, 2 * maxLag)) {
      this.#options.log.warn(
        `binlog follower: nothing heard for ${Math.round(silentMs)} ms; reconnecting`,
      );
      this.#dump?.connection.destroy();
    }
    const healthy = this.#streaming && silentMs <= maxLag && this.#lagMs <= maxLag;
    if (this.#streaming) {
      this.#status.state = healthy ? FollowerState.FOLLOWING : FollowerState.BEHIND;
      if (healthy) this.#reconnectMs = RECONNECT_FIRST_MS;
    } else this.#status.state = FollowerState.DISCONNECTED;
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    if (healthy && this.#mustClearAll) {
      this.#mustClearAll = false;
      this.#registry.clearAll();
    }
    this.#registry.setWritesElsewhereSeen(healthy);
  }
}
