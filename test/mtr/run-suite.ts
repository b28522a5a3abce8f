/**
 * MariaDB's own regression suite (mysql-test-run, the `main` tests) through nicecache.
 *
 * Starts a server bootstrapped by mtr, then runs the tests against it directly, through
 * nicecache with its cache on, through nicecache with its cache off (relay only), and with the
 * cache on over the compressed protocol (mtr's --compress: every connection of every test), and fails
 * when a test that passes directly fails through the proxy with differences no accepted entry
 * explains, or when a test that fails directly fails differently through the proxy.
 *
 *   node test/mtr/run-suite.ts [--list FILE | --sample | --tests a,b,c]
 *                              [--modes direct,cache-on,cache-off,compressed]
 *                              [--accepted FILE] [--known FILE] [--report FILE] [--keep]
 *                              [--test-timeout MINUTES]
 *
 * Tests listed in known-failures.txt (--known) are reported while they fail in the listed modes
 * and fail the run once they pass (see known-failures.ts).
 *
 * Exit status: 0 all good, 1 differences, 2 the suite cannot run here (mtr not installed...).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { runTests } from './mtr-run.ts';
import type { TestResult } from './mtr-run.ts';
import { ServerBaseline, startMtrServer, stopMtrServer } from './mtr-server.ts';
import type { MtrServer } from './mtr-server.ts';
import {
  DERIVED_TESTS,
  copyTree,
  findInstalledTree,
  includeOptions,
  mainTests,
  serverControlIn,
  writeDerivedTests,
} from './mtr-tree.ts';
import { differencesBeyond, readKnownFailures } from './known-failures.ts';
import type { KnownFailure } from './known-failures.ts';
import { compareResults, readAcceptedDifferences } from './result-diff.ts';

const here = new URL('.', import.meta.url).pathname;

/** Each mode's proxy options (null: the server directly) and mysql-test-run options. */
const MODES = {
  direct: { proxy: null, mtr: [] },
  'cache-on': { proxy: [], mtr: [] },
  'cache-off': { proxy: ['--query-cache-size', '0'], mtr: [] },
  compressed: { proxy: [], mtr: ['--compress'] },
} as const satisfies Record<string, { proxy: readonly string[] | null; mtr: readonly string[] }>;
type Mode = keyof typeof MODES;

/** Families the issue sampled whole; the rest is taken at this stride. */
const SAMPLED_FAMILIES = ['query_cache', 'view', 'ps', 'trigger', 'sp', 'func_', 'type_'];
const SAMPLE_STRIDE = 11;

const { values } = parseArgs({
  options: {
    list: { type: 'string' },
    sample: { type: 'boolean', default: false },
    tests: { type: 'string' },
    modes: { type: 'string', default: 'direct,cache-on,cache-off,compressed' },
    accepted: { type: 'string', default: join(here, 'accepted-differences.txt') },
    known: { type: 'string', default: join(here, 'known-failures.txt') },
    report: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'test-timeout': { type: 'string', default: '5' },
  },
});

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function readList(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '');
}

