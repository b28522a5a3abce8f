/**
 * Compares what a test printed through the proxy with what it should print: the result file when
 * the test passes directly, the direct run's `.reject` when it fails directly too. Only lines an
 * accepted difference names may differ; each such entry says why the difference is inherent.
 *
 * The accepted-differences file has one entry a line, `TEST /REGEX/ -- REASON`: TEST is a test
 * name or `*`, REGEX is matched against a differing line (without the diff's `+`/`-`).
 * Blank lines and lines starting with `#` are comments. A line the REGEX matches is compared by
 * what it matches alone, in place (so `/^Opened_tables\t/` lets the value differ, not the order);
 * written `-/REGEX/`, the lines it matches are left out on both sides.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readEntries } from './entry-file.ts';

export interface AcceptedDifference {
  test: string;
  line: RegExp;
  /** Lines it matches are left out on both sides (they may be missing on one). */
  drop: boolean;
  reason: string;
}

const ENTRY = /^(\S+)\s+(-?)\/(.*)\/\s+--\s+(.+)$/;

export function readAcceptedDifferences(file: string): AcceptedDifference[] {
  return readEntries(file, ENTRY, 'TEST [-]/REGEX/ -- REASON').map((match) => ({
    test: match[1]!,
    drop: match[2] === '-',
    line: new RegExp(match[3]!),
    reason: match[4]!,
  }));
}

export interface Difference {
  /** The differing lines as a unified diff prints them ('-' expected, '+' through the proxy). */
  lines: string[];
  /** Those no accepted difference explains. */
  unexplained: string[];
}

/**
 * The lines that differ between two result files, and which of them no accepted difference
 * explains. A line an entry matches is compared by the matched part alone (so a value after it
 * may differ) but stays in place: lines that moved still differ.
 */
export function compareResults(
  test: string,
  expectedFile: string,
  actualFile: string,
  accepted: readonly AcceptedDifference[],
): Difference {
  const mine = accepted.filter((entry) => entry.test === '*' || entry.test === test);
  const masked = (file: string): string => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const out: string[] = [];
    for (const line of lines) {
      const entry = mine.find((candidate) => candidate.line.test(line));
      if (entry === undefined) out.push(line);
      else if (!entry.drop) out.push(`<accepted> ${entry.line.exec(line)![0]}`);
    }
    const target = `${actualFile}.${file === expectedFile ? 'expected' : 'actual'}.masked`;
    writeFileSync(target, out.join('\n'));
    return target;
  };
  return {
    lines: diffLines(expectedFile, actualFile),
    unexplained:
      mine.length === 0
        ? diffLines(expectedFile, actualFile)
        : diffLines(masked(expectedFile), masked(actualFile)),
  };
}

/** The '-' and '+' lines of a unified diff without context. */
function diffLines(expectedFile: string, actualFile: string): string[] {
  const diff = spawnSync('diff', ['-U0', expectedFile, actualFile], { encoding: 'utf8' });
  if (diff.status !== 0 && diff.status !== 1) {
    throw new Error(`diff ${expectedFile} ${actualFile}: ${diff.stderr}`);
  }
  // The two header lines come first; every hunk then starts with '@@'.
  return diff.stdout
    .split('\n')
    .slice(2)
    .filter((line) => line.startsWith('-') || line.startsWith('+'));
}
