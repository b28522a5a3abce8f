/**
 * The suite's lists (accepted differences, known failures) share one format: one entry a line,
 * blank lines and lines starting with `#` ignored, every other line matching the list's pattern.
 */
import { readFileSync } from 'node:fs';

/** Each entry line's match, in order; a line that does not match throws, naming file and line. */
export function readEntries(file: string, entry: RegExp, shape: string): RegExpExecArray[] {
  const entries: RegExpExecArray[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const line = text.trim();
      if (line === '' || line.startsWith('#')) return;
      const match = entry.exec(line);
      if (!match) throw new Error(`${file}:${index + 1}: not "${shape}": ${line}`);
      entries.push(match);
    });
  return entries;
}
