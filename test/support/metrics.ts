/**
 * Reading a proxy's Prometheus endpoint in tests: where it listens (from its log), its samples,
 * and Prometheus's own `promtool check metrics` on what it serves.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { ProxyProcess } from './proxy-process.ts';

/** The metrics endpoint a proxy announced in its log. */
export function metricsUrl(proxy: ProxyProcess): string {
  const match = /metrics on (http:\/\/\S+\/metrics)/.exec(proxy.log());
  assert.ok(match, `no metrics line in the log:\n${proxy.log()}`);
  return match[1]!;
}

/** Samples by name with labels (`name{label="v"}`), as Prometheus's text format writes them. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** promtool's verdict on a scrape: its exit code and what it printed. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.ok(
    run.error === undefined,
    `promtool could not run (${run.error?.message}): apt-get install prometheus, or bash scripts/setup.sh`,
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
