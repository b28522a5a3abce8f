/**
 * A benchmark driver thread: runs some of a step's client connections, each looping over
 * sysbench-shaped transactions, and reports counts and a latency histogram. Several of these run
 * side by side so that the driver is never the bottleneck.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MysqlConnection } from '../upstream/mysql-connection.ts';
import type {
  CommandResult,
  ConnectionOptions,
  PreparedStatement,
} from '../upstream/mysql-connection.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import { inlineParams, oltpTransaction } from './oltp-workload.ts';
import type { OltpOptions, OltpStatement, WorkloadName } from './oltp-workload.ts';
import { SysbenchRandom } from './random.ts';
import type { RandomOptions } from './random.ts';

export interface DriverWorkerConfig {
  connection: ConnectionOptions;
  /** Client connections this thread runs. */
  clients: number;
  /** Index of this thread's first client, so every client draws its own random stream. */
  firstClient: number;
  workload: WorkloadName;
  oltp: OltpOptions;
  random: RandomOptions;
  preparedStatements: boolean;
  /** Epoch milliseconds: measuring starts here (after warm-up) and stops at `endAt`. */
  measureFrom: number;
  endAt: number;
}

export interface DriverWorkerResult {
  transactions: number;
  queries: number;
  errors: number;
  ignoredErrors: number;
  reconnects: number;
  latencyCounts: number[];
  latencySum: number;
  latencyMax: number;
  /** The first few distinct error messages, to tell the user what went wrong. */
  errorSamples: string[];
}

/** The errors sysbench ignores by default and retries the transaction after (--mysql-ignore-errors). */
const IGNORED_ERRNOS = new Set([1213, 1020, 1205]);

class ClientLoop {
  readonly #config: DriverWorkerConfig;
  readonly #random: SysbenchRandom;
  readonly #result: DriverWorkerResult;
  readonly #histogram: LatencyHistogram;
  #connection: MysqlConnection | null = null;
  #statements = new Map<string, PreparedStatement>();

  constructor(
    config: DriverWorkerConfig,
    client: number,
    result: DriverWorkerResult,
    histogram: LatencyHistogram,
  ) {
    this.#config = config;
    this.#random = new SysbenchRandom(config.random, client);
    this.#result = result;
    this.#histogram = histogram;
  }

  async run(): Promise<void> {
    const { endAt, measureFrom } = this.#config;
    while (Date.now() < endAt) {
      const connection = await this.#connect();
      if (connection === null) return;
      const statements = oltpTransaction(this.#config.workload, this.#config.oltp, this.#random);
      const started = performance.now();
      const startedAt = Date.now();
      let queries = 0;
      let ok = true;
      try {
        for (const statement of statements) {
          const reply = (await this.#send(connection, statement)).error;
          queries++;
          if (reply === null) continue;
          ok = false;
          if (IGNORED_ERRNOS.has(reply.errno)) {
            this.#count('ignoredErrors', startedAt);
          } else {
            this.#count('errors', startedAt);
            this.#noteError(`${reply.errno}: ${reply.message}`);
          }
          break;
        }
      } catch (error) {
        // The connection was lost: like sysbench, reconnect and go on.
        ok = false;
        this.#connection = null;
        this.#statements.clear();
        if (Date.now() < endAt) {
          this.#result.reconnects++;
          this.#noteError((error as Error).message);
        }
      }
      const finishedAt = Date.now();
      if (startedAt >= measureFrom && finishedAt <= endAt) {
        this.#result.queries += queries;
        if (ok) {
          this.#result.transactions++;
          this.#histogram.record(performance.now() - started);
        }
      }
    }
    this.#connection?.close();
  }

  async #connect(): Promise<MysqlConnection | null> {
    while (this.#connection === null || this.#connection.closed) {
      if (Date.now() >= this.#config.endAt) return null;
      try {
        this.#connection = await MysqlConnection.connect(this.#config.connection);
        this.#statements.clear();
      } catch (error) {
        this.#result.errors++;
        this.#noteError(`connect: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return this.#connection;
  }

  /** Sends a statement; resolves with its result (the server's error, if any). */
  async #send(connection: MysqlConnection, statement: OltpStatement): Promise<CommandResult> {
    // Like sysbench with --db-ps-mode=auto, every statement is prepared, BEGIN and COMMIT too.
    if (!this.#config.preparedStatements) return connection.query(inlineParams(statement));
    let prepared = this.#statements.get(statement.sql);
    if (prepared === undefined) {
      prepared = await connection.prepare(statement.sql);
      this.#statements.set(statement.sql, prepared);
    }
    return connection.execute(prepared, statement.params);
  }

  #count(field: 'errors' | 'ignoredErrors', startedAt: number): void {
    if (startedAt >= this.#config.measureFrom) this.#result[field]++;
  }

  #noteError(message: string): void {
    const samples = this.#result.errorSamples;
    if (samples.length < 5 && !samples.includes(message)) samples.push(message);
  }
}

async function main(config: DriverWorkerConfig): Promise<DriverWorkerResult> {
  const result: DriverWorkerResult = {
    transactions: 0,
    queries: 0,
    errors: 0,
    ignoredErrors: 0,
    reconnects: 0,
    latencyCounts: [],
    latencySum: 0,
    latencyMax: 0,
    errorSamples: [],
  };
  const histogram = new LatencyHistogram();
  const loops = Array.from(
    { length: config.clients },
    (_, i) => new ClientLoop(config, config.firstClient + i, result, histogram),
  );
  await Promise.all(loops.map((loop) => loop.run()));
  result.latencyCounts = Array.from(histogram.counts);
  result.latencySum = histogram.sum;
  result.latencyMax = histogram.max;
  return result;
}

if (parentPort !== null) {
  const port = parentPort;
  main(workerData as DriverWorkerConfig).then(
    (result) => port.postMessage({ ok: true, result }),
    (error: Error) => port.postMessage({ ok: false, message: error.stack ?? error.message }),
  );
}
