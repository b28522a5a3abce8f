/**
 * Differential scenarios for the query cache: a script runs once directly against the server and
 * once through the proxy, each side starting from the same freshly built tables, and every reply
 * it records must be byte-identical. Through the proxy the script also checks the cache's
 * counters (SHOW GLOBAL STATUS LIKE 'Qcache%', proxy-wide totals), so that a proxy which never
 * cached anything would fail too.
 *
 * The proxy is started with NICECACHE_DEBUG=1: its "client connected from host:port" lines tell
 * which worker each connection landed on, so a scenario can put its sessions on the same worker
 * (one store) or on different ones (invalidation across workers).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';
import { execute, prepare, statementCommand } from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import { BYPASS_NAMES } from '../../src/cache/cache-stats.ts';
import { readTextRows } from '../../src/protocol/text-rows.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from './env.ts';
import { startProxyProcess } from './proxy-process.ts';
import type { ProxyProcess } from './proxy-process.ts';
import { RawClient, replyBytes, replyError } from './raw-client.ts';
import type { RawPacket } from './raw-client.ts';

/** Where the catalog warm-up reads: a database no scenario drops. */
export const WARM_DB = 'nc_qcache_warm';

/** What creates the warm-up table when it is not there yet; idempotent. */
export const WARM_TABLE_STATEMENTS: readonly string[] = [
  `CREATE DATABASE IF NOT EXISTS ${WARM_DB}`,
  `CREATE TABLE IF NOT EXISTS ${WARM_DB}.w (id INT PRIMARY KEY) ENGINE=InnoDB`,
  `INSERT IGNORE INTO ${WARM_DB}.w VALUES (1)`,
];

/** The reasons SHOW STATUS reports as Qcache_bypass_<reason>. */
export const BYPASS_REASONS = BYPASS_NAMES;

/** The proxy's Qcache_* counters, without the prefix, lower case. */
export type CounterName =
  | 'hits'
  | 'inserts'
  | 'not_cached'
  | 'invalidations'
  | 'invalidations_all'
  | 'too_large'
  | 'stale_fills_refused'
  | 'stale_hits_refused'
  | 'queries_in_cache'
  | 'lowmem_prunes'
  | 'admission_declined'
  | 'admission_unseen'
  | 'transactions_deferred'
  | 'transactions_in_proxy'
  | 'transaction_conflicts'
  | 'commits_deferred'
  | `bypass_${(typeof BYPASS_REASONS)[number]}`;

export type Deltas = Partial<Record<CounterName, number>>;

const LOGIN = { user: BACKEND_USER, password: BACKEND_PASSWORD };

export function queryPacket(sql: string): Buffer {
  return Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'utf8')]);
}

/** The text rows of a reply (first result set). */
export function rowsOf(packets: RawPacket[], deprecateEof: boolean): Array<Array<string | null>> {
  return readTextRows(
    packets.map((packet) => packet.payload),
    deprecateEof,
  );
}

/** A connection straight to the server (no proxy), as the tests' account, no schema. */
export function connectDirect(): Promise<RawClient> {
  return RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...LOGIN, database: null });
}

/** Runs statements on a fresh connection, each of which must succeed. */
export async function runStatements(
  host: string,
  port: number,
  statements: readonly string[],
  login: { user: string; password: string } = LOGIN,
): Promise<void> {
  const client = await RawClient.connect({ host, port, ...login, database: null });
  try {
    for (const statement of statements) {
      const reply = await client.query(statement);
      const error = replyError(reply);
      assert.equal(error, null, `${statement}: ${error?.errno} ${error?.message}`);
    }
  } finally {
    client.close();
  }
}

/**
 * Runs `body` with the server's global query_cache_type and query_cache_size set so, and puts
 * the server's own settings back afterwards. With the type ON and the size 0 the server's cache
 * stays off while sessions may choose OFF, ON or DEMAND; with the type OFF the server refuses a
 * session anything but OFF (error 1925).
 */
export async function withServerQueryCache(
  settings: { type: 'OFF' | 'ON' | 'DEMAND'; size: number },
  body: () => Promise<void>,
): Promise<void> {
  const admin = await connectDirect();
  try {
    const [row] = rowsOf(
      await admin.query('SELECT @@global.query_cache_type, @@global.query_cache_size'),
      admin.deprecateEof,
    );
    const run = async (sql: string): Promise<void> => {
      const error = replyError(await admin.query(sql));
      assert.equal(error, null, `${sql}: ${error?.message}`);
    };
    await run(`SET GLOBAL query_cache_size = ${settings.size}`);
    await run(`SET GLOBAL query_cache_type = ${settings.type}`);
    try {
      await body();
    } finally {
      await run(`SET GLOBAL query_cache_type = ${row![0]}`);
      await run(`SET GLOBAL query_cache_size = ${row![1]}`);
    }
  } finally {
    admin.close();
  }
}

