/**
 * The proxy's lifecycle, as a service manager and an operator see it: one instance per port, a
 * start that fails at once on a configuration that cannot work, signals that do not kill or open
 * the process, no secrets in the process list, clients that never log in dropped, and the
 * backend-down error the same in the packet, --help and the README, printed whole by real
 * clients. Every proxy here is the real one, as a child process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import mysql2 from 'mysql2/promise';
import { proxyHelp } from '../../src/cli/config.ts';
import { PacketHeader } from '../../src/protocol/constants.ts';
import { readErr } from '../../src/protocol/generic-packets.ts';
import { parseGreeting } from '../../src/protocol/handshake.ts';
import { listenerOf } from '../../src/proxy/port-lock.ts';
import { LINES_PER_KIND } from '../../src/proxy/log.ts';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import { MysqlConnection } from '../../src/upstream/mysql-connection.ts';
import { freePort } from '../support/free-port.ts';
import { runNicecache, startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';
import { RawClient } from '../support/raw-client.ts';

const SECRET = 'lifecycle-Secret-9f2c';

/** A private server: its accounts and its connect_timeout (an hour) disturb nobody else. */
let server: EphemeralServer;
let backend: string;

before(async () => {
  server = await startEphemeralServer({ serverOptions: { connect_timeout: 3600 } });
  backend = `127.0.0.1:${server.port}`;
  const root = await adminConnection();
  for (const statement of [
    `CREATE USER meta@'%' IDENTIFIED BY '${SECRET}'`,
    // EVENT too: without it (and no binary log to follow) the start warns about event jobs.
    `GRANT SELECT, SHOW VIEW, TRIGGER, EVENT ON *.* TO meta@'%'`,
    `CREATE USER weak@'%' IDENTIFIED BY '${SECRET}'`,
    `GRANT SELECT ON *.* TO weak@'%'`,
    `CREATE ROLE metadata_reader`,
    `GRANT SELECT, SHOW VIEW, TRIGGER ON *.* TO metadata_reader`,
    `CREATE USER roled@'%' IDENTIFIED BY '${SECRET}'`,
    `GRANT metadata_reader TO roled@'%'`,
    `SET DEFAULT ROLE metadata_reader FOR roled@'%'`,
  ]) {
    await root.queryRows(statement);
  }
  root.close();
});

after(async () => {
  await server.stop();
});

function adminConnection(): Promise<MysqlConnection> {
  return MysqlConnection.connect({
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    database: null,
  });
}

