/**
 * What the cache learns about the schema when it does not see the DDL: a table created directly
 * on the server (before the proxy started, or by another client) is unknown at first, read from
 * the server, and cached once the proxy has read the metadata again. And without an admin
 * account the proxy knows no views at all, so every write must invalidate everything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../../src/upstream/mysql-connection.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const DB = 'nc_qcache_meta';
const direct: ConnectionOptions = {
  host: BACKEND_HOST,
  port: BACKEND_PORT,
  user: BACKEND_USER,
  password: BACKEND_PASSWORD,
  database: null,
};

async function hits(connection: MysqlConnection): Promise<number> {
  const rows = await connection.queryRows("SHOW GLOBAL STATUS LIKE 'Qcache_hits'");
  return Number(rows[0]![1]);
}

describe('query cache and schema changes it did not see', () => {
  let server: MysqlConnection;
  const proxies: ProxyProcess[] = [];

  before(async () => {
    server = await MysqlConnection.connect(direct);
    await server.query(`DROP DATABASE IF EXISTS ${DB}`);
    await server.query(`CREATE DATABASE ${DB}`);
  });

  after(async () => {
    await server.query(`DROP DATABASE IF EXISTS ${DB}`);
    server.close();
    for (const proxy of proxies) assert.equal(await proxy.stop(), 0);
  });

  test('a table created behind the proxy is read from the server, then cached', async () => {
    const proxy = await startProxyProcess({
      workers: 1,
      extraArgs: ['--admin-user', BACKEND_USER, '--admin-password', BACKEND_PASSWORD],
    });
    proxies.push(proxy);
    const client = await MysqlConnection.connect({
      ...direct,
      host: proxy.host,
      port: proxy.port,
      database: DB,
    });
    // Created after the proxy read the metadata, and not through it.
    await server.query(`CREATE TABLE ${DB}.late (id INT PRIMARY KEY, v INT)`);
    await server.query(`INSERT INTO ${DB}.late VALUES (1, 10)`);
    const before = await hits(client);
    assert.deepEqual(await client.queryRows('SELECT v FROM late'), [['10']]);
    let served = 0;
    for (let attempt = 0; attempt < 60 && served === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(await client.queryRows('SELECT v FROM late'), [['10']]);
      assert.deepEqual(await client.queryRows('SELECT v FROM late'), [['10']]);
      served = (await hits(client)) - before;
    }
    assert.ok(served > 0, 'the new table is cached once the metadata was read again');
    // And a write through the proxy still invalidates it.
    await client.query('UPDATE late SET v = 11');
    assert.deepEqual(await client.queryRows('SELECT v FROM late'), [['11']]);
    client.close();
  });

  test('without an admin account, a write to a base table invalidates a view over it', async () => {
    await server.query(`CREATE TABLE ${DB}.base (id INT PRIMARY KEY, v INT)`);
    await server.query(`INSERT INTO ${DB}.base VALUES (1, 1), (2, 2)`);
    await server.query(`CREATE VIEW ${DB}.total AS SELECT SUM(v) AS s FROM ${DB}.base`);
    const proxy = await startProxyProcess({ workers: 2 });
    proxies.push(proxy);
    const connect = (): Promise<MysqlConnection> =>
      MysqlConnection.connect({ ...direct, host: proxy.host, port: proxy.port, database: DB });
    const reader = await connect();
    const writer = await connect();
    assert.deepEqual(await reader.queryRows('SELECT s FROM total'), [['3']]);
    const before = await hits(reader);
    assert.deepEqual(await reader.queryRows('SELECT s FROM total'), [['3']]);
    assert.equal((await hits(reader)) - before, 1, 'the view read is cached');
    await writer.query('UPDATE base SET v = 5 WHERE id = 1');
    assert.deepEqual(await reader.queryRows('SELECT s FROM total'), [['7']]);
    reader.close();
    writer.close();
  });
});
