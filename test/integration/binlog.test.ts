/**
 * Writes made on the server directly, not through the proxy, become visible through it: the
 * binlog follower reads them from the binary log of a throwaway server started here (log_bin
 * on), and invalidates what they wrote. Each scenario caches a read through the real proxy (a
 * hit is seen in SHOW STATUS before the write, so a follower that missed the write would keep
 * serving the old rows), writes on a direct connection, then polls the proxy until it returns
 * what the server returns, and checks that it never goes back to the old rows. ROW, MIXED and
 * STATEMENT logging each run the data-changing statements.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { runNicecache, startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { metricsUrl, parseSamples, promtoolCheck } from '../support/metrics.ts';

const DB = 'nc_binlog';
/** Far beyond the follower's lag bound: a scenario that reaches it has failed, not been slow. */
const DEADLINE_MS = 20_000;
const POLL_MS = 20;
/** Reads after the first fresh one, each of which must be fresh too. */
const CONFIRMING_READS = 5;
const READER = 'nc_binlog_reader';
/** The proxy's admin account: only what the README says is required (no EVENT, no PROCESS). */
const FOLLOWER_USER = 'nc_binlog_follower';
const FOLLOWER = `'${FOLLOWER_USER}'@'%'`;

let server: EphemeralServer;
let proxy: ProxyProcess;
/** Straight to the server: the writes the proxy does not see, and the truth to compare with. */
let direct: Connection;
/** Through the proxy: one connection, so its reads stay on one worker and its cache. */
let reader: Connection;

async function connectTo(
  port: number,
  user = 'root',
  database: string | null = DB,
): Promise<Connection> {
  const connection = await mariadb.createConnection({
    host: '127.0.0.1',
    port,
    user,
    password: '',
    ...(database === null ? {} : { database }),
    multipleStatements: false,
  });
  // Cut while idle (the server restarts), a connection emits 'error'; its next query fails anyway.
  connection.on('error', () => {});
  return connection;
}

/** A proxy's counters, read on `on` (a connection to that proxy). */
async function hits(on: Connection = reader): Promise<number> {
  return Number(await statusValue('Qcache_hits', on));
}

async function statusValue(name: string, on: Connection = reader): Promise<string> {
  const rows = await on.query<Array<{ Value: string }>>(`SHOW GLOBAL STATUS LIKE '${name}'`);
  return rows[0]?.Value ?? '';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads `sql` through the proxy until a read is served from the cache (the first fills; a table
 * the metadata does not know yet is not cached until it has been read again). Returns the rows.
 */
async function cached(
  sql: string,
  on: Connection = reader,
  counters: Connection = reader,
): Promise<string> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const before = await hits(counters);
    const result = JSON.stringify(await on.query(sql));
    if ((await hits(counters)) > before) return result;
    if (Date.now() > deadline) assert.fail(`${sql} was never served from the cache`);
    await sleep(POLL_MS);
  }
}

/**
 * Polls the proxy until `sql` returns what the server returns, then reads it again: once fresh,
 * never old again. Returns the fresh result.
 */
async function becomesFresh(sql: string, old: string, on: Connection = reader): Promise<string> {
  const truth = JSON.stringify(await direct.query(sql));
  assert.notEqual(truth, old, 'the write changed what the statement returns');
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const seen = JSON.stringify(await on.query(sql));
    if (seen === truth) break;
    assert.equal(seen, old, 'through the proxy: either the old rows or the new, nothing else');
    if (Date.now() > deadline) assert.fail(`still the old rows after ${DEADLINE_MS} ms: ${sql}`);
    await sleep(POLL_MS);
  }
  for (let i = 0; i < CONFIRMING_READS; i++) {
    assert.equal(JSON.stringify(await on.query(sql)), truth, 'a fresh result went back to old');
  }
  return truth;
}

async function waitForState(state: string): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while ((await statusValue('Nicecache_binlog_state')) !== state) {
    if (Date.now() > deadline) assert.fail(`the follower never became '${state}'`);
    await sleep(POLL_MS);
  }
}

/** Until the follower has read every transaction the server has logged so far. */
async function caughtUp(on: Connection = reader): Promise<void> {
  const rows = await direct.query<Array<{ position: string }>>(
    'SELECT @@global.gtid_binlog_pos AS position',
  );
  const position = rows[0]!.position;
  const deadline = Date.now() + DEADLINE_MS;
  while ((await statusValue('Nicecache_binlog_position', on)) !== position) {
    if (Date.now() > deadline) assert.fail(`the follower never reached ${position}`);
    await sleep(POLL_MS);
  }
}

/**
 * Keeps the follower out: its account may not read the log for now (which, logged, invalidates
 * everything once read), and its connection is killed. Returns with the read cached again after
 * that, so that only the follower can tell the cache of a write made while it is down.
 */
async function holdFollowerDown(read: string): Promise<string> {
  await direct.query(`REVOKE REPLICATION SLAVE ON *.* FROM ${FOLLOWER}`);
  await caughtUp();
  const old = await cached(read);
  const dumps = await direct.query<Array<{ id: number }>>(
    `SELECT id FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump' AND USER = '${FOLLOWER_USER}'`,
  );
  assert.equal(dumps.length, 1, 'one follower connection');
  await direct.query(`KILL ${dumps[0]!.id}`);
  await waitForState('disconnected');
  return old;
}

/** The error a statement gets, or null. */
async function errorOf(on: Connection, sql: string): Promise<number | null> {
  try {
    await on.query(sql);
    return null;
  } catch (error) {
    return (error as { errno: number }).errno;
  }
}

/**
 * Through the proxy on `port`: the follower says it is off, and the cache works without it (a
 * repeated read of a new table becomes a hit). Leaves nothing behind.
 */
async function runsWithoutFollower(port: number, schema: string, failure: string): Promise<void> {
  const client = await mariadb.createConnection({
    host: '127.0.0.1',
    port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
  });
  try {
    const status = async (name: string): Promise<string> =>
      (await client.query<Array<{ Value: string }>>(`SHOW GLOBAL STATUS LIKE '${name}'`))[0]!.Value;
    assert.equal(await status('Nicecache_binlog_state'), 'off');
    await client.query(`CREATE DATABASE IF NOT EXISTS ${schema}`);
    await client.query(`CREATE OR REPLACE TABLE ${schema}.t (id INT PRIMARY KEY)`);
    await client.query(`INSERT INTO ${schema}.t VALUES (1)`);
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      const before = Number(await status('Qcache_hits'));
      await client.query(`SELECT id FROM ${schema}.t`);
      if (Number(await status('Qcache_hits')) > before) break;
      if (Date.now() > deadline) assert.fail(failure);
      await sleep(POLL_MS);
    }
    await client.query(`DROP DATABASE ${schema}`);
  } finally {
    await client.end();
  }
}

