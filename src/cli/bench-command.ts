/**
 * `nicecache bench prepare|run|cleanup|sweep`: the command line of the benchmark harness.
 * Without --target, `sweep` runs the seed experiment: a throwaway MariaDB with its query cache
 * off, another with it on (100 MB), and nicecache in front of the first.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_OLTP_OPTIONS, WORKLOADS } from '../bench/oltp-workload.ts';
import type { OltpOptions, WorkloadName } from '../bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS, DISTRIBUTIONS } from '../bench/random.ts';
import type { Distribution, RandomOptions } from '../bench/random.ts';
import { perRunLines, progressLine, seedTable } from '../bench/report-text.ts';
import { writeReports } from '../bench/report-files.ts';
import { LOCK_EVIDENCE_OPTIONS } from '../bench/server-sampler.ts';
import { cleanupData, prepareData, runSweep } from '../bench/sweep.ts';
import { parseTarget, startTargets } from '../bench/targets.ts';
import type { TargetSpec } from '../bench/targets.ts';
import { TOPOLOGIES, TopologyError } from '../bench/topology.ts';
import type { Topology } from '../bench/topology.ts';
import { ConfigError } from './config.ts';

const SEED_SERVER_OPTIONS = Object.entries({
  innodb_buffer_pool_size: '1G',
  max_connections: '500',
  ...LOCK_EVIDENCE_OPTIONS,
})
  .map(([key, value]) => `${key}=${value}`)
  .join(',');

/** The seed experiment's three configurations. */
export const SEED_TARGETS = [
  `server-cache-off=mariadb:query_cache_type=0,query_cache_size=0,${SEED_SERVER_OPTIONS}`,
  `server-cache-on=mariadb:query_cache_type=1,query_cache_size=100M,${SEED_SERVER_OPTIONS}`,
  // The same memory as the server's cache gets.
  'nicecache=nicecache:server-cache-off:query-cache-size=100M',
];

export const benchHelp = `Usage: nicecache bench <prepare|run|sweep|cleanup> [options]

  sweep     every --threads count against every --target, interleaved; reports the seed's table,
            per-run lines, JSON, HTML and SVG (in --report-dir). Without --target: the seed
            experiment (throwaway MariaDB with its query cache off, one with it on at 100 MB,
            and nicecache in front of the first).
  run       the same for a single thread count
  prepare   load the sysbench tables into the --target servers
  cleanup   drop them

Targets (--target NAME=SPEC, repeatable):
  NAME=mysql://user:pass@host:port/db      a running server
  NAME=mariadb:opt=value,...               a throwaway MariaDB with these server options
  NAME=nicecache:OTHER[:opt=value,...]     nicecache in front of target OTHER (proxy options)

Workload (the same SQL as sysbench 1.0's scripts):
  --workload NAME        ${WORKLOADS.join(', ')} [oltp_read_only]
  --tables N [1]  --table-size N [100000]  --range-size N [100]  --skip-trx
  --db-ps-mode MODE      auto (prepared statements) or disable (text queries) [disable]
  --rand-type TYPE       ${DISTRIBUTIONS.join(', ')} [special]
  --rand-spec-iter N [12]  --rand-spec-pct N [1]  --rand-spec-res N [75]
  --rand-pareto-h X [0.2]  --rand-zipfian-exp X [0.8]  --rand-seed N [0 = time]

Run:
  --threads LIST         thread counts [1,2,4,8,16,32]
  --duration SECONDS     measured time per step [5]
  --warmup SECONDS       unmeasured time before each step [1]
  --driver NAME          builtin, or sysbench to cross-check with the installed sysbench [builtin]
  --topology NAME        colocated: every process on every CPU; split: the servers the bench
                         starts on their own CPUs (the upper half; CPU 1 of 2), the driver, the
                         proxies and the Node floor on the others [colocated]
  --probe-duration SECONDS
                         measured time of the Node floor and hit probes at each thread count [2]
  --db NAME              database holding the tables [sbtest]
  --report-dir DIR       where reports go [reports]`;

const options = {
  target: { type: 'string', multiple: true },
  workload: { type: 'string', default: 'oltp_read_only' },
  tables: { type: 'string', default: '1' },
  'table-size': { type: 'string', default: '100000' },
  'range-size': { type: 'string', default: '100' },
  'skip-trx': { type: 'boolean', default: false },
  'db-ps-mode': { type: 'string', default: 'disable' },
  'rand-type': { type: 'string', default: DEFAULT_RANDOM_OPTIONS.type },
  'rand-spec-iter': { type: 'string', default: String(DEFAULT_RANDOM_OPTIONS.specIter) },
  'rand-spec-pct': { type: 'string', default: String(DEFAULT_RANDOM_OPTIONS.specPct) },
  'rand-spec-res': { type: 'string', default: String(DEFAULT_RANDOM_OPTIONS.specRes) },
  'rand-pareto-h': { type: 'string', default: String(DEFAULT_RANDOM_OPTIONS.paretoH) },
  'rand-zipfian-exp': { type: 'string', default: String(DEFAULT_RANDOM_OPTIONS.zipfianExp) },
  'rand-seed': { type: 'string', default: '0' },
  threads: { type: 'string', default: '1,2,4,8,16,32' },
  duration: { type: 'string', default: '5' },
  warmup: { type: 'string', default: '1' },
  driver: { type: 'string', default: 'builtin' },
  topology: { type: 'string', default: 'colocated' },
  'probe-duration': { type: 'string', default: '2' },
  db: { type: 'string', default: 'sbtest' },
  'report-dir': { type: 'string', default: 'reports' },
  help: { type: 'boolean', default: false },
} as const;