/** Waits until the proxy has logged a line matching `pattern` (it acts on signals async). */
async function waitForLog(proxy: ProxyProcess, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 200 && !pattern.test(proxy.log()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.match(proxy.log(), pattern);
}

async function selectOne(port: number): Promise<void> {
  const client = await RawClient.connect({
    host: '127.0.0.1',
    port,
    user: server.user,
    password: server.password,
    database: server.database,
  });
  client.close();
}

describe('one proxy per port', () => {
  test('a second nicecache on a port already held refuses to start and names the first', async () => {
    const first = await startProxyProcess({ backend, workers: 2 });
    try {
      for (const listen of [`127.0.0.1:${first.port}`, `0.0.0.0:${first.port}`]) {
        const second = await runNicecache([
          'proxy',
          '--listen',
          listen,
          '--backend',
          backend,
          '--workers',
          '1',
        ]);
        assert.equal(second.code, 1, second.stderr);
        assert.match(
          second.stderr,
          new RegExp(`port ${first.port} is already served by nicecache`),
        );
        assert.match(second.stderr, new RegExp(`pid ${first.child.pid}\\b`));
        assert.doesNotMatch(second.stderr, /nicecache listening on/);
      }
      // The first is untouched, and its own two workers still share the port.
      for (let i = 0; i < 4; i++) await selectOne(first.port);
    } finally {
      assert.equal(await first.stop(), 0);
    }
  });

  test('two instances started at the same moment on one port: exactly one runs', async () => {
    for (let round = 0; round < 3; round++) {
      const listen = `127.0.0.1:${await freePort()}`;
      const starts = await Promise.allSettled([
        startProxyProcess({ backend, workers: 2, listen }),
        startProxyProcess({ backend, workers: 2, listen }),
      ]);
      const running = starts.flatMap((start) =>
        start.status === 'fulfilled' ? [start.value] : [],
      );
      const refused = starts.flatMap((start): unknown[] =>
        start.status === 'rejected' ? [start.reason] : [],
      );
      try {
        assert.equal(running.length, 1, String(refused));
        assert.match(
          String(refused[0]),
          /exited with 1[^]*already (served by nicecache|in use by)/,
        );
        await selectOne(running[0]!.port);
      } finally {
        for (const proxy of running) assert.equal(await proxy.stop(), 0);
      }
    }
  });

  test('a port held by another program: the start fails and names that program', async () => {
    const other: Server = createServer(() => {});
    await new Promise<void>((resolve) => other.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = other.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const result = await runNicecache([
        'proxy',
        '--listen',
        `127.0.0.1:${port}`,
        '--backend',
        backend,
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`cannot listen on 127.0.0.1:${port}`));
      assert.match(result.stderr, new RegExp(`in use by pid ${process.pid}\\b`));
    } finally {
      other.close();
    }
  });

  test('an instance killed outright leaves no lock behind', async () => {
    const first = await startProxyProcess({ backend, workers: 1 });
    await first.stop('SIGKILL');
    const next = await startProxyProcess({
      backend,
      workers: 1,
      listen: `127.0.0.1:${first.port}`,
    });
    try {
      assert.equal(next.port, first.port);
      await selectOne(next.port);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  });
});

describe('a configuration that cannot work stops the start', () => {
  const start = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runNicecache(
      ['proxy', '--listen', '127.0.0.1:0', '--backend', backend, '--workers', '1', ...args],
      env,
    );

  test("a wrong admin password: the server's error, and where the password goes", async () => {
    const result = await start(['--admin-user', 'meta'], { NICECACHE_ADMIN_PASSWORD: 'wrong' });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /the admin account 'meta' cannot log in/);
    assert.match(result.stderr, /1045 \(28000\): Access denied for user 'meta'/);
    assert.match(result.stderr, /NICECACHE_ADMIN_PASSWORD/);
    assert.doesNotMatch(result.stderr, /listening on/);
  });

  test('an admin account without the metadata privileges: what to grant', async () => {
    const result = await start(['--admin-user', 'weak'], { NICECACHE_ADMIN_PASSWORD: SECRET });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /the admin account 'weak'@'%' lacks SHOW VIEW, TRIGGER on \*\.\*/);
    assert.ok(
      result.stderr.includes("GRANT SELECT, SHOW VIEW, TRIGGER ON *.* TO 'weak'@'%';"),
      result.stderr,
    );
  });

  test('privileges held through a default role are enough', async () => {
    const proxy = await startProxyProcess({
      backend,
      workers: 1,
      extraArgs: ['--admin-user', 'roled'],
      env: { NICECACHE_ADMIN_PASSWORD: SECRET },
    });
    assert.equal(await proxy.stop(), 0);
  });

  test('--require-backend: an unreachable backend stops the start; without it the proxy starts', async () => {
    const port = await freePort();
    const refused = await runNicecache([
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--backend',
      `127.0.0.1:${port}`,
      '--require-backend',
    ]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.ok(
      refused.stderr.includes(
        `Can't connect to server on '127.0.0.1:${port}' (111 "Connection refused")`,
      ),
      refused.stderr,
    );
    const lenient = await startProxyProcess({ backend: `127.0.0.1:${port}`, workers: 1 });
    assert.match(lenient.log(), /backend not available at start: Can't connect to server/);
    assert.equal(await lenient.stop(), 0);
  });
});

describe('signals and exposure', () => {
  test('SIGHUP and SIGUSR2 are logged, not fatal; SIGUSR1 opens no inspector; SIGTERM drains', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'nicecache-lifecycle-'));
    const file = join(directory, 'nicecache.json');
    writeFileSync(file, JSON.stringify({ 'query-cache-size': '8M' }));
    const proxy = await startProxyProcess({ backend, workers: 2, extraArgs: ['--config', file] });
    try {
      proxy.child.kill('SIGHUP');
      await waitForLog(proxy, /SIGHUP: configuration unchanged/);
      writeFileSync(file, JSON.stringify({ 'query-cache-size': '16M', 'single-flight-wait': 9 }));
      proxy.child.kill('SIGUSR2');
      await waitForLog(
        proxy,
        /SIGUSR2: the configuration now differs in --query-cache-size, --single-flight-wait; nicecache keeps the settings in force until it is restarted/,
      );
      writeFileSync(file, '{ broken');
      proxy.child.kill('SIGHUP');
      await waitForLog(proxy, /SIGHUP: the configuration does not parse: .*nothing changes/);
      proxy.child.kill('SIGUSR1');
      await waitForLog(proxy, /SIGUSR1 ignored/);
      assert.doesNotMatch(proxy.log(), /Debugger listening/);
      assert.notEqual(listenerOf(9229)?.startsWith(`pid ${proxy.child.pid} `), true);
      await selectOne(proxy.port);
      assert.equal(proxy.child.exitCode, null, 'still running');
      // Every line the proxy wrote carries a timestamp.
      for (const line of proxy.log().trim().split('\n')) {
        assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info |warn |error) /);
      }
    } finally {
      assert.equal(await proxy.stop('SIGTERM'), 0);
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('--log-format json: every line the proxy and its workers write is one JSON object', async () => {
    const proxy = await startProxyProcess({
      backend,
      workers: 2,
      extraArgs: ['--log-format', 'json'],
      // Debug lines too, so the workers write some (a client connected).
      env: { NICECACHE_DEBUG: '1' },
    });
    try {
      await selectOne(proxy.port);
      proxy.child.kill('SIGUSR1');
      await waitForLog(proxy, /SIGUSR1 ignored/);
    } finally {
      assert.equal(await proxy.stop('SIGTERM'), 0);
    }
    const entries = proxy
      .log()
      .trim()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { time: string; level: string; worker?: number; msg: string },
      );
    for (const entry of entries) {
      assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(['debug', 'info', 'warn', 'error'].includes(entry.level), entry.level);
      assert.equal(typeof entry.msg, 'string');
    }
    assert.ok(entries.some((entry) => /^nicecache listening on /.test(entry.msg)));
    assert.ok(entries.some((entry) => entry.msg === 'stopped'));
    assert.ok(
      entries.some(
        (entry) => typeof entry.worker === 'number' && /client connected/.test(entry.msg),
      ),
      'a worker line, with its worker',
    );
  });

  test('an admin password given as an option is warned about and not left in the process list', async () => {
    const proxy = await startProxyProcess({
      backend,
      workers: 1,
      extraArgs: ['--admin-user', 'meta', '--admin-password', SECRET],
    });
    try {
      const cmdline = readFileSync(`/proc/${proxy.child.pid}/cmdline`, 'latin1');
      assert.ok(!cmdline.includes(SECRET), cmdline);
      assert.match(cmdline, /--admin-password \*\*\*/);
      assert.match(proxy.log(), /--admin-password on the command line is visible to every user/);
    } finally {
      assert.equal(await proxy.stop(), 0);
    }
    const quiet = await startProxyProcess({
      backend,
      workers: 1,
      extraArgs: ['--admin-user', 'meta'],
      env: { NICECACHE_ADMIN_PASSWORD: SECRET },
    });
    try {
      assert.doesNotMatch(quiet.log(), /warn/);
    } finally {
      assert.equal(await quiet.stop(), 0);
    }
  });

  test('without an admin account the start says what the cache cannot do; with one, or no cache, it does not', async () => {
    const without = await startProxyProcess({ backend, workers: 1 });
    try {
      await waitForLog(without, /no admin account \(--admin-user\)/);
      assert.match(
        without.log(),
        /^\S+ warn +no admin account \(--admin-user\): every write invalidates every cached result, and a REPEATABLE READ transaction that BEGIN started on the server gets every read from the server/m,
      );
    } finally {
      assert.equal(await without.stop(), 0);
    }
    for (const extraArgs of [
      ['--admin-user', 'meta'],
      ['--query-cache-size', '0'],
    ]) {
      const quiet = await startProxyProcess({
        backend,
        workers: 1,
        extraArgs,
        env: { NICECACHE_ADMIN_PASSWORD: SECRET },
      });
      try {
        await selectOne(quiet.port);
        assert.doesNotMatch(quiet.log(), /no admin account/, extraArgs.join(' '));
      } finally {
        assert.equal(await quiet.stop(), 0);
      }
    }
  });

  test('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as {
      version: string;
    };
    for (const args of [['--version'], ['proxy', '--version']]) {
      const result = await runNicecache(args);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, `nicecache ${version}\n`);
    }
  });
});

