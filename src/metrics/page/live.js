// The live page: polls /api/live once a second and draws the differences between polls.
// Plain browser script; uPlot (served from the proxy's own copy, /uplot.js) is the one library.
'use strict';

const POLL_MS = 1000;
/** Five minutes of points. */
const WINDOW = 300;
const MB = 1024 * 1024;

const series = {
  time: [],
  hits: [],
  misses: [],
  ratio: [],
  store: [],
  budget: [],
  resident: [],
  write: [],
  everything: [],
  binlog: [],
};

function chart(id, lines, yLabel, yRange) {
  const element = document.getElementById(id);
  const options = {
    width: Math.max(element.clientWidth, 520),
    height: 220,
    scales: { x: { time: true }, y: yRange === undefined ? {} : { range: yRange } },
    // The legend names the lines; values under the cursor would only say "--" without one.
    legend: { live: false },
    axes: [{}, { label: yLabel, size: 60 }],
    series: [{}, ...lines.map(([label, stroke]) => ({ label, stroke, width: 2 }))],
  };
  return new uPlot(options, [[], ...lines.map(() => [])], element);
}

const charts = {
  rates: chart(
    'chart-rates',
    [
      ['hits', '#2f8f46'],
      ['server', '#c2452d'],
    ],
    'per second',
  ),
  ratio: chart('chart-ratio', [['hit ratio', '#3a6fd8']], '%', [0, 100]),
  memory: chart(
    'chart-memory',
    [
      ['cache', '#3a6fd8'],
      ['budget', '#9aa3ae'],
      ['process RSS', '#b5760f'],
    ],
    'MB',
  ),
  invalidations: chart(
    'chart-invalidations',
    [
      ['proxy writes', '#c2452d'],
      ['everything', '#6b3fa0'],
      ['binlog', '#b5760f'],
    ],
    'per second',
  ),
};

function push(name, value) {
  const values = series[name];
  values.push(value);
  if (values.length > WINDOW) values.shift();
}

function show(id, text) {
  document.getElementById(id).textContent = text;
}

const number = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

function bytes(count) {
  if (count < 1024) return `${number.format(count)} B`;
  if (count < MB) return `${oneDecimal.format(count / 1024)} KB`;
  return `${oneDecimal.format(count / MB)} MB`;
}

function showDigests(digests) {
  const body = document.getElementById('digests');
  body.replaceChildren(
    ...digests.map((digest) => {
      const row = document.createElement('tr');
      const cells = [
        digest.digest,
        number.format(digest.count),
        number.format(digest.hits),
        number.format(digest.misses),
        digest.bypasses === 0
          ? '0'
          : `${number.format(digest.bypasses)} (${digest.mainBypassReason ?? ''})`,
        number.format(digest.meanServerMicros),
      ];
      for (const text of cells) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
}

let previous = null;
let polls = 0;

function update(now) {
  show('entries', number.format(now.entries));
  show('memory', now.cacheOn ? `${bytes(now.bytes)} of ${bytes(now.budgetBytes)}` : 'cache off');
  show('clients', number.format(now.clients));
  show(
    'follower',
    now.follower === null
      ? 'no follower'
      : `${number.format(now.follower.lagMs)} ms${now.follower.following ? '' : ' (behind)'}`,
  );
  showDigests(now.digests);
  if (previous !== null) {
    const seconds = (now.at - previous.at) / 1000;
    if (seconds > 0) {
      const rate = (a, b) => Math.max(0, a - b) / seconds;
      const hits = rate(now.hits, previous.hits);
      const misses = rate(now.misses, previous.misses);
      const ratio = hits + misses === 0 ? null : (100 * hits) / (hits + misses);
      push('time', now.at / 1000);
      push('hits', hits);
      push('misses', misses);
      push('ratio', ratio);
      push('store', now.bytes / MB);
      push('budget', now.budgetBytes / MB);
      push('resident', now.residentBytes / MB);
      push('write', rate(now.invalidations.write, previous.invalidations.write));
      push('everything', rate(now.invalidations.everything, previous.invalidations.everything));
      push('binlog', rate(now.invalidations.binlog, previous.invalidations.binlog));
      const invalidations = series.write.at(-1) + series.everything.at(-1) + series.binlog.at(-1);
      show('invalidations-rate', number.format(invalidations));
      show('hits-rate', number.format(hits));
      show('misses-rate', number.format(misses));
      show('hit-ratio', ratio === null ? '–' : `${oneDecimal.format(ratio)}%`);
      charts.rates.setData([series.time, series.hits, series.misses]);
      charts.ratio.setData([series.time, series.ratio]);
      charts.memory.setData([series.time, series.store, series.budget, series.resident]);
      charts.invalidations.setData([series.time, series.write, series.everything, series.binlog]);
    }
  }
  previous = now;
}

async function poll() {
  try {
    const response = await fetch('/api/live', { cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    update(await response.json());
    polls++;
    document.body.dataset.polls = String(polls);
    show('status', `live, updated ${new Date().toLocaleTimeString()}`);
  } catch (error) {
    show('status', `not updating: ${error.message}`);
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

poll();