/** A proxy child process with what scenarios need of it: placement, counters, catalog warm-up. */
export class ProxyHarness {
  readonly process: ProxyProcess;
  /** One connection per worker, for the catalog warm-up. */
  readonly #warm: RawClient[];
  readonly #stats: RawClient;

  private constructor(process: ProxyProcess, warm: RawClient[], stats: RawClient) {
    this.process = process;
    this.#warm = warm;
    this.#stats = stats;
  }

  static async start(
    extraArgs: string[] = [],
    options: { env?: NodeJS.ProcessEnv; stdin?: boolean } = {},
  ): Promise<ProxyHarness> {
    const process = await startProxyProcess({
      workers: 2,
      extraArgs: ['--admin-user', BACKEND_USER, '--admin-password', BACKEND_PASSWORD, ...extraArgs],
      env: { NICECACHE_DEBUG: '1', ...options.env },
      stdin: options.stdin ?? false,
    });
    try {
      const warm = [
        await connectOnWorker(process, 0, { ...LOGIN, database: null }),
        await connectOnWorker(process, 1, { ...LOGIN, database: null }),
      ];
      const stats = await RawClient.connect({
        host: process.host,
        port: process.port,
        ...LOGIN,
        database: null,
      });
      const harness = new ProxyHarness(process, warm, stats);
      await harness.settle();
      return harness;
    } catch (error) {
      await process.stop();
      throw error;
    }
  }

  get host(): string {
    return this.process.host;
  }

  get port(): number {
    return this.process.port;
  }

  connect(worker: number | undefined, options: ConnectOptions): Promise<RawClient> {
    return connectOnWorker(this.process, worker, options);
  }

