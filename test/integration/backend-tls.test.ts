/**
 * TLS to the server (--backend-tls): a MariaDB with require_secure_transport=ON and a
 * certificate of its own is fronted with `required`, its certificate checked; clients in the
 * clear and over TLS get the server's rows and the cache's hits; a certificate the proxy does not
 * trust, a server without TLS under `required`, and `off` in front of a server that requires TLS
 * each end the login with a clear error, the last one the server's own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import mysql from 'mysql2/promise';
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import { makeCertificate } from '../support/certificates.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const DB = 'nc_backend_tls';
const READ = 'SELECT id, v FROM t ORDER BY id';

let dir: string;
let cert: string;
let key: string;
let server: EphemeralServer;
/**
 * In front of `server`: --backend-tls required, its certificate checked, a metadata account;
 * TLS to clients too.
 */
let proxy: ProxyProcess;

/** A connection to the server over its Unix socket, which require_secure_transport allows. */
function direct(): Promise<mysql.Connection> {
  return mysql.createConnection({
    socketPath: server.socket,
    user: server.user,
    password: server.password,
    database: DB,
  });
}

function throughProxy(port: number, ssl?: { ca: string }): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: '127.0.0.1',
    port,
    user: 'app',
    password: 'app-password',
    database: DB,
    ...(ssl === undefined ? {} : { ssl }),
  });
}

async function value(connection: mysql.Connection, sql: string): Promise<string> {
  const [rows] = await connection.query(sql);
  return String(Object.values((rows as Record<string, unknown>[])[0]!)[1]);
}

/** Runs `statements` on `server` as its root, over its Unix socket (allowed without TLS). */
async function administer(on: EphemeralServer, statements: readonly string[]): Promise<void> {
  const admin = await mysql.createConnection({
    socketPath: on.socket,
    user: on.user,
    password: on.password,
  });
  for (const sql of statements) await admin.query(sql);
  await admin.end();
}

/**
 * A proxy in front of `on` with TLS on both legs: --backend-tls required (or `backendTls`), the
 * server's certificate checked, and the same certificate offered to clients.
 */