function number(value: string, flag: string, { min = 0, integer = true } = {}): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min || (integer && !Number.isInteger(parsed))) {
    throw new ConfigError(
      `--${flag}: expected ${integer ? 'an integer' : 'a number'} >= ${min}, got '${value}'`,
    );
  }
  return parsed;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`--${flag}: expected one of ${allowed.join(', ')}, got '${value}'`);
  }
  return value as T;
}

export async function runBench(args: string[]): Promise<void> {
  const [first, ...others] = args;
  // 'bench --help' and 'bench sweep --help' both explain the command.
  const [subcommand, rest] = first?.startsWith('-') ? ['help', args] : [first, others];
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const flags = parsed.values;
  if (flags.help || subcommand === undefined || subcommand === 'help') {
    console.log(benchHelp);
    return;
  }
  const oltp: OltpOptions = {
    ...DEFAULT_OLTP_OPTIONS,
    tables: number(flags.tables, 'tables', { min: 1 }),
    tableSize: number(flags['table-size'], 'table-size', { min: 1 }),
    rangeSize: number(flags['range-size'], 'range-size', { min: 1 }),
    skipTrx: flags['skip-trx'],
  };
  const random: RandomOptions = {
    type: oneOf<Distribution>(flags['rand-type'], DISTRIBUTIONS, 'rand-type'),
    specIter: number(flags['rand-spec-iter'], 'rand-spec-iter', { min: 1 }),
    specPct: number(flags['rand-spec-pct'], 'rand-spec-pct', { integer: false }),
    specRes: number(flags['rand-spec-res'], 'rand-spec-res', { integer: false }),
    paretoH: number(flags['rand-pareto-h'], 'rand-pareto-h', { integer: false }),
    zipfianExp: number(flags['rand-zipfian-exp'], 'rand-zipfian-exp', { integer: false }),
    seed: number(flags['rand-seed'], 'rand-seed'),
  };
  const database = flags.db;
  const targets: TargetSpec[] = (flags.target ?? SEED_TARGETS).map((text) =>
    parseTarget(text, database),
  );
  const log = (line: string): void => console.error(`bench: ${line}`);

  switch (subcommand) {
    case 'prepare':
    case 'cleanup': {
      const servers = targets.filter((target) => target.kind === 'url');
      if (servers.length === 0) {
        throw new ConfigError(
          `bench ${subcommand} needs --target NAME=mysql://... (throwaway servers are loaded by run and sweep)`,
        );
      }
      const running = await startTargets(servers, database, log);
      for (const target of running) {
        if (subcommand === 'prepare') await prepareData(target.server, database, oltp, random, log);
        else await cleanupData(target.server, database, oltp);
        log(`${subcommand}: ${target.spec.name} done`);
      }
      return;
    }
    case 'run':
    case 'sweep': {
      const threads = flags.threads
        .split(',')
        .map((value) => number(value.trim(), 'threads', { min: 1 }));
      if (subcommand === 'run' && threads.length !== 1) {
        throw new ConfigError('bench run takes one --threads count; use sweep for several');
      }
      const sweep = runSweep({
        targets,
        threads: [...threads].sort((a, b) => a - b),
        workload: oneOf<WorkloadName>(flags.workload, WORKLOADS, 'workload'),
        oltp,
        random,
        preparedStatements:
          oneOf(flags['db-ps-mode'], ['auto', 'disable'], 'db-ps-mode') === 'auto',
        durationSeconds: number(flags.duration, 'duration', { min: 1 }),
        warmupSeconds: number(flags.warmup, 'warmup'),
        driver: oneOf(flags.driver, ['builtin', 'sysbench'] as const, 'driver'),
        topology: oneOf<Topology>(flags.topology, TOPOLOGIES, 'topology'),
        probeSeconds: number(flags['probe-duration'], 'probe-duration', {
          min: 0.5,
          integer: false,
        }),
        database,
        command: `nicecache bench ${args.join(' ')}`,
        log,
        onStep: (step, index, total) => console.log(progressLine(step, index, total)),
      });
      // A topology that cannot be set up is a usage error: nothing has started yet.
      const result = await sweep.catch((error: unknown) => {
        throw error instanceof TopologyError ? new ConfigError(error.message) : error;
      });
      console.log(`\n${seedTable(result)}\n`);
      for (const line of perRunLines(result)) console.log(line);
      const files = await writeReports(result, flags['report-dir']);
      console.log(`\nreports: ${Object.values(files).join(', ')}`);
      console.log(
        `(${availableParallelism()} cores; driver CPU share is in the JSON and per-run lines)`,
      );
      return;
    }
    default:
      throw new ConfigError(`unknown bench command '${subcommand}'\n\n${benchHelp}`);
  }
}
