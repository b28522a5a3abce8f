/**
 * Protocol fuzzing against the real proxy (2 workers, cache on, metadata account) in front of
 * the real server. Fuzz lanes send generated cases (fuzz-cases.ts) in every phase of a
 * connection — instead of the handshake response, instead of the answer to an auth switch,
 * and as pipelined batches of commands once logged in — each stream cut into several writes at
 * random offsets, while bystanders on both workers run a steady read/write loop.
 *
 * The oracle:
 * - the proxy never crashes: no worker exits (the proxy logs each one it restarts), no session
 *   handler throws (it logs each exception it catches), the process stays up, and both workers
 *   still serve a new connection at the end;
 * - bystanders get no error, no dropped connection and no stale read;
 * - the proxy holds no backend connection for a fuzz client that has left;
 * - the fuzzed connection never hangs: after a case whose stream is complete, a marker query
 *   (SELECT 'nc-fuzz-…') must be answered or the connection closed within a bound; after a
 *   stream that ends inside a packet (the server waits for the rest, legitimately) the client
 *   closes its side and the connection must close within the bound. A case that still times
 *   out is replayed directly against the server: if the server waits too, the wait is the
 *   protocol's, not the proxy's.
 *
 * The fuzz account may only read and write its own tables, so no generated command (a random
 * COM_SHUTDOWN, a KILL, a DROP) can reach beyond them.
 */
import fc from 'fast-check';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PacketHeader } from '../../src/protocol/constants.ts';
import { readNulBytes } from '../../src/protocol/lenenc.ts';
import { nativePasswordScramble } from '../../src/protocol/native-password.ts';
import { execute, prepare } from '../../src/protocol/statement-commands.ts';
import { connectOnWorker, queryPacket, rowsOf, runStatements } from './cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from './env.ts';
import {
  FUZZ_DB,
  INVALIDATE_SLOW_READ,
  SLOW_READ,
  commandCase,
  commandTemplates,
  describeCase,
  encodeCase,
  loginCase,
} from './fuzz-cases.ts';
import type { FuzzCase } from './fuzz-cases.ts';
import { startProxyProcess } from './proxy-process.ts';
import type { ProxyProcess } from './proxy-process.ts';
import { RawClient, handshakeResponseFor, replyError } from './raw-client.ts';

const FUZZ_USER = 'nc_fuzz';
const FUZZ_PASSWORD = 'fuzz-secret-1';
const ROOT = { user: BACKEND_USER, password: BACKEND_PASSWORD };
/** Rows of the table shared reads scan: enough for a miss to take a few milliseconds. */
const BIG_ROWS = 100_000;
/** A plugin the server does not use for the fuzz account: it answers with an auth switch. */
const OTHER_PLUGIN = 'nc_fuzz_other_plugin';

export interface FuzzSettings {
  seed: number;
  /** Stop once this many fuzzed packets were sent. */
  packets: number;
  /** Fuzz connections running at once. */
  lanes?: number;
  /** Bystanders on each of the two workers. */
  bystandersPerWorker?: number;
  /** Also send 16 MB+ commands (several packets each), now and then. */
  longPackets?: boolean;
  /** Stop at the first failure (tests); otherwise record it and go on (the benchmark run). */
  stopOnFailure?: boolean;
  /** How long a fuzzed exchange may take before it counts as a hang. */
  exchangeTimeoutMs?: number;
  /** Called now and then with the report so far. */
  progress?: (report: FuzzReport) => void;
}

export interface FuzzFailure {
  kind: 'worker-exit' | 'session-exception' | 'proxy-exit' | 'bystander' | 'hang' | 'final-check';
  detail: string;
  /** The cases each lane sent last, newest last: the reproducer's candidates. */
  recent: string[];
}

export interface FuzzReport {
  seed: number;
  packets: number;
  cases: number;
  casesByPhase: Record<FuzzCase['phase'], number>;
  /** How fuzzed exchanges ended. */
  outcomes: Record<'answered' | 'closed' | 'server-waits' | 'hang', number>;
  /** Error packets the fuzzed connections received. */
  errorPackets: number;
  bystanderOperations: number;
  /** Reads answered after waiting for another connection's miss (the proxy's counter). */
  singleFlightHits: number;
  failures: FuzzFailure[];
  /** A few cases where the server itself waited (the proxy did not have to answer either). */
  serverWaits: string[];
  elapsedMs: number;
}

type Outcome = 'answered' | 'closed' | 'hang';

