/**
 * Admission through the real proxy: results over a table that is written between its reads die
 * unread, so after a few of them its misses are relayed without being stored
 * (Qcache_admission_declined, also counted in Qcache_not_cached), while a table that is read
 * again keeps being stored and served; one declined miss in PROBE_EVERY is stored anyway, and
 * once such a probe is served the table is stored again. Once the store is nearly full, a
 * statement's result is stored only from its second miss (Qcache_admission_unseen). Every reply
 * is compared byte for byte with the server's: declining only ever changes what is stored, never
 * what a client is sent.
 */
import { after, before, describe, test } from 'node:test';
import { DECLINE_AT, PROBE_EVERY } from '../../src/cache/fill-admission.ts';
import {
  ProxyHarness,
  WARM_TABLE_STATEMENTS,
  differential,
  runStatements,
} from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PORT } from '../support/env.ts';

const DB = 'nc_admission_scenario';

const SETUP = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `USE ${DB}`,
  'CREATE TABLE hot (id INT PRIMARY KEY, v INT) ENGINE=InnoDB',
  'INSERT INTO hot VALUES (1, 0), (2, 0)',
  'CREATE TABLE calm (id INT PRIMARY KEY, w INT) ENGINE=InnoDB',
  'INSERT INTO calm VALUES (1, 10), (2, 20)',
  // Empties every store and forgets what admission learned: each side starts the same.
  'RESET QUERY CACHE',
];

const READ_HOT = 'SELECT v FROM hot WHERE id = 1';
const WRITE_HOT = 'UPDATE hot SET v = v + 1 WHERE id = 1';
const READ_CALM = 'SELECT w FROM calm WHERE id = 1';

describe('admission', () => {
  let proxy: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...WARM_TABLE_STATEMENTS]);
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
  });

  test('a table written between its reads stops being stored; a table read again does not', () =>
    differential(proxy, { database: DB, setup: SETUP }, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });

      // Each read is stored, and the write after it makes it stale before anyone reads it:
      // the next read finds it stale (a wasted fill) and reads the server again.
      for (let round = 0; round < -DECLINE_AT; round++) {
        await a.query(READ_HOT);
        await run.expect({ hits: 0, inserts: 1, admission_declined: 0 }, `read ${round}`);
        await a.query(WRITE_HOT);
      }
      // The read that found the last stale entry has its table at the threshold: relayed.
      await a.query(READ_HOT);
      await run.expect(
        { hits: 0, inserts: 0, admission_declined: 1, not_cached: 1 },
        'a table whose results die unread is not stored',
      );
      await a.query(READ_HOT);
      await run.expect({ hits: 0, inserts: 0, admission_declined: 1 }, 'nor on the next read');

      // Another table on the same worker, read again: stored and served as ever.
      await a.query(READ_CALM);
      await a.query(READ_CALM);
      await run.expect({ hits: 1, inserts: 1, admission_declined: 0 }, 'a re-read table');
      // One store, one judgement: the other worker declines the table's fills as well.
      await b.query(READ_HOT);
      await b.query(READ_HOT);
      await run.expect(
        { hits: 0, inserts: 0, admission_declined: 2 },
        'the other worker, which never stored the table',
      );

      // The writes stopped. All but one declined miss in PROBE_EVERY are relayed; the probe is
      // stored, and served... (two of those misses were declined above)
      for (let miss = 3; miss < PROBE_EVERY; miss++) await a.query(READ_HOT);
      await run.expect(
        { hits: 0, inserts: 0, admission_declined: PROBE_EVERY - 3 },
        'declined until the probe',
      );
      await a.query(READ_HOT);
      await run.expect({ hits: 0, inserts: 1, admission_declined: 0 }, 'the probe is stored');
      await a.query(READ_HOT);
      await run.expect({ hits: 1, inserts: 0 }, 'and served');
      // ...which is credit enough for the next miss to be stored again.
      await a.query(WRITE_HOT);
      await a.query(READ_HOT);
      await run.expect({ hits: 0, inserts: 1, admission_declined: 0 }, 'stored again');
      await a.query(READ_HOT);
      await run.expect({ hits: 1, inserts: 0 }, 'and served again');
    }));

  test('a table created anew is stored from its first read, whatever its name saw before', () =>
    differential(proxy, { database: DB, setup: SETUP }, async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 1 });
      for (let round = 0; round < -DECLINE_AT; round++) {
        await a.query(READ_HOT);
        await a.query(WRITE_HOT);
      }
      await run.expect({ hits: 0, inserts: -DECLINE_AT, admission_declined: 0 }, 'wasted fills');
      await a.query(READ_HOT);
      await run.expect({ inserts: 0, admission_declined: 1 }, 'the table is declined');

      // A failed DDL defines nothing.
      await b.query('CREATE TABLE hot (id INT PRIMARY KEY) ENGINE=InnoDB', 1050);
      await a.query(READ_HOT);
      await run.expect({ inserts: 0, admission_declined: 1 }, 'still declined');
      // Nor does a temporary table: it is its session's alone, whatever its name.
      await b.query('CREATE TEMPORARY TABLE hot (id INT PRIMARY KEY) ENGINE=InnoDB');
      await b.query('DROP TEMPORARY TABLE hot');
      await a.query(READ_HOT);
      await run.expect({ inserts: 0, admission_declined: 1 }, 'declined after a temporary table');

      // The table is dropped and made again, on the other worker: a new table under the name.
      await b.query('DROP TABLE hot');
      await b.query('CREATE TABLE hot (id INT PRIMARY KEY, v INT) ENGINE=InnoDB');
      await b.query('INSERT INTO hot VALUES (1, 5), (2, 5)');
      await a.query(READ_HOT);
      await run.expect({ hits: 0, inserts: 1, admission_declined: 0 }, 'stored at its first miss');
      await a.query(READ_HOT);
      await run.expect({ hits: 1, inserts: 0 }, 'and served');
    }));
});

