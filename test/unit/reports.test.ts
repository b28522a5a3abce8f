/**
 * The sweep reports (text, HTML, SVG, JSON) and the JSON report's validator, on a made-up but
 * plausible sweep: the server with its query cache off, with it on, and nicecache, at 1 to 32
 * threads. The SVG and HTML are checked as XML by xmllint, which catches what a glance at a
 * browser does not (an unescaped name, an unclosed element); the test fails rather than skips
 * without it, so a machine without it cannot pass silently.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { writeReports } from '../../src/bench/report-files.ts';
import { renderHtml, renderTpsChartSvg } from '../../src/bench/report-html.ts';
import { perRunLines, progressLine, seedTable } from '../../src/bench/report-text.ts';
import { SWEEP_RESULT_SCHEMA, validateSweepResult } from '../../src/bench/sweep-result-schema.ts';
import { SWEEP_RESULT_VERSION } from '../../src/bench/sweep-result.ts';
import type {
  ProbeResult,
  QueryCacheSample,
  StepResult,
  SweepResult,
  TargetDescription,
} from '../../src/bench/sweep-result.ts';

const THREADS = [1, 2, 4, 8, 16, 32];
const SECONDS = 60;
const QUERIES_PER_TRANSACTION = 16; // oltp_read_only: 14 SELECTs plus BEGIN and COMMIT

interface Profile {
  /** Whole tps per thread count; the fixture adds 0.4 so rounding has something to do. */
  tps: number[];
  idle: number[];
  queryCache: boolean;
  proxy: boolean;
}

// Shapes after the classic write-up: without the query cache throughput grows to 8 cores and
// levels off; with it, it stalls at about 800 tps and the CPU sits idle on the cache's mutex.
const PROFILES: Record<string, Profile> = {
  'server cache off': {
    tps: [790, 1466, 2781, 4393, 4255, 4172],
    idle: [86.2, 73.5, 48.1, 9.4, 3.1, 2.2],
    queryCache: false,
    proxy: false,
  },
  'server cache on (100 MB)': {
    tps: [662, 725, 818, 782, 731, 699],
    idle: [87.0, 80.3, 74.6, 71.2, 72.4, 73.1],
    queryCache: true,
    proxy: false,
  },
  nicecache: {
    tps: [1121, 2093, 3952, 6811, 6620, 6484],
    idle: [84.1, 69.0, 41.7, 6.3, 2.0, 1.4],
    queryCache: false,
    proxy: true,
  },
};

function targetOf(name: string): TargetDescription {
  const cacheOn = name.startsWith('server cache on');
  if (name === 'nicecache') {
    return {
      name,
      spec: 'nicecache:server cache off',
      kind: 'nicecache',
      serverVersion: '11.4.5-MariaDB',
      serverOptions: null,
      serverCpus: '0-7',
      proxyCpus: '0-7',
    };
  }
  return {
    name,
    spec: cacheOn
      ? 'mariadb:query_cache_type=1,query_cache_size=100000000'
      : 'mariadb:query_cache_type=0',
    kind: 'mariadb',
    serverVersion: '11.4.5-MariaDB',
    serverOptions: cacheOn
      ? { query_cache_type: '1', query_cache_size: '100000000' }
      : { query_cache_type: '0' },
    serverCpus: '0-7',
    proxyCpus: null,
  };
}