/** Seed of lane `lane`'s `chunk`-th batch of cases. */
function chunkSeed(seed: number, lane: number, chunk: number): number {
  return (seed ^ Math.imul(lane + 1, 0x9e3779b1) ^ Math.imul(chunk + 1, 0x85ebca6b)) | 0;
}

const CASES_PER_CHUNK = 40;

/** Statements run directly on the server, as the fuzz setup's administrator. */
function direct(sql: readonly string[]): Promise<void> {
  return runStatements(BACKEND_HOST, BACKEND_PORT, sql, ROOT);
}

async function createSchema(lanes: number, bystanders: number): Promise<void> {
  await direct([
    `DROP DATABASE IF EXISTS ${FUZZ_DB}`,
    `CREATE DATABASE ${FUZZ_DB}`,
    `CREATE TABLE ${FUZZ_DB}.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
    `INSERT INTO ${FUZZ_DB}.t SELECT seq, 0 FROM ${FUZZ_DB}.seq_1_to_${10 + lanes}`,
    `CREATE TABLE ${FUZZ_DB}.big (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
    `INSERT INTO ${FUZZ_DB}.big SELECT seq, seq FROM ${FUZZ_DB}.seq_1_to_${BIG_ROWS}`,
    `CREATE TABLE ${FUZZ_DB}.bystand (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
    `INSERT INTO ${FUZZ_DB}.bystand SELECT seq, 0 FROM ${FUZZ_DB}.seq_1_to_${bystanders}`,
    `DROP USER IF EXISTS '${FUZZ_USER}'@'%'`,
    `CREATE USER '${FUZZ_USER}'@'%' IDENTIFIED BY '${FUZZ_PASSWORD}'`,
    `GRANT SELECT, UPDATE ON ${FUZZ_DB}.t TO '${FUZZ_USER}'@'%'`,
    `GRANT SELECT, UPDATE ON ${FUZZ_DB}.big TO '${FUZZ_USER}'@'%'`,
    `GRANT SELECT ON ${FUZZ_DB}.bystand TO '${FUZZ_USER}'@'%'`,
  ]);
}

async function dropSchema(): Promise<void> {
  await direct([`DROP DATABASE IF EXISTS ${FUZZ_DB}`, `DROP USER IF EXISTS '${FUZZ_USER}'@'%'`]);
}

/** Waits (within a bound) until the server has no connection of the fuzz account left. */
async function fuzzConnectionsLeft(timeoutMs: number): Promise<number> {
  const client = await RawClient.connect({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    ...ROOT,
    database: null,
  });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = await client.query(
        `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '${FUZZ_USER}'`,
      );
      const left = Number(rowsOf(reply, client.deprecateEof)[0]?.[0] ?? 0);
      if (left === 0 || Date.now() > deadline) return left;
      await sleep(100);
    }
  } finally {
    client.close();
  }
}

/** Writes each piece with its own write, letting the event loop turn between them. */
async function writePieces(socket: Socket, pieces: readonly Buffer[]): Promise<void> {
  for (let i = 0; i < pieces.length; i++) {
    if (socket.destroyed) return;
    if (!socket.write(pieces[i]!)) {
      await new Promise<void>((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
    }
    if (i + 1 < pieces.length) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Reads until a packet holds `marker` (answered), the connection closes, or time runs out. */
async function awaitMarker(
  client: RawClient,
  marker: Buffer,
  timeoutMs: number,
  counts: { errors: number },
): Promise<Outcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let packet;
    try {
      packet = await client.readPacket(Math.max(1, deadline - Date.now()));
    } catch {
      return 'hang';
    }
    if (packet === null) return 'closed';
    if (packet.payload[0] === PacketHeader.ERR) counts.errors++;
    if (packet.payload.includes(marker)) return 'answered';
  }
}

/** Closes the client's side (FIN) and waits for the connection to close. */
async function awaitCloseAfterEnd(client: RawClient, timeoutMs: number): Promise<Outcome> {
  client.socket.end();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await client.readPacket(Math.max(1, deadline - Date.now()))) === null) return 'closed';
    } catch {
      return 'hang';
    }
  }
}

interface Target {
  host: string;
  port: number;
}

interface Lane {
  index: number;
  templates: Buffer[];
  connection: RawClient | null;
  recent: string[];
  markers: number;
  /** The second connection of cases that wait behind another's miss. */
  partner: RawClient | null;
  /** Seed and index of the case running now. */
  caseName: string;
}

/**
 * A fuzz connection logged in as the fuzz account; odd lanes use DEPRECATE_EOF, and lanes 2 and
 * 3 of every four the compressed protocol (their cases go in compressed packets, a piece each,
 * numbered as the server expects: see EncodedCase.compressedSequences).
 */
function loginLane(target: Target, lane: number): Promise<RawClient> {
  return RawClient.connect({
    ...target,
    user: FUZZ_USER,
    password: FUZZ_PASSWORD,
    database: FUZZ_DB,
    deprecateEof: lane % 2 === 1,
    compress: (lane & 2) !== 0,
  });
}

/**
 * On the lane's partner connection: invalidate the shared slow read and send it, so that its
 * miss is on its way when the case's own copy of the read arrives. Resolves once the partner
 * has its answers (or lost its connection).
 */
async function startPartnerMiss(
  target: Target,
  lane: Lane,
  timeoutMs: number,
): Promise<{ done: Promise<Outcome> }> {
  if (lane.partner === null || lane.partner.closed)
    lane.partner = await loginLane(target, lane.index);
  const partner = lane.partner;
  const name = `nc-fuzz-partner-${lane.index}-${lane.markers++}`;
  const before = Buffer.from(`${name}-before`, 'latin1');
  const marker = Buffer.from(name, 'latin1');
  // Each a command of its own, numbered as a client numbers one (compressed: from 0).
  partner.startCommand(queryPacket(`SELECT '${before.toString('latin1')}'`));
  partner.startCommand(lane.templates[INVALIDATE_SLOW_READ]!);
  partner.startCommand(lane.templates[SLOW_READ]!);
  partner.startCommand(queryPacket(`SELECT '${marker.toString('latin1')}'`));
  // Past what is left of earlier replies, then the write's reply (OK or ERR; a result's
  // terminator starts with 0xFE): the proxy sends the read to the server right after it.
  const counts = { errors: 0 };
  if ((await awaitMarker(partner, before, timeoutMs, counts)) !== 'answered')
    return { done: Promise.resolve('closed') };
  for (;;) {
    const packet = await partner.readPacket(timeoutMs).catch(() => null);
    if (packet === null) return { done: Promise.resolve('closed') };
    const first = packet.payload[0];
    if (first === PacketHeader.OK || first === PacketHeader.ERR) break;
  }
  // Not awaited here: the case goes out while the read is on its way.
  return { done: awaitMarker(partner, marker, timeoutMs, counts) };
}

/** Keeps the last few cases of a lane, to print as reproducers. */
function remember(lane: Lane, text: string): void {
  lane.recent.push(`${lane.caseName}: ${text}`);
  if (lane.recent.length > 3) lane.recent.shift();
}

/** Runs one case on `target`; `connection` is the lane's logged-in connection for commands. */
async function runCase(
  target: Target,
  fuzz: FuzzCase,
  lane: Lane,
  timeoutMs: number,
  counts: { errors: number },
  reuse: boolean,
): Promise<{ outcome: Outcome; packets: number }> {
  const marker = Buffer.from(`nc-fuzz-${lane.index}-${lane.markers++}`, 'latin1');
  if (fuzz.phase === 'command') {
    let client = reuse ? lane.connection : null;
    // Waiting behind a miss needs a session that caches: a fresh one, whatever earlier batches
    // set (DEMAND mode, an open transaction).
    if (fuzz.partner && client !== null) {
      client.destroy();
      client = null;
    }
    if (client === null || client.closed) client = await loginLane(target, lane.index);
    if (reuse) lane.connection = client;
    const encoded = encodeCase(fuzz, lane.templates);
    remember(lane, describeCase(fuzz, lane.templates));
    const partnerDone =
      fuzz.partner && reuse ? await startPartnerMiss(target, lane, timeoutMs) : null;
    await writePieces(
      client.socket,
      encoded.pieces.map((piece, i) => client.frame(piece, encoded.compressedSequences[i])),
    );
    let outcome: Outcome;
    if (encoded.partial) {
      outcome = await awaitCloseAfterEnd(client, timeoutMs);
    } else {
      client.startCommand(queryPacket(`SELECT '${marker.toString('latin1')}'`));
      outcome = await awaitMarker(client, marker, timeoutMs, counts);
    }
    if (partnerDone !== null && (await partnerDone.done) !== 'answered') {
      lane.partner?.destroy();
      lane.partner = null;
    }
    if (outcome !== 'answered') {
      client.destroy();
      if (reuse) lane.connection = null;
    } else if (!reuse) {
      client.destroy();
    }
    return { outcome, packets: encoded.packets };
  }

  const client = await RawClient.open(target.host, target.port);
  try {
    const greeting = await client.readPacket(timeoutMs);
    if (greeting === null || greeting.payload[0] === PacketHeader.ERR) {
      return { outcome: 'closed', packets: 0 };
    }
    const login = { ...target, user: FUZZ_USER, password: FUZZ_PASSWORD, database: FUZZ_DB };
    let answer: Buffer;
    if (fuzz.phase === 'handshake') {
      answer = handshakeResponseFor(greeting.payload, login).payload;
    } else {
      const response = handshakeResponseFor(greeting.payload, login, OTHER_PLUGIN).payload;
      client.send(response, greeting.sequenceId + 1);
      const request = await client.readPacket(timeoutMs);
      if (request === null || request.payload[0] !== PacketHeader.EOF) {
        return { outcome: request === null ? 'closed' : 'answered', packets: 0 };
      }
      const plugin = readNulBytes(request.payload, 1);
      answer = nativePasswordScramble(
        FUZZ_PASSWORD,
        request.payload.subarray(plugin.end, plugin.end + 20),
      );
    }
    const encoded = encodeCase(fuzz, [answer]);
    remember(lane, describeCase(fuzz, [answer]));
    await writePieces(client.socket, encoded.pieces);
    // Nothing sent, or a packet left unfinished: the server waits for the rest.
    if (encoded.partial || encoded.pieces.length === 0) {
      return { outcome: await awaitCloseAfterEnd(client, timeoutMs), packets: encoded.packets };
    }
    let reply;
    try {
      reply = await client.readPacket(timeoutMs);
    } catch {
      return { outcome: 'hang', packets: encoded.packets };
    }
    if (reply === null) return { outcome: 'closed', packets: encoded.packets };
    const first = reply.payload[0];
    if (first === PacketHeader.OK) {
      // Logged in after all: the session must work.
      client.send(queryPacket(`SELECT '${marker.toString('latin1')}'`), 0);
      return {
        outcome: await awaitMarker(client, marker, timeoutMs, counts),
        packets: encoded.packets,
      };
    }
    if (first === PacketHeader.ERR) counts.errors++;
    // An error ends the login (the connection must close); an auth switch or more-data
    // request waits for the client, so the client leaves.
    return { outcome: await awaitCloseAfterEnd(client, timeoutMs), packets: encoded.packets };
  } finally {
    client.destroy();
  }
}

/** A bystander: its own row, written and read back, plus a shared read and a prepared read. */
async function bystander(
  proxy: ProxyProcess,
  worker: number,
  id: number,
  running: () => boolean,
  fail: (detail: string) => void,
  count: () => void,
): Promise<void> {
  while (running()) {
    let client: RawClient | null = null;
    try {
      client = await connectOnWorker(proxy, worker, { ...ROOT, database: FUZZ_DB });
      const prepared = await client.command(
        prepare(`SELECT v FROM ${FUZZ_DB}.bystand WHERE id = ?`),
      );
      if (replyError(prepared) !== null) throw new Error('PREPARE failed');
      const statementId = prepared[0]!.payload.readUInt32LE(1);
      for (let n = 1; running(); n++) {
        const steps: Array<[string, Buffer]> = [
          ['write', queryPacket(`UPDATE ${FUZZ_DB}.bystand SET v = ${n} WHERE id = ${id}`)],
          ['read back', queryPacket(`SELECT v FROM ${FUZZ_DB}.bystand WHERE id = ${id}`)],
          ['shared read', queryPacket(`SELECT v FROM ${FUZZ_DB}.t WHERE id = 1`)],
          ['prepared read', execute(statementId, [id])],
        ];
        for (const [step, payload] of steps) {
          const reply = await client.command(payload);
          const error = replyError(reply);
          if (error !== null) throw new Error(`${step}: ${error.errno} ${error.message}`);
          if (step === 'read back') {
            const rows = rowsOf(reply, client.deprecateEof);
            if (rows[0]?.[0] !== String(n))
              throw new Error(`stale read: wrote ${n}, read ${JSON.stringify(rows)}`);
          }
          count();
        }
        // Steady, not flat out: the cores are the fuzz lanes' and the proxy's too.
        await sleep(2);
      }
    } catch (error) {
      if (running()) fail(`bystander ${id} on worker ${worker}: ${(error as Error).message}`);
    } finally {
      client?.destroy();
    }
  }
}

/** Lines of the proxy's log that say the proxy misbehaved. */
const WORKER_EXIT = /worker \d+ (?:failed|exited|could not restart)[^\n]*/g;
const SESSION_EXCEPTION = /session error, closing connection: [^\n]*/g;

export async function runProtocolFuzz(settings: FuzzSettings): Promise<FuzzReport> {
  const lanes = settings.lanes ?? 4;
  const perWorker = settings.bystandersPerWorker ?? 2;
  const timeoutMs = settings.exchangeTimeoutMs ?? 15_000;
  const stopOnFailure = settings.stopOnFailure ?? true;
  const report: FuzzReport = {
    seed: settings.seed,
    packets: 0,
    cases: 0,
    casesByPhase: { command: 0, handshake: 0, 'auth-switch': 0 },
    outcomes: { answered: 0, closed: 0, 'server-waits': 0, hang: 0 },
    errorPackets: 0,
    bystanderOperations: 0,
    singleFlightHits: 0,
    failures: [],
    serverWaits: [],
    elapsedMs: 0,
  };
  const started = Date.now();
  await createSchema(lanes, perWorker * 2);
  const proxy = await startProxyProcess({
    workers: 2,
    extraArgs: ['--admin-user', BACKEND_USER, '--admin-password', BACKEND_PASSWORD],
    // Debug lines say which worker each connection landed on (bystanders go on both).
    env: { NICECACHE_DEBUG: '1' },
  });
  const target = { host: proxy.host, port: proxy.port };
  const laneState: Lane[] = Array.from({ length: lanes }, (_, index) => ({
    index,
    templates: commandTemplates(index),
    connection: null,
    recent: [],
    markers: 0,
    partner: null,
    caseName: '',
  }));
  let stopped = false;
  const running = (): boolean => !stopped;
  const recentCases = (): string[] =>
    laneState.flatMap((lane) => lane.recent.map((text) => `lane ${lane.index}: ${text}`));
  const fail = (kind: FuzzFailure['kind'], detail: string): void => {
    report.failures.push({ kind, detail, recent: recentCases() });
    if (stopOnFailure) stopped = true;
  };
  const counts = { errors: 0 };

  let logChecked = 0;
  const checkLog = (): void => {
    const log = proxy.log();
    const fresh = log.slice(logChecked);
    // Only whole lines: a line still being written is looked at next time.
    const end = fresh.lastIndexOf('\n') + 1;
    const lines = fresh.slice(0, end);
    logChecked += end;
    for (const match of lines.match(WORKER_EXIT) ?? []) fail('worker-exit', match);
    for (const match of lines.match(SESSION_EXCEPTION) ?? []) fail('session-exception', match);
    if (proxy.child.exitCode !== null || proxy.child.signalCode !== null)
      fail('proxy-exit', `the proxy exited: ${proxy.child.exitCode ?? proxy.child.signalCode}`);
  };

  const bystanders: Array<Promise<void>> = [];
  try {
    for (let worker = 0; worker < 2; worker++) {
      for (let i = 0; i < perWorker; i++) {
        bystanders.push(
          bystander(
            proxy,
            worker,
            worker * perWorker + i + 1,
            running,
            (detail) => fail('bystander', detail),
            () => report.bystanderOperations++,
          ),
        );
      }
    }

    const caseArbitrary = fc.oneof(
      {
        weight: 8,
        arbitrary: commandCase(laneState[0]!.templates.length, settings.longPackets ?? false),
      },
      { weight: 1, arbitrary: loginCase('handshake') },
      { weight: 1, arbitrary: loginCase('auth-switch') },
    );

    const runLane = async (lane: Lane): Promise<void> => {
      for (let chunk = 0; running() && report.packets < settings.packets; chunk++) {
        const seed = chunkSeed(settings.seed, lane.index, chunk);
        const cases = fc.sample(caseArbitrary, { seed, numRuns: CASES_PER_CHUNK });
        for (let i = 0; i < cases.length && running() && report.packets < settings.packets; i++) {
          const fuzz = cases[i]!;
          lane.caseName = `seed ${seed} case ${i}`;
          const failuresBefore = report.failures.length;
          let result;
          try {
            result = await runCase(target, fuzz, lane, timeoutMs, counts, true);
          } catch (error) {
            // Connecting or logging in failed: that is a failure of the proxy, not the case.
            fail('hang', `lane ${lane.index}: ${(error as Error).message}`);
            lane.connection = null;
            continue;
          }
          report.cases++;
          report.casesByPhase[fuzz.phase]++;
          report.packets += result.packets;
          if (result.outcome === 'hang') {
            // Does the server itself wait here? Then so may the proxy.
            const replay = await runCase(
              { host: BACKEND_HOST, port: BACKEND_PORT },
              fuzz,
              { ...lane, connection: null, recent: [] },
              timeoutMs,
              { errors: 0 },
              false,
            ).catch(() => ({ outcome: 'answered' as const }));
            if (replay.outcome === 'hang') {
              report.outcomes['server-waits']++;
              if (report.serverWaits.length < 3) report.serverWaits.push(lane.recent.at(-1) ?? '');
            } else {
              report.outcomes.hang++;
              fail('hang', `lane ${lane.index}: no answer and no close within ${timeoutMs} ms`);
            }
          } else {
            report.outcomes[result.outcome]++;
          }
          if (lanes === 1 && report.failures.length === failuresBefore) {
            // One lane: give the proxy's log a moment, so a failure names the case that caused it.
            await sleep(20);
            checkLog();
          }
        }
      }
    };

    const monitor = (async () => {
      while (running() && report.packets < settings.packets) {
        await sleep(200);
        checkLog();
        report.errorPackets = counts.errors;
        report.elapsedMs = Date.now() - started;
        settings.progress?.(report);
      }
    })();
    await Promise.all(laneState.map(runLane));
    stopped = true;
    await monitor;
    await Promise.all(bystanders);
    for (const lane of laneState) {
      lane.connection?.destroy();
      lane.partner?.destroy();
    }

    // Both workers must still serve a new connection, and nothing may have gone wrong since.
    await sleep(200);
    checkLog();
    if (report.failures.length === 0 || !stopOnFailure) {
      for (let worker = 0; worker < 2; worker++) {
        try {
          const client = await connectOnWorker(proxy, worker, { ...ROOT, database: null });
          const error = replyError(await client.query('SELECT 1'));
          // nicecache's own counters are listed only without a WHERE or LIKE.
          const status = rowsOf(await client.query('SHOW GLOBAL STATUS'), client.deprecateEof);
          const hits = status.find(([name]) => name === 'Qcache_single_flight_hits');
          report.singleFlightHits = Number(hits?.[1] ?? -1);
          client.close();
          if (error !== null) throw new Error(error.message);
        } catch (error) {
          report.failures.push({
            kind: 'final-check',
            detail: `worker ${worker}: ${(error as Error).message}`,
            recent: [],
          });
        }
      }
    }
    // Every fuzz client has gone: so must every backend connection the proxy opened for one.
    const left = await fuzzConnectionsLeft(timeoutMs);
    if (left > 0) {
      report.failures.push({
        kind: 'final-check',
        detail: `${left} backend connection(s) of fuzz clients still open after all of them left`,
        recent: [],
      });
    }
  } finally {
    stopped = true;
    await Promise.allSettled(bystanders);
    await proxy.stop();
    await dropSchema();
  }
  report.errorPackets = counts.errors;
  report.elapsedMs = Date.now() - started;
  return report;
}

/** The report as a few lines of text. */
export function formatReport(report: FuzzReport): string {
  const lines = [
    `seed ${report.seed}: ${report.packets} packets in ${report.cases} cases (${Object.entries(
      report.casesByPhase,
    )
      .map(([phase, count]) => `${phase} ${count}`)
      .join(', ')}) in ${(report.elapsedMs / 1000).toFixed(1)} s`,
    `outcomes: ${Object.entries(report.outcomes)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(
        ', ',
      )}; ${report.errorPackets} error packets; ${report.bystanderOperations} bystander operations; ${report.singleFlightHits} reads served after waiting for another's miss`,
    `failures: ${report.failures.length}`,
  ];
  for (const wait of report.serverWaits) lines.push(`  the server waits too: ${wait}`);
  // Each distinct failure once, with how often it came and the cases sent just before it.
  const distinct = new Map<string, { count: number; first: FuzzFailure }>();
  for (const failure of report.failures) {
    const key = `${failure.kind}: ${failure.detail.replace(/\d+/g, 'N')}`;
    const seen = distinct.get(key);
    if (seen === undefined) distinct.set(key, { count: 1, first: failure });
    else seen.count++;
  }
  for (const { count, first } of distinct.values()) {
    lines.push(`- ${count}× ${first.kind}: ${first.detail}`);
    for (const recent of first.recent) lines.push(`    ${recent}`);
  }
  return lines.join('\n');
}
