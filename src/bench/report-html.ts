/**
 * The sweep as one HTML page that needs nothing else: styles inline, charts as inline SVG drawn
 * here, no script, so it reads the same opened from disk, attached to a mail or archived years
 * later. The page is also well-formed XML, which lets a test check that every text is escaped.
 */
import {
  describeWorkload,
  formatMs,
  perRunLines,
  stepAt,
  targetNames,
  threadColumns,
} from './report-text.ts';
import type { StepResult, SweepResult } from './sweep-result.ts';

/** The whole page. */
export function renderHtml(result: SweepResult): string {
  const { machine, options } = result;
  const title = `nicecache sweep: ${options.workload} on ${machine.hostname}`;
  const body = [
    `<h1>${escapeXml(title)}</h1>`,
    `<p class="summary">${escapeXml(describeWorkload(result))}.</p>`,
    `<p class="summary">Started ${escapeXml(result.startedAt)}, finished ${escapeXml(result.finishedAt)}.</p>`,
    '<h2>Throughput</h2>',
    throughputTables(result),
    '<h2>Charts</h2>',
    `<figure>${tpsChart(result)}</figure>`,
    `<figure>${idleChart(result)}</figure>`,
    `<figure>${p95Chart(result)}</figure>`,
    '<h2>Runs</h2>',
    `<pre>${escapeXml(perRunLines(result).join('\n'))}</pre>`,
    '<h2>Targets</h2>',
    targetsTable(result),
    '<h2>Machine</h2>',
    factsTable([
      ['host', machine.hostname],
      ['CPUs', `${machine.cpus} × ${machine.cpuModel}`],
      ['memory', formatBytes(machine.memoryBytes)],
      ['OS', machine.os],
      ['Node.js', machine.node],
      ['nicecache', machine.nicecache],
    ]),
    '<h2>Options</h2>',
    factsTable([
      ['driver', options.driver],
      ['workload', options.workload],
      ['threads', options.threads.join(', ')],
      ['duration', `${options.durationSeconds} s per step`],
      ['warm-up', `${options.warmupSeconds} s`],
      ['tables', String(options.tables)],
      ['table size', `${options.tableSize} rows`],
      ['range size', String(options.rangeSize)],
      ['skip BEGIN/COMMIT', String(options.skipTrx)],
      ['ps-mode', options.psMode],
      ['distribution', options.distribution],
      [
        'topology',
        result.cpus === null
          ? options.topology
          : `${options.topology}: server on CPU ${result.cpus.server}, client and proxy on CPU ${result.cpus.clientAndProxy}`,
      ],
      ['probes', `${options.probeSeconds} s each`],
    ]),
    '<h2>Command</h2>',
    `<pre>${escapeXml(result.command)}</pre>`,
  ];
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8"/>',
    '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
    `<title>${escapeXml(title)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The throughput chart alone, as an SVG file of its own (for a README or a slide). */
export function renderTpsChartSvg(result: SweepResult): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${tpsChart(result)}\n`;
}

const PAGE_STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em;
  color: #222; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