async function freshTable(
  name: string,
  rows = "(1, 'one'), (2, 'two'), (3, 'three')",
): Promise<void> {
  await direct.query(`DROP TABLE IF EXISTS ${name}`);
  await direct.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`);
  await direct.query(`INSERT INTO ${name} VALUES ${rows}`);
}

before(async () => {
  server = await startEphemeralServer({
    serverOptions: { log_bin: 'binlog', server_id: 1, binlog_format: 'ROW' },
  });
  const root = await mariadb.createConnection({
    host: '127.0.0.1',
    port: server.port,
    user: 'root',
    password: '',
  });
  await root.query(`CREATE DATABASE ${DB}`);
  await root.query(`CREATE USER ${FOLLOWER}`);
  await root.query(`GRANT SELECT, SHOW VIEW, TRIGGER, REPLICATION SLAVE ON *.* TO ${FOLLOWER}`);
  await root.end();
  direct = await connectTo(server.port);
  proxy = await startProxyProcess({
    backend: `127.0.0.1:${server.port}`,
    workers: 2,
    extraArgs: ['--admin-user', FOLLOWER_USER, '--binlog', 'on', '--binlog-max-lag', '1000'],
  });
  reader = await connectTo(proxy.port);
});

after(async () => {
  await reader?.end();
  await direct?.end();
  await proxy?.stop();
  await server?.stop();
});

describe('--binlog at start', () => {
  test('on: refused, naming the grant, when the admin account may not read the log', async () => {
    await direct.query(`DROP USER IF EXISTS 'nc_binlog_plain'@'%'`);
    await direct.query(`CREATE USER 'nc_binlog_plain'@'%'`);
    await direct.query(`GRANT SELECT, SHOW VIEW, TRIGGER ON *.* TO 'nc_binlog_plain'@'%'`);
    const run = await runNicecache([
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--backend',
      `127.0.0.1:${server.port}`,
      '--workers',
      '1',
      '--admin-user',
      'nc_binlog_plain',
      '--binlog',
      'on',
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /--binlog on: .*GRANT REPLICATION SLAVE ON \*\.\*/);
  });

  test('auto without an admin account: one line saying so, and the cache works', async () => {
    const plain = await startProxyProcess({ backend: `127.0.0.1:${server.port}`, workers: 1 });
    const client = await connectTo(plain.port);
    try {
      const lines = plain
        .log()
        .split('\n')
        .filter((line) => line.includes('not seen'));
      assert.equal(lines.length, 1, plain.log());
      assert.match(lines[0]!, /no --admin-user/);
      const t = `${DB}.no_admin`;
      await freshTable(t);
      const hitsNow = async (): Promise<number> => {
        const rows = await client.query<Array<{ Value: string }>>(
          "SHOW GLOBAL STATUS LIKE 'Qcache_hits'",
        );
        return Number(rows[0]!.Value);
      };
      const deadline = Date.now() + DEADLINE_MS;
      for (;;) {
        const before = await hitsNow();
        await client.query(`SELECT id FROM ${t}`);
        if ((await hitsNow()) > before) break;
        if (Date.now() > deadline) assert.fail('no hit without an admin account');
        await sleep(POLL_MS);
      }
    } finally {
      await client.end();
      await plain.stop();
    }
  });

  test('on: refused when the server has no binary log; auto: one line, and the cache works', async () => {
    // The test server of the other suites runs without log_bin.
    const backend = `${BACKEND_HOST}:${BACKEND_PORT}`;
    const common = ['proxy', '--listen', '127.0.0.1:0', '--backend', backend, '--workers', '1'];
    const admin = ['--admin-user', BACKEND_USER];
    const env = { NICECACHE_ADMIN_PASSWORD: BACKEND_PASSWORD };
    const refused = await runNicecache([...common, ...admin, '--binlog', 'on'], env);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /log_bin=OFF.*start the server with log_bin/);
    const auto = await startProxyProcess({ backend, workers: 1, extraArgs: admin, env });
    try {
      const lines = auto
        .log()
        .split('\n')
        .filter((line) => line.includes('not seen'));
      assert.equal(lines.length, 1, auto.log());
      assert.match(lines[0]!, /log_bin=OFF/);
      await runsWithoutFollower(auto.port, 'nc_binlog_plain', 'no hit without a binary log');
    } finally {
      await auto.stop();
    }
  });
});

describe('an admin account without EVENT, and no follower', () => {
  const account = "'nc_binlog_noevent'@'%'";
  const EVENT_LINE = /lacks EVENT and the binary log is not followed.*GRANT EVENT ON \*\.\*/;

  /** The lines of a proxy started with `--binlog off` and that admin account. */
  async function startedWith(): Promise<string> {
    const started = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--admin-user', 'nc_binlog_noevent', '--binlog', 'off'],
    });
    await started.stop();
    return started.log();
  }

  test('one warning naming the grant; none once the account has EVENT', async () => {
    await direct.query(`DROP USER IF EXISTS ${account}`);
    await direct.query(`CREATE USER ${account}`);
    await direct.query(`GRANT SELECT, SHOW VIEW, TRIGGER ON *.* TO ${account}`);
    try {
      const without = await startedWith();
      assert.equal(without.split('\n').filter((line) => EVENT_LINE.test(line)).length, 1, without);
      await direct.query(`GRANT EVENT ON *.* TO ${account}`);
      assert.doesNotMatch(await startedWith(), /lacks EVENT/);
    } finally {
      await direct.query(`DROP USER ${account}`);
    }
  });
});

describe('a dump the server accepts and then never answers', () => {
  test('the proxy starts, hits wait, and the follower keeps trying', async () => {
    // Relays everything but the binary log: after COM_BINLOG_DUMP, the server's bytes are dropped.
    const silencer = createServer((client) => {
      const upstream = connect({ host: '127.0.0.1', port: server.port });
      let dumping = false;
      client.on('data', (chunk: Buffer) => {
        if (chunk.length >= 5 && chunk[3] === 0 && chunk[4] === 0x12) dumping = true;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!dumping) client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => silencer.listen(0, '127.0.0.1', resolve));
    const silencedPort = (silencer.address() as AddressInfo).port;
    let silenced: ProxyProcess | null = null;
    try {
      silenced = await startProxyProcess({
        backend: `127.0.0.1:${silencedPort}`,
        workers: 1,
        extraArgs: ['--admin-user', FOLLOWER_USER],
      });
      assert.match(silenced.log(), /nothing heard for \d+ ms/);
      const client = await connectTo(silenced.port);
      try {
        const t = `${DB}.silent`;
        await freshTable(t);
        const read = `SELECT id, v FROM ${t} ORDER BY id`;
        const value = async (name: string): Promise<string> => {
          const rows = await client.query<Array<{ Value: string }>>(
            `SHOW GLOBAL STATUS LIKE '${name}'`,
          );
          return rows[0]!.Value;
        };
        assert.notEqual(await value('Nicecache_binlog_state'), 'following');
        // Read until the table is known to the metadata: then it is the follower that bypasses.
        const deadline = Date.now() + DEADLINE_MS;
        while (Number(await value('Qcache_bypass_binlog_behind')) === 0) {
          assert.equal(
            JSON.stringify(await client.query(read)),
            JSON.stringify(await direct.query(read)),
          );
          if (Date.now() > deadline) assert.fail('reads never bypassed for the follower');
          await sleep(POLL_MS);
        }
        assert.equal(Number(await value('Qcache_hits')), 0);
      } finally {
        await client.end();
      }
    } finally {
      await silenced?.stop();
      silencer.close();
    }
  });
});

describe('--binlog auto with a server down at start', () => {
  test('a server that comes up without a binary log: one line, then hits', async () => {
    const port = await freePort();
    const proxyDown = await startProxyProcess({
      backend: `127.0.0.1:${port}`,
      workers: 1,
      extraArgs: ['--admin-user', BACKEND_USER],
      env: { NICECACHE_ADMIN_PASSWORD: BACKEND_PASSWORD },
    });
    // The server comes up on that port later: the test server without log_bin, behind a relay.
    const relay = createServer((client) => {
      const upstream = connect({ host: BACKEND_HOST, port: BACKEND_PORT });
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    try {
      assert.match(proxyDown.log(), /cannot reach the server's binary log yet/);
      await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
      const deadline = Date.now() + DEADLINE_MS;
      while (!/binlog: writes made on the server .* not seen.*log_bin=OFF/.test(proxyDown.log())) {
        if (Date.now() > deadline) assert.fail(`no line saying why:\n${proxyDown.log()}`);
        await sleep(POLL_MS);
      }
      await runsWithoutFollower(
        proxyDown.port,
        'nc_binlog_late',
        'no hit once the follower gave up',
      );
    } finally {
      await proxyDown.stop();
      relay.close();
    }
  });
});

/** The statements that change data, each in its own scenario, under one binlog_format. */
function dataChanges(format: 'ROW' | 'MIXED' | 'STATEMENT'): void {
  describe(`writes made directly, binlog_format=${format}`, () => {
    const t = `${DB}.t_${format.toLowerCase()}`;
    const u = `${DB}.u_${format.toLowerCase()}`;
    const read = `SELECT id, v FROM ${t} ORDER BY id`;

    before(async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
    });

    test('UPDATE', async () => {
      await freshTable(t);
      const old = await cached(read);
      await direct.query(`UPDATE ${t} SET v = 'changed' WHERE id = 2`);
      await becomesFresh(read, old);
    });

    test('INSERT ... SELECT', async () => {
      await freshTable(t);
      await freshTable(u, "(10, 'ten')");
      const old = await cached(read);
      await direct.query(`INSERT INTO ${t} SELECT id, v FROM ${u}`);
      await becomesFresh(read, old);
    });

    test('DELETE', async () => {
      await freshTable(t);
      const old = await cached(read);
      await direct.query(`DELETE FROM ${t} WHERE id = 1`);
      await becomesFresh(read, old);
    });

    test('multi-table UPDATE: both tables', async () => {
      await freshTable(t);
      await freshTable(u);
      const readU = `SELECT id, v FROM ${u} ORDER BY id`;
      const oldT = await cached(read);
      const oldU = await cached(readU);
      await direct.query(
        `UPDATE ${t} JOIN ${u} USING (id) SET ${t}.v = 'left', ${u}.v = 'right' WHERE id = 3`,
      );
      await becomesFresh(read, oldT);
      await becomesFresh(readU, oldU);
    });

    test('TRUNCATE', async () => {
      await freshTable(t);
      const old = await cached(read);
      await direct.query(`TRUNCATE TABLE ${t}`);
      await becomesFresh(read, old);
    });

    test('REPLACE', async () => {
      await freshTable(t);
      const old = await cached(read);
      await direct.query(`REPLACE INTO ${t} VALUES (1, 'replaced')`);
      await becomesFresh(read, old);
    });

    test('LOAD DATA INFILE', async () => {
      await freshTable(t);
      const directory = await mkdtemp(join(tmpdir(), 'nc-binlog-'));
      const file = join(directory, 'rows.tsv');
      await writeFile(file, '50\tfifty\n51\tfifty-one\n');
      try {
        const old = await cached(read);
        await direct.query(`LOAD DATA INFILE '${file}' INTO TABLE ${t}`);
        await becomesFresh(read, old);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    test("a trigger's write", async () => {
      await freshTable(t);
      await freshTable(u);
      await direct.query(`DROP TRIGGER IF EXISTS ${DB}.copy_${format.toLowerCase()}`);
      await direct.query(
        `CREATE TRIGGER ${DB}.copy_${format.toLowerCase()} AFTER INSERT ON ${u} FOR EACH ROW ` +
          `INSERT INTO ${t} VALUES (NEW.id + 100, NEW.v)`,
      );
      const old = await cached(read);
      await direct.query(`INSERT INTO ${u} VALUES (7, 'seven')`);
      await becomesFresh(read, old);
      await direct.query(`DROP TRIGGER ${DB}.copy_${format.toLowerCase()}`);
    });

    test('a stored function that a view calls writes another table', async () => {
      const lower = format.toLowerCase();
      const f = `${DB}.add_row_${lower}`;
      const v = `${DB}.calls_${lower}`;
      await freshTable(t);
      await freshTable(u);
      await direct.query(`DROP VIEW IF EXISTS ${v}`);
      await direct.query(`DROP FUNCTION IF EXISTS ${f}`);
      await direct.query(
        `CREATE FUNCTION ${f}() RETURNS INT DETERMINISTIC MODIFIES SQL DATA ` +
          `BEGIN INSERT INTO ${u} VALUES (99, 'by the function'); RETURN 1; END`,
      );
      await direct.query(`CREATE VIEW ${v} AS SELECT ${f}() AS x`);
      const readU = `SELECT id, v FROM ${u} ORDER BY id`;
      const old = await cached(readU);
      // Logged as this statement alone under STATEMENT: the function's write is not logged.
      await direct.query(`INSERT INTO ${t} (id, v) SELECT 50, x FROM ${v}`);
      await becomesFresh(readU, old);
      await direct.query(`DROP VIEW ${v}`);
      await direct.query(`DROP FUNCTION ${f}`);
    });

    test("a cascading foreign key's write (not in the binary log)", async () => {
      const parent = `${DB}.parent_${format.toLowerCase()}`;
      const child = `${DB}.child_${format.toLowerCase()}`;
      await direct.query(`DROP TABLE IF EXISTS ${child}, ${parent}`);
      await direct.query(`CREATE TABLE ${parent} (id INT PRIMARY KEY) ENGINE=InnoDB`);
      await direct.query(
        `CREATE TABLE ${child} (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES ${parent} (id) ON DELETE CASCADE) ENGINE=InnoDB`,
      );
      await direct.query(`INSERT INTO ${parent} VALUES (1), (2)`);
      await direct.query(`INSERT INTO ${child} VALUES (1, 1), (2, 2)`);
      const readChild = `SELECT id, p FROM ${child} ORDER BY id`;
      const old = await cached(readChild);
      await direct.query(`DELETE FROM ${parent} WHERE id = 1`);
      await becomesFresh(readChild, old);
    });
  });
}

dataChanges('ROW');
dataChanges('MIXED');
dataChanges('STATEMENT');

describe('a compressed binary log (log_bin_compress)', () => {
  const t = `${DB}.compressed`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  before(async () => {
    await direct.query('SET GLOBAL log_bin_compress = ON');
    await direct.query('SET GLOBAL log_bin_compress_min_len = 10');
  });
  after(async () => {
    await direct.query('SET GLOBAL log_bin_compress = OFF');
    await direct.query("SET SESSION binlog_format = 'ROW'");
  });

  for (const format of ['ROW', 'STATEMENT']) {
    test(`${format}: compressed events are read, and invalidate the table only`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      await freshTable(t);
      const old = await cached(read);
      await caughtUp();
      const everything = await statusValue('Nicecache_binlog_invalidations_all');
      await direct.query(`UPDATE ${t} SET v = 'compressible' WHERE id = 1`);
      await becomesFresh(read, old);
      await caughtUp();
      assert.equal(await statusValue('Nicecache_binlog_invalidations_all'), everything);
    });
  }
});

describe('writes read from the log, bounded to their rows', () => {
  const t = `${DB}.keyed`;
  /** Written by statements logged as statements. */
  const s = `${DB}.stated`;
  const parent = `${DB}.keyed_parent`;
  const child = `${DB}.keyed_child`;
  /** An admin account that may read InnoDB's dictionary (PROCESS): it knows the point columns. */
  const ADMIN = 'nc_binlog_rows';
  let keyed: ProxyProcess;
  let client: Connection;
  const row = (id: number): string => `SELECT * FROM ${t} WHERE id = ${id}`;
  const stated = (id: number): string => `SELECT id, n, v FROM ${s} WHERE id = ${id}`;

  /** `s` anew: rows 1 to 8, AUTO_INCREMENT past them. */
  async function freshStated(): Promise<void> {
    await direct.query(`DROP TABLE IF EXISTS ${s}`);
    await direct.query(
      `CREATE TABLE ${s} (id INT AUTO_INCREMENT PRIMARY KEY, n INT, v VARCHAR(20)) ENGINE=InnoDB`,
    );
    const rows = Array.from({ length: 8 }, (_, i) => `(${i + 1}, ${i + 1}, 'row ${i + 1}')`);
    await direct.query(`INSERT INTO ${s} VALUES ${rows.join(', ')}`);
  }

  /**
   * Each of `written` becomes fresh through `client`; once the follower has read every write,
   * each of `untouched` is still served from the cache, as it was (`old`: what each read before).
   */
  async function onlyWrittenReadAgain(
    written: readonly string[],
    untouched: readonly string[],
    old: ReadonlyMap<string, string>,
  ): Promise<void> {
    for (const sql of written) await becomesFresh(sql, old.get(sql)!, client);
    await caughtUp(client);
    for (const sql of untouched) {
      assert.ok(await servedOnce(sql), `${sql}: still served after writes to other rows`);
      assert.equal(JSON.stringify(await client.query(sql)), old.get(sql));
    }
  }

  /** Caches each of `reads` through `client`, and returns what each read. */
  async function cacheAll(reads: readonly string[]): Promise<Map<string, string>> {
    const old = new Map<string, string>();
    for (const sql of reads) old.set(sql, await cached(sql, client, client));
    return old;
  }

  /** Reads `sql` once through `client`: was it served from the cache? */
  async function servedOnce(sql: string): Promise<boolean> {
    const before = await hits(client);
    await client.query(sql);
    return (await hits(client)) === before + 1;
  }

  before(async () => {
    await direct.query("SET GLOBAL binlog_row_metadata = 'FULL'");
    await direct.query("SET SESSION binlog_format = 'ROW'");
    await direct.query(`DROP TABLE IF EXISTS ${t}, ${child}, ${parent}`);
    // Columns of every kind of length before the key and after it: the key is found by
    // reading past each of them.
    await direct.query(
      `CREATE TABLE ${t} (v VARCHAR(300), d DECIMAL(20,5), dt DATETIME(6), b BLOB, bits BIT(11), ` +
        `e ENUM('a','b'), s SET('x','y'), ch CHAR(10), f FLOAT, db DOUBLE, j JSON, tm TIME(3), ` +
        `y YEAR, ts TIMESTAMP(6) NULL, tiny TINYINT UNSIGNED, big VARCHAR(10) CHARACTER SET utf8mb4, ` +
        `id INT UNSIGNED PRIMARY KEY, n INT) ENGINE=InnoDB`,
    );
    const values: string[] = [];
    for (let id = 1; id <= 8; id++) {
      values.push(
        id % 2 === 0
          ? `(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${id}, ${id})`
          : `(REPEAT('v', ${id * 40}), ${id}.125, '2020-01-0${id} 10:00:00.123456', REPEAT('b', ${id * 100}), ` +
              `b'101', 'b', 'x,y', 'char${id}', ${id}.5, ${id}.25, '{"k":${id}}', '10:11:12.345', ` +
              `${2000 + id}, '2021-01-01 00:00:0${id}.5', ${200 + id}, 'é${id}', ${id}, ${id})`,
      );
    }
    await direct.query(`INSERT INTO ${t} VALUES ${values.join(', ')}`);
    await direct.query(`CREATE TABLE ${parent} (id INT PRIMARY KEY) ENGINE=InnoDB`);
    await direct.query(
      `CREATE TABLE ${child} (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES ${parent} (id) ON DELETE CASCADE) ENGINE=InnoDB`,
    );
    await direct.query(`INSERT INTO ${parent} VALUES (1), (2)`);
    await direct.query(`INSERT INTO ${child} VALUES (1, 1), (2, 2)`);
    await direct.query(`DROP USER IF EXISTS '${ADMIN}'@'%'`);
    await direct.query(`CREATE USER '${ADMIN}'@'%'`);
    await direct.query(
      `GRANT SELECT, SHOW VIEW, TRIGGER, PROCESS, REPLICATION SLAVE ON *.* TO '${ADMIN}'@'%'`,
    );
    keyed = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--admin-user', ADMIN, '--binlog', 'on', '--binlog-max-lag', '1000'],
    });
    client = await connectTo(keyed.port);
  });

  after(async () => {
    await client?.end();
    await keyed?.stop();
    await direct.query("SET GLOBAL binlog_row_metadata = 'NO_LOG'");
    await direct.query("SET SESSION binlog_row_image = 'FULL'");
    await direct.query("SET SESSION binlog_format = 'ROW'");
    await direct.query(`DROP USER IF EXISTS '${ADMIN}'@'%'`);
  });

  test('each write invalidates the rows it changed, and the rows it did not change are still served', async () => {
    const changed = [2, 3, 4, 5, 6, 7, 20, 21].map(row);
    const untouched = [1, 8].map(row);
    const range = `SELECT id, n FROM ${t} WHERE id BETWEEN 1 AND 30 ORDER BY id`;
    const old = await cacheAll([...changed, ...untouched, range]);
    await direct.query(`UPDATE ${t} SET n = n + 100 WHERE id = 2`);
    // The key moves: row 3 is gone, row 20 (read before, not found) appears.
    await direct.query(`UPDATE ${t} SET id = 20 WHERE id = 3`);
    await direct.query(`DELETE FROM ${t} WHERE id = 4`);
    await direct.query(`INSERT INTO ${t} (id, n, v) VALUES (21, 21, 'new')`);
    // One event, two rows, each with its before and after image.
    await direct.query(`UPDATE ${t} SET v = CONCAT('was ', id) WHERE id BETWEEN 5 AND 6`);
    // A minimal image: the key alone before, the changed column alone after.
    await direct.query("SET SESSION binlog_row_image = 'MINIMAL'");
    await direct.query(`UPDATE ${t} SET n = 0 WHERE id = 7`);
    await direct.query("SET SESSION binlog_row_image = 'FULL'");
    await onlyWrittenReadAgain([...changed, range], untouched, old);
  });

  test('a transaction of several tables; a bulk write past the row limit invalidates its table', async () => {
    const old = await cacheAll([1, 8].map(row));
    await direct.query('BEGIN');
    await direct.query(`UPDATE ${t} SET n = -1 WHERE id = 1`);
    await direct.query(`INSERT INTO ${parent} VALUES (3)`);
    await direct.query('COMMIT');
    await becomesFresh(row(1), old.get(row(1))!, client);
    assert.ok(await servedOnce(row(8)), 'row 8 was not written');
    // More rows than the follower marks one by one: the table, whole.
    const many = Array.from({ length: 300 }, (_, i) => `(${1000 + i}, ${i})`).join(', ');
    await direct.query(`INSERT INTO ${t} (id, n) VALUES ${many}`);
    await caughtUp(client);
    assert.equal(await servedOnce(row(8)), false, 'a bulk write invalidates the whole table');
  });

  test("rows logged without their columns' names: said once, naming the setting", async () => {
    const unnamed = /binlog_row_metadata is not FULL.*SET GLOBAL binlog_row_metadata = FULL/g;
    assert.equal(keyed.log().match(unnamed), null, 'every row event so far named its columns');
    await direct.query("SET GLOBAL binlog_row_metadata = 'NO_LOG'");
    try {
      await direct.query(`UPDATE ${t} SET n = n + 1 WHERE id = 8`);
      await direct.query(`UPDATE ${t} SET n = n + 1 WHERE id = 8`);
      await caughtUp(client);
    } finally {
      await direct.query("SET GLOBAL binlog_row_metadata = 'FULL'");
    }
    assert.equal(keyed.log().match(unnamed)?.length, 1, keyed.log());
  });

  test("a cascading foreign key's rows (not in the log): the child is invalidated", async () => {
    const readChild = `SELECT id, p FROM ${child} WHERE id = 1`;
    const old = await cached(readChild, client, client);
    await direct.query(`DELETE FROM ${parent} WHERE id = 1`);
    await becomesFresh(readChild, old, client);
  });

  for (const format of ['STATEMENT', 'MIXED']) {
    test(`${format}: a point statement invalidates its rows, and the rows it did not change are still served`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      await freshStated();
      // 20 and 21 are not there yet: one is added by its key, the other by AUTO_INCREMENT.
      const changed = [2, 3, 4, 5, 20, 21].map(stated);
      const untouched = [1, 6, 7, 8].map(stated);
      const range = `SELECT id, n FROM ${s} WHERE id BETWEEN 1 AND 30 ORDER BY id`;
      const old = await cacheAll([...changed, ...untouched, range]);
      await direct.query(`UPDATE ${s} SET n = n + 100 WHERE id = 2`);
      // Quoted, as PHP's PDO sends ids with its prepares emulated.
      await direct.query(`DELETE FROM ${s} WHERE id = '3'`);
      await direct.query(`UPDATE ${s} SET v = 'listed' WHERE id IN (4, '5')`);
      await direct.query(`INSERT INTO ${s} (id, n, v) VALUES (20, 20, 'keyed')`);
      await direct.query(`INSERT INTO ${s} (n, v) VALUES (21, 'numbered')`);
      await onlyWrittenReadAgain([...changed, range], untouched, old);
    });

    test(`${format}: upserts invalidate their row, the key being the table's one unique key`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      await freshStated();
      const changed = [3, 6, 7, 22, 23].map(stated);
      const untouched = [1, 2, 8].map(stated);
      const old = await cacheAll([...changed, ...untouched]);
      await direct.query(
        `INSERT INTO ${s} (id, n, v) VALUES (6, 60, 'up') ON DUPLICATE KEY UPDATE n = VALUES(n)`,
      );
      await direct.query(`REPLACE INTO ${s} (id, n, v) VALUES (7, 70, 'replaced')`);
      await direct.query(`REPLACE INTO ${s} (id, n, v) VALUES (22, 22, 'added')`);
      await direct.query(
        `INSERT INTO ${s} (id, n, v) VALUES (3, 30, 'up'), (23, 23, 'new') ` +
          'ON DUPLICATE KEY UPDATE v = VALUES(v)',
      );
      await onlyWrittenReadAgain(changed, untouched, old);
    });
  }

  for (const format of ['ROW', 'STATEMENT', 'MIXED']) {
    test(`${format}: a key of two columns: the rows changed, by both values, and the others still served`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      const pairs = `${DB}.paired`;
      await direct.query(`DROP TABLE IF EXISTS ${pairs}`);
      // The key (a, b) is not in the table's order: the log names it in the key's.
      await direct.query(
        `CREATE TABLE ${pairs} (b BIGINT UNSIGNED, v VARCHAR(20), a INT, PRIMARY KEY (a, b)) ENGINE=InnoDB`,
      );
      await direct.query(
        `INSERT INTO ${pairs} VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 1), (1, 'd', 2), (2, 'e', 2), (3, 'f', 2)`,
      );
      const pair = (a: number, b: number): string =>
        `SELECT v FROM ${pairs} WHERE a = ${a} AND b = ${b}`;
      const moves = format === 'ROW';
      // (1, 2) is written and (2, 1) is not: rows are told apart by both values, in order.
      const changed = [
        pair(1, 2),
        pair(2, 3),
        pair(1, 1),
        ...(moves ? [pair(2, 2), pair(2, 9)] : []),
      ];
      const untouched = [pair(2, 1), pair(1, 3), ...(moves ? [] : [pair(2, 2)])];
      const old = await cacheAll([...changed, ...untouched]);
      await direct.query(`UPDATE ${pairs} SET v = 'x' WHERE a = 1 AND b = 2`);
      await direct.query(`DELETE FROM ${pairs} WHERE b = 3 AND a = 2`);
      // A minimal image: the key alone before, the changed column alone after.
      await direct.query("SET SESSION binlog_row_image = 'MINIMAL'");
      await direct.query(`UPDATE ${pairs} SET v = 'min' WHERE a = 1 AND b = 1`);
      await direct.query("SET SESSION binlog_row_image = 'FULL'");
      // A key that moves (one part of it) is logged as rows, before and after; as a statement
      // it assigns the key, a write of the table.
      if (moves) await direct.query(`UPDATE ${pairs} SET b = 9 WHERE a = 2 AND b = 2`);
      await onlyWrittenReadAgain(changed, untouched, old);
    });
  }

  for (const format of ['ROW', 'STATEMENT', 'MIXED']) {
    test(`${format}: a key of strings: the rows changed, by any spelling of their values, and the others still served`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      const named = `${DB}.named`;
      await direct.query(`DROP TABLE IF EXISTS ${named}`);
      await direct.query(
        `CREATE TABLE ${named} (n INT, code VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY) ENGINE=InnoDB`,
      );
      await direct.query(
        `INSERT INTO ${named} VALUES (1, 'alpha'), (2, 'Beta'), (3, 'gamma-1'), (4, 'delta'), (5, 'eps'), (6, '\u00c9ta'), (7, 'zeta  ')`,
      );
      const code = (value: string): string =>
        `SELECT n, code FROM ${named} WHERE code = '${value}'`;
      const moves = format === 'ROW';
      const changed = [
        code('alpha'),
        code('ALPHA'),
        code('gamma-1'),
        code('iota'),
        ...(moves ? [code('delta'), code('kappa')] : []),
      ];
      const untouched = [
        code('beta'),
        code('eps'),
        code('zeta'),
        ...(moves ? [] : [code('delta')]),
      ];
      const old = await cacheAll([...changed, ...untouched]);
      await direct.query(`UPDATE ${named} SET n = 10 WHERE code = 'Alpha'`);
      await direct.query(`DELETE FROM ${named} WHERE code = 'GAMMA-1'`);
      await direct.query(`INSERT INTO ${named} VALUES (9, 'Iota')`);
      // As rows, the key's move is a row before and one after; as a statement, a write of the
      // table (it assigns the key).
      if (moves) await direct.query(`UPDATE ${named} SET code = 'kappa' WHERE code = 'delta'`);
      await onlyWrittenReadAgain(changed, untouched, old);
      // A row stored with trailing spaces ('zeta  '): its row image names the row 'zeta', as
      // the collation (PAD SPACE) does.
      const padded = await cacheAll([code('zeta'), code('beta'), code('eps')]);
      await direct.query(`UPDATE ${named} SET n = 70 WHERE code = 'ZETA'`);
      await onlyWrittenReadAgain([code('zeta')], [code('beta'), code('eps')], padded);
      // A row whose key is outside ASCII: 'eta' reads it. Its write is a write of the table.
      const eta = await cacheAll([code('eta'), code('eps')]);
      await direct.query(`UPDATE ${named} SET n = 60 WHERE n = 6`);
      await becomesFresh(code('eta'), eta.get(code('eta'))!, client);
      await caughtUp(client);
      assert.equal(await servedOnce(code('eps')), false, 'the table was written whole');
    });
    if (format === 'ROW') {
      test('ROW: a CHAR key of more than 255 bytes: the rows changed, and the others still served', async () => {
        await direct.query("SET SESSION binlog_format = 'ROW'");
        const long = `${DB}.keyed_long_char`;
        await direct.query(`DROP TABLE IF EXISTS ${long}`);
        // CHAR(100) in utf8mb4 is up to 400 bytes: its map entry has another real-type byte
        // than a short CHAR's (0xee, not 0xfe), and a length prefix of two bytes in the rows.
        await direct.query(
          `CREATE TABLE ${long} (n INT, pre CHAR(90) CHARACTER SET utf8mb4, code CHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY) ENGINE=InnoDB`,
        );
        const wide = 'w'.repeat(99);
        await direct.query(
          `INSERT INTO ${long} VALUES (1, REPEAT('p', 90), 'alpha'), (2, NULL, 'beta'), (3, 'q', '${wide}'), (4, 'r', 'gamma')`,
        );
        const code = (value: string): string => `SELECT n FROM ${long} WHERE code = '${value}'`;
        const old = await cacheAll([code('ALPHA'), code(wide), code('beta'), code('gamma')]);
        await direct.query(`UPDATE ${long} SET n = 10 WHERE code = 'alpha'`);
        await direct.query(`UPDATE ${long} SET n = 30 WHERE n = 3`);
        await onlyWrittenReadAgain([code('ALPHA'), code(wide)], [code('beta'), code('gamma')], old);
      });
    }
    test(`${format}: a key of bytes: the rows changed, by any spelling of their bytes, and the others still served`, async () => {
      await direct.query(`SET SESSION binlog_format = '${format}'`);
      const varying = `${DB}.keyed_bytes`;
      const fixed = `${DB}.keyed_uuid`;
      await direct.query(`DROP TABLE IF EXISTS ${varying}, ${fixed}`);
      await direct.query(
        `CREATE TABLE ${varying} (n INT, id VARBINARY(16) PRIMARY KEY) ENGINE=InnoDB`,
      );
      await direct.query(
        // Character columns of other kinds before the key (a CHAR of more than 255 bytes among
        // them): the map gives each its collation in order (not ENUM's and SET's), and the
        // key's is found among them.
        `CREATE TABLE ${fixed} (n INT, t TEXT, e ENUM('a', 'b'), s SET('p'), j JSON, c CHAR(2) CHARACTER SET latin1, w CHAR(100) CHARACTER SET utf8mb4, u BINARY(8), PRIMARY KEY (u)) ENGINE=InnoDB`,
      );
      const uuid = '11'.repeat(16);
      await direct.query(
        `INSERT INTO ${varying} VALUES (1, 'alpha'), (2, X'${uuid}'), (3, 'beta'), (4, 'Alpha')`,
      );
      // BINARY(8) pads 'ab' with zero bytes, which the log leaves out of the row's image.
      await direct.query(
        `INSERT INTO ${fixed} (n, t, e, s, j, c, w, u) VALUES (1, 't', 'a', 'p', '{}', 'c', 'w', 'ab'), (2, NULL, 'b', '', '[]', 'd', NULL, 'cd'), (3, 'x', NULL, NULL, NULL, NULL, 'ww', X'0102')`,
      );
      const read = (table: string, column: string, value: string): string =>
        `SELECT n FROM ${table} WHERE ${column} = ${value}`;
      const byId = (value: string): string => read(varying, 'id', value);
      const byU = (value: string): string => read(fixed, 'u', value);
      // Bytes name rows exactly: 'Alpha' is another row than 'alpha'.
      const steps: Array<[write: string, written: string[], others: string[]]> = [
        [
          `UPDATE ${varying} SET n = 10 WHERE id = 'alpha'`,
          [byId("'alpha'"), byId('0x616c706861')],
          [byId("'beta'"), byId("'Alpha'")],
        ],
        [`DELETE FROM ${varying} WHERE id = X'${uuid}'`, [byId(`X'${uuid}'`)], [byId("'beta'")]],
        [
          `UPDATE ${fixed} SET n = 10 WHERE n = 1`,
          [byU("X'6162000000000000'")],
          [byU("X'6364000000000000'"), byU("X'0102000000000000'")],
        ],
      ];
      for (const [write, written, others] of steps) {
        const old = await cacheAll([...written, ...others]);
        await direct.query(write);
        // As a statement bounded by another column, the last write is its table's whole.
        if (format !== 'ROW' && write.endsWith('n = 1')) {
          for (const sql of written) await becomesFresh(sql, old.get(sql)!, client);
          await caughtUp(client);
          for (const sql of others) assert.equal(await servedOnce(sql), false, sql);
          continue;
        }
        await onlyWrittenReadAgain(written, others, old);
      }
    });
  }

  test('ROW, compressed (log_bin_compress): the rows changed, and the others still served', async () => {
    await direct.query("SET SESSION binlog_format = 'ROW'");
    await freshStated();
    const old = await cacheAll([1, 2, 3, 4].map(stated));
    await direct.query('SET GLOBAL log_bin_compress = ON');
    await direct.query('SET GLOBAL log_bin_compress_min_len = 10');
    try {
      await direct.query(`UPDATE ${s} SET v = 'compressible row' WHERE id = 2`);
      await direct.query(`DELETE FROM ${s} WHERE id = 3`);
    } finally {
      await direct.query('SET GLOBAL log_bin_compress = OFF');
    }
    const logs = await direct.query<Array<{ Log_name: string }>>('SHOW BINARY LOGS');
    const events = await direct.query<Array<{ Event_type: string }>>(
      `SHOW BINLOG EVENTS IN '${logs.at(-1)!.Log_name}'`,
    );
    const types = events.slice(-8).map((event) => event.Event_type);
    assert.ok(types.includes('Update_rows_compressed_v1'), types.join(', '));
    assert.ok(types.includes('Delete_rows_compressed_v1'), types.join(', '));
    await onlyWrittenReadAgain([2, 3].map(stated), [1, 4].map(stated), old);
  });

  test("ROW: a table with a trigger: its rows changed, and the trigger's own rows", async () => {
    await direct.query("SET SESSION binlog_format = 'ROW'");
    await freshStated();
    const audit = `${DB}.stated_audit`;
    await direct.query(`DROP TABLE IF EXISTS ${audit}`);
    await direct.query(
      `CREATE TABLE ${audit} (id INT AUTO_INCREMENT PRIMARY KEY, row_id INT, n INT) ENGINE=InnoDB`,
    );
    await direct.query(
      `CREATE TRIGGER ${DB}.stated_audited AFTER UPDATE ON ${s} FOR EACH ROW ` +
        `INSERT INTO ${audit} (row_id, n) VALUES (NEW.id, NEW.n)`,
    );
    // A key the trigger changes: the row is logged as stored.
    await direct.query(
      `CREATE TRIGGER ${DB}.stated_lifted BEFORE INSERT ON ${s} FOR EACH ROW SET NEW.id = NEW.id + 100`,
    );
    const audited = `SELECT row_id, n FROM ${audit} ORDER BY id`;
    const old = await cacheAll([...[1, 2, 9, 109].map(stated), audited]);
    // The trigger's INSERT is logged as a row event of the audit table, after the UPDATE's.
    await direct.query(`UPDATE ${s} SET n = 200 WHERE id = 2`);
    await direct.query(`INSERT INTO ${s} (id, n, v) VALUES (9, 9, 'lifted')`);
    await onlyWrittenReadAgain([stated(2), stated(109), audited], [stated(1), stated(9)], old);
  });

  test('STATEMENT: a write not bounded to one row by its text invalidates its table', async () => {
    await direct.query("SET SESSION binlog_format = 'STATEMENT'");
    await freshStated();
    const old = await cacheAll([1, 6, 7].map(stated));
    // A column that is not the key.
    await direct.query(`UPDATE ${s} SET v = 'by n' WHERE n = 7`);
    await becomesFresh(stated(7), old.get(stated(7))!, client);
    await caughtUp(client);
    assert.equal(await servedOnce(stated(1)), false, 'the table, whole');
    // The key, by a variable the text does not show the value of (logged in its own event).
    await cached(stated(1), client, client);
    await direct.query('SET @k = 6');
    await direct.query(`UPDATE ${s} SET v = 'by @k' WHERE id = @k`);
    await becomesFresh(stated(6), old.get(stated(6))!, client);
    await caughtUp(client);
    assert.equal(await servedOnce(stated(1)), false, 'the table, whole');
  });

  test('STATEMENT: a backslash in a string, with and without NO_BACKSLASH_ESCAPES', async () => {
    await direct.query("SET SESSION binlog_format = 'STATEMENT'");
    await freshStated();
    const old = await cacheAll([1, 2].map(stated));
    // Under the server's default mode, \' is a quote within the string, which runs on to the
    // comment's quote: the write is bounded to row 2. Read as if backslashes did not escape, the
    // string would end at \' and the write would read as bounded to row 1.
    const text = `UPDATE ${s} SET v = 'a\\' WHERE id = 1 -- ' WHERE id = 2`;
    await direct.query(text);
    await becomesFresh(stated(2), old.get(stated(2))!, client);
    // With NO_BACKSLASH_ESCAPES the same text writes row 1.
    await direct.query("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')");
    try {
      await direct.query(text);
    } finally {
      await direct.query('SET SESSION sql_mode = DEFAULT');
    }
    await becomesFresh(stated(1), old.get(stated(1))!, client);
  });

  test('STATEMENT in gbk: a text not read as the server read it invalidates everything', async () => {
    await direct.query("SET SESSION binlog_format = 'STATEMENT'");
    await freshStated();
    const gbk = await mariadb.createConnection({
      host: '127.0.0.1',
      port: server.port,
      user: 'root',
      password: '',
      database: DB,
      collation: 'GBK_CHINESE_CI',
    });
    try {
      await gbk.query("SET SESSION binlog_format = 'STATEMENT'");
      const old = await cacheAll([1, 2].map(stated));
      await caughtUp(client);
      const everything = Number(await statusValue('Nicecache_binlog_invalidations_all', client));
      // In gbk, bytes B5 5C are one character: the server's string ends at the next quote and
      // the comment hides "WHERE id = 1", so it writes row 2. Read byte by byte, 5C escapes
      // that quote, the string runs on to the comment's, and the text reads as bounded to row 1.
      const character = new TextDecoder('gbk').decode(Uint8Array.of(0xb5, 0x5c));
      await gbk.query(`UPDATE ${s} SET v = '${character}' WHERE id = 2 -- ' WHERE id = 1`);
      assert.deepEqual(
        await direct.query(`SELECT id FROM ${s} WHERE v = '${character}'`),
        [{ id: 2 }],
        'the server wrote row 2',
      );
      await becomesFresh(stated(2), old.get(stated(2))!, client);
      assert.equal(
        Number(await statusValue('Nicecache_binlog_invalidations_all', client)),
        everything + 1,
      );
    } finally {
      await gbk.end();
    }
  });
});

