/**
 * `--socket PATH`: clients that connect to a Unix socket, as to the server's own (the `mariadb`
 * CLI's -S, mysql2's socketPath), are served and hit as TCP clients are; the socket counts as a
 * secure transport as the server counts it; a stale socket file is replaced, one another process
 * listens on and a file that is not a socket refuse the start; the file goes with the proxy.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { runStatements } from '../support/cache-scenario.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { LoginError, RawClient } from '../support/raw-client.ts';

const DB = 'nc_unix_socket';

describe('--socket', () => {
  let dir: string;
  let socket: string;
  let proxy: ProxyProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nicecache-socket-'));
    socket = join(dir, 'nicecache.sock');
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20))`,
      `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two')`,
    ]);
    // A stale socket file, as a proxy killed outright leaves one: listened on, never removed.
    const killed = spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr.toString());
    assert.ok(existsSync(socket), 'the killed process left its socket file');
    proxy = await startProxyProcess({
      workers: 2,
      extraArgs: ['--socket', socket, '--require-secure-transport', '--tls', 'auto'],
    });
  });

  after(async () => {
    await proxy?.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a stale socket file is replaced, and the startup line names the socket', () => {
    assert.match(proxy.log(), /removed a stale socket file/);
    assert.match(proxy.log(), /and on the Unix socket \S+nicecache\.sock \(worker 0\)/);
  });

  test('the mariadb CLI (-S) and mysql2 (socketPath) are served, and the second read hits', async () => {
    const cli = spawnSync(
      'mariadb',
      [`-S${socket}`, `-u${BACKEND_USER}`, `--password=${BACKEND_PASSWORD}`, DB, '-e', 'status'],
      { encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /Connection:\s+Localhost via UNIX socket/);

    // Without TLS: the socket is a secure transport, so --require-secure-transport lets it in.
    const connection = await mysql.createConnection({
      socketPath: socket,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: DB,
    });
    const hits = async (): Promise<number> => {
      const [rows] = await connection.query("SHOW GLOBAL STATUS LIKE 'Qcache_hits'");
      return Number((rows as Array<{ Value: string }>)[0]!.Value);
    };
    const before = await hits();
    for (let round = 0; round < 2; round++) {
      const [rows] = await connection.query('SELECT v FROM t WHERE id = 2');
      assert.deepEqual(rows, [{ v: 'two' }]);
    }
    assert.equal((await hits()) - before, 1);
    await connection.end();
  });

  test('over TCP, a login without TLS is still refused', async () => {
    await assert.rejects(
      RawClient.connect({
        host: proxy.host,
        port: proxy.port,
        user: BACKEND_USER,
        password: BACKEND_PASSWORD,
        database: null,
      }),
      (error: unknown) => error instanceof LoginError && error.err.errno === 1045,
    );
  });

  test('a socket another process listens on, or a path that is not a socket, refuses the start', async () => {
    await assert.rejects(
      startProxyProcess({ workers: 1, extraArgs: ['--socket', socket] }),
      /--socket \S+: another process listens on it/,
    );
    const notASocket = join(dir, 'plain-file');
    writeFileSync(notASocket, 'keep me');
    await assert.rejects(
      startProxyProcess({ workers: 1, extraArgs: ['--socket', notASocket] }),
      /the path exists and is not a socket/,
    );
    assert.equal(readFileSync(notASocket, 'utf8'), 'keep me');
  });

  test('the socket file goes with the proxy', async () => {
    assert.ok(existsSync(socket));
    assert.equal(await proxy.stop(), 0);
    assert.equal(existsSync(socket), false);
  });
});