function stepOf(target: string, profile: Profile, column: number): StepResult {
  const threads = THREADS[column] ?? 1;
  const wholeTps = profile.tps[column] ?? 0;
  const transactions = wholeTps * SECONDS + 24;
  const queries = transactions * QUERIES_PER_TRANSACTION;
  const tps = transactions / SECONDS;
  const avg = (threads / tps) * 1000;
  const idle = profile.idle[column] ?? 0;
  const user = (100 - idle) * 0.84;
  let queryCache: QueryCacheSample | null = null;
  if (profile.queryCache) {
    const selects = transactions * 14;
    const hits = Math.round(selects * 0.93);
    queryCache = {
      hits,
      inserts: selects - hits,
      notCached: 0,
      lowmemPrunes: column > 3 ? 12 * column : 0,
      selects: selects - hits,
      hitRatio: hits / selects,
      lockWaits: threads === 1 ? 0 : 180 * threads * threads,
      lockWaitSeconds: threads === 1 ? 0 : 0.004 * threads * threads,
    };
  }
  return {
    target,
    threads,
    seconds: SECONDS,
    transactions,
    queries,
    tps,
    qps: queries / SECONDS,
    latencyMs: { p50: avg * 0.9, p95: avg * 1.6, p99: avg * 2.4, max: avg * 9, avg },
    errors: 0,
    ignoredErrors: 0,
    reconnects: 0,
    driverCpu: 1.5 * Math.min(threads, 8),
    system: {
      user,
      system: 100 - idle - user,
      idle,
      iowait: 0,
      contextSwitchesPerSecond: Math.round(tps * 48.7),
    },
    queryCache,
    proxyCpuMicrosPerQuery: profile.proxy ? 11.4 + column * 0.3 : null,
    serverCpuMicrosPerTransaction: 1830 - column * 12,
    nicecache: profile.proxy
      ? {
          direct: 'server cache off',
          hits: Math.round(queries * 0.8),
          misses: queries - Math.round(queries * 0.8),
          floorCpuMicrosPerQuery: 4 + column * 0.1,
          perQueryToFloor: (11.4 + column * 0.3) / (4 + column * 0.1),
          proxyCpuMicrosPerHit: 5,
          perHitToFloor: 5 / (4 + column * 0.1),
          proxyCpuMicrosPerMiss: 37,
          perMissToFloor: 37 / (4 + column * 0.1),
          serverCpuToDirect: 0.25,
        }
      : null,
  };
}

function probesOf(): ProbeResult[] {
  return THREADS.flatMap((threads, column) => [
    {
      kind: 'node-floor' as const,
      target: null,
      threads,
      seconds: 2,
      queries: 40_000,
      qps: 20_000,
      cpuMicrosPerQuery: 4 + column * 0.1,
      hitRatio: null,
      errors: 0,
    },
    {
      kind: 'hits' as const,
      target: 'nicecache',
      threads,
      seconds: 2,
      queries: 30_000,
      qps: 15_000,
      cpuMicrosPerQuery: 5,
      hitRatio: 0.9997,
      errors: 0,
    },
  ]);
}

function fixture(): SweepResult {
  const names = Object.keys(PROFILES);
  const steps: StepResult[] = [];
  THREADS.forEach((_threads, column) => {
    for (const name of names) {
      const profile = PROFILES[name];
      if (profile !== undefined) steps.push(stepOf(name, profile, column));
    }
  });
  return {
    version: 3,
    startedAt: '2025-03-14T09:26:53.589Z',
    finishedAt: '2025-03-14T09:51:12.004Z',
    command: 'nicecache bench --threads 1,2,4,8,16,32 --time 60 --warmup 10',
    machine: {
      hostname: 'bench-01',
      cpus: 8,
      cpuModel: 'AMD EPYC 7B13',
      memoryBytes: 32 * 2 ** 30,
      os: 'Linux 6.1.0-31-amd64',
      node: 'v24.9.0',
      nicecache: '0.1.0',
    },
    options: {
      driver: 'builtin',
      workload: 'oltp_read_only',
      threads: [...THREADS],
      durationSeconds: SECONDS,
      warmupSeconds: 10,
      tables: 1,
      tableSize: 2_000_000,
      rangeSize: 100,
      skipTrx: false,
      psMode: 'disable',
      distribution: 'special',
      topology: 'colocated',
      probeSeconds: 2,
    },
    cpus: null,
    clientCpus: '0-7',
    targets: names.map(targetOf),
    steps,
    probes: probesOf(),
  };
}

/** The fields of a table line: the label, then the right-aligned cells. */
function tableRow(line: string, columns: number): { label: string; cells: string[] } {
  const words = line.trim().split(/\s+/);
  return {
    label: words.slice(0, words.length - columns).join(' '),
    cells: words.slice(words.length - columns),
  };
}