  /** Every Qcache_* counter, proxy-wide. */
  async counters(): Promise<Map<string, number>> {
    const reply = await this.#stats.query("SHOW GLOBAL STATUS LIKE 'Qcache%'");
    const error = replyError(reply);
    assert.equal(error, null, `SHOW GLOBAL STATUS through the proxy: ${error?.message}`);
    const counters = new Map<string, number>();
    for (const [name, value] of rowsOf(reply, this.#stats.deprecateEof)) {
      counters.set(name!.replace(/^Qcache_/i, '').toLowerCase(), Number(value));
    }
    return counters;
  }

  /**
   * Waits until both workers trust their schema catalog again (after DDL it reloads in the
   * background; until then reads bypass as unknown_table and writes invalidate everything).
   */
  async settle(): Promise<void> {
    const deadline = Date.now() + 5000;
    for (;;) {
      let settled = true;
      for (const client of this.#warm) {
        const before = (await this.counters()).get('bypass_unknown_table');
        const reply = await client.query(`SELECT COUNT(*) FROM ${WARM_DB}.w`);
        assert.equal(replyError(reply), null, 'warm-up read');
        if ((await this.counters()).get('bypass_unknown_table') !== before) settled = false;
      }
      if (settled) return;
      if (Date.now() > deadline) throw new Error('the schema catalog did not load within 5 s');
      await sleep(10);
    }
  }

  async stop(): Promise<number | null> {
    for (const client of this.#warm) client.close();
    this.#stats.close();
    return this.process.stop();
  }
}

export interface ConnectOptions {
  user: string;
  password: string;
  database: string | null;
  deprecateEof?: boolean;
}

/**
 * The worker a proxy connection landed on, from the proxy's debug log written since `logFrom`
 * (local ports are reused, so older lines may name the same port).
 */
async function workerOf(
  process: ProxyProcess,
  client: RawClient,
  logFrom: number,
): Promise<number> {
  const pattern = new RegExp(
    `\\[worker (\\d+)\\] client connected from [^\\s]*:${client.socket.localPort}\\s*$`,
    'm',
  );
  const deadline = Date.now() + 5000;
  for (;;) {
    const match = pattern.exec(process.log().slice(logFrom));
    if (match !== null) return Number(match[1]);
    if (Date.now() > deadline) throw new Error('the proxy did not log the connection');
    await sleep(1);
  }
}

/** Connects through the proxy until the connection lands on `worker` (any when undefined). */
export async function connectOnWorker(
  process: ProxyProcess,
  worker: number | undefined,
  options: ConnectOptions,
): Promise<RawClient> {
  const others: RawClient[] = [];
  try {
    for (let attempt = 0; attempt < 64; attempt++) {
      const logFrom = process.log().length;
      const client = await RawClient.connect({
        host: process.host,
        port: process.port,
        ...options,
      });
      if (worker === undefined || (await workerOf(process, client, logFrom)) === worker)
        return client;
      others.push(client);
    }
    throw new Error(`no connection landed on worker ${worker} in 64 attempts`);
  } finally {
    for (const client of others) client.close();
  }
}

/** A labelled reply, as it came off the wire. */
interface Entry {
  step: string;
  bytes: Buffer;
}

export interface SessionOptions {
  /** Through the proxy: the worker the connection must land on. */
  worker?: number;
  user?: string;
  password?: string;
  /** Default: the scenario's database. */
  database?: string | null;
  deprecateEof?: boolean;
}

/** One side's run of a scenario: the server's or the proxy's. */
export class Run {
  readonly side: 'server' | 'proxy';
  readonly proxy: ProxyHarness | null;
  readonly database: string;
  readonly transcript: Entry[] = [];
  /** Failed counter expectations and checks, reported after the transcripts are compared. */
  readonly problems: string[] = [];
  readonly #sessions: Session[] = [];
  #last: Map<string, number> | null = null;

  constructor(proxy: ProxyHarness | null, database: string) {
    this.side = proxy === null ? 'server' : 'proxy';
    this.proxy = proxy;
    this.database = database;
  }

  get isProxy(): boolean {
    return this.proxy !== null;
  }

  get host(): string {
    return this.proxy?.host ?? BACKEND_HOST;
  }

  get port(): number {
    return this.proxy?.port ?? BACKEND_PORT;
  }

  async session(name: string, options: SessionOptions = {}): Promise<Session> {
    const connect: ConnectOptions = {
      user: options.user ?? BACKEND_USER,
      password: options.password ?? (options.user === undefined ? BACKEND_PASSWORD : ''),
      database: options.database === undefined ? this.database : options.database,
      deprecateEof: options.deprecateEof ?? false,
    };
    const client =
      this.proxy === null
        ? await RawClient.connect({ host: BACKEND_HOST, port: BACKEND_PORT, ...connect })
        : await this.proxy.connect(options.worker, connect);
    const session = new Session(this, name, client);
    this.#sessions.push(session);
    return session;
  }

  /** Statements on a connection of their own, unrecorded; each must succeed. */
  admin(statements: readonly string[]): Promise<void> {
    return runStatements(this.host, this.port, statements);
  }

  /** Starts counting from here (the scenario's start, after a settle). */
  async baseline(): Promise<void> {
    if (this.proxy !== null) this.#last = await this.proxy.counters();
  }

  /**
   * Through the proxy: each named counter moved by exactly this much since the last expect (or
   * baseline). Directly: nothing.
   */
  async expect(deltas: Deltas, label: string): Promise<void> {
    if (this.proxy === null) return;
    const now = await this.proxy.counters();
    const last = this.#last ?? now;
    this.#last = now;
    const wrong: string[] = [];
    for (const [name, expected] of Object.entries(deltas)) {
      const actual = (now.get(name) ?? NaN) - (last.get(name) ?? NaN);
      if (actual !== expected)
        wrong.push(`${name} ${signed(actual)} (expected ${signed(expected)})`);
    }
    if (wrong.length > 0) {
      const moved = [...now]
        .filter(([name, value]) => value !== last.get(name) && name !== 'used_memory')
        .map(([name, value]) => `${name} ${signed(value - (last.get(name) ?? 0))}`);
      this.problems.push(
        `counters after "${label}": ${wrong.join(', ')}; all that moved: ${moved.join(', ') || 'nothing'}`,
      );
    }
  }

  /** Through the proxy: a gauge's value now. */
  async expectValue(name: CounterName, expected: number, label: string): Promise<void> {
    if (this.proxy === null) return;
    const now = await this.proxy.counters();
    this.#last = now;
    if (now.get(name) !== expected)
      this.problems.push(`${label}: Qcache_${name} is ${now.get(name)}, expected ${expected}`);
  }

  /** A check that is not a byte comparison; failures are reported with the side. */
  check(condition: boolean, message: string): void {
    if (!condition) this.problems.push(`${this.side}: ${message}`);
  }

  /** After DDL: wait for the catalog on both workers, then count from here. */
  async settle(): Promise<void> {
    if (this.proxy === null) return;
    await this.proxy.settle();
    await this.baseline();
  }

  close(): void {
    for (const session of this.#sessions) session.client.close();
  }
}

function signed(value: number): string {
  return value >= 0 ? `+${value}` : String(value);
}

/** One connection of a scenario, recording its replies into the run's transcript. */
export class Session {
  readonly run: Run;
  readonly name: string;
  readonly client: RawClient;
  readonly #prepared = new Map<string, number>();

  constructor(run: Run, name: string, client: RawClient) {
    this.run = run;
    this.name = name;
    this.client = client;
  }

  /**
   * Keeps a reply, then checks with a COM_PING that the reply ended where it should. Directly,
   * the reply must fail exactly when `expectedErrno` says (so the script is right); through the
   * proxy, the byte comparison is the judge.
   */
  async record(
    step: string,
    packets: RawPacket[],
    expectedErrno?: number,
    ping = true,
  ): Promise<RawPacket[]> {
    const label = `${this.name}: ${step}`;
    if (!this.run.isProxy) {
      assert.equal(
        replyError(packets)?.errno,
        expectedErrno,
        `${label}: ${replyError(packets)?.message ?? 'no error'}`,
      );
    }
    this.run.transcript.push({ step: label, bytes: replyBytes(packets) });
    if (!ping) return packets;
    const pong = await this.client.command(Buffer.from([Command.PING]));
    assert.equal(pong.length, 1, `after ${label}: ping reply is one packet`);
    assert.equal(pong[0]!.payload[0], PacketHeader.OK, `after ${label}: ping reply is OK`);
    return packets;
  }

  async query(sql: string, expectedErrno?: number): Promise<RawPacket[]> {
    return this.record(sql, await this.client.query(sql), expectedErrno);
  }

  /**
   * A query whose reply is recorded without the COM_PING check after it: for a statement whose
   * diagnostics the next one reads (COM_PING sets ROW_COUNT() to 0). The next reply's check
   * still catches a reply that ended in the wrong place.
   */
  async queryThenDiagnostics(sql: string): Promise<RawPacket[]> {
    return this.record(sql, await this.client.query(sql), undefined, false);
  }

  async command(step: string, payload: Buffer, expectedErrno?: number): Promise<RawPacket[]> {
    return this.record(step, await this.client.command(payload), expectedErrno);
  }

  /** LOAD DATA LOCAL INFILE with these file contents. */
  async load(sql: string, contents: string): Promise<RawPacket[]> {
    return this.record(
      sql,
      await this.client.command(queryPacket(sql), () => Buffer.from(contents)),
    );
  }

  /** COM_STMT_PREPARE, recorded with the statement id masked; the id, or -1 after an error. */
  async prepare(sql: string, expectedErrno?: number): Promise<number> {
    const packets = await this.client.command(prepare(sql));
    const [first, ...rest] = packets;
    if (first!.payload[0] !== PacketHeader.OK) {
      await this.record(`prepare ${sql}`, packets, expectedErrno);
      return -1;
    }
    const id = first!.payload.readUInt32LE(1);
    // Statement ids come from a counter the server does not reset for each connection.
    const masked = Buffer.from(first!.payload);
    masked.writeUInt32LE(0, 1);
    await this.record(
      `prepare ${sql}`,
      [{ sequenceId: first!.sequenceId, payload: masked }, ...rest],
      expectedErrno,
    );
    this.#prepared.set(sql, id);
    return id;
  }

  /** Executes `sql` (prepared on first use in this session) with these parameters. */
  async execute(sql: string, params: Param[] = [], expectedErrno?: number): Promise<RawPacket[]> {
    const id = this.#prepared.get(sql) ?? (await this.prepare(sql));
    return this.record(
      `execute ${sql} [${params.map(String).join(', ')}]`,
      await this.client.command(execute(id, params)),
      expectedErrno,
    );
  }

  /**
   * execute() without the COM_PING check after it: for a step inside a transaction the proxy
   * began (a ping's reply carries the transaction's flags, so the proxy starts it for one).
   */
  async executeThenDiagnostics(sql: string, params: Param[] = []): Promise<RawPacket[]> {
    const id = this.#prepared.get(sql) ?? (await this.prepare(sql));
    return this.record(
      `execute ${sql} [${params.map(String).join(', ')}]`,
      await this.client.command(execute(id, params)),
      undefined,
      false,
    );
  }

  /** The id of a statement prepared by execute() or prepare(). */
  statementId(sql: string): number {
    const id = this.#prepared.get(sql);
    assert.ok(id !== undefined, `${sql} was not prepared`);
    return id;
  }

  /** Closes a statement prepared by execute(). */
  closeStatement(sql: string): void {
    const id = this.#prepared.get(sql);
    if (id === undefined) return;
    this.#prepared.delete(sql);
    this.client.sendOnly(statementCommand(Command.STMT_CLOSE, id));
  }

  /**
   * Sends every command at once, before reading any reply (pipelining), then records each reply
   * in order; the COM_PING check follows the last.
   */
  async pipeline(steps: ReadonlyArray<readonly [string, Buffer]>): Promise<void> {
    this.client.socket.write(Buffer.concat(steps.map(([, payload]) => encodePacket(payload, 0))));
    const replies: RawPacket[][] = [];
    for (const [, payload] of steps) replies.push(await this.#readReply(payload[0]!));
    for (let index = 0; index < steps.length; index++) {
      await this.record(steps[index]![0], replies[index]!, undefined, index === steps.length - 1);
    }
  }

  async #readReply(command: number): Promise<RawPacket[]> {
    const tracker = new ReplyTracker(replyShapeOf(command)!, this.client.deprecateEof, command);
    const packets: RawPacket[] = [];
    const framer = new PacketFramer((packet) => {
      tracker.feedServer(packet);
    });
    while (!tracker.done) {
      const packet = await this.client.readPacket();
      if (packet === null) throw new Error(`${this.name}: connection closed mid-reply`);
      packets.push(packet);
      framer.push(encodePacket(packet.payload, packet.sequenceId));
    }
    return packets;
  }

  /** An unrecorded statement (its reply differs by nature between runs). */
  raw(sql: string): Promise<RawPacket[]> {
    return this.client.query(sql);
  }

  /** An unrecorded statement's rows. */
  async rows(sql: string): Promise<Array<Array<string | null>>> {
    const reply = await this.client.query(sql);
    const error = replyError(reply);
    assert.equal(error, null, `${this.name}: ${sql}: ${error?.message}`);
    return rowsOf(reply, this.client.deprecateEof);
  }
}

export interface ScenarioOptions {
  database: string;
  /** Run on each side before the script, through that side (so the proxy sees the DDL). */
  setup: readonly string[];
}

/**
 * Runs `script` directly and then through the proxy, each after `setup`; the transcripts must be
 * equal byte for byte, and every counter expectation and check must hold.
 */
export async function differential(
  proxy: ProxyHarness,
  options: ScenarioOptions,
  script: (run: Run) => Promise<void>,
): Promise<void> {
  const runs: Run[] = [];
  for (const harness of [null, proxy]) {
    const run = new Run(harness, options.database);
    await run.admin(options.setup);
    if (harness !== null) await run.settle();
    try {
      await script(run);
    } finally {
      run.close();
    }
    runs.push(run);
  }
  const [server, viaProxy] = runs as [Run, Run];
  const failures: string[] = [];
  const steps = Math.max(server.transcript.length, viaProxy.transcript.length);
  for (let index = 0; index < steps; index++) {
    const expected = server.transcript[index];
    const actual = viaProxy.transcript[index];
    if (expected === undefined || actual === undefined || expected.step !== actual.step) {
      failures.push(
        `step ${index}: the runs diverge: server "${expected?.step}", proxy "${actual?.step}"`,
      );
      break;
    }
    if (!actual.bytes.equals(expected.bytes)) failures.push(describeDifference(expected, actual));
  }
  failures.push(...server.problems, ...viaProxy.problems);
  if (failures.length > 0) assert.fail(failures.join('\n\n'));
}

function describeDifference(expected: Entry, actual: Entry): string {
  let offset = 0;
  while (actual.bytes[offset] === expected.bytes[offset]) offset++;
  const from = Math.max(0, offset - 8);
  const show = (bytes: Buffer): string =>
    `${bytes.subarray(from, from + 48).toString('hex')}  ${printable(bytes.subarray(from, from + 48))}`;
  return (
    `${expected.step}: reply differs at byte ${offset} (proxy ${actual.bytes.length} bytes, server ${expected.bytes.length})\n` +
    `  server: ${show(expected.bytes)}\n` +
    `  proxy:  ${show(actual.bytes)}`
  );
}

function printable(bytes: Buffer): string {
  return [...bytes]
    .map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.'))
    .join('');
}