/** Every test of the sampled families, and every SAMPLE_STRIDE-th of the others. */
function sampleOf(all: string[]): string[] {
  const inFamily = (test: string): boolean =>
    SAMPLED_FAMILIES.some((family) => test.startsWith(family));
  const rest = all.filter((test) => !inFamily(test));
  return all.filter(
    (test) => inFamily(test) || rest.indexOf(test) % SAMPLE_STRIDE === SAMPLE_STRIDE - 1,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  const installed = findInstalledTree();
  if (installed === null) {
    log(
      'mtr suite: MariaDB\'s test suite is not installed (no mariadb-test-run.pl found). Install the "mariadb-test" package (apt-get install mariadb-test, or bash scripts/setup.sh) or set NICECACHE_MTR_DIR to its mysql-test directory.',
    );
    return 2;
  }
  const modes = values.modes.split(',').map((mode) => {
    if (!(mode in MODES))
      throw new Error(`unknown mode ${mode}: one of ${Object.keys(MODES).join(', ')}`);
    return mode as Mode;
  });
  const accepted = readAcceptedDifferences(values.accepted);
  const known = readKnownFailures(values.known);
  const copy = copyTree(installed);
  log(`mtr suite: tests from ${installed}, work directory ${copy.work}`);
  writeDerivedTests(copy.tree);
  const all = mainTests(copy.tree);
  const wanted =
    values.tests !== undefined
      ? values.tests.split(',')
      : values.sample
        ? sampleOf(all)
        : readList(values.list ?? join(here, 'suite.txt'));
  const tests: string[] = [];
  const leftOut = new Map<string, string>();
  for (const test of wanted) {
    if (!all.includes(test)) throw new Error(`no test main.${test} in ${copy.tree}`);
    const control = serverControlIn(copy.tree, test);
    if (control === null) tests.push(test);
    else leftOut.set(test, control);
  }
  for (const [test, why] of leftOut) log(`left out main.${test}: controls the server (${why})`);

  const vardir = join(copy.work, 'var');
  const serverOptions = includeOptions(copy.tree, ['have_innodb', 'have_partition']);
  let server: MtrServer | null = null;
  let proxy: ProxyProcess | null = null;
  const results = new Map<Mode, Map<string, TestResult>>();
  const minutes = new Map<Mode, number>();
  // Interrupted: leave no server or proxy behind.
  const stopAll = (): void => {
    const exit = (): never => process.exit(130);
    void Promise.all([proxy?.stop(), server === null ? null : stopMtrServer(server)]).then(
      exit,
      exit,
    );
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    server = await startMtrServer(
      copy.runner,
      copy.tree,
      vardir,
      serverOptions,
      join(copy.work, 'server-start.log'),
    );
    log(
      `mtr suite: server on 127.0.0.1:${server.port}; ${tests.length} tests, modes ${modes.join(', ')}`,
    );
    const baseline = new ServerBaseline(server.port, copy.work);
    await baseline.record();
    const reset = async (): Promise<void> => {
      const done = await baseline.restore();
      writeFileSync(join(copy.work, 'resets.log'), `${done.join('\n')}\n\n`, { flag: 'a' });
    };
    for (const mode of modes) {
      const started = performance.now();
      const proxyArgs = MODES[mode].proxy;
      let port = server.port;
      if (proxyArgs !== null) {
        proxy = await startProxyProcess({
          backend: `127.0.0.1:${server.port}`,
          workers: 2,
          // follow: the server sees each test connection's TLS as the test made it (tests read
          // the server's view of their own connection, in expressions the proxy leaves alone).
          extraArgs: ['--admin-user', 'root', '--backend-tls', 'follow', ...proxyArgs],
        });
        port = proxy.port;
      }
      const current = proxy;
      const serverPid = server.pid;
      const options = {
        runner: copy.runner,
        tree: copy.tree,
        vardir,
        port,
        mtrArgs: MODES[mode].mtr,
        rejectDir: join(copy.work, 'rejects', mode),
        reset,
        serverAlive: () =>
          alive(serverPid) &&
          (current === null ||
            (current.child.exitCode === null && current.child.signalCode === null)),
        testTimeoutMinutes: Number(values['test-timeout']),
        onResult: (test: string, result: TestResult) =>
          log(
            `${mode.padEnd(10)} main.${test.padEnd(36)} ${result.outcome} ${result.detail}`.trimEnd(),
          ),
      };
      // Derived tests have no result file until the direct run records one.
      const derived = tests.filter((test) => DERIVED_TESTS.has(test));
      const modeResults = await runTests(
        tests.filter((test) => !DERIVED_TESTS.has(test)),
        options,
      );
      if (derived.length > 0) {
        const recorded =
          mode === 'direct' || existsSync(join(copy.tree, 'main', `${derived[0]}.result`));
        for (const [test, result] of await runTests(derived, {
          ...options,
          record: mode === 'direct',
        })) {
          modeResults.set(
            test,
            recorded
              ? result
              : {
                  ...result,
                  outcome: 'not run',
                  detail: 'no recorded result: run with the direct mode',
                },
          );
        }
      }
      results.set(mode, modeResults);
      if (proxy !== null) {
        writeFileSync(join(copy.work, `proxy-${mode}.log`), proxy.log());
        await proxy.stop();
        proxy = null;
      }
      minutes.set(mode, (performance.now() - started) / 60_000);
      await reset();
      if (!alive(server.pid)) {
        log(`mtr suite: the server died during the ${mode} run`);
        break;
      }
    }
  } finally {
    if (proxy !== null) await proxy.stop();
    if (server !== null) await stopMtrServer(server);
  }

  const verdict = judge(tests, modes, results, copy.tree, accepted, known);
  log('');
  for (const mode of modes) {
    const modeResults = results.get(mode);
    if (modeResults === undefined) continue;
    const count = (outcome: string): number =>
      [...modeResults.values()].filter((result) => result.outcome === outcome).length;
    log(
      `${mode.padEnd(10)} pass ${count('pass')}  fail ${count('fail')}  skipped ${count('skipped')}  not run ${count('not run')}  (${minutes.get(mode)?.toFixed(1)} min)`,
    );
  }
  for (const mode of modes) {
    if (mode === 'direct') continue;
    const modeResults = results.get(mode);
    const direct = results.get('direct');
    if (modeResults === undefined || direct === undefined) continue;
    const both = [...direct].filter(
      ([test, result]) => result.outcome === 'pass' && modeResults.get(test)?.outcome === 'pass',
    ).length;
    const passedDirectly = [...direct.values()].filter((r) => r.outcome === 'pass').length;
    const failing = new Set(
      [...verdict.problems, ...verdict.known]
        .filter((problem) => problem.mode === mode)
        .map((problem) => problem.test),
    );
    const knownHere = verdict.known.filter((problem) => problem.mode === mode).length;
    const accepted = [...direct].filter(
      ([test, result]) =>
        result.outcome === 'pass' &&
        modeResults.get(test)?.outcome === 'fail' &&
        !failing.has(test),
    ).length;
    log(
      `${mode.padEnd(10)} ${both} of the ${passedDirectly} tests that pass directly pass through the proxy, ${accepted} more with accepted differences only, ${knownHere} known failures`,
    );
  }
  for (const line of verdict.lines) log(line);
  if (values.report !== undefined) {
    const report = {
      installed,
      leftOut: Object.fromEntries(leftOut),
      minutes: Object.fromEntries(minutes),
      results: Object.fromEntries(
        [...results].map(([mode, modeResults]) => [mode, Object.fromEntries(modeResults)]),
      ),
      problems: verdict.problems,
      knownFailures: verdict.known,
    };
    writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
  }
  if (verdict.problems.length === 0 && !values.keep)
    rmSync(copy.work, { recursive: true, force: true });
  else log(`mtr suite: logs and .reject files kept in ${copy.work}`);
  return verdict.problems.length === 0 ? 0 : 1;
}

interface Verdict {
  problems: Array<{ mode: Mode; test: string; problem: string; lines: string[] }>;
  /** Listed in known-failures.txt, and failing as listed. */
  known: Array<{ mode: Mode; test: string; problem: string }>;
  lines: string[];
}

/** Every difference between the direct run and a proxy run that no accepted entry explains. */
function judge(
  tests: string[],
  modes: Mode[],
  results: Map<Mode, Map<string, TestResult>>,
  tree: string,
  accepted: ReturnType<typeof readAcceptedDifferences>,
  known: ReadonlyMap<string, KnownFailure>,
): Verdict {
  const verdict: Verdict = { problems: [], known: [], lines: [] };
  const direct = results.get('direct');
  for (const mode of modes) {
    if (mode === 'direct') continue;
    const proxied = results.get(mode);
    if (proxied === undefined) continue;
    for (const test of tests) {
      const mine = proxied.get(test);
      const theirs = direct?.get(test);
      if (mine === undefined) continue;
      const knownFailure = known.get(test);
      const listed = knownFailure !== undefined && knownFailure.modes.has(mode);
      const newProblem = (what: string, lines: string[]): void => {
        verdict.problems.push({ mode, test, problem: what, lines });
        verdict.lines.push(`FAIL ${mode} main.${test}: ${what}`);
        for (const line of lines.slice(0, 12)) verdict.lines.push(`    ${line}`);
        if (lines.length > 12) verdict.lines.push(`    ... ${lines.length - 12} more`);
      };
      const problem = (what: string, lines: string[] = []): void => {
        if (!listed) return newProblem(what, lines);
        verdict.known.push({ mode, test, problem: what });
        verdict.lines.push(`known ${mode} main.${test}: ${what} (${knownFailure.reason})`);
      };
      if (mine.outcome === 'not run') {
        problem(`not run: ${mine.detail}`);
        continue;
      }
      if (mine.outcome !== 'fail') {
        if (listed && mine.outcome === 'pass') {
          verdict.problems.push({
            mode,
            test,
            problem: 'passes: remove it from known-failures.txt',
            lines: [],
          });
          verdict.lines.push(
            `FAIL ${mode} main.${test}: listed as a known failure, but passes: remove its entry`,
          );
        }
        continue;
      }
      // Without a direct run, a listed test is expected to pass.
      const expected =
        theirs === undefined || theirs.outcome === 'pass'
          ? join(tree, 'main', `${test}.result`)
          : theirs.reject;
      if (theirs !== undefined && theirs.outcome === 'skipped') continue;
      // Both stopped before printing anything (mtr could not start the test): the same failure.
      if (theirs?.outcome === 'fail' && theirs.reject === null && mine.reject === null) continue;
      if (mine.reject === null || expected === null || !existsSync(expected)) {
        problem('failed, with no result to compare');
        continue;
      }
      const difference = compareResults(test, expected, mine.reject, accepted);
      const against = theirs?.outcome === 'fail' ? 'the direct run' : 'the expected result';
      const beyond = listed ? differencesBeyond(knownFailure, expected, mine.reject, accepted) : [];
      if (beyond.length > 0) {
        newProblem(`differs from ${against} beyond its known failure's lines`, beyond);
      } else if (difference.unexplained.length > 0) {
        problem(`differs from ${against}`, difference.unexplained);
      } else if (difference.lines.length > 0 && listed) {
        // Listed, yet nothing but accepted differences: the defect is gone, and so must its entry.
        newProblem('listed as a known failure, but differs only as accepted: remove its entry', []);
      } else if (difference.lines.length > 0) {
        verdict.lines.push(`ok   ${mode} main.${test}: only accepted differences`);
      } else if (theirs?.outcome !== 'fail') {
        // Same output yet a failure: mtr's own checks (state left behind, a timeout...).
        problem(`failed with the expected output: ${mine.detail}`);
      }
    }
  }
  return verdict;
}

process.exitCode = await main();