describe('seedTable', () => {
  const lines = seedTable(fixture()).split('\n');

  test('starts with the workload, table size and duration', () => {
    assert.match(lines[0] ?? '', /^oltp_read_only: 1 table of 2000000 rows, 60 s per step/);
  });

  test('has a row per target and a column per thread count, tps rounded', () => {
    const start = lines.indexOf('Throughput in transactions per second:');
    assert.notEqual(start, -1);
    const table = lines.slice(start + 1, start + 5);
    assert.deepEqual(tableRow(table[0] ?? '', 6).cells, THREADS.map(String));
    assert.deepEqual(
      table.slice(1).map((line) => tableRow(line, 6)),
      [
        { label: 'server cache off', cells: ['790', '1466', '2781', '4393', '4255', '4172'] },
        { label: 'server cache on (100 MB)', cells: ['662', '725', '818', '782', '731', '699'] },
        { label: 'nicecache', cells: ['1121', '2093', '3952', '6811', '6620', '6484'] },
      ],
    );
    // Right-aligned: every line of the table is equally long, numbers end in the same column.
    assert.equal(new Set(table.map((line) => line.length)).size, 1);
    assert.equal(table[0]?.indexOf('  32') === -1, false);
  });

  test('adds each target relative to the first', () => {
    const start = lines.indexOf('Throughput relative to server cache off:');
    assert.notEqual(start, -1);
    const rows = lines.slice(start + 2, start + 4).map((line) => tableRow(line, 6));
    assert.equal(rows[0]?.label, 'server cache on (100 MB) / server cache off');
    assert.equal(rows[1]?.label, 'nicecache / server cache off');
    const expected = PROFILES.nicecache?.tps.map((tps, column) =>
      ((tps + 0.4) / ((PROFILES['server cache off']?.tps[column] ?? 1) + 0.4)).toFixed(2),
    );
    assert.deepEqual(rows[1]?.cells, expected);
    assert.equal(rows[0]?.cells[3], '0.18');
  });

  test('shows a missing step as a dash', () => {
    const result = fixture();
    result.steps = result.steps.filter(
      (step) => !(step.target === 'nicecache' && step.threads === 8),
    );
    const row = seedTable(result)
      .split('\n')
      .find((line) => line.startsWith('nicecache '));
    assert.deepEqual(tableRow(row ?? '', 6).cells, ['1121', '2093', '3952', '-', '6620', '6484']);
  });
});

describe('seedTable: the costs beside the Node floor', () => {
  const lines = seedTable(fixture()).split('\n');
  const table = (title: string, rows: number): { label: string; cells: string[] }[] => {
    const start = lines.indexOf(title);
    assert.notEqual(start, -1, `no '${title}' in\n${lines.join('\n')}`);
    assert.deepEqual(tableRow(lines[start + 1] ?? '', 6).cells, THREADS.map(String));
    return lines.slice(start + 2, start + 2 + rows).map((line) => tableRow(line, 6));
  };

  test('the floor measured at every thread count', () => {
    assert.deepEqual(table('Node floor (point selects, same sessions), CPU µs per query:', 1), [
      { label: 'node floor', cells: ['4.0', '4.1', '4.2', '4.3', '4.4', '4.5'] },
    ]);
  });

  test('the proxy per query, per hit and per miss as multiples of it', () => {
    const rows = table(
      'Proxy CPU ÷ Node floor (a miss is what the step spent beyond its hits):',
      4,
    );
    assert.deepEqual(
      rows.map((row) => row.label),
      [
        'nicecache per query',
        'nicecache per hit',
        'nicecache per miss',
        'nicecache hits ÷ queries',
      ],
    );
    assert.deepEqual(rows[0]?.cells.slice(0, 2), ['2.85', '2.85']);
    assert.deepEqual(rows[1]?.cells.slice(0, 2), ['1.25', '1.22']);
    assert.deepEqual(rows[2]?.cells[0], '9.25');
    assert.deepEqual(rows[3]?.cells[0], '80%');
  });

  test('every target’s server CPU per transaction, and nicecache’s share of direct', () => {
    const rows = table('Server CPU per transaction, µs (through nicecache ÷ direct below):', 4);
    assert.deepEqual(rows[0], {
      label: 'server cache off',
      cells: ['1830', '1818', '1806', '1794', '1782', '1770'],
    });
    assert.deepEqual(rows[3], {
      label: 'nicecache / server cache off',
      cells: ['0.25', '0.25', '0.25', '0.25', '0.25', '0.25'],
    });
  });

  test('says where the processes ran', () => {
    assert.match(lines[0] ?? '', /, colocated$/);
    const split = fixture();
    split.options.topology = 'split';
    split.cpus = { server: '4-7', clientAndProxy: '0-3' };
    assert.match(
      seedTable(split).split('\n')[0] ?? '',
      /, split: server on CPU 4-7, client and proxy on CPU 0-3$/,
    );
    assert.deepEqual(validateSweepResult(split), []);
  });

  test('a sweep without probes or costs prints dashes, not NaN', () => {
    const bare = fixture();
    bare.probes = [];
    for (const step of bare.steps) step.nicecache = null;
    const text = seedTable(bare);
    assert.doesNotMatch(text, /NaN|undefined|Node floor/);
  });
});