describe('a table named outside ASCII', () => {
  const t = `${DB}.\`t_é\``;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test('its row events invalidate that table only, as the router and the metadata name it', async () => {
    await freshTable(t);
    const old = await cached(read);
    await caughtUp();
    const everything = await statusValue('Nicecache_binlog_invalidations_all');
    await direct.query(`UPDATE ${t} SET v = 'été' WHERE id = 1`);
    await becomesFresh(read, old);
    await caughtUp();
    assert.equal(await statusValue('Nicecache_binlog_invalidations_all'), everything);
  });
});

describe('schema changes made directly', () => {
  const t = `${DB}.ddl`;
  const read = `SELECT * FROM ${t} ORDER BY id`;

  test('ALTER TABLE: the new column is seen', async () => {
    await freshTable(t);
    const old = await cached(read);
    await direct.query(`ALTER TABLE ${t} ADD COLUMN w INT DEFAULT 5`);
    await becomesFresh(read, old);
  });

  test('RENAME TABLE: the name now reads another table', async () => {
    await freshTable(t);
    await freshTable(`${DB}.ddl_other`, "(9, 'nine')");
    const old = await cached(read);
    await direct.query(`RENAME TABLE ${t} TO ${DB}.ddl_gone, ${DB}.ddl_other TO ${t}`);
    await becomesFresh(read, old);
    await direct.query(`DROP TABLE ${DB}.ddl_gone`);
  });

  test('DROP TABLE: the read fails as on the server', async () => {
    await freshTable(t);
    await cached(read);
    await direct.query(`DROP TABLE ${t}`);
    const expected = await errorOf(direct, read);
    assert.equal(expected, 1146);
    const deadline = Date.now() + DEADLINE_MS;
    while ((await errorOf(reader, read)) !== expected) {
      if (Date.now() > deadline) assert.fail('the dropped table is still read from the cache');
      await sleep(POLL_MS);
    }
    for (let i = 0; i < CONFIRMING_READS; i++) assert.equal(await errorOf(reader, read), expected);
  });

  test('CREATE VIEW, then its base table changes', async () => {
    await freshTable(t);
    await direct.query(`CREATE OR REPLACE VIEW ${DB}.ddl_view AS SELECT id, v FROM ${t}`);
    const readView = `SELECT id, v FROM ${DB}.ddl_view ORDER BY id`;
    const old = await cached(readView);
    await direct.query(`UPDATE ${t} SET v = 'via view' WHERE id = 1`);
    await becomesFresh(readView, old);
  });
});

