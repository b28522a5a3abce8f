/**
 * Status counters and the query cache's variables, directly and through the proxy (two workers,
 * cache on): the same statements on both sides, replies compared byte for byte where the server
 * and the proxy must agree, and checked where they differ by design (the Qcache_* values through
 * the proxy are nicecache's, in every form a client reads them).
 *
 * - What the proxy decides from a statement's text follows the server's parser: a leading
 *   comment, an executable comment or odd spacing changes nothing.
 * - SHOW STATUS with an executable comment (as mariadb-admin sends it), as a prepared statement,
 *   and information_schema's GLOBAL_STATUS / SESSION_STATUS all show nicecache's values; the
 *   server's row order is kept; FLUSH STATUS resets what the server resets; the gauges fall
 *   when results go stale; with --query-cache-type 0 the server's own values show.
 * - query_cache_type is the server's variable: SET reaches the server and gets its answer, reads
 *   show its value, and nicecache follows what the session set.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { Command, PacketHeader } from '../../src/protocol/constants.ts';
import { readLenencBytes, readLenencInt } from '../../src/protocol/lenenc.ts';
import { execute, prepare } from '../../src/protocol/statement-commands.ts';
import {
  ProxyHarness,
  WARM_DB,
  differential,
  rowsOf,
  runStatements,
  withServerQueryCache,
} from '../support/cache-scenario.ts';
import type { Run } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { RawClient, replyError } from '../support/raw-client.ts';
import type { RawPacket } from '../support/raw-client.ts';

const DB = 'nc_status';
const READ_T = 'SELECT * FROM t ORDER BY id';
const READ_U = 'SELECT * FROM u ORDER BY id';

function fresh(): string[] {
  return [
    `DROP DATABASE IF EXISTS ${DB}`,
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB`,
    `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two'), (3, 'three')`,
    `CREATE TABLE ${DB}.u (id INT PRIMARY KEY, w INT) ENGINE=InnoDB`,
    `INSERT INTO ${DB}.u VALUES (1, 10), (2, 20)`,
    'RESET QUERY CACHE',
  ];
}

/** The rows of a binary-protocol result whose columns are all strings (SHOW STATUS's are). */
function binaryRows(packets: RawPacket[], deprecateEof: boolean): Array<Array<string | null>> {
  const columns = readLenencInt(packets[0]!.payload, 0)!.value;
  const rows: Array<Array<string | null>> = [];
  for (const { payload } of packets.slice(1 + columns + (deprecateEof ? 0 : 1))) {
    if (payload[0] !== 0x00) break;
    const bitmap = (columns + 7 + 2) >> 3;
    let pos = 1 + bitmap;
    const row: Array<string | null> = [];
    for (let i = 0; i < columns; i++) {
      const bit = i + 2;
      if (payload[1 + (bit >> 3)]! & (1 << (bit & 7))) {
        row.push(null);
        continue;
      }
      const field = readLenencBytes(payload, pos)!;
      row.push(field.value.toString('utf8'));
      pos = field.end;
    }
    rows.push(row);
  }
  return rows;
}

/** The value of `name` in name/value rows, names compared without case. */
function valueOf(rows: Array<Array<string | null>>, name: string): string | undefined {
  return rows.find((row) => row[0]?.toLowerCase() === name.toLowerCase())?.[1] ?? undefined;
}

/** Through the proxy: the proxy-wide value of one counter, as SHOW GLOBAL STATUS gives it. */
async function proxyValue(run: Run, name: string): Promise<string> {
  return String((await run.proxy!.counters()).get(name));
}