describe('perRunLines', () => {
  const result = fixture();
  const lines = perRunLines(result);

  test('one line per step, in the order they ran', () => {
    assert.equal(lines.length, result.steps.length);
    lines.forEach((line, index) => {
      const step = result.steps[index];
      assert.ok(line.startsWith(`${step?.target}: ${step?.threads} thread`), line);
    });
  });

  test('has the seed numbers and the cache counters where there are any', () => {
    const cacheOn8 =
      lines[result.steps.findIndex((s) => s.target.includes('on') && s.threads === 8)];
    assert.equal(
      cacheOn8,
      'server cache on (100 MB): 8 threads, 60 s, 751104 queries, 12518.4 qps, 1564.8 qps per thread, ' +
        '782.4 tps, p95 16.4 ms, cpu us/sy/id/wa 24/5/71/0, 38103 cs/s, driver cpu 12%, ' +
        'server 1794 µs cpu per transaction, query cache 611211 hits, hit ratio 93.0%, 11520 lock waits (0.256 s)',
    );
    assert.match(
      lines[2] ?? '',
      /^nicecache: 1 thread, .* proxy 11\.4 µs cpu per query, server 1830 µs cpu per transaction, 861235 hits, 215309 misses, proxy per hit 5\.0 µs \(1\.25× floor\), per miss 37\.0 µs \(9\.25× floor\), server cpu 0\.25× server cache off$/,
    );
    assert.doesNotMatch(lines[0] ?? '', /query cache|proxy|error/);
  });

  test('says how many fills admission declined, where the target reports any', () => {
    const withDeclines = fixture();
    const index = withDeclines.steps.findIndex((s) => s.queryCache !== null);
    const step = withDeclines.steps[index]!;
    step.queryCache = { ...step.queryCache!, admissionDeclined: 4242 };
    assert.deepEqual(validateSweepResult(withDeclines), []);
    assert.match(perRunLines(withDeclines)[index] ?? '', /, 4242 fills declined(,|$)/);
    assert.doesNotMatch(lines[index] ?? '', /declined/);
    step.queryCache = { ...step.queryCache, admissionDeclined: -1 };
    assert.notDeepEqual(validateSweepResult(withDeclines), []);
  });
});

test('progressLine is one short line', () => {
  const result = fixture();
  const step = result.steps[10];
  assert.ok(step !== undefined);
  assert.equal(
    progressLine(step, 10, result.steps.length, 24),
    '[11/18]    8 threads  server cache on (100 MB)      782.4 tps     12518 qps  p95 16.4 ms  idle 71%  errors 0',
  );
});