describe('transactions made directly', () => {
  const t = `${DB}.txn`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test('the writes are seen at COMMIT, not before', async () => {
    await freshTable(t);
    const old = await cached(read);
    await direct.query('BEGIN');
    await direct.query(`UPDATE ${t} SET v = 'committed' WHERE id = 1`);
    // Uncommitted: the proxy serves what every other session sees, the old rows.
    const other = await connectTo(server.port);
    try {
      assert.equal(JSON.stringify(await other.query(read)), old);
    } finally {
      await other.end();
    }
    for (let i = 0; i < CONFIRMING_READS; i++)
      assert.equal(JSON.stringify(await reader.query(read)), old);
    await direct.query('COMMIT');
    await becomesFresh(read, old);
  });
});

describe('a commit the server has not yet shown visible', () => {
  const t = `${DB}.visibility`;
  const untouched = `${DB}.visibility_untouched`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;
  const otherRead = `SELECT id, v FROM ${untouched} ORDER BY id`;

  /** Account changes the follower must not read (logged, they would invalidate everything). */
  async function unlogged(sql: string): Promise<void> {
    await direct.query('SET SESSION sql_log_bin = 0');
    try {
      await direct.query(sql);
    } finally {
      await direct.query('SET SESSION sql_log_bin = 1');
    }
  }

  test('its tables are read from the server, not cached, until the server confirms it', async () => {
    await freshTable(t);
    await freshTable(untouched);
    await caughtUp();
    await cached(read);
    await cached(otherRead);
    // The follower's check of what is visible runs on its own connection of the admin account:
    // that connection is cut (if open), and the account may not log in again for now (the dump
    // stays).
    await unlogged(`ALTER USER ${FOLLOWER} ACCOUNT LOCK`);
    try {
      const checks = await direct.query<Array<{ id: number }>>(
        `SELECT id FROM information_schema.PROCESSLIST WHERE USER = '${FOLLOWER_USER}' AND COMMAND <> 'Binlog Dump'`,
      );
      for (const { id } of checks) await direct.query(`KILL ${id}`);
      await direct.query(`UPDATE ${t} SET v = 'changed' WHERE id = 1`);
      await caughtUp();
      const truth = JSON.stringify(await direct.query(read));
      const hitsBefore = await hits();
      // Long past the time any settle delay would have allowed: still no hit on that table.
      for (let i = 0; i < 10; i++) {
        assert.equal(JSON.stringify(await reader.query(read)), truth);
        await sleep(30);
      }
      assert.equal(await hits(), hitsBefore, 'an unconfirmed commit: its table not cached');
      assert.notEqual(await statusValue('Nicecache_binlog_unconfirmed_batches'), '0');
      // The rest of the cache goes on.
      const before = await hits();
      await reader.query(otherRead);
      assert.equal(await hits(), before + 1, 'a table no commit waits on is served');
    } finally {
      await unlogged(`ALTER USER ${FOLLOWER} ACCOUNT UNLOCK`);
    }
    // The check can log in again: the commit is confirmed and the table cached again.
    await cached(read);
    assert.equal(await statusValue('Nicecache_binlog_unconfirmed_batches'), '0');
    assert.match(proxy.log(), /cannot ask the server which commits are visible/);
  });
});

