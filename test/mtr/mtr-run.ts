/**
 * Runs a list of tests with mysql-test-run against an endpoint in --extern mode (the server
 * itself, or nicecache in front of it) and collects each test's outcome and `.reject` file.
 *
 * mtr stops at the first failure (--max-test-fail=1): what the failed test left behind is undone
 * (see ServerBaseline) before the remaining tests run, so one failure cannot cause the next.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { runToEnd } from './mtr-server.ts';

export type Outcome = 'pass' | 'fail' | 'skipped' | 'not run';

export interface TestResult {
  outcome: Outcome;
  /** The skip reason, or why it did not run. */
  detail: string;
  /** Where the failed run's output was kept. */
  reject: string | null;
}

export interface RunOptions {
  runner: string;
  tree: string;
  vardir: string;
  port: number;
  /** More options for mysql-test-run (--compress). */
  mtrArgs?: readonly string[];
  /** Where the `.reject` files of this run are kept. */
  rejectDir: string;
  /** Puts the server back after a failed test. */
  reset: () => Promise<void>;
  /** Is the server still running? */
  serverAlive: () => boolean;
  /** Minutes a single test may take. */
  testTimeoutMinutes: number;
  /** Write each test's output as its expected result (for tests derived here, run directly). */
  record?: boolean;
  onResult?: (test: string, result: TestResult) => void;
}

const RESULT_LINE = /^(main\.[\w-]+)\s+(?:w\d+\s+)?\[ (pass|fail|skipped|disabled) \]\s*(.*)$/;

export async function runTests(
  tests: readonly string[],
  options: RunOptions,
): Promise<Map<string, TestResult>> {
  mkdirSync(options.rejectDir, { recursive: true });
  const results = new Map<string, TestResult>();
  let remaining = [...tests];
  while (remaining.length > 0) {
    const failedNow: string[] = [];
    const output = await runToEnd(
      'perl',
      [
        options.runner,
        '--extern',
        'host=127.0.0.1',
        '--extern',
        `port=${options.port}`,
        '--extern',
        'protocol=TCP',
        `--vardir=${options.vardir}`,
        '--force',
        '--max-test-fail=1',
        '--retry=0',
        `--testcase-timeout=${options.testTimeoutMinutes}`,
        ...(options.mtrArgs ?? []),
        ...(options.record === true ? ['--record'] : []),
        ...remaining.map((test) => `main.${test}`),
      ],
      options.tree,
      (line) => {
        const match = RESULT_LINE.exec(line.trimEnd());
        if (!match) return;
        const test = match[1]!.slice('main.'.length);
        const word = match[2]!;
        const outcome: Outcome = word === 'pass' ? 'pass' : word === 'fail' ? 'fail' : 'skipped';
        const result: TestResult = { outcome, detail: match[3] ?? '', reject: null };
        if (outcome === 'fail') failedNow.push(test);
        results.set(test, result);
        options.onResult?.(test, result);
      },
    );
    // mtr prints its diff of the .reject after the result line: move the files once it is done.
    for (const test of failedNow) {
      results.get(test)!.reject = keepReject(options.tree, options.vardir, test, options.rejectDir);
    }
    const before = remaining.length;
    remaining = remaining.filter((test) => !results.has(test));
    if (!options.serverAlive()) {
      for (const test of remaining) {
        results.set(test, { outcome: 'not run', detail: 'the server died', reject: null });
      }
      break;
    }
    if (remaining.length === before) {
      // mtr gave up before any test (it cannot reach the endpoint, or a test cannot be found).
      const tail = output.text.split('\n').slice(-15).join('\n');
      for (const test of remaining) {
        results.set(test, {
          outcome: 'not run',
          detail: `mtr ran nothing:\n${tail}`,
          reject: null,
        });
      }
      break;
    }
    if (failedNow.length > 0) await options.reset();
  }
  return results;
}

/**
 * Moves a failed test's .reject out of the tree (mtr deletes it before the next run). A test that
 * stopped (an unexpected error, `die`) has no .reject: its output up to there is in the vardir's
 * log/TEST.log, which is kept instead.
 */
function keepReject(tree: string, vardir: string, test: string, rejectDir: string): string | null {
  const kept = join(rejectDir, `${test}.reject`);
  for (const file of [join(tree, 'main', `${test}.reject`), join(vardir, 'log', `${test}.log`)]) {
    if (!existsSync(file)) continue;
    renameSync(file, kept);
    return kept;
  }
  return null;
}