describe('validateSweepResult', () => {
  test('the published JSON Schema is of this version of the report', () => {
    const schema = SWEEP_RESULT_SCHEMA as { properties: { version: { const: number } } };
    assert.equal(schema.properties.version.const, SWEEP_RESULT_VERSION);
  });

  test('accepts the fixture, and its JSON read back', () => {
    assert.deepEqual(validateSweepResult(fixture()), []);
    assert.deepEqual(validateSweepResult(JSON.parse(JSON.stringify(fixture()))), []);
  });

  test('reports a missing field', () => {
    const result = fixture() as unknown as { steps: { latencyMs: Record<string, unknown> }[] };
    delete result.steps[4]?.latencyMs.p95;
    assert.deepEqual(validateSweepResult(result), ['steps[4].latencyMs.p95: missing']);
    const noMachine = fixture() as unknown as Record<string, unknown>;
    delete noMachine.machine;
    assert.deepEqual(validateSweepResult(noMachine), ['machine: missing']);
  });

  test('reports a wrong type', () => {
    const result = fixture() as unknown as { machine: Record<string, unknown> };
    result.machine.cpus = '8';
    assert.deepEqual(validateSweepResult(result), [
      'machine.cpus: expected a whole number, got "8"',
    ]);
    const notAnArray = fixture() as unknown as Record<string, unknown>;
    notAnArray.targets = {};
    assert.ok(validateSweepResult(notAnArray).includes('targets: expected an array, got a object'));
  });

  test('reports NaN, and the null JSON turns it into', () => {
    const result = fixture();
    const step = result.steps[7];
    assert.ok(step !== undefined);
    step.tps = Number.NaN;
    assert.deepEqual(validateSweepResult(result), [
      'steps[7].tps: expected a finite number, got NaN',
    ]);
    assert.deepEqual(validateSweepResult(JSON.parse(JSON.stringify(result))), [
      'steps[7].tps: expected a finite number, got null',
    ]);
  });

  test('reports a step naming an unknown target', () => {
    const result = fixture();
    const step = result.steps[5];
    assert.ok(step !== undefined);
    step.target = 'nicecache 2';
    assert.deepEqual(validateSweepResult(result), [
      "steps[5].target: 'nicecache 2' is not a declared target",
    ]);
  });

  test('reports the rest of what the reports rely on', () => {
    const result = fixture();
    const [first, second] = result.steps;
    assert.ok(first !== undefined && second !== undefined);
    result.steps[0] = { ...second, threads: 2 };
    result.steps[1] = first;
    first.system.idle = -1;
    (result as unknown as Record<string, unknown>).version = 4;
    (result.options as unknown as Record<string, unknown>).extra = true;
    // Problems of shape (the JSON Schema's) first, then those of cross-reference.
    assert.deepEqual(validateSweepResult(result), [
      'version: expected 3, got 4',
      'options.extra: unexpected field',
      'steps[1].system.idle: expected a non-negative number, got -1',
      'steps[1].threads: 1 after 2: steps must run in ascending thread order',
      "steps[4]: a second step of 'server cache on (100 MB)' at 2 threads",
    ]);
    assert.deepEqual(validateSweepResult(null), ['(root): expected an object, got null']);
  });
});

describe('validateSweepResult: probes, costs and CPUs', () => {
  test('reports probes that name nothing declared, and bad CPU lists', () => {
    const result = fixture();
    const [floor, hits] = result.probes;
    assert.ok(floor !== undefined && hits !== undefined);
    floor.target = 'nicecache';
    hits.target = 'elsewhere';
    result.probes.push({ ...hits, target: 'nicecache', threads: 3 });
    result.clientCpus = 'all';
    const target = result.targets[0];
    assert.ok(target !== undefined);
    target.serverCpus = '1-';
    assert.deepEqual(validateSweepResult(result), [
      'clientCpus: expected a CPU list such as 0-1, got "all"',
      'targets[0].serverCpus: expected a CPU list such as 0-1, got "1-"',
      'probes[0].target: the Node floor probe names no target',
      "probes[1].target: 'elsewhere' is not a declared target",
      'probes[12].threads: 3 is not in options.threads',
    ]);
  });

  test('reports a cost that is not a measure', () => {
    const result = fixture();
    const step = result.steps.find((s) => s.nicecache !== null);
    assert.ok(step?.nicecache);
    step.nicecache.perHitToFloor = -1;
    delete (step.nicecache as unknown as Record<string, unknown>).misses;
    const index = result.steps.indexOf(step);
    assert.deepEqual(validateSweepResult(result), [
      `steps[${index}].nicecache.misses: missing`,
      `steps[${index}].nicecache.perHitToFloor: expected a non-negative number, got -1`,
    ]);
  });
});