describe('the follower loses its connection', () => {
  const t = `${DB}.link`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test('hits stop while it is down, a write made meanwhile is seen, then hits resume', async () => {
    await freshTable(t);
    const old = await holdFollowerDown(read);
    await direct.query(`UPDATE ${t} SET v = 'while down' WHERE id = 2`);
    const truth = JSON.stringify(await direct.query(read));
    assert.notEqual(truth, old);
    // No polling: with the follower down, nothing is served from the cache at all.
    const hitsBefore = await hits();
    const bypassedBefore = Number(await statusValue('Qcache_bypass_binlog_behind'));
    for (let i = 0; i < CONFIRMING_READS; i++) {
      assert.equal(JSON.stringify(await reader.query(read)), truth);
    }
    assert.equal(await hits(), hitsBefore, 'no hit while the follower is down');
    assert.equal(
      Number(await statusValue('Qcache_bypass_binlog_behind')),
      bypassedBefore + CONFIRMING_READS,
    );
    await direct.query(`GRANT REPLICATION SLAVE ON *.* TO ${FOLLOWER}`);
    await waitForState('following');
    // Back: it read the write made meanwhile, and serves from the cache again, the server's rows.
    await becomesFresh(read, old);
    assert.equal(await cached(read), truth);
    assert.ok(Number(await statusValue('Nicecache_binlog_reconnects')) >= 1);
  });
});

