/**
 * The query cache under concurrent writes, through the real proxy with two workers:
 *
 * 1. A linearizability check over more than 100,000 operations: writers increment counters
 *    (autocommit, prepared, and two-row transactions), readers read them (text and binary
 *    protocol, single rows, sums, whole-table reads, and reads inside REPEATABLE READ
 *    transactions). Values only grow, so a read that returns less than the writes acknowledged
 *    before it was sent, or than a read that ended before it was sent, is a stale read; reads
 *    inside one transaction must all show the same snapshot.
 * 2. The fill race, made deterministic with a slow scan: a SELECT whose reply comes after (or
 *    before) a racing UPDATE's OK is never stored, and the next read gets the server's answer;
 *    without a racing write the same SELECT is stored and hit.
 * 3. A writer whose client leaves while its UPDATE still runs on the server (a short UPDATE, and
 *    one that waits long for a lock), and a write whose backend
 *    connection the server ends.
 * 4. One store for every worker: a result stored through either worker is a hit through the
 *    other.
 *
 * Tables are created on the server directly before the proxy starts, so that every worker's
 * schema metadata knows them from the start.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PacketHeader } from '../../src/protocol/constants.ts';
import { readErr } from '../../src/protocol/generic-packets.ts';
import { readLenencBytes, readLenencInt } from '../../src/protocol/lenenc.ts';
import { execute, prepare } from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import { readTextRows } from '../../src/protocol/text-rows.ts';
import { MysqlConnection, ServerError } from '../../src/upstream/mysql-connection.ts';
import type { CommandResult, ConnectionOptions } from '../../src/upstream/mysql-connection.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient } from '../support/raw-client.ts';
import type { RawPacket } from '../support/raw-client.ts';

/** Record has changed since last read: a snapshot that cannot go on, rolled back. */
const ER_CHECKREAD = 1020;

/** Unique per run, so that runs sharing a server do not meet. */
const S = `nc_qcc_${randomBytes(4).toString('hex')}`;

const direct: ConnectionOptions = {
  host: BACKEND_HOST,
  port: BACKEND_PORT,
  user: BACKEND_USER,
  password: BACKEND_PASSWORD,
  database: BACKEND_DATABASE,
};

/** Counters of the workload table. */
const ROWS = 20;
/** Rows 1..HOT take most writes, so their lower bounds move fast. */
const HOT = 4;
/** Rows of the table the slow scan reads. */
const BIG_ROWS = 200_000;
/**
 * The slow, cacheable SELECT of the fill race: a full scan of `big` hashing every row (SUM(x)
 * all the same), a few hundred ms, so an UPDATE sent once it runs ends before it does.
 */
const SLOW_SELECT = "SELECT SUM(x) FROM big WHERE SHA2(pad, 512) <> ''";

type Rows = Array<Array<string | null>>;

/** A connection through the proxy and the worker it landed on. */
interface Placed {
  connection: MysqlConnection;
  client: SqlClient;
  worker: 0 | 1;
}

/** What the workload needs of a connection through the proxy. */
interface SqlClient {
  /** A text query's rows; throws the server's error. */
  rows(sql: string): Promise<Rows>;
  close(): void;
}

function textClient(connection: MysqlConnection): SqlClient {
  return {
    rows: (sql) => connection.queryRows(sql),
    close: () => connection.close(),
  };
}

/**
 * A client of the binary protocol whose rows are wanted: the lean client resolves executions
 * without decoding rows, so this one reads them from the raw packets.
 */
class BinaryClient implements SqlClient {
  readonly #raw: RawClient;

  private constructor(raw: RawClient) {
    this.#raw = raw;
  }

  static async connect(options: ConnectionOptions): Promise<BinaryClient> {
    return new BinaryClient(
      await RawClient.connect({
        host: options.host,
        port: options.port,
        user: options.user,
        password: options.password,
        database: options.database,
      }),
    );
  }

  async rows(sql: string): Promise<Rows> {
    const packets = this.#check(await this.#raw.query(sql));
    return readTextRows(
      packets.map((packet) => packet.payload),
      this.#raw.deprecateEof,
    );
  }

  /** COM_STMT_PREPARE: the statement id. */
  async prepare(sql: string): Promise<number> {
    const packets = this.#check(await this.#raw.command(prepare(sql)));
    return packets[0]!.payload.readUInt32LE(1);
  }

  /** COM_STMT_EXECUTE: the binary rows, as strings. */
  async execute(statementId: number, params: Param[]): Promise<Rows> {
    const packets = this.#check(await this.#raw.command(execute(statementId, params)));
    return readBinaryRows(
      packets.map((packet) => packet.payload),
      this.#raw.deprecateEof,
    );
  }

  close(): void {
    this.#raw.close();
  }

  #check(packets: RawPacket[]): RawPacket[] {
    const last = packets.at(-1);
    if (last !== undefined && last.payload[0] === PacketHeader.ERR) {
      throw new ServerError(readErr(last.payload));
    }
    return packets;
  }
}

/** Field types the binary rows here may hold. */
const FieldType = { LONG: 0x03, LONGLONG: 0x08, NEWDECIMAL: 0xf6, VAR_STRING: 0xfd } as const;

/** Decodes a binary result set of integer and decimal columns into strings. */
function readBinaryRows(payloads: Buffer[], deprecateEof: boolean): Rows {
  const header = payloads[0];
  if (header === undefined || header[0] === PacketHeader.OK) return [];
  const count = readLenencInt(header, 0)!.value;
  const types: number[] = [];
  for (let column = 0; column < count; column++) {
    const definition = payloads[1 + column]!;
    let pos = 0;
    // catalog, schema, table, org_table, name, org_name; then the fixed-length fields.
    for (let field = 0; field < 6; field++) pos = readLenencBytes(definition, pos)!.end;
    pos = readLenencInt(definition, pos)!.end;
    types.push(definition[pos + 6]!);
  }
  const rows: Rows = [];
  for (let index = 1 + count + (deprecateEof ? 0 : 1); index < payloads.length; index++) {
    const row = payloads[index]!;
    if (row[0] !== 0x00) break; // EOF/OK terminator or ERR
    const bitmapLength = (count + 7 + 2) >> 3;
    let pos = 1 + bitmapLength;
    const values: Array<string | null> = [];
    for (let column = 0; column < count; column++) {
      const bit = column + 2;
      if ((row[1 + (bit >> 3)]! & (1 << (bit & 7))) !== 0) {
        values.push(null);
        continue;
      }
      switch (types[column]) {
        case FieldType.LONGLONG:
          values.push(row.readBigInt64LE(pos).toString());
          pos += 8;
          break;
        case FieldType.LONG:
          values.push(String(row.readInt32LE(pos)));
          pos += 4;
          break;
        case FieldType.NEWDECIMAL:
        case FieldType.VAR_STRING: {
          const value = readLenencBytes(row, pos)!;
          values.push(value.value.toString('utf8'));
          pos = value.end;
          break;
        }
        default:
          throw new Error(`unexpected binary column type 0x${types[column]!.toString(16)}`);
      }
    }
    rows.push(values);
  }
  return rows;
}