/** xmllint's verdict on a document: null when well-formed, else its complaint. */
function xmlProblems(document: string): string | null {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '-'], {
    input: document,
    encoding: 'utf8',
  });
  if (run.error !== undefined) {
    const missing = (run.error as NodeJS.ErrnoException).code === 'ENOENT';
    assert.fail(
      missing
        ? 'xmllint is needed to check the SVG and HTML reports: apt-get install libxml2-utils'
        : `xmllint did not run: ${run.error.message}`,
    );
  }
  return run.status === 0 ? null : run.stderr;
}

/** The x,y pairs of a path made of M, L and Z commands (the only ones the charts draw). */
function pathPoints(d: string): [number, number][] {
  assert.match(d, /^[MLZ\d.\s-]+$/, `path with commands other than M, L, Z: ${d}`);
  const numbers = d.replace(/[MLZ]/g, ' ').trim().split(/\s+/).map(Number);
  const points: [number, number][] = [];
  for (let i = 0; i + 1 < numbers.length; i += 2)
    points.push([numbers[i] ?? 0, numbers[i + 1] ?? 0]);
  return points;
}

function polylinePoints(points: string): [number, number][] {
  return points
    .trim()
    .split(/\s+/)
    .map((pair) => {
      const [x, y] = pair.split(',').map(Number);
      return [x ?? Number.NaN, y ?? Number.NaN];
    });
}

describe('renderTpsChartSvg', () => {
  const result = fixture();
  const svg = renderTpsChartSvg(result);

  test('is a well-formed standalone SVG document', () => {
    assert.ok(
      svg.startsWith(
        '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"',
      ),
    );
    assert.equal(xmlProblems(svg), null);
    assert.doesNotMatch(svg, /NaN|Infinity|undefined/);
  });

  test('draws every coordinate inside the viewBox', () => {
    const viewBox = /viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)"/.exec(svg);
    assert.ok(viewBox !== null);
    const width = Number(viewBox[1]);
    const height = Number(viewBox[2]);
    const points = [
      ...[...svg.matchAll(/<polyline points="([^"]*)"/g)].flatMap((m) =>
        polylinePoints(m[1] ?? ''),
      ),
      ...[...svg.matchAll(/<path d="([^"]*)"/g)].flatMap((m) => pathPoints(m[1] ?? '')),
      ...[...svg.matchAll(/<circle cx="([^"]*)" cy="([^"]*)"/g)].map((m): [number, number] => [
        Number(m[1]),
        Number(m[2]),
      ]),
      ...[...svg.matchAll(/<(?:line|text) x1?="([^"]*)" y1?="([^"]*)"/g)].map(
        (m): [number, number] => [Number(m[1]), Number(m[2])],
      ),
    ];
    assert.ok(points.length > 50);
    for (const [x, y] of points) {
      assert.ok(
        x >= 0 && x <= width && y >= 0 && y <= height,
        `(${x}, ${y}) outside ${width}×${height}`,
      );
    }
  });

  test('has one series per target, a point per thread count, evenly spaced on log2', () => {
    const series = [...svg.matchAll(/<g data-series="([^"]*)">([\s\S]*?)<\/g>/g)];
    assert.deepEqual(
      series.map((m) => m[1]),
      result.targets.map((target) => target.name),
    );
    const tops: number[] = [];
    for (const [, name, body = ''] of series) {
      const lines = [...body.matchAll(/<polyline points="([^"]*)"/g)];
      assert.equal(lines.length, 1, `${name}: one unbroken line`);
      const points = polylinePoints(lines[0]?.[1] ?? '');
      assert.equal(points.length, THREADS.length, `${name}: a point per thread count`);
      const gaps = points.slice(1).map(([x], i) => x - (points[i]?.[0] ?? 0));
      for (const gap of gaps)
        assert.ok(Math.abs(gap - (gaps[0] ?? 0)) < 0.25, `uneven x: ${gaps.join()}`);
      const markers = body.match(/<(circle|path) /g) ?? [];
      assert.equal(markers.length, THREADS.length, `${name}: a marker per thread count`);
      tops.push(Math.min(...points.map(([, y]) => y)));
    }
    // nicecache's line is the highest (smallest y), the cache-on line the lowest.
    assert.ok((tops[2] ?? 0) < (tops[0] ?? 0) && (tops[0] ?? 0) < (tops[1] ?? 0));
    for (const count of THREADS) assert.match(svg, new RegExp(`>${count}</text>`));
    assert.match(svg, />8,000<\/text>/);
  });
});

