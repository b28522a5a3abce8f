/**
 * The harness end to end on tiny tables: a sweep over a running server, nicecache in front of it
 * and a throwaway MariaDB with its query cache on; the sysbench driver; the CLI. The JSON report
 * must validate and the SVG must parse.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OLTP_OPTIONS } from '../../src/bench/oltp-workload.ts';
import type { OltpOptions } from '../../src/bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS } from '../../src/bench/random.ts';
import { writeReports } from '../../src/bench/report-files.ts';
import { validateSweepResult } from '../../src/bench/sweep-result-schema.ts';
import type { SweepResult } from '../../src/bench/sweep-result.ts';
import { cleanupData, runSweep } from '../../src/bench/sweep.ts';
import type { SweepOptions } from '../../src/bench/sweep.ts';
import { TargetError, parseTarget } from '../../src/bench/targets.ts';
import { ownCpus, planSplit, threadCpuLists } from '../../src/bench/topology.ts';
import { seedTable } from '../../src/bench/report-text.ts';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';

const DB = 'nc_bench_sweep';
const serverUrl = `mysql://${BACKEND_USER}:${BACKEND_PASSWORD}@${BACKEND_HOST}:${BACKEND_PORT}/${DB}`;
const oltp: OltpOptions = { ...DEFAULT_OLTP_OPTIONS, tables: 2, tableSize: 300 };

function sweepOptions(overrides: Partial<SweepOptions>): SweepOptions {
  return {
    targets: [parseTarget(`direct=${serverUrl}`, DB)],
    threads: [1, 2],
    workload: 'oltp_read_write',
    oltp,
    random: DEFAULT_RANDOM_OPTIONS,
    preparedStatements: false,
    durationSeconds: 1,
    warmupSeconds: 0,
    driver: 'builtin',
    database: DB,
    command: 'test',
    log: () => {},
    onStep: () => {},
    ...overrides,
  };
}

function assertSvgParses(path: string): void {
  const xmllint = spawnSync('xmllint', ['--noout', path], { encoding: 'utf8' });
  if (xmllint.error) assert.fail('xmllint is missing: apt-get install libxml2-utils');
  assert.equal(xmllint.status, 0, xmllint.stderr);
}

describe('benchmark sweep', () => {
  let reportDir: string;

  before(() => {
    reportDir = mkdtempSync(join(tmpdir(), 'nicecache-report-'));
  });

  after(async () => {
    rmSync(reportDir, { recursive: true, force: true });
    await cleanupData(
      {
        host: BACKEND_HOST,
        port: BACKEND_PORT,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: null,
      },
      DB,
      oltp,
    );
    const connection = await MysqlConnection.connect({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: null,
    });
    await connection.query(`DROP DATABASE IF EXISTS ${DB}`);
    connection.close();
  });

  test('a server and nicecache in front of it, interleaved; reports validate', async () => {
    const seen: string[] = [];
    const result = await runSweep(
      sweepOptions({
        targets: [
          parseTarget(`direct=${serverUrl}`, DB),
          parseTarget('proxied=nicecache:direct:workers=1', DB),
        ],
        onStep: (step, index, total) =>
          seen.push(`${index}/${total} ${step.target} ${step.threads}`),
      }),
    );
    assert.deepEqual(validateSweepResult(result), []);
    // Thread counts ascending, the target order rotating between them.
    assert.deepEqual(seen, ['0/4 direct 1', '1/4 proxied 1', '2/4 proxied 2', '3/4 direct 2']);
    for (const step of result.steps) {
      assert.ok(step.transactions > 0, `${step.target} ran transactions`);
      assert.equal(step.errors, 0);
      assert.ok(
        step.queries >= step.transactions * 18,
        'oltp_read_write sends 18+ queries per transaction',
      );
      assert.ok(step.system.idle >= 0 && step.system.idle <= 100);
      assert.ok(
        step.latencyMs.p50 <= step.latencyMs.p95 && step.latencyMs.p95 <= step.latencyMs.max,
      );
    }
    const proxied = result.steps.filter((step) => step.target === 'proxied');
    assert.ok(
      proxied.every(
        (step) => step.proxyCpuMicrosPerQuery !== null && step.proxyCpuMicrosPerQuery > 0,
      ),
    );
    assert.ok(
      result.steps
        .filter((step) => step.target === 'direct')
        .every((step) => step.proxyCpuMicrosPerQuery === null),
    );
    // The server runs on this machine: its pid file names it, and every step saw it work.
    assert.ok(
      result.steps.every(
        (step) =>
          step.serverCpuMicrosPerTransaction !== null && step.serverCpuMicrosPerTransaction > 0,
      ),
      'server CPU per transaction measured for every step',
    );

    // The Node floor at each thread count, and a hit probe through the proxy after its steps.
    for (const threads of [1, 2]) {
      const floor = result.probes.find((p) => p.kind === 'node-floor' && p.threads === threads);
      assert.ok(floor !== undefined && floor.queries > 0 && floor.errors === 0);
      assert.ok(floor.cpuMicrosPerQuery !== null && floor.cpuMicrosPerQuery > 0);
      const hits = result.probes.find((p) => p.kind === 'hits' && p.threads === threads);
      assert.equal(hits?.target, 'proxied');
      assert.ok(hits.hitRatio !== null && hits.hitRatio > 0.9, 'the probe’s few rows are cached');
    }
    for (const step of proxied) {
      const cost = step.nicecache;
      assert.ok(cost !== null);
      assert.equal(cost.direct, 'direct');
      assert.equal(cost.hits + cost.misses, step.queries);
      assert.ok(cost.misses > 0, 'read_write sends BEGIN, COMMIT and writes to the server');
      assert.ok(cost.perQueryToFloor !== null && cost.serverCpuToDirect !== null);
    }
    assert.ok(result.steps.filter((s) => s.target === 'direct').every((s) => s.nicecache === null));
    assert.equal(result.options.topology, 'colocated');
    assert.equal(result.cpus, null);

    const files = await writeReports(result, reportDir);
    const json = JSON.parse(readFileSync(files.json, 'utf8')) as SweepResult;
    assert.deepEqual(validateSweepResult(json), []);
    assertSvgParses(files.svg);
    const html = readFileSync(files.html, 'utf8');
    assert.match(html, /proxied/);
    assert.match(readFileSync(files.text, 'utf8'), /direct\s+\d+\s+\d+/);
  });

  test('a throwaway MariaDB with its query cache on reports cache hits and lock evidence', async () => {
    const result = await runSweep(
      sweepOptions({
        targets: [
          parseTarget(
            'cached=mariadb:query_cache_type=1,query_cache_size=16M,performance_schema=ON,performance_schema_instrument=wait/synch/%/sql/Query_cache%=ON',
            DB,
          ),
        ],
        threads: [2],
        workload: 'oltp_read_only',
        oltp: { ...oltp, tableSize: 50 },
      }),
    );
    assert.deepEqual(validateSweepResult(result), []);
    const [step] = result.steps;
    assert.ok(step!.queryCache !== null);
    assert.ok(step!.queryCache.hits > 0, 'repeated reads hit the server cache');
    assert.ok(step!.queryCache.lockWaits !== null && step!.queryCache.lockWaits > 0);
    assert.equal(result.targets[0]!.kind, 'mariadb');
  });

  test('--topology split: the server on its own CPUs, the bench, proxy and floor on the others', async (t) => {
    const cpus = ownCpus();
    if (cpus.length < 2) {
      t.skip('needs two CPUs');
      return;
    }
    const plan = planSplit(cpus);
    // Each process the sweep started, by name, with the CPUs each of its threads may use: read
    // from /proc while the steps run, not from the report.
    const children = (): Array<{ comm: string; cpus: Set<string> }> =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .flatMap((pid) => {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            if (ppid !== process.pid) return [];
            const threads = threadCpuLists(Number(pid));
            if (threads === null) return [];
            return [
              { comm: readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), cpus: new Set(threads) },
            ];
          } catch {
            return []; // gone meanwhile
          }
        });
    const seen: Array<Array<{ comm: string; cpus: Set<string> }>> = [];
    const ownThreads: Set<string>[] = [];
    const result = await runSweep(
      sweepOptions({
        targets: [
          parseTarget('server=mariadb:query_cache_type=0', DB),
          parseTarget('proxied=nicecache:server:workers=1', DB),
        ],
        topology: 'split',
        threads: [2],
        workload: 'oltp_read_only',
        probeSeconds: 1,
        onStep: () => {
          seen.push(children());
          ownThreads.push(new Set(threadCpuLists(process.pid)));
        },
      }),
    );
    assert.deepEqual(validateSweepResult(result), []);
    assert.equal(seen.length, 2);
    for (const processes of seen) {
      const servers = processes.filter((p) => p.comm === 'mariadbd');
      const nodes = processes.filter((p) => p.comm !== 'mariadbd');
      assert.equal(servers.length, 1, 'the throwaway server');
      assert.deepEqual([...servers[0]!.cpus], [plan.server], 'every server thread on its CPUs');
      // The proxy and the Node floor.
      assert.equal(nodes.length, 2, nodes.map((p) => p.comm).join(', '));
      for (const node of nodes) assert.deepEqual([...node.cpus], [plan.clientAndProxy]);
    }
    for (const threads of ownThreads) assert.deepEqual([...threads], [plan.clientAndProxy]);
    assert.deepEqual(result.cpus, plan);
    assert.equal(result.options.topology, 'split');
    assert.equal(result.clientCpus, plan.clientAndProxy);
    assert.deepEqual(
      result.targets.map((target) => [target.name, target.serverCpus, target.proxyCpus]),
      [
        ['server', plan.server, null],
        ['proxied', plan.server, plan.clientAndProxy],
      ],
    );
    // The sweep gives the test process its CPUs back.
    assert.deepEqual(ownCpus(), cpus);
    assert.match(seedTable(result), new RegExp(`split: server on CPU ${plan.server}, `));
  });

  test('--topology split refuses a server it did not start', async () => {
    const before = ownCpus();
    await assert.rejects(
      runSweep(sweepOptions({ topology: 'split' })),
      /split pins the servers the bench starts; 'direct' is a running server/,
    );
    assert.deepEqual(ownCpus(), before);
  });

  test('the sysbench driver measures the same step', async () => {
    const result = await runSweep(
      sweepOptions({ driver: 'sysbench', threads: [2], workload: 'oltp_read_only' }),
    );
    assert.deepEqual(validateSweepResult(result), []);
    const [step] = result.steps;
    assert.ok(step!.transactions > 0);
    assert.ok(step!.latencyMs.p95 > 0, 'latency from sysbench’s histogram');
  });

  test('bad targets get clear errors', () => {
    assert.throws(() => parseTarget('nope', DB), TargetError);
    assert.throws(() => parseTarget('x=postgres://h/db', DB), /none of mysql/);
    assert.throws(() => parseTarget('x=mariadb:query_cache_type', DB), /name=value/);
    return assert.rejects(
      runSweep(sweepOptions({ targets: [parseTarget('p=nicecache:missing', DB)] })),
      /no target named 'missing'/,
    );
  });

  test('the CLI runs a sweep and prints the seed-style table', () => {
    const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
    const run = spawnSync(
      process.execPath,
      [
        main,
        'bench',
        'sweep',
        '--target',
        `direct=${serverUrl}`,
        '--threads',
        '1,2',
        '--duration',
        '1',
        '--warmup',
        '0',
        '--tables',
        '2',
        '--table-size',
        '300',
        '--report-dir',
        reportDir,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /Throughput in transactions per second:\n\s+1\s+2\ndirect\s+\d+\s+\d+/,
    );
    assert.match(run.stdout, /direct: 2 threads, 1 s, \d+ queries/);
    const usage = spawnSync(process.execPath, [main, 'bench', 'sweep', '--threads', 'x'], {
      encoding: 'utf8',
    });
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /--threads: expected an integer/);
    const topology = spawnSync(process.execPath, [main, 'bench', 'sweep', '--topology', 'apart'], {
      encoding: 'utf8',
    });
    assert.equal(topology.status, 2);
    assert.match(topology.stderr, /--topology: expected one of colocated, split, got 'apart'/);
    const running = spawnSync(
      process.execPath,
      [main, 'bench', 'sweep', '--topology', 'split', '--target', `direct=${serverUrl}`],
      { encoding: 'utf8' },
    );
    assert.equal(running.status, 2, running.stderr);
    assert.match(running.stderr, /'direct' is a running server/);
  });
});