describe('admission to a nearly full store', () => {
  let proxy: ProxyHarness;
  const PADDED = 'SELECT id, pad FROM padded WHERE id = ';

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [...WARM_TABLE_STATEMENTS]);
    // Room for about a hundred of the 2 KB results below.
    proxy = await ProxyHarness.start(['--query-cache-size', '256K']);
  });

  after(async () => {
    await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
  });

  test('a result read once is not stored while the store is nearly full; read again, it is', () =>
    differential(
      proxy,
      {
        database: DB,
        setup: [
          `DROP DATABASE IF EXISTS ${DB}`,
          `CREATE DATABASE ${DB}`,
          `USE ${DB}`,
          'CREATE TABLE padded (id INT PRIMARY KEY, pad VARCHAR(2000)) ENGINE=InnoDB',
          'INSERT INTO padded SELECT seq, REPEAT(CHAR(65 + seq % 26), 2000) FROM seq_1_to_400',
          'RESET QUERY CACHE',
        ],
      },
      async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        // Fill the store: far more distinct 2 KB results than it holds.
        for (let id = 1; id <= 300; id++) await a.query(PADDED + id);
        await run.expect({}, 'filled');
        // A statement never read before misses and is relayed without being stored...
        await a.query(PADDED + 350);
        await run.expect(
          { hits: 0, inserts: 0, admission_unseen: 1, not_cached: 1, admission_declined: 0 },
          'first miss while full',
        );
        // ...its second miss is stored, whichever worker sees it (the doorkeeper is shared)...
        await b.query(PADDED + 350);
        await run.expect({ hits: 0, inserts: 1, admission_unseen: 0 }, 'second miss');
        // ...and served from then on.
        await a.query(PADDED + 350);
        await b.query(PADDED + 350);
        await run.expect({ hits: 2, inserts: 0, admission_unseen: 0 }, 'hits');
        // RESET QUERY CACHE empties the store: a first miss is stored again.
        await a.query('RESET QUERY CACHE');
        await a.query(PADDED + 351);
        await run.expect({ inserts: 1, admission_unseen: 0 }, 'after RESET QUERY CACHE');
      },
    ));
});