describe('renderHtml', () => {
  test('holds the tables, three charts and the per-run lines, and is well-formed', () => {
    const result = fixture();
    const html = renderHtml(result);
    assert.ok(html.startsWith('<!DOCTYPE html>'));
    assert.equal((html.match(/<svg /g) ?? []).length, 3);
    assert.match(html, /<caption>Transactions per second<\/caption>/);
    assert.match(
      html,
      /<tr><th scope="row">nicecache<\/th><td>1121<\/td><td>2093<\/td><td>3952<\/td><td>6811<\/td><td>6620<\/td><td>6484<\/td><\/tr>/,
    );
    assert.match(html, /<th scope="row">nicecache \/ server cache off<\/th><td>1\.42<\/td>/);
    for (const line of perRunLines(result)) assert.ok(html.includes(line), line);
    assert.doesNotMatch(html, /<script|<link|src=|href=|url\(/);
    assert.equal(xmlProblems(html), null);
  });

  test('escapes every text', () => {
    const result = fixture();
    result.command = `nicecache bench --comment '<b>&"x"</b>'`;
    result.machine.hostname = 'a<b>&c';
    const target = result.targets[2];
    assert.ok(target !== undefined);
    target.name = 'nice<cache> & "co"';
    for (const step of result.steps) if (step.target === 'nicecache') step.target = target.name;
    const html = renderHtml(result);
    assert.equal(xmlProblems(html), null);
    assert.equal(xmlProblems(renderTpsChartSvg(result)), null);
    assert.ok(html.includes('nice&lt;cache&gt; &amp; &quot;co&quot;'));
    assert.ok(html.includes('a&lt;b&gt;&amp;c'));
    assert.doesNotMatch(html, /<b>/);
  });
});

describe('writeReports', () => {
  let directory = '';
  after(async () => {
    if (directory !== '') await rm(directory, { recursive: true, force: true });
  });

  test('writes the four reports into a directory it creates', async () => {
    directory = await mkdtemp(join(tmpdir(), 'nicecache-reports-'));
    const target = join(directory, 'reports', 'today');
    const result = fixture();
    const paths = await writeReports(result, target);
    assert.deepEqual((await readdir(target)).sort(), [
      'sweep-2025-03-14T092653Z-tps.svg',
      'sweep-2025-03-14T092653Z.html',
      'sweep-2025-03-14T092653Z.json',
      'sweep-2025-03-14T092653Z.txt',
    ]);
    const json: unknown = JSON.parse(await readFile(paths.json, 'utf8'));
    assert.deepEqual(validateSweepResult(json), []);
    assert.deepEqual(json, result);
    assert.equal(await readFile(paths.html, 'utf8'), renderHtml(result));
    assert.equal(await readFile(paths.svg, 'utf8'), renderTpsChartSvg(result));
    const text = await readFile(paths.text, 'utf8');
    assert.ok(text.startsWith(seedTable(result)));
    assert.ok(text.endsWith(`${perRunLines(result).join('\n')}\n`));
  });
});