function proxyWithTls(
  on: EphemeralServer,
  extraArgs: readonly string[],
  backendTls = 'required',
): Promise<ProxyProcess> {
  return startProxyProcess({
    backend: `127.0.0.1:${on.port}`,
    workers: 1,
    extraArgs: [
      '--backend-tls',
      backendTls,
      '--backend-tls-ca',
      cert,
      '--backend-tls-verify',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      ...extraArgs,
    ],
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nicecache-backend-tls-'));
  cert = join(dir, 'server-cert.pem');
  key = join(dir, 'server-key.pem');
  makeCertificate(cert, key);
  server = await startEphemeralServer({
    serverOptions: { ssl_cert: cert, ssl_key: key, require_secure_transport: 'ON' },
  });
  await administer(server, [
    `CREATE DATABASE ${DB}`,
    `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20))`,
    `INSERT INTO ${DB}.t VALUES (1, 'one'), (2, 'two')`,
    "CREATE USER app@'%' IDENTIFIED BY 'app-password'",
    `GRANT ALL ON ${DB}.* TO app@'%'`,
  ]);
  // The proxy's own account reads the schema metadata over TLS too.
  proxy = await proxyWithTls(server, ['--admin-user', server.user]);
});

after(async () => {
  await proxy?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS to the server', () => {
  test('a server that requires TLS, fronted with --backend-tls required: rows, hits, and TLS on its side', async () => {
    const server = await direct();
    const [expected] = await server.query(READ);
    await server.end();
    const client = await throughProxy(proxy.port);
    try {
      const hits = Number(await value(client, "SHOW STATUS LIKE 'Qcache_hits'"));
      assert.deepEqual((await client.query(READ))[0], expected);
      assert.deepEqual((await client.query(READ))[0], expected);
      assert.equal(Number(await value(client, "SHOW STATUS LIKE 'Qcache_hits'")) - hits, 1);
      // The server let the login in, so the proxy's leg is TLS (require_secure_transport); the
      // TLS rows tell of the client's own connection, which is in the clear.
      assert.equal(await value(client, "SHOW SESSION STATUS LIKE 'Ssl_version'"), '');
      assert.equal(await value(client, "SHOW STATUS LIKE 'Ssl_cipher'"), '');
      await client.query("UPDATE t SET v = 'uno' WHERE id = 1");
      // The metadata account logged in (over TLS): the write invalidated its table, not all.
      assert.equal(await value(client, "SHOW GLOBAL STATUS LIKE 'Qcache_invalidations_all'"), '0');
      assert.deepEqual((await client.query(READ))[0], [
        { id: 1, v: 'uno' },
        { id: 2, v: 'two' },
      ]);
      await client.query("UPDATE t SET v = 'one' WHERE id = 1");
    } finally {
      await client.end();
    }
  });

  test('a client on TLS as well: both legs encrypted, the login numbered right on each', async () => {
    const client = await throughProxy(proxy.port, { ca: readFileSync(cert, 'utf8') });
    try {
      const stream = (client as unknown as { connection: { stream: TLSSocket } }).connection.stream;
      assert.equal(stream.encrypted, true, 'mysql2 is not on TLS');
      assert.deepEqual((await client.query('SELECT v FROM t WHERE id = 2'))[0], [{ v: 'two' }]);
      // The TLS rows tell of this client's connection to the proxy.
      assert.equal(
        await value(client, "SHOW SESSION STATUS LIKE 'Ssl_cipher'"),
        stream.getCipher().name,
      );
      assert.equal(await value(client, "SHOW STATUS LIKE 'Ssl_version'"), stream.getProtocol());
    } finally {
      await client.end();
    }
  });

  test('without the cache too, the TLS rows tell of the client’s own connection', async () => {
    const relay = await proxyWithTls(server, ['--query-cache-size', '0']);
    try {
      const plain = await throughProxy(relay.port);
      try {
        // The proxy's leg is TLS (the server requires it); the client's is not.
        assert.equal(await value(plain, "SHOW STATUS LIKE 'Ssl_cipher'"), '');
        assert.equal(await value(plain, "SHOW SESSION STATUS LIKE 'Ssl_version'"), '');
      } finally {
        await plain.end();
      }
      const secure = await throughProxy(relay.port, { ca: readFileSync(cert, 'utf8') });
      try {
        const stream = (secure as unknown as { connection: { stream: TLSSocket } }).connection
          .stream;
        assert.equal(await value(secure, "SHOW STATUS LIKE 'Ssl_cipher'"), stream.getCipher().name);
      } finally {
        await secure.end();
      }
    } finally {
      await relay.stop();
    }
  });

  test('a server certificate the proxy does not trust ends the login with a clear error', async () => {
    const otherCert = join(dir, 'other-cert.pem');
    makeCertificate(otherCert, join(dir, 'other-key.pem'));
    const distrustful = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: [
        '--backend-tls',
        'required',
        '--backend-tls-ca',
        otherCert,
        '--backend-tls-verify',
      ],
    });
    try {
      await assert.rejects(
        throughProxy(distrustful.port),
        (error: { errno?: number; message: string }) =>
          error.errno === 1429 &&
          /TLS to the server at .* failed: .*certificate/i.test(error.message),
      );
    } finally {
      await distrustful.stop();
    }
  });

  test('--backend-tls required in front of a server without TLS: a clear error, no login', async () => {
    const required = await startProxyProcess({
      backend: `${BACKEND_HOST}:${BACKEND_PORT}`,
      workers: 1,
      extraArgs: ['--backend-tls', 'required'],
    });
    const preferred = await startProxyProcess({
      backend: `${BACKEND_HOST}:${BACKEND_PORT}`,
      workers: 1,
      extraArgs: ['--backend-tls', 'preferred'],
    });
    const login = { host: '127.0.0.1', user: BACKEND_USER, password: BACKEND_PASSWORD };
    try {
      await assert.rejects(
        mysql.createConnection({ ...login, port: required.port }),
        (error: { errno?: number; message: string }) =>
          error.errno === 1429 &&
          /offers no TLS, which --backend-tls required asks for/.test(error.message),
      );
      // preferred: the server offers no TLS, so the connection stays plain, and works.
      const client = await mysql.createConnection({ ...login, port: preferred.port });
      assert.deepEqual((await client.query('SELECT 1 AS one'))[0], [{ one: 1 }]);
      await client.end();
    } finally {
      await required.stop();
      await preferred.stop();
    }
  });

  test('--backend-tls follow: a client on TLS is on TLS to the server too, one in the clear is not', async () => {
    // The proxy's own connections follow no client: TLS as the server offers it.
    const following = await proxyWithTls(server, ['--admin-user', server.user], 'follow');
    try {
      const client = await throughProxy(following.port, { ca: readFileSync(cert, 'utf8') });
      try {
        // An expression the server computes of its own connection from the proxy: TLS.
        const [rows] = await client.query(
          "SELECT (VARIABLE_VALUE <> '') AS have_ssl FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'",
        );
        assert.deepEqual(rows, [{ have_ssl: 1 }]);
        assert.deepEqual((await client.query(READ))[0], (await client.query(READ))[0]);
        assert.equal(
          await value(client, "SHOW GLOBAL STATUS LIKE 'Qcache_hits'"),
          '1',
          'the metadata account logged in over TLS: the read was cached',
        );
      } finally {
        await client.end();
      }
      // In the clear to the proxy, so in the clear to the server, which requires TLS and says so.
      await assert.rejects(
        throughProxy(following.port),
        (error: { errno?: number }) => error.errno === 1045,
      );
    } finally {
      await following.stop();
    }
  });

  test('--backend-tls off in front of a server that requires TLS: the server’s own refusal', async () => {
    const plain = await startProxyProcess({
      backend: `127.0.0.1:${server.port}`,
      workers: 1,
      extraArgs: ['--backend-tls', 'off'],
    });
    try {
      await assert.rejects(
        throughProxy(plain.port),
        (error: { errno?: number }) => error.errno === 1045,
      );
    } finally {
      await plain.stop();
    }
  });
});

