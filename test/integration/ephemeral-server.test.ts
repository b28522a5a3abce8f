import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';

function ourTempDirectories(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('nicecache-mariadb-'));
}

void test('serves the given options over TCP and leaves nothing behind after stop', async () => {
  const server = await startEphemeralServer({
    serverOptions: { query_cache_type: 1, query_cache_size: '16M' },
  });
  try {
    assert.ok(existsSync(server.datadir));
    const connection = await mariadb.createConnection({
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
    });
    try {
      const [settings] = await connection.query<
        { type: string; size: bigint | number; port: bigint | number }[]
      >('SELECT @@query_cache_type AS type, @@query_cache_size AS size, @@port AS port');
      assert.equal(settings?.type, 'ON');
      assert.equal(Number(settings?.size), 16 * 1024 * 1024);
      assert.equal(Number(settings?.port), server.port);

      const databases = await connection.query<unknown[]>("SHOW DATABASES LIKE 'test'");
      assert.equal(databases.length, 1);
    } finally {
      await connection.end();
    }
  } finally {
    await server.stop();
  }

  assert.throws(() => process.kill(server.pid, 0), { code: 'ESRCH' });
  assert.equal(existsSync(server.directory), false);
});

void test('restart: a new process on the same port and data, and stop still cleans up', async () => {
  const server = await startEphemeralServer();
  const connect = (): Promise<Connection> =>
    mariadb.createConnection({
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: server.database,
    });
  try {
    const before = await connect();
    await before.query('CREATE TABLE kept (id INT PRIMARY KEY) ENGINE=InnoDB');
    await before.query('INSERT INTO kept VALUES (1)');
    await before.end();
    const firstPid = server.pid;
    await server.restart();
    assert.notEqual(server.pid, firstPid);
    assert.throws(() => process.kill(firstPid, 0), { code: 'ESRCH' });
    const after = await connect();
    try {
      assert.deepEqual(await after.query('SELECT id FROM kept'), [{ id: 1 }]);
    } finally {
      await after.end();
    }
  } finally {
    await server.stop();
  }
  assert.throws(() => process.kill(server.pid, 0), { code: 'ESRCH' });
  assert.equal(existsSync(server.directory), false);
});

void test('names the packages to install when mariadbd is missing', async () => {
  await assert.rejects(startEphemeralServer({ mariadbd: '/nonexistent/sbin/mariadbd' }), {
    message: /apt-get install mariadb-server mariadb-client/,
  });
});

void test('reports the server log and removes its directory when the server cannot start', async () => {
  const before = new Set(ourTempDirectories());
  await assert.rejects(
    startEphemeralServer({ serverOptions: { no_such_setting_anywhere: 1 } }),
    /mariadbd did not start[\s\S]*unknown variable 'no_such_setting_anywhere=1'/,
  );
  assert.deepEqual(
    ourTempDirectories().filter((name) => !before.has(name)),
    [],
  );
});