/** The proxy's query cache counters (SHOW GLOBAL STATUS through the proxy). */
interface CacheCounters {
  hits: number;
  inserts: number;
  notCached: number;
  staleFillsRefused: number;
  staleHitsRefused: number;
  invalidations: number;
  invalidationsAll: number;
  /** A gauge: sessions whose client left while their writes still ran on the server. */
  sessionsLingering: number;
}

async function cacheCounters(client: SqlClient): Promise<CacheCounters> {
  const values = new Map<string, number>();
  for (const [name, value] of await client.rows("SHOW GLOBAL STATUS LIKE 'Qcache%'")) {
    values.set(name!.toLowerCase(), Number(value));
  }
  const get = (name: string): number => {
    const value = values.get(name);
    assert.ok(value !== undefined, `SHOW STATUS through the proxy reports ${name}`);
    return value;
  };
  return {
    hits: get('qcache_hits'),
    inserts: get('qcache_inserts'),
    notCached: get('qcache_not_cached'),
    staleFillsRefused: get('qcache_stale_fills_refused'),
    staleHitsRefused: get('qcache_stale_hits_refused'),
    invalidations: get('qcache_invalidations'),
    invalidationsAll: get('qcache_invalidations_all'),
    sessionsLingering: get('qcache_sessions_lingering'),
  };
}

function delta(after: CacheCounters, before: CacheCounters): CacheCounters {
  return {
    hits: after.hits - before.hits,
    inserts: after.inserts - before.inserts,
    notCached: after.notCached - before.notCached,
    staleFillsRefused: after.staleFillsRefused - before.staleFillsRefused,
    staleHitsRefused: after.staleHitsRefused - before.staleHitsRefused,
    invalidations: after.invalidations - before.invalidations,
    invalidationsAll: after.invalidationsAll - before.invalidationsAll,
    sessionsLingering: after.sessionsLingering,
  };
}

async function single(client: SqlClient, sql: string): Promise<string | null> {
  const rows = await client.rows(sql);
  assert.equal(rows.length, 1, `${sql}: one row`);
  return rows[0]![0]!;
}

function randomInt(bound: number): number {
  return Math.floor(Math.random() * bound);
}

/** A row for a write: most go to the hot rows. */
function writeRow(): number {
  return Math.random() < 0.7 ? 1 + randomInt(HOT) : 1 + HOT + randomInt(ROWS - HOT);
}