describe('status and query cache variables: directly and through the proxy', () => {
  let proxy: ProxyHarness;
  /** A proxy with nicecache's cache off (--query-cache-type 0). */
  let relay: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${WARM_DB}`,
      `CREATE DATABASE ${WARM_DB}`,
      `CREATE TABLE ${WARM_DB}.w (id INT PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT INTO ${WARM_DB}.w VALUES (1)`,
    ]);
    [proxy, relay] = await Promise.all([
      ProxyHarness.start(),
      ProxyHarness.start(['--query-cache-type', '0']),
    ]);
  });

  after(async () => {
    const codes = await Promise.all([proxy.stop(), relay.stop()]);
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `DROP DATABASE IF EXISTS ${WARM_DB}`,
    ]);
    assert.deepEqual(codes, [0, 0], 'the proxies exit cleanly');
  });

  const scenario = (script: (run: Run) => Promise<void>): Promise<void> =>
    differential(proxy, { database: DB, setup: fresh() }, script);

  test('diagnostics after a hit: comments and executable comments change nothing', () =>
    // A hit of the server's own cache leaves other diagnostics than a run: it stays off.
    withServerQueryCache({ type: 'OFF', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query(READ_T);
        for (const reader of [
          '/* app */ SHOW WARNINGS',
          '-- app\nSHOW   COUNT(*) WARNINGS',
          '/*!40100 SHOW WARNINGS */',
          '/* app */ GET DIAGNOSTICS @n = NUMBER',
          'SELECT /* c */ @@session.warning_count',
        ]) {
          // A warning the server keeps until a statement that reads a table runs: a hit runs none.
          await a.queryThenDiagnostics("SELECT CAST('x' AS SIGNED)");
          await a.queryThenDiagnostics(READ_T);
          await a.query(reader);
          if (reader.startsWith('/* app */ GET')) await a.query('SELECT @n');
        }
        await run.expect({ hits: 5 }, 'each read before the diagnostics was a hit');
        // Prepared readers of diagnostics, executed right after a hit.
        const limit2 = `${READ_T} LIMIT 2`;
        await a.query(limit2);
        for (const reader of ['SELECT FOUND_ROWS()', 'SHOW WARNINGS', 'SELECT ROW_COUNT()']) {
          await a.queryThenDiagnostics("SELECT CAST('x' AS SIGNED) FROM t");
          await a.queryThenDiagnostics(limit2);
          await a.execute(reader);
        }
        await run.expect({ hits: 3 }, 'each read before a prepared reader was a hit');
        // After a statement that may change session state the proxy probes the session: not
        // before a prepared reader of diagnostics, which would read the probe's.
        for (const reader of ['SELECT FOUND_ROWS()', 'SELECT ROW_COUNT()']) {
          await a.queryThenDiagnostics(`SELECT SQL_NO_CACHE * FROM t LIMIT 2`);
          await a.queryThenDiagnostics('SET @x = 1');
          await a.execute(reader);
        }
      }),
    ));

  test('a write that reads diagnostics right after USE invalidates the table it writes', () =>
    // A hit of the server's own cache leaves other diagnostics than a run: it stays off.
    withServerQueryCache({ type: 'OFF', size: 1 << 20 }, () =>
      scenario(async (run) => {
        await run.admin([
          `DROP DATABASE IF EXISTS ${DB}_2`,
          `CREATE DATABASE ${DB}_2`,
          `CREATE TABLE ${DB}_2.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB`,
        ]);
        await run.settle();
        const reader = await run.session('reader', { worker: 0 });
        const writer = await run.session('writer', { worker: 0 });
        const other = `SELECT * FROM ${DB}_2.t ORDER BY id`;
        await reader.query(other);
        await reader.query(other);
        await run.expect({ hits: 1 }, 'cached');
        // USE leaves the session's state to be probed; the write reads ROW_COUNT(), so it goes
        // before the probe, while the proxy does not yet know which schema "t" is in.
        await writer.query(`USE ${DB}_2`);
        await writer.query('INSERT INTO t SELECT 9, ROW_COUNT()');
        await reader.query(other);
        await run.admin([`DROP DATABASE IF EXISTS ${DB}_2`]);
      }),
    ));

  test('SHOW STATUS in every form shows nicecache’s Qcache_* values', () =>
    // The server's cache off and its counters at zero: its Qcache_hits cannot pass for nicecache's.
    withServerQueryCache({ type: 'OFF', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('FLUSH STATUS');
        await run.baseline();
        for (let i = 0; i < 3; i++) await a.query(READ_T);
        const deprecateEof = a.client.deprecateEof;
        const hits = run.isProxy ? await proxyValue(run, 'hits') : null;
        const check = (form: string, value: string | undefined): void => {
          run.check(value !== undefined, `${form}: no Qcache_hits row`);
          if (hits !== null)
            run.check(value === hits, `${form}: Qcache_hits ${value}, not ${hits}`);
        };
        for (const sql of [
          "SHOW /*!50002 GLOBAL */ STATUS LIKE 'Qcache_hits'",
          "SHOW /*M!100000 SESSION */ STATUS LIKE 'Qcache\\_hits'",
          "/* app */ show\n  STATUS like 'QCACHE_HITS';",
          'SHOW /*!50002 GLOBAL */ STATUS',
        ]) {
          check(sql, valueOf(await a.rows(sql), 'Qcache_hits'));
        }
        // As a prepared statement: binary rows.
        const showHits = "SHOW GLOBAL STATUS LIKE 'Qcache_hits'";
        const prepared = await a.client.command(prepare(showHits));
        assert.equal(prepared[0]!.payload[0], PacketHeader.OK, 'prepare SHOW STATUS');
        const id = prepared[0]!.payload.readUInt32LE(1);
        const executed = await a.client.command(execute(id, []));
        assert.equal(replyError(executed), null, 'execute SHOW STATUS');
        check(`prepared ${showHits}`, valueOf(binaryRows(executed, deprecateEof), 'Qcache_hits'));
        // information_schema's tables name the variables in upper case.
        for (const table of ['GLOBAL_STATUS', 'SESSION_STATUS']) {
          check(
            table,
            valueOf(
              await a.rows(
                `SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.${table} WHERE VARIABLE_NAME LIKE 'QCACHE_HITS'`,
              ),
              'Qcache_hits',
            ),
          );
          const all = await a.rows(`SELECT * FROM information_schema.${table}`);
          check(`SELECT * FROM ${table}`, valueOf(all, 'QCACHE_HITS'));
        }
        // What mariadb-admin extended-status sends (SHOW /*!50002 GLOBAL */ STATUS).
        const admin = spawnSync(
          'mariadb-admin',
          [
            '-h',
            run.host,
            '-P',
            String(run.port),
            '--protocol=TCP',
            '-u',
            BACKEND_USER,
            ...(BACKEND_PASSWORD === '' ? [] : [`-p${BACKEND_PASSWORD}`]),
            'extended-status',
          ],
          { encoding: 'utf8' },
        );
        if (admin.status !== null || admin.error === undefined) {
          assert.equal(admin.status, 0, `mariadb-admin: ${admin.stderr}`);
          check(
            'mariadb-admin extended-status',
            /\|\s*Qcache_hits\s*\|\s*(\d+)\s*\|/.exec(admin.stdout)?.[1],
          );
        }
      }),
    ));

  test('SHOW STATUS keeps the server’s row order; nicecache’s rows go where the server would put them', async () => {
    const names = async (port: number): Promise<string[]> => {
      const client = await RawClient.connect({
        host: port === BACKEND_PORT ? BACKEND_HOST : proxy.host,
        port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: null,
      });
      try {
        return rowsOf(await client.query('SHOW GLOBAL STATUS'), client.deprecateEof).map(
          (row) => row[0]!,
        );
      } finally {
        client.close();
      }
    };
    const server = await names(BACKEND_PORT);
    const through = await names(proxy.port);
    const known = new Set(server);
    const own = through.filter((name) => !known.has(name));
    assert.ok(own.includes('Qcache_invalidations'), 'nicecache’s own rows are listed');
    assert.deepEqual(
      through.filter((name) => known.has(name)),
      server,
      'the server’s rows in the server’s order',
    );
    // MariaDB orders by name without letter case (strcasecmp): `_` before letters.
    for (const name of own) {
      const at = through.indexOf(name);
      const lower = name.toLowerCase();
      const before = through[at - 1]?.toLowerCase() ?? '';
      const after = through[at + 1]?.toLowerCase() ?? '\uffff';
      assert.ok(before <= lower && lower <= after, `${name} between ${before} and ${after}`);
    }
  });

  test('session status counts the client’s statements, not the proxy’s probes', () =>
    // Reads that all miss (each its own text), with the server's cache off: the server runs every
    // statement the client sends on both sides, and the proxy adds its probes.
    withServerQueryCache({ type: 'OFF', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        const names = "('Questions', 'Com_select', 'Rows_sent', 'Empty_queries')";
        const counters = `SHOW SESSION STATUS WHERE Variable_name IN ${names}`;
        const table = `SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN ${names.toUpperCase()} ORDER BY VARIABLE_NAME`;
        await a.query('FLUSH STATUS');
        // Each SET leaves the session's state to be probed before the read after it.
        await a.query('SET @a = 1');
        await a.query('SELECT * FROM t WHERE id = 1');
        await a.query('SET @b = 2');
        await a.query('SELECT * FROM t WHERE id > 1 ORDER BY id');
        // After the probe, FOUND_ROWS() is put back by a SELECT of the proxy's own as well: the
        // probe goes before the UPDATE (which needs the session's schema), the SELECT that puts
        // FOUND_ROWS() back (3) right after it.
        await a.query('SELECT SQL_CALC_FOUND_ROWS * FROM t ORDER BY id LIMIT 1');
        await a.query('SET @c = 3');
        await a.query('UPDATE t SET v = v WHERE id = 1');
        await a.query('SELECT FOUND_ROWS()');
        await a.query('SELECT * FROM t WHERE id = 99');
        await a.query(counters);
        await a.query(table);
        await a.query("SHOW STATUS LIKE 'Rows_sent'");
        await a.execute(counters);
        // Global status keeps every session's counts, the proxy's included: not compared.
        // The server starts the session's counters over on COM_RESET_CONNECTION: so does the proxy.
        await a.command('COM_RESET_CONNECTION', Buffer.from([Command.RESET_CONNECTION]));
        await a.query('SET @d = 4');
        await a.query('SELECT * FROM t WHERE id = 2');
        await a.query(counters);
        await a.query('FLUSH STATUS');
        await a.query('SET @e = 5');
        await a.query('SELECT * FROM t WHERE id = 3');
        await a.query(counters);
      }),
    ));

  test('FLUSH STATUS resets the Qcache counters the server resets, and not the gauges', () =>
    withServerQueryCache({ type: 'ON', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        for (let i = 0; i < 3; i++) await a.query(READ_T);
        await a.query('SELECT SQL_NO_CACHE * FROM t');
        const status = async (): Promise<Array<Array<string | null>>> =>
          a.rows("SHOW GLOBAL STATUS LIKE 'Qcache%'");
        const before = await status();
        run.check(valueOf(before, 'Qcache_hits') !== '0', 'hits before FLUSH STATUS');
        await a.query('FLUSH STATUS');
        const flushed = await status();
        for (const name of ['hits', 'inserts', 'not_cached', 'lowmem_prunes']) {
          run.check(
            valueOf(flushed, `Qcache_${name}`) === '0',
            `Qcache_${name} after FLUSH STATUS`,
          );
        }
        for (const name of ['queries_in_cache', 'total_blocks']) {
          const value = valueOf(flushed, `Qcache_${name}`);
          run.check(
            value === valueOf(before, `Qcache_${name}`) && value !== '0',
            `Qcache_${name} ${value} after FLUSH STATUS`,
          );
        }
        if (run.isProxy) {
          run.check(
            valueOf(flushed, 'Qcache_bypass_not_requested') === '0',
            'nicecache’s counters too',
          );
        }
        await a.query(READ_T);
        run.check(valueOf(await status(), 'Qcache_hits') === '1', 'counting again from zero');
        // COM_REFRESH with REFRESH_STATUS (0x10) is FLUSH STATUS too.
        await a.query(READ_T);
        await a.command('COM_REFRESH status', Buffer.from([Command.REFRESH, 0x10]));
        run.check(valueOf(await status(), 'Qcache_hits') === '0', 'hits after COM_REFRESH');
        await run.baseline();
      }),
    ));

  test('Qcache_queries_in_cache falls when writes make results stale, and after RESET', () =>
    withServerQueryCache({ type: 'ON', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 1 });
        for (const session of [a, b]) {
          await session.query(READ_T);
          await session.query(READ_U);
        }
        // One entry per statement, on the server and in nicecache's store (every worker's); the
        // harness's own reads (on another table) are cached too.
        const inCache = async (): Promise<string | undefined> =>
          valueOf(
            await a.rows("SHOW STATUS LIKE 'Qcache_queries_in_cache'"),
            'Qcache_queries_in_cache',
          );
        const others = Number(await inCache()) - 2;
        // Read once, right after the write: a worker that did not run the write or the SHOW
        // STATUS must have dropped its stale results by the time the statement is answered.
        const expectInCache = async (count: number, label: string): Promise<void> => {
          const expected = count === 0 ? 0 : others + count;
          const value = await inCache();
          run.check(
            value === String(expected),
            `${label}: Qcache_queries_in_cache ${value}, expected ${expected}`,
          );
        };
        await expectInCache(2, 'both statements cached');
        await b.query("UPDATE t SET v = 'uno' WHERE id = 1");
        await expectInCache(1, 'after a write to t');
        await a.query(READ_T);
        await b.query(READ_T);
        await expectInCache(2, 'cached again');
        await a.query('RESET QUERY CACHE');
        await expectInCache(0, 'after RESET QUERY CACHE');
        await run.baseline();
      }),
    ));

  test('with --query-cache-type 0 the server’s own Qcache values show', () =>
    withServerQueryCache({ type: 'ON', size: 1 << 20 }, async () => {
      await runStatements(BACKEND_HOST, BACKEND_PORT, fresh());
      const open = (port: number, host: string): Promise<RawClient> =>
        RawClient.connect({
          host,
          port,
          user: BACKEND_USER,
          password: BACKEND_PASSWORD,
          database: DB,
        });
      const direct = await open(BACKEND_PORT, BACKEND_HOST);
      const through = await open(relay.port, relay.host);
      try {
        for (let i = 0; i < 3; i++) await direct.query(READ_T);
        const show = "SHOW GLOBAL STATUS LIKE 'Qcache%'";
        const server = rowsOf(await direct.query(show), direct.deprecateEof);
        const shown = rowsOf(await through.query(show), through.deprecateEof);
        assert.deepEqual(
          shown.map((row) => row[0]),
          server.map((row) => row[0]),
          'the server’s rows, none of nicecache’s',
        );
        for (const name of ['Qcache_hits', 'Qcache_inserts', 'Qcache_queries_in_cache']) {
          assert.equal(valueOf(shown, name), valueOf(server, name), name);
        }
        assert.notEqual(valueOf(shown, 'Qcache_hits'), '0', 'the server’s cache was used');
      } finally {
        direct.close();
        through.close();
      }
    }));

  test('query_cache_type is the server’s: a globally disabled cache refuses a session (1925)', () =>
    withServerQueryCache({ type: 'OFF', size: 1 << 20 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        await a.query('SET SESSION query_cache_type = ON', 1925);
        await a.query('/* app */ SET @@local.query_cache_type = DEMAND', 1925);
        await a.query('SET query_cache_type = 1, sql_mode = DEFAULT', 1925);
        await a.query('SELECT @@session.query_cache_type, @@global.query_cache_type');
        await a.query("SHOW SESSION VARIABLES LIKE 'query_cache_type'");
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'a refused SET leaves nicecache’s own default (ON)');
        await a.query('SET SESSION query_cache_type = OFF');
        await a.query('SELECT @@query_cache_type');
        await a.query(READ_T);
        await a.query(READ_T);
        // SELECT @@query_cache_type too: with the cache off nothing is even considered.
        await run.expect({ hits: 0, bypass_not_requested: 3 }, 'the session’s OFF is followed');
        await a.query('SET query_cache_type = DEFAULT');
        await a.query(READ_T);
        await run.expect({ hits: 1 }, 'DEFAULT: nicecache’s own default again');
      }),
    ));

  test('query_cache_type is the server’s: the session’s DEMAND is read back and followed', () =>
    withServerQueryCache({ type: 'ON', size: 0 }, () =>
      scenario(async (run) => {
        const a = await run.session('A', { worker: 0 });
        const b = await run.session('B', { worker: 0 });
        await a.query('SET /*!40101 SESSION */ query_cache_type = DEMAND');
        await a.query('SELECT @@session.query_cache_type');
        await a.query("SHOW VARIABLES LIKE 'query_cache%'");
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect({ hits: 0, bypass_not_requested: 3 }, 'DEMAND without SQL_CACHE (and @@)');
        await a.query('SELECT SQL_CACHE * FROM t');
        await a.query('SELECT SQL_CACHE * FROM t');
        await run.expect({ hits: 1 }, 'DEMAND with SQL_CACHE');
        await b.query(READ_T);
        await b.query(READ_T);
        await run.expect({ hits: 1 }, 'another session keeps nicecache’s default');
        await a.execute('SET query_cache_type = ?', ['OFF']);
        await a.query('SELECT @@session.query_cache_type');
        await a.query('SELECT SQL_CACHE * FROM t');
        await run.expect({ hits: 0, bypass_not_requested: 2 }, 'set OFF by a prepared statement');
        await a.command('reset connection', Buffer.from([Command.RESET_CONNECTION]));
        await a.query('SELECT @@session.query_cache_type');
        await a.query(READ_T);
        await a.query(READ_T);
        await run.expect(
          { hits: 2 },
          'COM_RESET_CONNECTION: nicecache’s default again (B’s entry)',
        );
        // Set by a procedure: the probe finds the change.
        await a.query('CREATE PROCEDURE p() SET SESSION query_cache_type = OFF');
        await a.query('CALL p()');
        await a.query('SELECT @@session.query_cache_type');
        await a.query(READ_T);
        await run.expect({ hits: 0, bypass_not_requested: 2 }, 'set OFF inside a procedure');
      }),
    ));
});
