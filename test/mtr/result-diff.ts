/**
 * Compares what a test printed through the proxy with what it should print: the result file when
 * the test passes directly, the direct run's `.reject` when it fails directly too. Only lines an
 * accepted difference names may differ; each such entry says why the difference is inherent.
 *
 * The accepted-differences file has one entry a line, `TEST /REGEX/ -- REASON`: TEST is a test
 * name or `*`, REGEX is matched against a differing line (without the diff's `+`/`-`).
 * Blank lines and lines starting with `#` are comments.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface AcceptedDifference {
  test: string;
  line: RegExp;
  reason: string;
}

const ENTRY = /^(\S+)\s+\/(.*)\/\s+--\s+(.+)$/;

export function readAcceptedDifferences(file: string): AcceptedDifference[] {
  const entries: AcceptedDifference[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const line = text.trim();
      if (line === '' || line.startsWith('#')) return;
      const match = ENTRY.exec(line);
      if (!match) throw new Error(`${file}:${index + 1}: not "TEST /REGEX/ -- REASON": ${line}`);
      entries.push({ test: match[1]!, line: new RegExp(match[2]!), reason: match[3]! });
    });
  return entries;
}

export interface Difference {
  /** The differing lines as a unified diff prints them ('-' expected, '+' through the proxy). */
  lines: string[];
  /** Those no accepted difference explains. */
  unexplained: string[];
}

/** The lines that differ between two result files, and which of them are not accepted. */
export function compareResults(
  test: string,
  expectedFile: string,
  actualFile: string,
  accepted: readonly AcceptedDifference[],
): Difference {
  const diff = spawnSync('diff', ['-U0', expectedFile, actualFile], { encoding: 'utf8' });
  if (diff.status !== 0 && diff.status !== 1) {
    throw new Error(`diff ${expectedFile} ${actualFile}: ${diff.stderr}`);
  }
  const all = diff.stdout.split('\n');
  // The two header lines come first; every hunk then starts with '@@'.
  const lines = all.slice(2).filter((line) => line.startsWith('-') || line.startsWith('+'));
  const mine = accepted.filter((entry) => entry.test === '*' || entry.test === test);
  const unexplained = lines.filter((line) => !mine.some((entry) => entry.line.test(line.slice(1))));
  return { lines, unexplained };
}