describe('clients that never log in', () => {
  let proxy: ProxyProcess;
  before(async () => {
    proxy = await startProxyProcess({
      backend,
      workers: 1,
      extraArgs: ['--handshake-timeout', '300'],
    });
  });
  after(async () => {
    assert.equal(await proxy.stop(), 0);
  });

  async function serverHasConnection(id: number): Promise<boolean> {
    const root = await adminConnection();
    const rows = await root.queryRows(
      `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ${id}`,
    );
    root.close();
    return rows[0]![0] !== '0';
  }

  test('dropped after --handshake-timeout, and the backend connection is released at once', async () => {
    const client = await RawClient.open('127.0.0.1', proxy.port);
    const greeting = await client.readPacket();
    const id = parseGreeting(greeting!.payload)!.connectionId;
    assert.equal(await serverHasConnection(id), true, 'the backend connection is held meanwhile');
    // The server itself would wait an hour (its connect_timeout).
    assert.equal(await client.readPacket(20_000), null, 'the proxy closes the connection');
    let held = true;
    for (let i = 0; i < 100 && held; i++) {
      held = await serverHasConnection(id);
      if (held) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(held, false, 'the server has closed its side');
  });

  test('a client that logs in is not affected by the handshake timer', async () => {
    const client = await RawClient.connect({
      host: '127.0.0.1',
      port: proxy.port,
      user: server.user,
      password: server.password,
      database: server.database,
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const reply = await client.query('SELECT 1');
    assert.equal(reply.at(-1)!.payload[0] !== PacketHeader.ERR, true);
    client.close();
  });

  test('a flood of such clients does not flood the log', async () => {
    const before = proxy.log().match(/handshake timeout/g)?.length ?? 0;
    const clients = await Promise.all(
      Array.from({ length: 3 * LINES_PER_KIND }, () => RawClient.open('127.0.0.1', proxy.port)),
    );
    for (const client of clients) assert.equal((await client.readPacket(20_000)) !== null, true);
    for (const client of clients) assert.equal(await client.readPacket(20_000), null);
    const lines = proxy.log().match(/handshake timeout/g)?.length ?? 0;
    assert.ok(
      lines - before <= LINES_PER_KIND,
      `${lines - before} lines for ${clients.length} clients`,
    );
  });
});

describe('the backend-down error', () => {
  test('the packet, --help and the README agree, and real clients print it whole', async () => {
    const port = await freePort();
    const expected = `Can't connect to server on '127.0.0.1:${port}' (111 "Connection refused")`;
    const proxy = await startProxyProcess({ backend: `127.0.0.1:${port}`, workers: 1 });
    try {
      const raw = await RawClient.open('127.0.0.1', proxy.port);
      const packet = (await raw.readPacket())!;
      assert.equal(packet.sequenceId, 0);
      assert.equal(packet.payload[3], 0x23, "a '#' SQLSTATE marker");
      assert.deepEqual(readErr(packet.payload), {
        errno: 1429,
        sqlState: 'HY000',
        message: expected,
      });

      await assert.rejects(
        mysql2.createConnection({ host: '127.0.0.1', port: proxy.port, user: 'root' }),
        (error: { errno: number; sqlState: string; message: string }) => {
          assert.deepEqual([error.errno, error.sqlState, error.message], [1429, 'HY000', expected]);
          return true;
        },
      );
      await assert.rejects(
        mariadb.createConnection({
          host: '127.0.0.1',
          port: proxy.port,
          user: 'root',
          connectTimeout: 5000,
        }),
        (error: { errno: number; sqlState: string; message: string }) => {
          assert.deepEqual([error.errno, error.sqlState], [1429, 'HY000']);
          assert.ok(error.message.endsWith(expected), error.message);
          return true;
        },
      );
      for (const tls of [[], ['--skip-ssl']]) {
        const cli = spawnSync(
          'mariadb',
          ['-h', '127.0.0.1', '-P', String(proxy.port), '-u', 'root', ...tls, '-e', 'SELECT 1'],
          { encoding: 'utf8', timeout: 20_000 },
        );
        assert.notEqual(cli.status, 0);
        assert.ok(cli.stderr.includes(`1429`) && cli.stderr.includes(expected), cli.stderr);
      }
      const python = spawnSync(
        '/usr/bin/python3',
        [
          '-c',
          [
            'import pymysql, sys',
            'try:',
            `    pymysql.connect(host='127.0.0.1', port=${proxy.port}, user='root')`,
            'except pymysql.err.OperationalError as e:',
            "    sys.stdout.write('%d|%s' % e.args)",
          ].join('\n'),
        ],
        { encoding: 'utf8', timeout: 20_000 },
      );
      if (/No module named 'pymysql'/.test(python.stderr)) {
        console.log('PyMySQL is not installed (scripts/setup.sh installs it): not checked');
      } else {
        assert.equal(python.stdout, `1429|${expected}`, python.stderr);
      }
    } finally {
      assert.equal(await proxy.stop(), 0);
    }

    const documented = `1429 (HY000)`;
    const help = proxyHelp().replace(/\s+/g, ' ');
    assert.ok(help.includes(documented), help);
    assert.ok(
      help.includes(`"Can't connect to server on 'HOST:PORT' (111 "Connection refused")"`),
      help,
    );
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(
      /\s+/g,
      ' ',
    );
    assert.ok(readme.includes('error 1429, SQLSTATE HY000'), 'README names errno and SQLSTATE');
    assert.ok(
      readme.includes(`"Can't connect to server on 'HOST:PORT' (111 "Connection refused")"`),
      'README gives the text',
    );
  });
});