table.numbers td, table.numbers thead th { text-align: right; font-variant-numeric: tabular-nums; }
table.numbers th[scope=row] { text-align: left; font-weight: normal; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.summary { color: #444; }
`;

function throughputTables(result: SweepResult): string {
  const threads = threadColumns(result);
  const targets = targetNames(result);
  const head = `<thead><tr><th>target \\ threads</th>${threads
    .map((count) => `<th>${count}</th>`)
    .join('')}</tr></thead>`;
  const row = (label: string, cells: string[]): string =>
    `<tr><th scope="row">${escapeXml(label)}</th>${cells
      .map((cell) => `<td>${escapeXml(cell)}</td>`)
      .join('')}</tr>`;
  const tps = targets.map((target) =>
    row(
      target,
      threads.map((count) => {
        const step = stepAt(result, target, count);
        return step === null ? '-' : String(Math.round(step.tps));
      }),
    ),
  );
  const tables = [
    `<table class="numbers"><caption>Transactions per second</caption>${head}<tbody>${tps.join('')}</tbody></table>`,
  ];
  const [baseline, ...others] = targets;
  if (baseline !== undefined && others.length > 0) {
    const ratios = others.map((target) =>
      row(
        `${target} / ${baseline}`,
        threads.map((count) => {
          const step = stepAt(result, target, count);
          const base = stepAt(result, baseline, count);
          if (step === null || base === null || !(base.tps > 0)) return '-';
          return (step.tps / base.tps).toFixed(2);
        }),
      ),
    );
    tables.push(
      `<table class="numbers"><caption>Throughput relative to ${escapeXml(baseline)}</caption>${head}<tbody>${ratios.join('')}</tbody></table>`,
    );
  }
  return tables.join('\n');
}

function targetsTable(result: SweepResult): string {
  const rows = result.targets.map((target) => {
    const options =
      target.serverOptions === null
        ? ''
        : Object.entries(target.serverOptions)
            .map(([name, value]) => `${name}=${value}`)
            .join('\n');
    return `<tr>${[target.name, target.kind, target.spec, target.serverVersion]
      .map((text) => `<td>${escapeXml(text)}</td>`)
      .join('')}<td>${options === '' ? '' : `<pre>${escapeXml(options)}</pre>`}</td></tr>`;
  });
  return `<table><thead><tr><th>name</th><th>kind</th><th>given as</th><th>server</th><th>server options</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function factsTable(facts: [string, string][]): string {
  const rows = facts.map(
    ([name, value]) =>
      `<tr><th scope="row">${escapeXml(name)}</th><td>${escapeXml(value)}</td></tr>`,
  );
  return `<table class="facts"><tbody>${rows.join('')}</tbody></table>`;
}

function tpsChart(result: SweepResult): string {
  return lineChart({
    title: `Throughput: ${result.options.workload} on ${result.machine.cpus} CPUs`,
    yLabel: 'transactions per second',
    ...seriesOf(result, (step) => step.tps),
    yMax: null,
    describe: (value) => `${value.toFixed(1)} tps`,
  });
}

function idleChart(result: SweepResult): string {
  return lineChart({
    title: 'CPU idle (all cores)',
    yLabel: 'idle %',
    ...seriesOf(result, (step) => step.system.idle),
    // A share of the machine: the whole scale shows how much of it was left unused.
    yMax: 100,
    describe: (value) => `${value.toFixed(1)}% idle`,
  });
}

function p95Chart(result: SweepResult): string {
  return lineChart({
    title: '95th percentile transaction latency',
    yLabel: 'p95 latency (ms)',
    ...seriesOf(result, (step) => step.latencyMs.p95),
    yMax: null,
    describe: (value) => `p95 ${formatMs(value)}`,
  });
}

interface Series {
  name: string;
  /** One per thread count; null where the target has no step (or no usable number) there. */
  values: (number | null)[];
}

function seriesOf(
  result: SweepResult,
  metric: (step: StepResult) => number,
): { threads: number[]; series: Series[] } {
  const threads = threadColumns(result);
  const series = targetNames(result).map((name) => ({
    name,
    values: threads.map((count) => {
      const step = stepAt(result, name, count);
      if (step === null) return null;
      const value = metric(step);
      return Number.isFinite(value) ? value : null;
    }),
  }));
  return { threads, series };
}

interface ChartSpec {
  title: string;
  yLabel: string;
  threads: number[];
  series: Series[];
  /** A fixed top of the y axis, or null to fit the data with round ticks. */
  yMax: number | null;
  /** A point's value as its tooltip says it. */
  describe: (value: number) => string;
}

// Okabe–Ito colours: told apart with the common colour-vision deficiencies, and dark enough on
// white. Dashes and marker shapes differ too, so the chart survives greyscale printing.
const COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES = ['', '7 4', '2 3', '9 3 2 3'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'triangle-down'] as const;

const WIDTH = 720;
const FONT_SIZE = 12;
// Text is not measured (nothing here can); this over-estimates an average sans-serif character
// at FONT_SIZE, so room made from it is enough.
const CHAR_WIDTH = 7;
const PLOT_HEIGHT = 300;
const TOP = 40;
const RIGHT = 24;
const LEGEND_ROW = 20;

/** A line chart over thread counts: x on a log2 scale, y linear from 0. */
function lineChart(spec: ChartSpec): string {
  const values = spec.series.flatMap((series) => series.values.filter((value) => value !== null));
  const ticks = spec.yMax === null ? niceTicks(Math.max(0, ...values)) : niceTicks(spec.yMax);
  const yTop = ticks[ticks.length - 1] ?? 1;
  const tickLabels = ticks.map((tick) => formatTick(tick, ticks[1] ?? 1));
  // Room for labels as wide as '10,000' at least, so the charts of one page line up.
  const left = 34 + Math.max(6, ...tickLabels.map((label) => label.length)) * CHAR_WIDTH;
  const plotWidth = WIDTH - left - RIGHT;
  const plotBottom = TOP + PLOT_HEIGHT;

  // Thread counts double from one to the next, so equal steps of log2 space them evenly; half a
  // step of margin keeps the first and last points off the axes.
  const logs = spec.threads.map((count) => Math.log2(Math.max(count, 1)));
  const low = (logs.length === 0 ? 0 : Math.min(...logs)) - 0.5;
  const high = (logs.length === 0 ? 0 : Math.max(...logs)) + 0.5;
  const xOf = (count: number): number =>
    left + ((Math.log2(Math.max(count, 1)) - low) / (high - low)) * plotWidth;
  const yOf = (value: number): number => plotBottom - (value / yTop) * PLOT_HEIGHT;

  const legend = legendLayout(spec.series, left, plotWidth, plotBottom + 58);
  const height = legend.bottom + 12;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(spec.title)}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="${FONT_SIZE}">`,
    `<title>${escapeXml(spec.title)}</title>`,
    // Opaque, so the chart stays readable embedded on a dark page.
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="${TOP - 16}" font-size="${FONT_SIZE + 3}" font-weight="bold" fill="#222222">${escapeXml(spec.title)}</text>`,
  );

  // Grid and y axis.
  ticks.forEach((tick, index) => {
    const y = fixed(yOf(tick));
    parts.push(
      `<line x1="${left}" y1="${y}" x2="${left + plotWidth}" y2="${y}" stroke="${index === 0 ? '#444444' : '#e2e2e2'}" stroke-width="1"/>`,
      `<text x="${left - 6}" y="${y}" dy="0.35em" text-anchor="end" fill="#444444">${escapeXml(tickLabels[index] ?? '')}</text>`,
    );
  });
  parts.push(
    `<line x1="${left}" y1="${TOP}" x2="${left}" y2="${plotBottom}" stroke="#444444" stroke-width="1"/>`,
    `<text transform="translate(14 ${fixed(TOP + PLOT_HEIGHT / 2)}) rotate(-90)" text-anchor="middle" fill="#222222">${escapeXml(spec.yLabel)}</text>`,
  );

  // X axis: a tick and a label at every thread count measured, nothing in between.
  for (const count of spec.threads) {
    const x = fixed(xOf(count));
    parts.push(
      `<line x1="${x}" y1="${plotBottom}" x2="${x}" y2="${plotBottom + 5}" stroke="#444444" stroke-width="1"/>`,
      `<text x="${x}" y="${plotBottom + 19}" text-anchor="middle" fill="#444444">${count}</text>`,
    );
  }
  parts.push(
    `<text x="${fixed(left + plotWidth / 2)}" y="${plotBottom + 38}" text-anchor="middle" fill="#222222">concurrent sessions (threads, log scale)</text>`,
  );

  // Data: a line through the points a target has (broken where it has none), then markers
  // carrying their value as a tooltip.
  spec.series.forEach((series, index) => {
    const style = seriesStyle(index);
    parts.push(`<g data-series="${escapeXml(series.name)}">`);
    for (const run of contiguousRuns(series.values)) {
      if (run.length < 2) continue;
      const points = run
        .map((at) => `${fixed(xOf(spec.threads[at] ?? 1))},${fixed(yOf(series.values[at] ?? 0))}`)
        .join(' ');
      parts.push(
        `<polyline points="${points}" fill="none" stroke="${style.color}" stroke-width="2"${style.dash === '' ? '' : ` stroke-dasharray="${style.dash}"`} stroke-linejoin="round"/>`,
      );
    }
    series.values.forEach((value, at) => {
      if (value === null) return;
      const count = spec.threads[at] ?? 1;
      const label = `${series.name}, ${count} ${count === 1 ? 'thread' : 'threads'}: ${spec.describe(value)}`;
      parts.push(marker(style, xOf(count), yOf(value), label));
    });
    parts.push('</g>');
  });

  // Legend, below the axis title so it never covers data.
  spec.series.forEach((series, index) => {
    const style = seriesStyle(index);
    const at = legend.positions[index];
    if (at === undefined) return;
    parts.push(
      `<line x1="${at.x}" y1="${at.y}" x2="${at.x + 28}" y2="${at.y}" stroke="${style.color}" stroke-width="2"${style.dash === '' ? '' : ` stroke-dasharray="${style.dash}"`}/>`,
      marker(style, at.x + 14, at.y, null),
      `<text x="${at.x + 36}" y="${at.y}" dy="0.35em" fill="#222222">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

interface SeriesStyle {
  color: string;
  dash: string;
  marker: (typeof MARKERS)[number];
}

function seriesStyle(index: number): SeriesStyle {
  return {
    color: COLORS[index % COLORS.length] ?? '#000000',
    dash: DASHES[index % DASHES.length] ?? '',
    marker: MARKERS[index % MARKERS.length] ?? 'circle',
  };
}

/** A point's marker; with a label, it shows as a tooltip on hover (no script needed). */
function marker(style: SeriesStyle, x: number, y: number, label: string | null): string {
  const r = 4;
  const title = label === null ? '' : `<title>${escapeXml(label)}</title>`;
  const paint = `fill="${style.color}" stroke="#ffffff" stroke-width="1"`;
  const polygon = (corners: [number, number][]): string =>
    `<path d="M ${corners.map(([dx, dy]) => `${fixed(x + dx)} ${fixed(y + dy)}`).join(' L ')} Z" ${paint}>${title}</path>`;
  switch (style.marker) {
    case 'circle':
      return `<circle cx="${fixed(x)}" cy="${fixed(y)}" r="${r}" ${paint}>${title}</circle>`;
    case 'square':
      return polygon([
        [-r, -r],
        [r, -r],
        [r, r],
        [-r, r],
      ]);
    case 'triangle':
      return polygon([
        [0, -r - 1],
        [r + 1, r],
        [-r - 1, r],
      ]);
    case 'triangle-down':
      return polygon([
        [0, r + 1],
        [r + 1, -r],
        [-r - 1, -r],
      ]);
    case 'diamond':
      return polygon([
        [0, -r - 1],
        [r + 1, 0],
        [0, r + 1],
        [-r - 1, 0],
      ]);
  }
}

/** Legend entries flowed left to right under the plot, wrapping when a row is full. */
function legendLayout(
  series: Series[],
  left: number,
  width: number,
  top: number,
): { positions: { x: number; y: number }[]; bottom: number } {
  const positions: { x: number; y: number }[] = [];
  let x = left;
  let y = top;
  for (const { name } of series) {
    const entryWidth = 36 + name.length * CHAR_WIDTH + 24;
    if (x > left && x + entryWidth > left + width) {
      x = left;
      y += LEGEND_ROW;
    }
    positions.push({ x, y });
    x += entryWidth;
  }
  return { positions, bottom: y + LEGEND_ROW / 2 };
}

/** Index runs of consecutive non-null values. */
function contiguousRuns(values: (number | null)[]): number[][] {
  const runs: number[][] = [];
  let current: number[] = [];
  values.forEach((value, index) => {
    if (value === null) {
      if (current.length > 0) runs.push(current);
      current = [];
    } else {
      current.push(index);
    }
  });
  if (current.length > 0) runs.push(current);
  return runs;
}

/**
 * Ticks from 0 to the first round number at or above `max`, about five of them, spaced by 1, 2,
 * 2.5 or 5 times a power of ten: values a reader can interpolate between.
 */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const rough = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; i * step <= top + step * 1e-9; i++)
    ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** A tick with thousands grouped and just the decimals the tick step needs. */
function formatTick(value: number, step: number): string {
  let decimals = 0;
  while (decimals < 6 && Math.abs(Math.round(step * 10 ** decimals) - step * 10 ** decimals) > 1e-6)
    decimals++;
  return value.toLocaleString('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

function formatBytes(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

/** Coordinates to 0.1 px: plenty on screen, and keeps the file small. */
function fixed(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/**
 * Text for XML and HTML alike, in content and in double-quoted attributes. Characters XML 1.0
 * cannot carry at all (control characters, lone surrogates: one stray in a command line would
 * make the whole SVG unreadable) become U+FFFD.
 */
export function escapeXml(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\uD800-\uDFFF]/gu, '\uFFFD')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
  );
}
