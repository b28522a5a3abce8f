/**
 * The metadata's reads of stored routines and events (information_schema.ROUTINES and EVENTS,
 * which read every row of mysql.proc and mysql.event) are made again only after DDL that may
 * change them. Against a throwaway server with userstat on, whose TABLE_STATISTICS and
 * INDEX_STATISTICS would otherwise show the proxy's reads of those tables after every table
 * it creates, among the reads of the statements a user measures. And after DDL of a routine or
 * an event, every worker knows the new definition: a procedure redefined to write another
 * table invalidates it, an event created to write a table keeps it out of the cache.
 *
 * Written by hand (DML on mysql.proc) they are read again too; and while someone alters the
 * tables programs live in and works on their files, the proxy keeps out of the way: the same
 * sequence as MariaDB's sp-destruct test gives the same errors directly and through it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const DB = 'nc_programs';
/** Far beyond a reload's time: a wait that reaches it has failed, not been slow. */
const DEADLINE_MS = 20_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('rows of stored routines and events kept between metadata loads', () => {
  let server: EphemeralServer;
  let root: MysqlConnection;

  const connect = (host: string, port: number): Promise<MysqlConnection> =>
    MysqlConnection.connect({ host, port, user: 'root', password: '', database: DB });

  const run = async (connection: MysqlConnection, sql: string): Promise<void> => {
    const result = await connection.query(sql);
    assert.equal(result.error, null, `${sql}: ${result.error?.message}`);
  };

  const startProxy = (workers: number): Promise<ProxyProcess> =>
    startProxyProcess({
      backend: `${server.host}:${server.port}`,
      workers,
      extraArgs: ['--admin-user', 'root', '--admin-password', ''],
    });

  const hits = async (client: MysqlConnection): Promise<number> =>
    Number((await client.queryRows("SHOW GLOBAL STATUS LIKE 'Qcache_hits'"))[0]?.[1]);

  /** Reads `sql` through `client` until a read of it is served (the metadata knows its table). */
  const untilServed = async (client: MysqlConnection, sql: string): Promise<void> => {
    const before = await hits(client);
    const deadline = Date.now() + DEADLINE_MS;
    while ((await hits(client)) === before) {
      assert.ok(Date.now() < deadline, `${sql} was never served`);
      await client.queryRows(sql);
      await client.queryRows(sql);
      await sleep(20);
    }
  };

  before(async () => {
    server = await startEphemeralServer({ serverOptions: { userstat: true } });
    const setup = await MysqlConnection.connect({
      host: server.host,
      port: server.port,
      user: 'root',
      password: '',
      database: null,
    });
    await run(setup, `CREATE DATABASE ${DB}`);
    setup.close();
    root = await connect(server.host, server.port);
    for (const sql of [
      'CREATE TABLE counts (id INT PRIMARY KEY, n INT)',
      'INSERT INTO counts VALUES (1, 0)',
      'CREATE TABLE totals (id INT PRIMARY KEY, v INT)',
      'INSERT INTO totals VALUES (1, 100)',
      'CREATE TABLE ticks (id INT AUTO_INCREMENT PRIMARY KEY)',
      'CREATE PROCEDURE touch(k INT) UPDATE counts SET n = n + 1 WHERE id = k',
      'CREATE FUNCTION bump(k INT) RETURNS INT BEGIN UPDATE counts SET n = n + 1 WHERE id = k; RETURN k; END',
    ]) {
      await run(root, sql);
    }
  });

  after(async () => {
    root?.close();
    await server?.stop();
  });

  test('DDL of tables relayed by the proxy reads no row of mysql.proc or mysql.event', async () => {
    await run(
      root,
      'CREATE EVENT nothing ON SCHEDULE EVERY 1 HOUR STARTS CURRENT_TIMESTAMP + INTERVAL 1 HOUR DO DELETE FROM ticks',
    );
    const proxy = await startProxy(1);
    const client = await connect(proxy.host, proxy.port);
    try {
      await run(client, 'CREATE TABLE first (id INT)');
      await untilServed(client, 'SELECT id FROM first');
      await run(root, 'FLUSH TABLE_STATISTICS');
      await run(root, 'FLUSH INDEX_STATISTICS');

      // A table, an index, a view, a trigger, a sequence: each reloads the metadata.
      for (const sql of [
        'CREATE TABLE second (id INT)',
        'CREATE INDEX by_id ON second (id)',
        'CREATE VIEW second_ids AS SELECT id FROM second',
        'CREATE TRIGGER second_tick AFTER INSERT ON second FOR EACH ROW INSERT INTO ticks VALUES (NULL)',
        'CREATE SEQUENCE numbers',
        'ALTER TABLE second ADD COLUMN v INT',
        'RENAME TABLE first TO third',
      ]) {
        await run(client, sql);
      }
      await untilServed(client, 'SELECT id FROM second_ids');
      const tables = await root.queryRows(
        "SELECT TABLE_NAME FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = 'mysql'",
      );
      const indexes = await root.queryRows(
        "SELECT TABLE_NAME, INDEX_NAME FROM information_schema.INDEX_STATISTICS WHERE TABLE_SCHEMA = 'mysql'",
      );
      assert.deepEqual([...tables, ...indexes], []);
    } finally {
      client.close();
      await run(root, 'DROP EVENT nothing');
      assert.equal(await proxy.stop(), 0);
    }
  });

  test('a procedure redefined through one worker writes what its new body says on every worker', async () => {
    const proxy = await startProxy(2);
    // Enough connections for both workers to hold some.
    const clients = await Promise.all(
      Array.from({ length: 6 }, () => connect(proxy.host, proxy.port)),
    );
    try {
      const read = 'SELECT v FROM totals WHERE id = 1';
      // Each worker learns that touch writes counts only: a CALL of it leaves totals cached.
      // (Its metadata loaded first: a CALL during the first load is the next tests' concern.)
      for (const client of clients) {
        await untilServed(client, read);
        await run(client, 'CALL touch(1)');
        await untilServed(client, read);
      }
      await run(
        clients[0]!,
        'CREATE OR REPLACE PROCEDURE touch(k INT) UPDATE totals SET v = v + 1 WHERE id = k',
      );
      for (const [index, caller] of clients.entries()) {
        await run(caller, 'CALL touch(1)');
        const expected = [[String(101 + index)]];
        assert.deepEqual(await root.queryRows(read), expected);
        for (const client of clients) assert.deepEqual(await client.queryRows(read), expected);
      }
    } finally {
      for (const client of clients) client.close();
      assert.equal(await proxy.stop(), 0);
    }
  });

  for (const call of ['CALL touch(1)', 'DO bump(1)']) {
    test(`${call} sent while the metadata is still loading waits for it; its session stays cached`, async () => {
      // The proxy's first load reads information_schema.ROUTINES, which waits for this lock.
      const locker = await connect(server.host, server.port);
      await run(locker, 'LOCK TABLES mysql.proc WRITE');
      let locked = true;
      const proxy = await startProxy(1);
      try {
        const client = await connect(proxy.host, proxy.port);
        const loadWaits = async (): Promise<boolean> =>
          (
            await root.queryRows(
              "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%information_schema.ROUTINES%' AND STATE LIKE 'Waiting for table metadata lock'",
            )
          )[0]?.[0] !== '0';
        const deadline = Date.now() + DEADLINE_MS;
        while (!(await loadWaits())) {
          assert.ok(Date.now() < deadline, 'the metadata load reached the lock');
          await sleep(10);
        }
        // Routed now, the routine would be unknown: it might have created a temporary table the
        // session's later reads would name, and none of them could ever be cached.
        const sent = client.query(call);
        await sleep(200);
        await run(locker, 'UNLOCK TABLES');
        locked = false;
        assert.equal((await sent).error, null);
        const read = 'SELECT v FROM totals WHERE id = 1';
        const before = await hits(client);
        await client.queryRows(read);
        await client.queryRows(read);
        assert.equal(await hits(client), before + 1, 'the second read is served');
        client.close();
      } finally {
        if (locked) await run(locker, 'UNLOCK TABLES');
        locker.close();
        assert.equal(await proxy.stop(), 0);
      }
    });
  }

  test('a procedure whose body is edited in mysql.proc by hand writes what the new body says', async () => {
    await run(root, 'CREATE PROCEDURE by_hand(k INT) UPDATE counts SET n = n + 1 WHERE id = k');
    const proxy = await startProxy(1);
    const client = await connect(proxy.host, proxy.port);
    // It has not run the procedure yet: its server connection reads the body at its first CALL
    // (one that has keeps the body it read).
    const other = await connect(proxy.host, proxy.port);
    const read = 'SELECT v FROM totals WHERE id = 1';
    try {
      await untilServed(client, read);
      await run(client, 'CALL by_hand(1)');
      await untilServed(client, read);
      await untilServed(other, read);
      const body = 'UPDATE totals SET v = v + 1 WHERE id = k';
      await run(
        client,
        `UPDATE mysql.proc SET body = '${body}', body_utf8 = '${body}' WHERE db = '${DB}' AND name = 'by_hand'`,
      );
      // Stored again where the metadata allows it (the UPDATE invalidated everything).
      await client.queryRows(read);
      const before = Number((await client.queryRows(read))[0]?.[0]);
      await run(other, 'CALL by_hand(1)');
      const expected = [[String(before + 1)]];
      assert.deepEqual(await root.queryRows(read), expected, 'the new body ran');
      assert.deepEqual(await other.queryRows(read), expected);
      assert.deepEqual(await client.queryRows(read), expected);
    } finally {
      client.close();
      other.close();
      await run(root, 'DROP PROCEDURE by_hand');
      assert.equal(await proxy.stop(), 0);
    }
  });

  test('after mysql.proc is written, results are stored again once the writing session has closed', async () => {
    await run(root, 'CREATE PROCEDURE noted() SET @x = 1');
    const proxy = await startProxy(2);
    const reader = await connect(proxy.host, proxy.port);
    const writer = await connect(proxy.host, proxy.port);
    const read = 'SELECT v FROM totals WHERE id = 1';
    try {
      await untilServed(reader, read);
      await untilServed(writer, read);
      await run(
        writer,
        `UPDATE mysql.proc SET comment = 'edited' WHERE db = '${DB}' AND name = 'noted'`,
      );
      // While the writer may still be working on the table's files, the metadata is not read,
      // so nothing is stored or served.
      const before = await hits(reader);
      for (let i = 0; i < 10; i++) {
        await reader.queryRows(read);
        await sleep(50);
      }
      assert.equal(await hits(reader), before, 'no read is served while the writer is open');
      writer.close();
      // Within a fraction of the pause a writer left open would have (PROGRAM_TABLES_PAUSE_MS).
      await untilServed(reader, read);
    } finally {
      reader.close();
      writer.close();
      await run(root, 'DROP PROCEDURE noted');
      assert.equal(await proxy.stop(), 0);
    }
  });

  test('mysql.proc altered, flushed and its .frm replaced: the same errors through the proxy as directly (sp-destruct)', async () => {
    await run(root, 'CREATE PROCEDURE wrecked() SET @x = 42');
    const proc = join(server.datadir, 'mysql', 'proc');
    const backup = join(server.directory, 'proc-backup');
    const files = ['frm', 'MAD', 'MAI'];

    /** The errors (or "ok") of each step, mysql.proc put back afterwards. */
    const wreck = async (client: MysqlConnection): Promise<string[]> => {
      await run(root, 'FLUSH TABLE mysql.proc');
      for (const ext of files) copyFileSync(`${proc}.${ext}`, `${backup}.${ext}`);
      const replies: string[] = [];
      const step = async (sql: string): Promise<void> => {
        const { error } = await client.query(sql);
        replies.push(error === null ? `${sql}: ok` : `${sql}: ${error.errno} ${error.message}`);
      };
      try {
        await step('ALTER TABLE mysql.proc DROP security_type');
        await step('CALL wrecked()');
        await step('FLUSH TABLE mysql.proc');
        // Time for a metadata load to open mysql.proc again, as a retry of one that failed on
        // the altered table would: the server would then keep the altered definition open.
        await sleep(1000);
        writeFileSync(`${proc}.frm`, 'not a table definition\n');
        await step('CALL wrecked()');
      } finally {
        client.close();
        await run(root, 'FLUSH TABLE mysql.proc');
        for (const ext of files) copyFileSync(`${backup}.${ext}`, `${proc}.${ext}`);
        await run(root, 'FLUSH TABLE mysql.proc');
      }
      return replies;
    };

    const direct = await wreck(await connect(server.host, server.port));
    assert.match(direct.at(-1)!, /: 1033 /, 'the server reads the replaced .frm');
    const proxy = await startProxy(2);
    try {
      // Both workers have their metadata before the test begins.
      const clients = await Promise.all(
        Array.from({ length: 4 }, () => connect(proxy.host, proxy.port)),
      );
      for (const client of clients) {
        await untilServed(client, 'SELECT v FROM totals WHERE id = 1');
        client.close();
      }
      assert.deepEqual(await wreck(await connect(proxy.host, proxy.port)), direct);
    } finally {
      assert.equal(await proxy.stop(), 0);
      await run(root, 'DROP PROCEDURE wrecked');
    }
  });

  test('an event created through the proxy keeps the table it writes out of the cache', async () => {
    const proxy = await startProxy(1);
    const client = await connect(proxy.host, proxy.port);
    try {
      const read = 'SELECT COUNT(*) FROM ticks';
      await untilServed(client, read);
      await run(
        client,
        'CREATE EVENT tick ON SCHEDULE EVERY 1 HOUR STARTS CURRENT_TIMESTAMP + INTERVAL 1 HOUR DO INSERT INTO ticks VALUES (NULL)',
      );
      // The server's scheduler may run it at any time: no read of ticks may be served.
      const before = await hits(client);
      for (let i = 0; i < 5; i++) await client.queryRows(read);
      assert.equal(await hits(client), before);
    } finally {
      client.close();
      await run(root, 'DROP EVENT IF EXISTS tick');
      assert.equal(await proxy.stop(), 0);
    }
  });
});