/** MariaDB's own test PAM module (Debian's mariadb-test), and the server plugin that uses it. */
const PAM_MODULE = '/usr/lib/mysql/plugin/test_pam_modules/pam_mariadb_mtr.so';
const PAM_PLUGIN = '/usr/lib/mysql/plugin/auth_pam_v1.so';

/**
 * Why the PAM test cannot run here, or null: it needs the module and the plugin, and root to add
 * a PAM service (a file in /etc/pam.d of its own, removed after).
 */
function pamUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'adding a PAM service needs root';
  if (!existsSync(PAM_MODULE)) return `no ${PAM_MODULE} (Debian's mariadb-test)`;
  if (!existsSync(PAM_PLUGIN)) return `no ${PAM_PLUGIN}`;
  if (!existsSync('/etc/pam.d')) return 'no /etc/pam.d';
  return null;
}

describe('authentication that sends the password in the clear, inside TLS on both legs', () => {
  const unavailable = pamUnavailable();
  const service = `nicecache_test_${process.pid}`;
  let pamServer: EphemeralServer;
  let pamProxy: ProxyProcess;

  before(async () => {
    if (unavailable !== null) return;
    // The module's conversation: the password "cleartext good" logs in as pam_test, "cleartext
    // bad" is refused.
    writeFileSync(
      `/etc/pam.d/${service}`,
      `auth required ${PAM_MODULE} pam_test\naccount required pam_permit.so\n`,
    );
    pamServer = await startEphemeralServer({
      serverOptions: {
        ssl_cert: cert,
        ssl_key: key,
        require_secure_transport: 'ON',
        // PAM's cleartext plugin: the client sends the password as it is, as PAM asks for it.
        plugin_load_add: 'auth_pam_v1',
        pam_use_cleartext_plugin: 'ON',
      },
    });
    await administer(pamServer, [
      `CREATE USER test_pam IDENTIFIED VIA pam USING '${service}'`,
      'CREATE USER pam_test',
      'GRANT PROXY ON pam_test TO test_pam',
      'GRANT SELECT ON *.* TO pam_test',
    ]);
    pamProxy = await proxyWithTls(pamServer, ['--require-secure-transport']);
  });

  after(async () => {
    await pamProxy?.stop();
    await pamServer?.stop();
    rmSync(`/etc/pam.d/${service}`, { force: true });
  });

  /** The mariadb CLI logging in as test_pam with `password`, verifying the certificate. */
  function cli(port: number, password: string, extra: string[] = []): SpawnSyncReturns<string> {
    return spawnSync(
      'mariadb',
      [
        '-h127.0.0.1',
        `-P${port}`,
        '-utest_pam',
        `-p${password}`,
        '--ssl',
        `--ssl-ca=${cert}`,
        '--ssl-verify-server-cert',
        ...extra,
        '-N',
        '-e',
        "SELECT CURRENT_USER(), VARIABLE_VALUE <> '' FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'",
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
  }

  test(
    'PAM’s cleartext plugin logs in through the proxy as directly; a wrong password is refused alike',
    {
      skip: unavailable ?? false,
    },
    () => {
      const direct = cli(pamServer.port, 'cleartext good');
      assert.equal(direct.status, 0, direct.stderr);
      const viaProxy = cli(pamProxy.port, 'cleartext good');
      assert.equal(viaProxy.status, 0, viaProxy.stderr);
      // The module mapped the login to pam_test, on a TLS connection to the client.
      assert.equal(viaProxy.stdout, 'pam_test@%\t1\n');
      assert.equal(viaProxy.stdout, direct.stdout);

      const wrongDirect = cli(pamServer.port, 'cleartext bad');
      const wrongViaProxy = cli(pamProxy.port, 'cleartext bad');
      assert.equal(wrongDirect.status, 1);
      assert.equal(wrongViaProxy.status, 1);
      assert.match(wrongViaProxy.stderr, /ERROR 1045 \(28000\): Access denied for user 'test_pam'/);
      assert.equal(
        wrongViaProxy.stderr.replace(/@'[^']*'/, "@'host'"),
        wrongDirect.stderr.replace(/@'[^']*'/, "@'host'"),
      );
    },
  );
});
