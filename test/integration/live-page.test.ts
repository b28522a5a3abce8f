/**
 * The live page at `/` on the metrics port, in a real headless Chromium (Debian's `chromium`,
 * driven by playwright-core): it loads with nothing from outside the proxy, and while a load
 * runs through the proxy its numbers, charts and top statements move.
 *
 * NICECACHE_SCREENSHOT=docs/live-page.png keeps the screenshot taken under load (the README's).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { BACKEND_PASSWORD, BACKEND_USER } from '../support/env.ts';
import { metricsUrl } from '../support/metrics.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { onServer } from '../support/server-statements.ts';

const DB = 'nc_live';
const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

let proxy: ProxyProcess;
let browser: Browser;
let page: Page;
let base: string;
let dir: string;
/** Requests the page made to anywhere but the proxy's metrics port. */
const foreign: string[] = [];

function chromiumPath(): string {
  const found = [process.env['NICECACHE_CHROMIUM'], ...BROWSERS].find(
    (path) => path !== undefined && path !== '' && existsSync(path),
  );
  assert.ok(
    found,
    'no Chromium found (Debian package "chromium"; bash scripts/setup.sh installs it, or set NICECACHE_CHROMIUM)',
  );
  return found;
}

/** Reads through the proxy (hits, once stored) and a write to another table now and then. */
async function load(stop: { done: boolean }): Promise<number> {
  const connection = await mysql.createConnection({
    host: '127.0.0.1',
    port: proxy.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
  });
  let queries = 0;
  try {
    while (!stop.done) {
      for (let id = 1; id <= 20; id++) {
        await connection.query(`SELECT v FROM live_probe_table WHERE id = ${id}`);
        queries++;
      }
      await connection.query(`UPDATE live_writes SET n = n + 1`);
      queries++;
    }
  } finally {
    await connection.end();
  }
  return queries;
}

async function text(selector: string): Promise<string> {
  return (await page.textContent(selector)) ?? '';
}

/** A tile's number, written with thousands separators. */
async function count(selector: string): Promise<number> {
  return Number((await text(selector)).replaceAll(',', ''));
}

/** Waits until `check` holds of the page, or fails with what the page last showed. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(200);
  }
  assert.fail(`${what}: the page shows ${await text('.tiles')}`);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nicecache-live-'));
  await onServer([
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.live_probe_table (id INT PRIMARY KEY, v INT)`,
    `INSERT INTO ${DB}.live_probe_table SELECT seq, seq FROM seq_1_to_20`,
    `CREATE TABLE ${DB}.live_writes (n INT)`,
    `INSERT INTO ${DB}.live_writes VALUES (0)`,
  ]);
  // The admin account lets a write invalidate its own table only: the reads stay hits.
  proxy = await startProxyProcess({
    workers: 2,
    extraArgs: ['--metrics', '127.0.0.1:0', '--admin-user', BACKEND_USER],
    env: { NICECACHE_ADMIN_PASSWORD: BACKEND_PASSWORD },
  });
  base = metricsUrl(proxy).replace(/\/metrics$/, '');
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    // As root (CI), Chromium's sandbox cannot start.
    args: ['--no-sandbox'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('request', (request) => {
    if (!request.url().startsWith(base)) foreign.push(request.url());
  });
});

after(async () => {
  await browser?.close();
  await proxy?.stop();
  await onServer([`DROP DATABASE IF EXISTS ${DB}`]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the live page', () => {
  test('loads from the proxy alone, and its numbers, charts and top statements move under load', async () => {
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const response = await page.goto(`${base}/`);
    assert.equal(response?.status(), 200);
    // Four charts, drawn by uPlot.
    await page.waitForSelector('.uplot canvas');
    assert.equal(await page.locator('.uplot').count(), 4);
    await until(
      'two polls',
      async () => Number(await page.getAttribute('body', 'data-polls')) >= 2,
    );
    assert.equal(await text('#hits-rate'), '0');

    const stop = { done: false };
    const running = load(stop);
    try {
      await until('hits per second above 0', async () => (await count('#hits-rate')) > 0);
      await until('a hit ratio', async () => /^\d+(\.\d)?%$/.test(await text('#hit-ratio')));
      await until('results cached', async () => (await count('#entries')) > 0);
      await until('the load’s statement among the top ones', async () =>
        (await text('#digests')).includes('live_probe_table'),
      );
      assert.match(await text('#memory'), /^[\d.,]+ (B|KB|MB) of 64 MB$/);
      assert.equal(await text('#follower'), 'no follower');
      await until(
        'invalidations per second above 0',
        async () => (await count('#invalidations-rate')) > 0,
      );
      const kept = process.env['NICECACHE_SCREENSHOT'];
      // For the README, charts with some history.
      if (kept !== undefined) await sleep(30_000);
      const screenshot = kept ?? join(dir, 'live.png');
      await page.screenshot({ path: screenshot, fullPage: true });
      // A PNG, and not an empty one.
      const png = readFileSync(screenshot);
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
      assert.ok(png.length > 20_000);
    } finally {
      stop.done = true;
    }
    assert.ok((await running) > 0);
    // Without load the rates fall back to 0.
    await until('hits per second back to 0', async () => (await text('#hits-rate')) === '0');
    assert.deepEqual(errors, []);
    assert.deepEqual(foreign, []);
  });
});
