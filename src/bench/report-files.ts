/**
 * Writes a sweep's reports side by side under one name: the JSON (the data, for later
 * comparison), the HTML page, the throughput chart as its own SVG, and the text report.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { renderHtml, renderTpsChartSvg } from './report-html.ts';
import { perRunLines, seedTable } from './report-text.ts';
import type { SweepResult } from './sweep-result.ts';

export interface ReportPaths {
  json: string;
  html: string;
  svg: string;
  text: string;
}

/** Writes the four reports into `directory` (made if missing) and returns their paths. */
export async function writeReports(result: SweepResult, directory: string): Promise<ReportPaths> {
  await mkdir(directory, { recursive: true });
  const base = resolve(directory, `sweep-${fileTimestamp(result.startedAt)}`);
  const paths: ReportPaths = {
    json: `${base}.json`,
    html: `${base}.html`,
    svg: `${base}-tps.svg`,
    text: `${base}.txt`,
  };
  const text = `${seedTable(result)}\n\n${perRunLines(result).join('\n')}\n`;
  await Promise.all([
    writeFile(paths.json, `${JSON.stringify(result, null, 2)}\n`),
    writeFile(paths.html, renderHtml(result)),
    writeFile(paths.svg, renderTpsChartSvg(result)),
    writeFile(paths.text, text),
  ]);
  return paths;
}

/**
 * The sweep's start time, UTC, to the second, without colons (which some file systems and
 * tools reject): names sort by time, and the same sweep always gets the same name.
 */
function fileTimestamp(startedAt: string): string {
  const parsed = new Date(startedAt);
  const time = Number.isNaN(parsed.getTime()) ? new Date() : parsed;
  return time
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '');
}
