/**
 * Tests known to fail through nicecache, each with what is wrong and why it is not fixed yet: the
 * suite's ratchet. A listed test that still fails in its mode is reported, not counted as a pass
 * and not as a new failure; a listed test that passes fails the run until its entry is removed,
 * so the list never outlives the defect. Unlike accepted differences (inherent to any proxy),
 * every entry here is a defect of nicecache's.
 *
 * One entry a line: `TEST MODE[,MODE] -- WHAT AND WHY` (MODE: cache-on, cache-off, compressed).
 */
import { readEntries } from './entry-file.ts';

export interface KnownFailure {
  test: string;
  modes: ReadonlySet<string>;
  reason: string;
}

const ENTRY =
  /^(\S+)\s+((?:cache-on|cache-off|compressed)(?:,(?:cache-on|cache-off|compressed))*)\s+--\s+(.+)$/;

export function readKnownFailures(file: string): Map<string, KnownFailure> {
  const entries = new Map<string, KnownFailure>();
  for (const match of readEntries(file, ENTRY, 'TEST MODE[,MODE] -- REASON')) {
    const test = match[1]!;
    if (entries.has(test)) throw new Error(`${file}: ${test} listed twice`);
    entries.set(test, { test, modes: new Set(match[2]!.split(',')), reason: match[3]! });
  }
  return entries;
}
