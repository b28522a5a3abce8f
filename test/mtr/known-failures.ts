/**
 * Tests known to fail through nicecache, each with what is wrong and why it is not fixed yet: the
 * suite's ratchet. A listed test that still fails in its mode is reported, not counted as a pass
 * and not as a new failure; a listed test that passes fails the run until its entry is removed,
 * so the list never outlives the defect. Unlike accepted differences (inherent to any proxy),
 * every entry here is a defect of nicecache's.
 *
 * One entry a line: `TEST MODE[,MODE] [/REGEX/] -- WHAT AND WHY` (MODE: cache-on, cache-off,
 * compressed). With a REGEX, only the lines it matches may differ, as in an accepted difference
 * (result-diff.ts): a listed test whose output differs anywhere else fails the run, so a second
 * defect in a test that already has one is not hidden behind the first.
 */
import { compareResults } from './result-diff.ts';
import type { AcceptedDifference } from './result-diff.ts';
import { readEntries } from './entry-file.ts';

export interface KnownFailure {
  test: string;
  modes: ReadonlySet<string>;
  /** The lines the failure may change (null: any). */
  lines: RegExp | null;
  reason: string;
}

const ENTRY =
  /^(\S+)\s+((?:cache-on|cache-off|compressed)(?:,(?:cache-on|cache-off|compressed))*)(?:\s+\/(.*)\/)?\s+--\s+(.+)$/;

export function readKnownFailures(file: string): Map<string, KnownFailure> {
  const entries = new Map<string, KnownFailure>();
  for (const match of readEntries(file, ENTRY, 'TEST MODE[,MODE] [/REGEX/] -- REASON')) {
    const test = match[1]!;
    if (entries.has(test)) throw new Error(`${file}: ${test} listed twice`);
    entries.set(test, {
      test,
      modes: new Set(match[2]!.split(',')),
      lines: match[3] === undefined ? null : new RegExp(match[3]),
      reason: match[4]!,
    });
  }
  return entries;
}

/**
 * The lines of `actualFile` that differ from `expectedFile` and that neither an accepted
 * difference nor the known failure's own lines explain: none for a test that fails only as
 * listed (and none for an entry without lines, which may change any).
 */
export function differencesBeyond(
  known: KnownFailure,
  expectedFile: string,
  actualFile: string,
  accepted: readonly AcceptedDifference[],
): string[] {
  if (known.lines === null) return [];
  const own: AcceptedDifference = {
    test: known.test,
    line: known.lines,
    drop: false,
    reason: known.reason,
  };
  return compareResults(known.test, expectedFile, actualFile, [...accepted, own]).unexplained;
}