describe('two proxies in front of one server', () => {
  const t = `${DB}.pair`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test("a write through one is seen at once there, and through the other's follower", async () => {
    const other = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--admin-user', FOLLOWER_USER, '--binlog', 'on'],
    });
    const viaOther = await connectTo(other.port);
    const viaOtherHits = async (): Promise<number> => {
      const rows = await viaOther.query<Array<{ Value: string }>>(
        "SHOW GLOBAL STATUS LIKE 'Qcache_hits'",
      );
      return Number(rows[0]!.Value);
    };
    try {
      await freshTable(t);
      const old = await cached(read);
      const deadline = Date.now() + DEADLINE_MS;
      for (;;) {
        const before = await viaOtherHits();
        assert.equal(JSON.stringify(await viaOther.query(read)), old);
        if ((await viaOtherHits()) > before) break;
        if (Date.now() > deadline)
          assert.fail('the second proxy never served the read from its cache');
        await sleep(POLL_MS);
      }
      await reader.query(`UPDATE ${t} SET v = 'through the first' WHERE id = 1`);
      const truth = JSON.stringify(await direct.query(read));
      // Through the proxy that relayed the write: invalidated before its reply, no polling.
      assert.equal(JSON.stringify(await reader.query(read)), truth);
      await becomesFresh(read, old, viaOther);
    } finally {
      await viaOther.end();
      await other.stop();
    }
  });
});

describe('the log the follower would resume from is gone', () => {
  const t = `${DB}.gap`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test('RESET MASTER while it is down: everything is invalidated before hits resume', async () => {
    await freshTable(t);
    const old = await holdFollowerDown(read);
    // Written, then the log that held it removed: the follower can never read this write.
    await direct.query(`UPDATE ${t} SET v = 'lost from the log' WHERE id = 3`);
    await direct.query('RESET MASTER');
    await direct.query(`GRANT REPLICATION SLAVE ON *.* TO ${FOLLOWER}`);
    await waitForState('following');
    await becomesFresh(read, old);
    assert.match(proxy.log(), /cannot resume from .*invalidating everything/);
  });
});