describe('query cache under concurrent writes (2 workers)', () => {
  let proxy: ProxyProcess;
  let admin: MysqlConnection;
  /** Through the proxy, for SHOW STATUS. */
  let statusClient: SqlClient;
  const viaProxy = (): ConnectionOptions => ({
    ...direct,
    host: proxy.host,
    port: proxy.port,
    database: S,
  });
  const counters = (): Promise<CacheCounters> => cacheCounters(statusClient);

  let nonce = 0;
  /** A SELECT of the workload table no other statement sends. */
  const uniqueSelect = (tag: string): string =>
    `SELECT v FROM t WHERE id = 1 AND '${tag}-${nonce}' = '${tag}-${nonce++}'`;
  /** How many hits the proxy counted while `run` ran (nothing else may run meanwhile). */
  const hitsDuring = async (run: () => Promise<unknown>): Promise<number> => {
    const before = (await counters()).hits;
    await run();
    return (await counters()).hits - before;
  };
  /** Waits until a worker's schema metadata is loaded: a repeated SELECT is then a hit. */
  const warmUp = async (client: SqlClient): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const sql = uniqueSelect('warm');
      await client.rows(sql);
      if ((await hitsDuring(() => client.rows(sql))) === 1) return;
      assert.ok(attempt < 100, 'a repeated SELECT becomes a hit once the metadata is loaded');
      await sleep(50);
    }
  };

  /**
   * Opens lean connections through the proxy and finds out which worker each one landed on
   * (SHOW STATUS tells, as Nicecache_worker). Returns `count` connections with at least
   * `least[w]` on worker w, opening more when the kernel put too few on one worker, and waits
   * until both workers' metadata is loaded. They are closed when the test ends.
   */
  async function openSpread(
    t: TestContext,
    count: number,
    least: [number, number],
  ): Promise<Placed[]> {
    // Each test starts from an empty cache, without what admission learnt from the tests before
    // (the workload test writes t all the time: its results would no longer be stored).
    await statusClient.rows('RESET QUERY CACHE');
    const placed: Placed[] = [];
    t.after(() => placed.forEach((entry) => entry.connection.close()));
    const warm = [false, false];
    const onWorker = (worker: number): number =>
      placed.filter((entry) => entry.worker === worker).length;
    while (placed.length < count || onWorker(0) < least[0] || onWorker(1) < least[1]) {
      assert.ok(placed.length < count + 40, 'the kernel puts connections on both workers');
      const connection = await MysqlConnection.connect(viaProxy());
      const client = textClient(connection);
      const [[, index]] = (await client.rows("SHOW STATUS LIKE 'Nicecache_worker'")) as [
        [string, string],
      ];
      const worker = index === '0' ? 0 : 1;
      placed.push({ connection, client, worker });
      if (!warm[worker]) {
        await warmUp(client);
        warm[worker] = true;
      }
    }
    const kept: Placed[] = [];
    for (const worker of [0, 1] as const) {
      kept.push(...placed.filter((entry) => entry.worker === worker).slice(0, least[worker]));
    }
    for (const entry of placed) if (kept.length < count && !kept.includes(entry)) kept.push(entry);
    return kept;
  }

  before(async () => {
    admin = await MysqlConnection.connect(direct);
    // A test that fails while a lock is held must not leave DROP DATABASE waiting for ever.
    await admin.queryRows('SET SESSION lock_wait_timeout = 30');
    await admin.queryRows(`CREATE DATABASE ${S}`);
    await admin.queryRows(
      `CREATE TABLE ${S}.t (id INT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB`,
    );
    await admin.queryRows(`INSERT INTO ${S}.t SELECT seq, 0 FROM seq_1_to_${ROWS}`);
    // Writes t through a stored function: what its body writes, the proxy marks.
    await admin.queryRows(
      `CREATE FUNCTION ${S}.bump(k INT) RETURNS INT MODIFIES SQL DATA
       BEGIN UPDATE t SET v = v + 1 WHERE id = k; RETURN k; END`,
    );
    await admin.queryRows(
      `CREATE TABLE ${S}.big (id INT PRIMARY KEY, x INT NOT NULL, pad CHAR(40) NOT NULL) ENGINE=InnoDB`,
    );
    await admin.queryRows(
      `INSERT INTO ${S}.big SELECT seq, seq % 7, REPEAT('p', 40) FROM seq_1_to_${BIG_ROWS}`,
    );
    await admin.queryRows(
      `CREATE TABLE ${S}.solo (id INT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB`,
    );
    await admin.queryRows(`INSERT INTO ${S}.solo VALUES (1, 0), (2, 0)`);
    // Row r of ROWS at (a, b) = pairOf(r): a key of two columns, (1, 2) and (2, 1) both there.
    await admin.queryRows(
      `CREATE TABLE ${S}.pairs (a INT, b INT, v BIGINT NOT NULL, PRIMARY KEY (a, b)) ENGINE=InnoDB`,
    );
    await admin.queryRows(
      `INSERT INTO ${S}.pairs SELECT 1 + (seq - 1) % 4, 1 + (seq - 1) DIV 4, 0 FROM seq_1_to_${ROWS}`,
    );
    // Row r of ROWS named `row-r`, a key of strings whose collation ignores letter case.
    await admin.queryRows(
      `CREATE TABLE ${S}.named (code VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB`,
    );
    await admin.queryRows(
      `INSERT INTO ${S}.named SELECT CONCAT('row-', seq), 0 FROM seq_1_to_${ROWS}`,
    );
    // Row r of ROWS keyed by 16 bytes, UNHEX(MD5(r)): a binary UUID's column.
    await admin.queryRows(
      `CREATE TABLE ${S}.uuids (id BINARY(16) PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB`,
    );
    await admin.queryRows(`INSERT INTO ${S}.uuids SELECT UNHEX(MD5(seq)), 0 FROM seq_1_to_${ROWS}`);
    proxy = await startProxyProcess({
      workers: 2,
      extraArgs: ['--admin-user', BACKEND_USER, '--admin-password', BACKEND_PASSWORD],
    });
    statusClient = textClient(await MysqlConnection.connect(viaProxy()));
  });

  after(async () => {
    // The proxy's warnings (a session closed on an error, say) help explain a failure.
    if (proxy !== undefined && /\bwarn\b/.test(proxy.log())) console.log(proxy.log());
    statusClient?.close();
    await admin?.queryRows(`DROP DATABASE IF EXISTS ${S}`);
    admin?.close();
    if (proxy !== undefined) assert.equal(await proxy.stop(), 0, proxy.log());
  });

  test('no stale read in over 100,000 operations of concurrent writers and readers', async (t) => {
    const TARGET_OPERATIONS = 100_000;
    /** About 15 s on two otherwise idle cores; the limit leaves room for a busy machine. */
    const TIME_LIMIT_MS = 90_000;
    /**
     * Writes come in bursts: every writer writes during the first WRITE_WINDOW_MS of each
     * CYCLE_MS and pauses for the rest. A write invalidates the whole table, so reads hit only
     * between bursts; during a burst nearly every read races some write.
     */
    const CYCLE_MS = 500;
    const WRITE_WINDOW_MS = 200;
    /** Mean pause of a writer between two writes of a burst. */
    const WRITE_PAUSE_MS = 4;

    // 12 connections of the lean client spread over both workers, 4 of the binary-reading one
    // (where those land is left to the kernel).
    const lean = await openSpread(t, 12, [5, 5]);
    const binary = await Promise.all(
      Array.from({ length: 4 }, () => BinaryClient.connect(viaProxy())),
    );
    t.after(() => binary.forEach((client) => client.close()));
    const workers = lean.map((entry) => entry.worker).join('');
    // Writers: three lean connections on each worker; readers: the rest, both workers too.
    const writers = [0, 1].flatMap((worker) =>
      lean.filter((entry) => entry.worker === worker).slice(0, 3),
    );
    const readers = lean.filter((entry) => !writers.includes(entry));
    // The first reader of each worker reads inside transactions.
    const snapshotReaders = [0, 1].map((worker) =>
      readers.find((entry) => entry.worker === worker)!,
    );

    // Every shape of read the workload sends is served from the cache when nothing is written.
    for (const sql of [
      'SELECT v FROM t WHERE id = 3',
      'SELECT SUM(v) FROM t',
      'SELECT id, v FROM t ORDER BY id',
    ]) {
      await readers[0]!.client.rows(sql);
      assert.equal(await hitsDuring(() => readers[0]!.client.rows(sql)), 1, sql);
    }
    for (const client of binary) {
      const byId = await client.prepare('SELECT v FROM t WHERE id = ?');
      const total = await client.prepare('SELECT SUM(v) FROM t');
      for (const [statement, params] of [
        [byId, [3]],
        [total, []],
      ] as const) {
        await client.execute(statement, [...params]);
        assert.equal(await hitsDuring(() => client.execute(statement, [...params])), 1);
      }
    }

    /**
     * Linearizability of counters that only grow. A read must return at least every increment
     * acknowledged before it was sent, and at least what any read that ended before it was sent
     * returned (a value some read saw was committed then); at most every increment sent before
     * its reply came.
     */
    const acked = new Array<number>(ROWS + 1).fill(0);
    const sent = new Array<number>(ROWS + 1).fill(0);
    const seen = new Array<number>(ROWS + 1).fill(0);
    let seenSum = 0;
    const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
    /** Lower bounds of a read about to be sent: per row, and of the sum. */
    const lowerBounds = (): { rows: number[]; total: number } => {
      const rows = acked.map((count, id) => Math.max(count, seen[id]!));
      return { rows, total: Math.max(sum(rows), seenSum) };
    };

    const tally = {
      reads: 0,
      writes: 0,
      functionWrites: 0,
      transactions: 0,
      snapshotTransactions: 0,
      snapshotConflicts: 0,
      stale: 0,
      impossible: 0,
      inconsistent: 0,
      writeErrors: 0,
    };
    const examples: string[] = [];
    const report = (kind: 'stale' | 'impossible' | 'inconsistent', message: string): void => {
      tally[kind]++;
      if (examples.length < 10) examples.push(`${kind}: ${message}`);
    };
    const started = Date.now();
    const running = (): boolean =>
      tally.reads + tally.writes < TARGET_OPERATIONS && Date.now() - started < TIME_LIMIT_MS;

    /**
     * Checks a value against its lower bound (taken before the read was sent) and its upper
     * bound (now, the reply being in), then raises what later reads must see.
     */
    const checkRow = (what: string, id: number, value: number, low: number): void => {
      if (value < low) report('stale', `${what} = ${value}, but ${low} was known before`);
      else if (value > sent[id]!) report('impossible', `${what} = ${value}, only ${sent[id]} sent`);
      seen[id] = Math.max(seen[id]!, value);
    };
    const checkSum = (what: string, value: number, low: number): void => {
      if (value < low) report('stale', `${what} = ${value}, but ${low} was known before`);
      else if (value > sum(sent))
        report('impossible', `${what} = ${value}, only ${sum(sent)} sent`);
      seenSum = Math.max(seenSum, value);
    };
    /** A whole-table read: every row, and their sum. */
    const checkList = (
      what: string,
      rows: Rows,
      low: { rows: number[]; total: number },
    ): number[] => {
      assert.equal(rows.length, ROWS);
      const values = new Array<number>(ROWS + 1).fill(0);
      for (const [id, value] of rows) {
        values[Number(id)] = Number(value);
        checkRow(`${what} row ${id}`, Number(id), Number(value), low.rows[Number(id)]!);
      }
      checkSum(`${what} sum`, sum(values), low.total);
      return values;
    };

    const writer = async (connection: MysqlConnection, index: number): Promise<void> => {
      const statement = await connection.prepare('UPDATE t SET v = v + 1 WHERE id = ?');
      const kind = index % 3;
      // The last transactional writer opens its transactions implicitly, with autocommit off.
      const implicit = kind === 2 && index === writers.length - 1;
      if (implicit) assert.equal((await connection.query('SET autocommit = 0')).error, null);
      while (running()) {
        const phase = (Date.now() - started) % CYCLE_MS;
        if (phase >= WRITE_WINDOW_MS) {
          await sleep(CYCLE_MS - phase + Math.random() * WRITE_PAUSE_MS);
          continue;
        }
        await sleep(Math.random() * 2 * WRITE_PAUSE_MS);
        if (kind === 2) {
          // Two rows in one transaction, locked in id order (no deadlock with the others).
          const a = writeRow();
          let b = writeRow();
          while (b === a) b = 1 + randomInt(ROWS);
          const [first, second] = a < b ? [a, b] : [b, a];
          sent[first]!++;
          sent[second]!++;
          const results = [
            ...(implicit ? [] : [await connection.query('BEGIN')]),
            await connection.query(`UPDATE t SET v = v + 1 WHERE id = ${first}`),
            await connection.query(`UPDATE t SET v = v + 1 WHERE id = ${second}`),
          ];
          tally.writes += 2;
          if (results.some((result) => result.error !== null)) {
            tally.writeErrors++;
            await connection.query('ROLLBACK');
            continue;
          }
          const commit = await connection.query('COMMIT');
          if (commit.error !== null) {
            tally.writeErrors++;
            continue;
          }
          acked[first]!++;
          acked[second]!++;
          tally.transactions++;
        } else {
          const id = writeRow();
          sent[id]!++;
          // Half the text writes call a stored function that writes the row; of the others,
          // half quote the id (the same row, as PHP's PDO sends it).
          const viaFunction = kind === 0 && Math.random() < 0.5;
          const key = Math.random() < 0.5 ? `${id}` : `'${id}'`;
          const result =
            kind === 0
              ? await connection.query(
                  viaFunction ? `SELECT bump(${id})` : `UPDATE t SET v = v + 1 WHERE id = ${key}`,
                )
              : await connection.execute(statement, [id]);
          tally.writes++;
          if (viaFunction) tally.functionWrites++;
          if (result.error !== null) {
            tally.writeErrors++;
            continue;
          }
          acked[id]!++;
        }
      }
    };

    /** One read of every kind the text protocol offers, checked. */
    const textRead = async (client: SqlClient): Promise<void> => {
      const dice = Math.random();
      const low = lowerBounds();
      if (dice < 0.7) {
        const id = 1 + randomInt(ROWS);
        const key = dice < 0.35 ? `${id}` : `'${id}'`;
        const value = Number(await single(client, `SELECT v FROM t WHERE id = ${key}`));
        checkRow(`text row ${id}`, id, value, low.rows[id]!);
      } else if (dice < 0.85) {
        checkSum('text SUM(v)', Number(await single(client, 'SELECT SUM(v) FROM t')), low.total);
      } else {
        checkList('listed', await client.rows('SELECT id, v FROM t ORDER BY id'), low);
      }
      tally.reads++;
    };

    const textReader = async (client: SqlClient): Promise<void> => {
      while (running()) await textRead(client);
    };

    /**
     * Reads inside REPEATABLE READ transactions: the first read pins InnoDB's snapshot, and
     * every later one, hit or not, must show that same snapshot. A transaction the proxy began
     * may instead end with ER_CHECKREAD, rolled back (see deferred-transaction.ts): what it
     * read until then must still be one snapshot.
     */
    const snapshotReader = async (client: SqlClient): Promise<void> => {
      await client.rows('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      while (running()) {
        try {
          await snapshotTransaction(client);
        } catch (error) {
          if (!(error instanceof ServerError) || error.errno !== ER_CHECKREAD) throw error;
          tally.snapshotConflicts++;
        }
      }
    };
    const snapshotTransaction = async (client: SqlClient): Promise<void> => {
      {
        await client.rows('BEGIN');
        const low = lowerBounds();
        const listed = await client.rows('SELECT id, v FROM t ORDER BY id');
        tally.reads++;
        // The first read takes the snapshot: it is as fresh as any read.
        const snapshot = checkList('snapshot', listed, low);
        for (let read = 0; read < 6 && running(); read++) {
          if (read === 5) {
            const total = Number(await single(client, 'SELECT SUM(v) FROM t'));
            if (total !== sum(snapshot)) {
              report(
                'inconsistent',
                `SUM(v) = ${total} in a snapshot whose rows sum to ${sum(snapshot)}`,
              );
            }
          } else {
            const id = 1 + randomInt(ROWS);
            const value = Number(await single(client, `SELECT v FROM t WHERE id = ${id}`));
            if (value !== snapshot[id]) {
              report(
                'inconsistent',
                `row ${id} = ${value} in a snapshot where it is ${snapshot[id]}`,
              );
            }
          }
          tally.reads++;
        }
        await client.rows('COMMIT');
        tally.snapshotTransactions++;
      }
    };

    const binaryReader = async (client: BinaryClient): Promise<void> => {
      const byId = await client.prepare('SELECT v FROM t WHERE id = ?');
      const total = await client.prepare('SELECT SUM(v) FROM t');
      while (running()) {
        const low = lowerBounds();
        if (Math.random() < 0.75) {
          const id = 1 + randomInt(ROWS);
          const rows = await client.execute(byId, [id]);
          assert.equal(rows.length, 1);
          checkRow(`binary row ${id}`, id, Number(rows[0]![0]), low.rows[id]!);
        } else {
          const rows = await client.execute(total, []);
          assert.equal(rows.length, 1);
          checkSum('binary SUM(v)', Number(rows[0]![0]), low.total);
        }
        tally.reads++;
      }
    };

    const before = await counters();
    await Promise.all([
      ...writers.map((entry, index) => writer(entry.connection, index)),
      ...readers.map((entry) =>
        snapshotReaders.includes(entry) ? snapshotReader(entry.client) : textReader(entry.client),
      ),
      ...binary.map((client) => binaryReader(client)),
    ]);
    const elapsedMs = Date.now() - started;
    const used = delta(await counters(), before);

    // The table as the server has it: every acknowledged increment, none beyond those sent.
    const final = await admin.queryRows(`SELECT id, v FROM ${S}.t ORDER BY id`);
    for (const [id, value] of final) {
      assert.ok(Number(value) >= acked[Number(id)]! && Number(value) <= sent[Number(id)]!);
    }

    const operations = tally.reads + tally.writes;
    console.log(
      `workload: ${operations} operations (${tally.reads} reads, ${tally.writes} UPDATEs ` +
        `(${tally.functionWrites} through a stored function), ` +
        `${tally.transactions} two-row transactions, ${tally.snapshotTransactions} snapshot ` +
        `transactions, ${tally.snapshotConflicts} ended by ER_CHECKREAD) in ${elapsedMs} ms over ${lean.length + binary.length} connections ` +
        `(lean ones on workers ${workers}); cache: ${used.hits} hits, ${used.inserts} inserts, ` +
        `${used.staleFillsRefused} stale fills refused, ${used.staleHitsRefused} stale hits ` +
        `refused; stale reads ${tally.stale}, impossible ${tally.impossible}, inconsistent ` +
        `snapshots ${tally.inconsistent}, write errors ${tally.writeErrors}`,
    );
    assert.deepEqual(examples, [], 'no read was stale, impossible or inconsistent');
    assert.equal(tally.stale, 0);
    assert.equal(tally.writeErrors, 0);
    assert.ok(operations >= TARGET_OPERATIONS, `${operations} operations in ${elapsedMs} ms`);
    assert.ok(
      used.hits > 0.2 * tally.reads,
      `the cache answered a good share of the reads: ${used.hits} hits for ${tally.reads} reads`,
    );
    assert.ok(used.staleFillsRefused + used.staleHitsRefused > 0, 'writes did race reads');
    // The function's writes were followed to t, not taken for writes of everything.
    assert.ok(tally.functionWrites > 0);
    assert.equal(used.invalidationsAll, 0, 'no write invalidated everything');
  });

  /** A workload of counters kept by row: how its writers write and its readers read a row. */
  interface RowCounters {
    /** Its name in the line the run logs. */
    name: string;
    /** A writer's way to add 1 to row `row` (its `turn`-th write, counted over all writers). */
    writer: (
      connection: MysqlConnection,
    ) => Promise<(row: number, turn: number) => Promise<CommandResult>>;
    /** A text SELECT of row `row`'s counter. */
    textRead: (row: number) => string;
    /**
     * Prepared SELECTs of a row's counter, and their parameters for row `row`: the two binary
     * readers take one each (the first, if there is one).
     */
    binaryReads: Array<{ sql: string; params: (row: number) => Param[] }>;
    /** Every row's counter, read directly at the end: [its key columns…, the counter]. */
    final: { sql: string; rowOf: (columns: Array<string | null>) => number };
  }

  /**
   * Four writers (two on each worker) add 1 to rows' counters by `workload`'s ways, while text
   * readers and two binary ones read them: a read returns at least every increment
   * acknowledged before it was sent, and at most every one sent before its reply came. Each
   * write takes its own row only, so the reads of the other rows keep being served.
   */
  async function noStaleRowCounters(t: TestContext, workload: RowCounters): Promise<void> {
    const TARGET_OPERATIONS = 30_000;
    const TIME_LIMIT_MS = 60_000;
    const lean = await openSpread(t, 8, [4, 4]);
    const binary = await Promise.all(
      Array.from({ length: 2 }, () => BinaryClient.connect(viaProxy())),
    );
    t.after(() => binary.forEach((client) => client.close()));
    const writers = [0, 1].flatMap((worker) =>
      lean.filter((entry) => entry.worker === worker).slice(0, 2),
    );
    const readers = lean.filter((entry) => !writers.includes(entry));
    const acked = new Array<number>(ROWS + 1).fill(0);
    const sent = new Array<number>(ROWS + 1).fill(0);
    const tally = { reads: 0, writes: 0, stale: 0, impossible: 0, writeErrors: 0 };
    const examples: string[] = [];
    const started = Date.now();
    const running = (): boolean =>
      tally.reads + tally.writes < TARGET_OPERATIONS && Date.now() - started < TIME_LIMIT_MS;
    const check = (what: string, row: number, value: number, low: number): void => {
      tally.reads++;
      const problem =
        value < low
          ? `stale: ${what} = ${value}, but ${low} was acknowledged before`
          : value > sent[row]!
            ? `impossible: ${what} = ${value}, only ${sent[row]} sent`
            : null;
      if (problem === null) return;
      tally[problem.startsWith('stale') ? 'stale' : 'impossible']++;
      if (examples.length < 10) examples.push(problem);
    };

    const writer = async (connection: MysqlConnection, index: number): Promise<void> => {
      const write = await workload.writer(connection);
      while (running()) {
        await sleep(Math.random() * 4);
        const row = writeRow();
        sent[row]!++;
        const result = await write(row, index + tally.writes);
        tally.writes++;
        if (result.error !== null) {
          tally.writeErrors++;
          continue;
        }
        acked[row]!++;
      }
    };
    const textReader = async (client: SqlClient): Promise<void> => {
      while (running()) {
        const row = 1 + randomInt(ROWS);
        const low = acked[row]!;
        const sql = workload.textRead(row);
        check(sql, row, Number(await single(client, sql)), low);
      }
    };
    const binaryReader = async (client: BinaryClient, index: number): Promise<void> => {
      const read = workload.binaryReads[index % workload.binaryReads.length]!;
      const byKey = await client.prepare(read.sql);
      while (running()) {
        const row = 1 + randomInt(ROWS);
        const low = acked[row]!;
        const params = read.params(row);
        const rows = await client.execute(byKey, params);
        assert.equal(rows.length, 1);
        check(`binary ${params.join(', ')}`, row, Number(rows[0]![0]), low);
      }
    };

    const before = await counters();
    await Promise.all([
      ...writers.map((entry, index) => writer(entry.connection, index)),
      ...readers.map((entry) => textReader(entry.client)),
      ...binary.map((client, index) => binaryReader(client, index)),
    ]);
    const used = delta(await counters(), before);
    for (const columns of await admin.queryRows(workload.final.sql)) {
      const row = workload.final.rowOf(columns);
      const value = Number(columns.at(-1));
      assert.ok(value >= acked[row]! && value <= sent[row]!, columns.join(', '));
    }
    console.log(
      `${workload.name}: ${tally.reads} reads, ${tally.writes} writes in ${Date.now() - started} ms; ` +
        `cache: ${used.hits} hits, ${used.inserts} inserts, ${used.staleFillsRefused} stale ` +
        `fills refused; stale reads ${tally.stale}, impossible ${tally.impossible}`,
    );
    assert.deepEqual(examples, [], 'no read was stale or impossible');
    assert.equal(tally.writeErrors, 0);
    assert.ok(tally.reads + tally.writes >= TARGET_OPERATIONS);
    assert.ok(used.hits > 0.3 * tally.reads, `${used.hits} hits for ${tally.reads} reads`);
    assert.ok(used.staleFillsRefused + used.staleHitsRefused > 0, 'writes did race reads');
    assert.equal(used.invalidationsAll, 0, 'no write invalidated everything');
  }

  test('no stale read of rows keyed by two columns, written by text, prepared and upserts', (t) => {
    const pairOf = (row: number): [number, number] => [1 + ((row - 1) % 4), 1 + ((row - 1) >> 2)];
    return noStaleRowCounters(t, {
      name: 'pairs',
      writer: async (connection) => {
        // Parameters in the other order than the key's; a literal beside a parameter.
        const reversed = await connection.prepare(
          'UPDATE pairs SET v = v + 1 WHERE b = ? AND a = ?',
        );
        const firstColumn = await connection.prepare(
          'UPDATE pairs SET v = v + 1 WHERE a = 1 AND b = ?',
        );
        return (row, turn) => {
          const [a, b] = pairOf(row);
          const kind = turn % 4;
          return kind === 0
            ? connection.query(`UPDATE pairs SET v = v + 1 WHERE a = ${a} AND b = ${b}`)
            : kind === 1
              ? connection.execute(reversed, [b, a])
              : kind === 2 && a === 1
                ? connection.execute(firstColumn, [b])
                : connection.query(
                    `INSERT INTO pairs (a, b, v) VALUES (${a}, ${b}, 1) ON DUPLICATE KEY UPDATE v = v + 1`,
                  );
        };
      },
      textRead: (row) => {
        const [a, b] = pairOf(row);
        return Math.random() < 0.5
          ? `SELECT v FROM pairs WHERE a = ${a} AND b = ${b}`
          : `SELECT v FROM pairs WHERE b = ${b} AND a = ${a}`;
      },
      binaryReads: [{ sql: 'SELECT v FROM pairs WHERE a = ? AND b = ?', params: pairOf }],
      final: {
        sql: `SELECT a, b, v FROM ${S}.pairs`,
        rowOf: ([a, b]) => Number(a) + 4 * (Number(b) - 1),
      },
    });
  });

  test('no stale read of rows keyed by strings, each spelt in any letter case, by text and prepared', (t) => {
    /** Row r's key in one of its spellings, every one the same row to the collation. */
    const spelling = (row: number): string =>
      ['row-', 'ROW-', 'Row-', 'rOw-'][randomInt(4)] + String(row);
    return noStaleRowCounters(t, {
      name: 'named',
      writer: async (connection) => {
        const prepared = await connection.prepare('UPDATE named SET v = v + 1 WHERE code = ?');
        return (row, turn) => {
          const code = spelling(row);
          const kind = turn % 3;
          return kind === 0
            ? connection.query(`UPDATE named SET v = v + 1 WHERE code = '${code}'`)
            : kind === 1
              ? connection.execute(prepared, [code])
              : connection.query(
                  `INSERT INTO named (code, v) VALUES ('${code}', 1) ON DUPLICATE KEY UPDATE v = v + 1`,
                );
        };
      },
      textRead: (row) => `SELECT v FROM named WHERE code = '${spelling(row)}'`,
      binaryReads: [
        { sql: 'SELECT v FROM named WHERE code = ?', params: (row) => [spelling(row)] },
        // One row by two spellings: an IN list whose values are counted as written.
        {
          sql: 'SELECT v FROM named WHERE code IN (?, ?)',
          params: (row) => [spelling(row), spelling(row)],
        },
      ],
      final: { sql: `SELECT code, v FROM ${S}.named`, rowOf: ([code]) => Number(code!.slice(4)) },
    });
  });

  test('no stale read of rows keyed by bytes, each spelt as any hex literal, by text and prepared', (t) => {
    /** Row r's key: its 16 bytes, and a text literal of them in one of its spellings. */
    const key = (row: number): Buffer => createHash('md5').update(String(row)).digest();
    const literal = (row: number): string => {
      const hex = key(row).toString('hex');
      return [`X'${hex}'`, `x'${hex.toUpperCase()}'`, `0x${hex}`][randomInt(3)]!;
    };
    const hexes = new Map<string, number>();
    for (let row = 1; row <= ROWS; row++) hexes.set(key(row).toString('hex'), row);
    return noStaleRowCounters(t, {
      name: 'uuids',
      writer: async (connection) => {
        const prepared = await connection.prepare('UPDATE uuids SET v = v + 1 WHERE id = ?');
        return (row, turn) => {
          const kind = turn % 3;
          return kind === 0
            ? connection.query(`UPDATE uuids SET v = v + 1 WHERE id = ${literal(row)}`)
            : kind === 1
              ? connection.execute(prepared, [key(row)])
              : connection.query(
                  `INSERT INTO uuids (id, v) VALUES (${literal(row)}, 1) ON DUPLICATE KEY UPDATE v = v + 1`,
                );
        };
      },
      textRead: (row) => `SELECT v FROM uuids WHERE id = ${literal(row)}`,
      binaryReads: [
        { sql: 'SELECT v FROM uuids WHERE id = ?', params: (row) => [key(row)] },
        { sql: 'SELECT v FROM uuids WHERE id IN (?, ?)', params: (row) => [key(row), key(row)] },
      ],
      final: {
        sql: `SELECT HEX(id), v FROM ${S}.uuids`,
        rowOf: ([hex]) => hexes.get(hex!.toLowerCase())!,
      },
    });
  });

  test('a SELECT that races a write is never stored; without a race it is', async (t) => {
    // A reader, a writer on its worker and a writer on the other one.
    const placed = await openSpread(t, 3, [2, 1]);
    const reader = placed.find((entry) => entry.worker === 0)!.client;
    const writerPairs = [0, 1].map((worker) => ({
      name: worker === 0 ? 'writer on the same worker' : 'writer on the other worker',
      writer: placed.find((entry) => entry.worker === worker && entry.client !== reader)!
        .connection,
    }));
    const server = (): Promise<string | null> =>
      single(textClient(admin), `SELECT SUM(x) FROM ${S}.big`);
    const write = async (writer: MysqlConnection, sql: string): Promise<void> => {
      const result = await writer.query(sql);
      assert.equal(result.error, null, sql);
    };
    const slowSelectRuns = async (): Promise<void> => {
      for (let tries = 0; ; tries++) {
        assert.ok(tries < 500, 'the slow SELECT reaches the server');
        const [row] = await admin.queryRows(
          "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SUM(x) FROM big WHERE SHA2%'",
        );
        if (Number(row?.[0]) > 0) return;
        await sleep(1);
      }
    };
    /** Any result of the slow SELECT stored so far is stale after this. */
    const invalidate = (writer: MysqlConnection): Promise<void> =>
      write(writer, 'UPDATE big SET x = x + 1 WHERE id = 2');
    /** Reads through the proxy; returns the value, the counters' change, and the time taken. */
    const read = async (): Promise<{ value: string | null; used: CacheCounters; ms: number }> => {
      const before = await counters();
      const started = performance.now();
      const value = await single(reader, SLOW_SELECT);
      const ms = performance.now() - started;
      return { value, used: delta(await counters(), before), ms };
    };

    // Without a racing write: stored, then served from the cache, much faster than the scan.
    await invalidate(writerPairs[0]!.writer);
    const miss = await read();
    assert.equal(miss.value, await server());
    assert.equal(miss.used.hits, 0);
    assert.equal(miss.used.inserts, 1, 'the slow SELECT is stored');
    const hit = await read();
    assert.equal(hit.used.hits, 1, 'and hit the second time');
    assert.equal(hit.value, miss.value);
    assert.ok(hit.ms < miss.ms / 2, `a hit (${hit.ms} ms) skips the scan (${miss.ms} ms)`);

    for (const { name, writer } of writerPairs) {
      // The UPDATE's OK comes while the SELECT still scans: the SELECT's snapshot is older than
      // the UPDATE, so its result is stale by the time it arrives.
      let raced = 0;
      for (let attempt = 0; raced < 3; attempt++) {
        assert.ok(attempt < 8, `${name}: the race happens (${raced} of ${attempt})`);
        await invalidate(writer);
        const old = await server();
        const before = await counters();
        let selectDone = false;
        const select = single(reader, SLOW_SELECT).finally(() => (selectDone = true));
        // Sent once the server runs the SELECT, not after a guess of when it starts.
        await slowSelectRuns();
        await write(writer, 'UPDATE big SET x = x + 1 WHERE id = 1');
        const updateFirst = !selectDone;
        const racing = await select;
        const used = delta(await counters(), before);
        assert.equal(used.hits, 0, `${name}: the racing SELECT was a miss`);
        // Stored only when it ended before the UPDATE was sent; refused otherwise.
        assert.equal(used.inserts + used.staleFillsRefused, 1, `${name}: ${JSON.stringify(used)}`);
        // The UPDATE's OK came first, yet the SELECT read the old rows: its result was stale
        // before it ended, and must not have been stored.
        if (updateFirst && racing === old) {
          assert.equal(used.staleFillsRefused, 1, `${name}: the stale result was refused`);
        }
        // A race the proxy saw: the UPDATE was in flight when the result ended (its OK may
        // still reach the client after the SELECT's reply).
        if (used.staleFillsRefused === 1) raced++;

        const truth = await server();
        assert.notEqual(truth, old);
        const next = await read();
        assert.equal(next.value, truth, `${name}: the read after the UPDATE's OK is fresh`);
        assert.equal(next.used.hits, 0, `${name}: no racing result was stored to be hit`);
        const again = await read();
        assert.equal(again.value, truth);
        assert.equal(again.used.hits, 1, `${name}: the fresh result is stored and hit`);
      }

      // The UPDATE's OK comes after the SELECT's reply: it waits for a row lock a direct
      // connection holds, so it is in flight while the SELECT runs and ends, and still when the
      // same SELECT is sent again; only then is the lock released. The SELECT is sent once the
      // server shows the UPDATE waiting for the lock, not after a guess of how long the scan
      // takes: the proxy put the UPDATE's marks up before it reached the server.
      const locker = await MysqlConnection.connect(direct);
      t.after(() => locker.close());
      const updateWaits = async (): Promise<void> => {
        for (let tries = 0; ; tries++) {
          assert.ok(tries < 500, `${name}: the UPDATE reaches the server and waits`);
          const [row] = await admin.queryRows(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'UPDATE big SET x = x + 1 WHERE id = 1%' AND STATE <> ''",
          );
          if (Number(row?.[0]) > 0) return;
          await sleep(10);
        }
      };
      for (let round = 0; round < 2; round++) {
        await invalidate(writer);
        const old = await server();
        await locker.queryRows('BEGIN');
        await locker.queryRows(`SELECT x FROM ${S}.big WHERE id = 1 FOR UPDATE`);
        const before = await counters();
        let updateDone = false;
        const update = write(writer, 'UPDATE big SET x = x + 1 WHERE id = 1').finally(
          () => (updateDone = true),
        );
        await updateWaits();
        const racing = await single(reader, SLOW_SELECT);
        const during = await single(reader, SLOW_SELECT);
        assert.ok(!updateDone, `${name}: the UPDATE waits for the lock`);
        assert.equal(racing, old);
        assert.equal(during, old);
        const used = delta(await counters(), before);
        assert.equal(used.hits, 0, `${name}: neither SELECT was a hit`);
        assert.equal(used.inserts, 0, `${name}: neither result was stored`);
        assert.equal(used.staleFillsRefused, 2, `${name}: both fills were refused`);
        await locker.queryRows('COMMIT');
        await update;

        const truth = await server();
        assert.notEqual(truth, old);
        const next = await read();
        assert.equal(next.value, truth, `${name}: the read after the UPDATE's OK is fresh`);
        assert.equal(next.used.hits, 0);
        const again = await read();
        assert.equal(again.value, truth);
        assert.equal(again.used.hits, 1);
      }
      locker.close();
    }
  });

  test('a result stored through one worker is a hit through the other (one store for all)', async (t) => {
    const placed = await openSpread(t, 2, [1, 1]);
    const first = placed.find((entry) => entry.worker === 0)!;
    const second = placed.find((entry) => entry.worker === 1)!;
    for (const [filler, reader] of [
      [first, second],
      [second, first],
    ] as const) {
      const sql = uniqueSelect(`shared ${filler.worker}`);
      const filled = await filler.client.rows(sql);
      let rows: Rows = [];
      assert.equal(
        await hitsDuring(async () => (rows = await reader.client.rows(sql))),
        1,
        `stored through worker ${filler.worker}, read through worker ${reader.worker}`,
      );
      assert.deepEqual(rows, filled);
    }
  });

  test('a writer that leaves while its UPDATE runs: its marks stay until the server answers', async (t) => {
    const placed = await openSpread(t, 2, [1, 1]);
    const readers = placed.map((entry) => entry.client);
    const server = textClient(admin);
    const proxyRead = (client: SqlClient, id: number): Promise<string | null> =>
      single(client, `SELECT v FROM solo WHERE id = ${id}`);

    for (const leave of ['destroys its socket', 'sends COM_QUIT'] as const) {
      const old = await single(server, `SELECT v FROM ${S}.solo WHERE id = 1`);
      // Both workers hold the current value.
      for (const client of readers) {
        assert.equal(await proxyRead(client, 1), old);
        assert.equal(await hitsDuring(() => proxyRead(client, 1)), 1);
      }
      const ghost = await MysqlConnection.connect(viaProxy());
      const update = ghost
        .query('UPDATE solo SET v = v + 1 WHERE id = 1 AND SLEEP(0.3) = 0')
        .catch(() => null);
      await sleep(50);
      if (leave === 'destroys its socket') ghost.destroy();
      else ghost.close();
      await update;

      // Readers keep reading while the UPDATE runs and after it committed; once the server
      // shows the new value, no read sent through the proxy may show the old one.
      let committedAt = -1;
      const stale: string[] = [];
      const deadline = performance.now() + 800;
      while (performance.now() < deadline) {
        const now = await single(server, `SELECT v FROM ${S}.solo WHERE id = 1`);
        if (now !== old && committedAt < 0) committedAt = performance.now();
        const seen = await Promise.all(readers.map((client) => proxyRead(client, 1)));
        if (committedAt >= 0 && seen.some((value) => value === old)) {
          stale.push(
            `${Math.round(performance.now() - committedAt)} ms after the commit: ${seen.join(', ')}`,
          );
        }
        await sleep(10);
      }
      assert.ok(committedAt >= 0, `${leave}: the UPDATE committed on the server`);
      assert.deepEqual(stale, [], `${leave}: no proxy read showed the old value after the commit`);
      const truth = await single(server, `SELECT v FROM ${S}.solo WHERE id = 1`);
      assert.equal(truth, String(Number(old) + 1));
      for (const client of readers) {
        assert.equal(await proxyRead(client, 1), truth);
        const hits = await hitsDuring(async () => assert.equal(await proxyRead(client, 1), truth));
        assert.equal(hits, 1, `${leave}: the cache serves the new value again`);
      }
    }
  });

  test('a writer that leaves while its UPDATE waits long for a lock keeps its table in flight', async (t) => {
    // The UPDATE waits on a row lock held by a direct connection; its client leaves. After the
    // lock is released the UPDATE commits on the server, however long the proxy waited.
    const placed = await openSpread(t, 2, [1, 1]);
    const readers = placed.map((entry) => entry.client);
    const server = textClient(admin);
    const proxyRead = (client: SqlClient): Promise<string | null> =>
      single(client, 'SELECT v FROM solo WHERE id = 2');
    const old = await single(server, `SELECT v FROM ${S}.solo WHERE id = 2`);

    const locker = await MysqlConnection.connect(direct);
    t.after(() => locker.close());
    await locker.queryRows('BEGIN');
    await locker.queryRows(`SELECT v FROM ${S}.solo WHERE id = 2 FOR UPDATE`);
    const ghost = await MysqlConnection.connect(viaProxy());
    assert.equal((await ghost.query('SET SESSION innodb_lock_wait_timeout = 60')).error, null);
    const update = ghost.query('UPDATE solo SET v = v + 1 WHERE id = 2').catch(() => null);
    await sleep(100);
    ghost.destroy();
    await update;

    // Longer than any bound a proxy might put on waiting for the abandoned write (nicecache has
    // none: it holds the marks while the backend connection is open), shorter than
    // innodb_lock_wait_timeout.
    const waitMs = 11_000;
    const until = performance.now() + waitMs;
    while (performance.now() < until) {
      // The UPDATE has not committed: the old value is right, from the server or the cache.
      for (const client of readers) assert.equal(await proxyRead(client), old);
      await sleep(250);
    }
    assert.equal(
      (await counters()).sessionsLingering,
      1,
      'the session whose client left is counted while its UPDATE waits on the server',
    );
    await locker.queryRows('COMMIT');
    locker.close();

    const expected = String(Number(old) + 1);
    let truth = old;
    for (let attempt = 0; attempt < 100 && truth !== expected; attempt++) {
      await sleep(20);
      truth = await single(server, `SELECT v FROM ${S}.solo WHERE id = 2`);
    }
    assert.equal(truth, expected, 'the abandoned UPDATE committed once the lock was free');
    let lingering = 1;
    for (let attempt = 0; attempt < 100 && lingering !== 0; attempt++) {
      lingering = (await counters()).sessionsLingering;
      if (lingering !== 0) await sleep(20);
    }
    assert.equal(lingering, 0, 'the session is released once the server has answered its UPDATE');
    for (const [index, client] of readers.entries()) {
      assert.equal(
        await proxyRead(client),
        truth,
        `worker ${placed[index]!.worker}: the proxy shows what the server has, not a result ` +
          'stored after the proxy stopped waiting for the abandoned UPDATE',
      );
    }
  });

  test('a write whose backend connection dies mid-statement leaves its table cacheable', async (t) => {
    // The server ends the UPDATE's connection (KILL, a restart): nothing is in flight any more,
    // so the write's marks must go, or the table is never served from the cache again.
    const placed = await openSpread(t, 2, [1, 1]);
    const server = textClient(admin);
    const proxyRead = (client: SqlClient): Promise<string | null> =>
      single(client, 'SELECT v FROM solo WHERE id = 1');
    for (const { client } of placed) {
      await proxyRead(client);
      assert.equal(await hitsDuring(() => proxyRead(client)), 1, 'cached before');
    }

    const victim = await MysqlConnection.connect(viaProxy());
    t.after(() => victim.close());
    const [[threadId]] = (await victim.queryRows('SELECT CONNECTION_ID()')) as [[string]];
    const update = victim.query('UPDATE solo SET v = v + 1 WHERE id = 1 AND SLEEP(1) = 0').then(
      () => 'answered',
      () => 'connection lost',
    );
    await sleep(200);
    await admin.queryRows(`KILL CONNECTION ${threadId}`);
    assert.equal(await update, 'connection lost');

    const truth = await single(server, `SELECT v FROM ${S}.solo WHERE id = 1`);
    for (const { client, worker } of placed) {
      assert.equal(await proxyRead(client), truth, `worker ${worker}: fresh after the kill`);
      let hit = false;
      const deadline = performance.now() + 3000;
      while (!hit && performance.now() < deadline) {
        await proxyRead(client);
        hit = (await hitsDuring(() => proxyRead(client))) === 1;
        if (!hit) await sleep(100);
      }
      assert.ok(hit, `worker ${worker}: solo is served from the cache again within 3 s`);
    }
  });
});