describe('privileges changed directly', () => {
  const t = `${DB}.secret`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  test('REVOKE: a cached result is refused as the server refuses it', async () => {
    await freshTable(t);
    await direct.query(`DROP USER IF EXISTS '${READER}'@'%'`);
    await direct.query(`CREATE USER '${READER}'@'%'`);
    await direct.query(`GRANT SELECT ON ${t} TO '${READER}'@'%'`);
    const user = await connectTo(proxy.port, READER);
    try {
      await cached(read, user);
      await direct.query(`REVOKE SELECT ON ${t} FROM '${READER}'@'%'`);
      // The user's connection stays open, so the revoked privilege is not refused at login.
      const check = await connectTo(server.port, READER, null);
      const expected = await errorOf(check, read);
      await check.end();
      assert.equal(expected, 1142);
      const deadline = Date.now() + DEADLINE_MS;
      while ((await errorOf(user, read)) !== expected) {
        if (Date.now() > deadline) assert.fail('the revoked read is still served from the cache');
        await sleep(POLL_MS);
      }
      for (let i = 0; i < CONFIRMING_READS; i++) assert.equal(await errorOf(user, read), expected);
    } finally {
      await user.end();
    }
  });

  test('DROP USER: a cached result is refused on the open connection, and the login fails', async () => {
    await freshTable(t);
    await direct.query(`DROP USER IF EXISTS '${READER}'@'%'`);
    await direct.query(`CREATE USER '${READER}'@'%'`);
    await direct.query(`GRANT SELECT ON ${t} TO '${READER}'@'%'`);
    const user = await connectTo(proxy.port, READER);
    // The same user's connection made directly, open across the DROP as the proxied one is.
    const check = await connectTo(server.port, READER);
    try {
      await cached(read, user);
      await direct.query(`DROP USER '${READER}'@'%'`);
      const expected = await errorOf(check, read);
      assert.equal(expected, 1142, 'the server refuses a dropped user its open session');
      const deadline = Date.now() + DEADLINE_MS;
      while ((await errorOf(user, read)) !== expected) {
        if (Date.now() > deadline) assert.fail("the dropped user's read is still served");
        await sleep(POLL_MS);
      }
      for (let i = 0; i < CONFIRMING_READS; i++) assert.equal(await errorOf(user, read), expected);
      // A new connection: the server refuses the login, and so does the proxy.
      const loginError = async (port: number): Promise<number | null> => {
        try {
          await (await connectTo(port, READER)).end();
          return null;
        } catch (error) {
          return (error as { errno: number }).errno;
        }
      };
      const refused = await loginError(server.port);
      assert.equal(refused, 1045);
      assert.equal(await loginError(proxy.port), refused);
    } finally {
      await user.end();
      await check.end();
    }
  });
});

describe('an event scheduler job writing a table', () => {
  const t = `${DB}.ticks`;
  const read = `SELECT id, n FROM ${t} ORDER BY id`;
  const event = `${DB}.tick`;
  const createEvent = `CREATE EVENT ${event} ON SCHEDULE EVERY 1 SECOND DO UPDATE ${t} SET n = n + 1 WHERE id = 1`;

  before(async () => {
    await direct.query('SET GLOBAL event_scheduler = ON');
  });
  after(async () => {
    await direct.query(`DROP EVENT IF EXISTS ${event}`);
    await direct.query('SET GLOBAL event_scheduler = OFF');
  });

  async function freshCounter(): Promise<void> {
    await direct.query(`DROP EVENT IF EXISTS ${event}`);
    await direct.query(`DROP TABLE IF EXISTS ${t}`);
    await direct.query(`CREATE TABLE ${t} (id INT PRIMARY KEY, n INT) ENGINE=InnoDB`);
    await direct.query(`INSERT INTO ${t} VALUES (1, 0)`);
  }

  /** The counter the event raises, as a statement on `on` returns it. */
  async function ticks(on: Connection): Promise<number> {
    const rows = await on.query<Array<{ n: number }>>(read);
    return rows[0]!.n;
  }

  // With the grants the README asks for, the admin account may not list events
  // (information_schema.EVENTS needs the EVENT privilege), so the catalog does not know the
  // table is written behind its back and caches it. What keeps it right is the binary log: each
  // run of the job is logged like any write, and the follower invalidates the table. The
  // counter only grows, so "fresh" is: through the proxy, at least what the server had before.
  test('without the EVENT privilege: each run of the job is read from the log', async () => {
    await freshCounter();
    await cached(read);
    await direct.query(createEvent);
    for (let run = 0; run < 3; run++) {
      const cachedNow = JSON.parse(await cached(read)) as Array<{ n: number }>;
      const deadline = Date.now() + DEADLINE_MS;
      let floor: number;
      while ((floor = await ticks(direct)) <= cachedNow[0]!.n) {
        if (Date.now() > deadline) assert.fail('the event never ran');
        await sleep(POLL_MS);
      }
      while ((await ticks(reader)) < floor) {
        if (Date.now() > deadline) assert.fail(`the event's write to ${t} is never seen`);
        await sleep(POLL_MS);
      }
    }
  });

  // With EVENT, the catalog lists the event and never caches the table it writes: the
  // scheduler's writes are made by no client, so a cached result could be stale before any
  // invalidation is read. CREATE EVENT made directly reaches the proxy only as DDL in the
  // binary log, which makes it reload its metadata; from then on every read of the table goes
  // to the server (counted under unknown_table), so none is older than a read made directly before.
  test('with the EVENT privilege: CREATE EVENT made directly stops the table being cached', async () => {
    // On the schema, not *.*: a global privilege reaches an open session only at its next login.
    await direct.query(`GRANT EVENT ON ${DB}.* TO ${FOLLOWER}`);
    try {
      await freshCounter();
      await freshTable(`${DB}.not_ticking`);
      const control = `SELECT id, v FROM ${DB}.not_ticking ORDER BY id`;
      await cached(read);
      await direct.query(createEvent);
      const deadline = Date.now() + DEADLINE_MS;
      while ((await ticks(direct)) === 0) {
        if (Date.now() > deadline) assert.fail('the event never ran');
        await sleep(POLL_MS);
      }
      await caughtUp();
      // A table written behind the proxy's back is counted as one the metadata cannot vouch for;
      // so is every table while the metadata reloads. Until the reload is over (a table no event
      // writes is known again) and the event's table is still refused.
      const unknown = async (): Promise<number> =>
        Number(await statusValue('Qcache_bypass_unknown_table'));
      const refused = async (sql: string): Promise<boolean> => {
        const before = await unknown();
        await reader.query(sql);
        return (await unknown()) > before;
      };
      while ((await refused(control)) || !(await refused(read))) {
        if (Date.now() > deadline) assert.fail('the table the event writes is still cached');
        await sleep(POLL_MS);
      }
      const hitsBefore = await hits();
      const bypassedBefore = await unknown();
      for (let i = 0; i < CONFIRMING_READS; i++) {
        const floor = await ticks(direct);
        assert.ok((await ticks(reader)) >= floor, 'older than a read made directly before it');
      }
      assert.equal(await unknown(), bypassedBefore + CONFIRMING_READS);
      assert.equal(await hits(), hitsBefore, 'no read of the table served from the cache');
    } finally {
      await direct.query(`DROP EVENT IF EXISTS ${event}`);
      await direct.query(`REVOKE EVENT ON ${DB}.* FROM ${FOLLOWER}`);
    }
  });
});

describe('two proxies under a concurrent read/write load', () => {
  const COUNTERS = 4;
  const WRITES_PER_COUNTER = 30;
  /**
   * How old a write made elsewhere may be and still be unseen: --binlog-max-lag (1000 ms on both
   * proxies). The documented bound, no tighter: a read breaking it is stale, whatever the
   * machine's load.
   */
  const BOUND_MS = 1000;
  const table = (i: number): string => `${DB}.counter_${i}`;

  test('no read is older than an acknowledged write beyond the bound (through the same proxy: none)', async () => {
    const other = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--admin-user', FOLLOWER_USER, '--binlog', 'on', '--binlog-max-lag', '1000'],
    });
    const opened: Connection[] = [];
    const open = async (port: number): Promise<Connection> => {
      const connection = await connectTo(port);
      opened.push(connection);
      return connection;
    };
    try {
      // One table per counter, so a write to one leaves the others' results cached.
      for (let i = 0; i < COUNTERS; i++) {
        await direct.query(`DROP TABLE IF EXISTS ${table(i)}`);
        await direct.query(`CREATE TABLE ${table(i)} (id INT PRIMARY KEY, n INT) ENGINE=InnoDB`);
        await direct.query(`INSERT INTO ${table(i)} VALUES (1, 0)`);
      }
      const viaB = await open(other.port);
      // Even counters are written directly, odd ones through proxy A. Each counter has one
      // writer, so its k-th acknowledged increment means its value is at least k from then on.
      const acknowledged: Array<Array<number>> = Array.from({ length: COUNTERS }, () => []);
      const throughA = (i: number): boolean => i % 2 === 1;
      const writer = async (i: number): Promise<void> => {
        const on = throughA(i) ? await open(proxy.port) : await open(server.port);
        for (let k = 1; k <= WRITES_PER_COUNTER; k++) {
          await on.query(`UPDATE ${table(i)} SET n = n + 1 WHERE id = 1`);
          acknowledged[i]!.push(performance.now());
          // Room between writes for results to be cached
          // and served, so that stale hits could be.
          await sleep(60 + ((k * 17 + i * 5) % 41));
        }
      };
      /** The number of increments of counter i acknowledged before `time`. */
      const floorAt = (i: number, time: number): number => {
        const times = acknowledged[i]!;
        let k = 0;
        while (k < times.length && times[k]! < time) k++;
        return k;
      };
      const violations: string[] = [];
      let writing = true;
      // As many reads as the writers leave room for: the load ends with the writes.
      const readerOn = async (name: string, isA: boolean, on: Connection): Promise<void> => {
        for (let r = 0; writing; r++) {
          const i = r % COUNTERS;
          const sent = performance.now();
          const rows = await on.query<Array<{ n: number }>>(
            `SELECT n FROM ${table(i)} WHERE id = 1`,
          );
          const seen = rows[0]!.n;
          // A write through the reader's own proxy is invalidated before it is acknowledged.
          const sameProxy = isA && throughA(i);
          const floor = floorAt(i, sameProxy ? sent : sent - BOUND_MS);
          if (seen < floor) {
            violations.push(`${name} read counter ${i} = ${seen}, acknowledged ${floor}`);
          }
        }
      };
      const hitsA = await hits();
      const hitsB = await hits(viaB);
      const readers = [
        readerOn('A1', true, await open(proxy.port)),
        readerOn('A2', true, await open(proxy.port)),
        readerOn('B1', false, await open(other.port)),
        readerOn('B2', false, await open(other.port)),
      ];
      const writers = Array.from({ length: COUNTERS }, (_, i) => writer(i));
      await Promise.all(writers);
      writing = false;
      await Promise.all(readers);
      assert.deepEqual(violations, []);
      // The load did exercise both caches: stale hits were possible.
      assert.ok((await hits()) > hitsA, 'proxy A served hits');
      assert.ok((await hits(viaB)) > hitsB, 'proxy B served hits');
      // And every counter ends where the server has it, through both.
      await caughtUp();
      for (let i = 0; i < COUNTERS; i++) {
        const read = `SELECT n FROM ${table(i)} WHERE id = 1`;
        const rows = await direct.query<Array<{ n: number }>>(read);
        assert.equal(rows[0]!.n, WRITES_PER_COUNTER);
        const truth = JSON.stringify(rows);
        for (const on of [reader, viaB]) {
          const deadline = Date.now() + DEADLINE_MS;
          while (JSON.stringify(await on.query(read)) !== truth) {
            if (Date.now() > deadline) assert.fail(`counter ${i} never reached the server's value`);
            await sleep(POLL_MS);
          }
        }
      }
    } finally {
      for (const connection of opened) await connection.end();
      await other.stop();
    }
  });
});

describe('the server restarts', () => {
  const t = `${DB}.restart`;
  const read = `SELECT id, v FROM ${t} ORDER BY id`;

  // Last in the file: the restart cuts every connection, so the shared ones are opened again.
  test('the follower comes back, and a write made right after the restart is seen', async () => {
    // One worker: a connection opened after the restart reaches the cache that holds the rows.
    const solo = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--admin-user', FOLLOWER_USER, '--binlog', 'on', '--binlog-max-lag', '1000'],
    });
    let client = await connectTo(solo.port);
    try {
      await freshTable(t);
      const old = await cached(read, client, client);
      const reconnects = Number(await statusValue('Nicecache_binlog_reconnects', client));
      const everything = await statusValue('Nicecache_binlog_invalidations_all', client);
      await server.restart();
      // Before the follower has found the server again (it retries after 100 ms and more).
      direct = await connectTo(server.port);
      await direct.query(`UPDATE ${t} SET v = 'after the restart' WHERE id = 2`);
      // The client's connection to the server was cut with it.
      await client.end().catch(() => {});
      client = await connectTo(solo.port);
      const truth = await becomesFresh(read, old, client);
      assert.equal(await cached(read, client, client), truth, 'hits resume, with the new rows');
      assert.ok(Number(await statusValue('Nicecache_binlog_reconnects', client)) > reconnects);
      // It resumed from its GTID position (the restarted server still has it): the write was
      // read from the log, not covered by invalidating everything.
      assert.equal(await statusValue('Nicecache_binlog_invalidations_all', client), everything);
      assert.doesNotMatch(solo.log(), /cannot resume/);
    } finally {
      await client.end().catch(() => {});
      await solo.stop();
      await reader.end().catch(() => {});
      reader = await connectTo(proxy.port);
    }
  });
});

describe('the follower in Prometheus metrics', () => {
  test('its state and counters are served, move with a direct write, and promtool accepts them', async () => {
    const t = `${DB}.metrics`;
    const solo = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: [
        '--admin-user',
        FOLLOWER_USER,
        '--binlog',
        'on',
        '--binlog-max-lag',
        '1000',
        '--metrics',
        '127.0.0.1:0',
      ],
    });
    try {
      const url = metricsUrl(solo);
      const scrape = async (): Promise<Map<string, number>> =>
        parseSamples(await (await fetch(url)).text());
      const deadline = Date.now() + DEADLINE_MS;
      while ((await scrape()).get('nicecache_binlog_following') !== 1) {
        if (Date.now() > deadline) assert.fail('the follower never showed as following');
        await sleep(POLL_MS);
      }
      const before = await scrape();
      await freshTable(t);
      const transactions = (): Promise<number> =>
        scrape().then((samples) => samples.get('nicecache_invalidations_total{cause="binlog"}')!);
      // DROP, CREATE and INSERT: three transactions read from the log.
      while (
        (await transactions()) <
        before.get('nicecache_invalidations_total{cause="binlog"}')! + 3
      ) {
        if (Date.now() > deadline) assert.fail('the direct writes never showed in the metrics');
        await sleep(POLL_MS);
      }
      // The visibility check is counted when its answer comes, a moment after the commit.
      while (((await scrape()).get('nicecache_binlog_visibility_checks_total') ?? 0) < 1) {
        if (Date.now() > deadline) assert.fail('no visibility check was counted');
        await sleep(POLL_MS);
      }
      const after = await scrape();
      assert.ok(
        after.get('nicecache_binlog_events_total')! > before.get('nicecache_binlog_events_total')!,
      );
      assert.ok(after.get('nicecache_binlog_visibility_checks_total')! >= 1);
      assert.ok(after.get('nicecache_binlog_lag_seconds')! >= 0);
      const check = promtoolCheck(await (await fetch(url)).text());
      assert.equal(check.status, 0, check.output);
    } finally {
      await solo.stop();
    }
  });
});

describe('a proxy in front of a replica (log_slave_updates)', () => {
  test("the primary's writes are seen as the replica applies them", async () => {
    const primary = await startEphemeralServer({
      serverOptions: { log_bin: 'binlog', server_id: 11, binlog_format: 'ROW' },
    });
    let replica: EphemeralServer | null = null;
    let solo: ProxyProcess | null = null;
    const opened: Connection[] = [];
    try {
      replica = await startEphemeralServer({
        serverOptions: {
          log_bin: 'binlog',
          server_id: 12,
          binlog_format: 'ROW',
          log_slave_updates: true,
        },
      });
      const onPrimary = await connectTo(primary.port, 'root', null);
      const onReplica = await connectTo(replica.port, 'root', null);
      opened.push(onPrimary, onReplica);
      await onReplica.query(
        `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${primary.port}, ` +
          "MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos",
      );
      await onReplica.query('START SLAVE');
      /** Until the replica has applied everything the primary has logged. */
      const applied = async (): Promise<void> => {
        const rows = await onPrimary.query<Array<{ position: string }>>(
          'SELECT @@global.gtid_binlog_pos AS position',
        );
        const position = rows[0]!.position;
        const waits = await onReplica.query<Array<{ waited: number }>>(
          `SELECT MASTER_GTID_WAIT('${position}', 20) AS waited`,
        );
        const waited = waits[0]!.waited;
        assert.equal(Number(waited), 0, `the replica applied ${position}`);
      };
      const t = 'nc_replica.t';
      const read = `SELECT id, v FROM ${t} ORDER BY id`;
      await onPrimary.query('CREATE DATABASE nc_replica');
      await onPrimary.query(`CREATE TABLE ${t} (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB`);
      await onPrimary.query(`INSERT INTO ${t} VALUES (1, 'one'), (2, 'two')`);
      await applied();
      solo = await startProxyProcess({
        backend: `127.0.0.1:${replica.port}`,
        workers: 1,
        extraArgs: ['--admin-user', 'root', '--binlog', 'on', '--binlog-max-lag', '1000'],
      });
      const client = await connectTo(solo.port, 'root', null);
      opened.push(client);
      const old = await cached(read, client, client);
      for (let round = 1; round <= 3; round++) {
        await onPrimary.query(`UPDATE ${t} SET v = 'round ${round}' WHERE id = 1`);
        await applied();
        const truth = JSON.stringify(await onReplica.query(read));
        assert.notEqual(truth, old);
        const deadline = Date.now() + DEADLINE_MS;
        for (;;) {
          const seen = JSON.stringify(await client.query(read));
          if (seen === truth) break;
          if (Date.now() > deadline) assert.fail(`round ${round}: still ${seen}`);
          await sleep(POLL_MS);
        }
        // Once fresh, cached again with the new rows, never the old.
        assert.equal(await cached(read, client, client), truth, `round ${round}`);
      }
      assert.equal(await statusValue('Nicecache_binlog_state', client), 'following');
    } finally {
      for (const connection of opened) await connection.end().catch(() => {});
      await solo?.stop();
      await replica?.stop();
      await primary.stop();
    }
  });
});
