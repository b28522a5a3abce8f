/** The proxy's settings: options beat environment variables, which beat the config file. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  ConfigError,
  backendTlsInForce,
  changedSettings,
  parseHostPort,
  parseProxyConfig,
  proxyHelp,
  proxyOptionSpecs,
} from '../../src/cli/config.ts';

describe('proxy configuration', () => {
  const directory = mkdtempSync(join(tmpdir(), 'nicecache-config-'));
  const file = join(directory, 'nicecache.json');
  after(() => rmSync(directory, { recursive: true, force: true }));

  test('defaults', () => {
    assert.deepEqual(parseProxyConfig([], {}), {
      listen: { host: '127.0.0.1', port: 6033 },
      socket: null,
      backend: { host: '127.0.0.1', port: 3306 },
      workers: availableParallelism(),
      connectTimeoutMs: 5000,
      drainTimeoutMs: 10000,
      queryCacheType: 1,
      queryCacheSize: 64 * 1024 * 1024,
      queryCacheLimit: 1024 * 1024,
      queryCacheTtlMs: 0,
      singleFlightWaitMs: 50,
      deferTransactions: true,
      adminUser: null,
      adminPassword: '',
      handshakeTimeoutMs: 10000,
      requireBackend: false,
      adminPasswordOnCommandLine: false,
      binlog: 'auto',
      binlogMaxLagMs: 1000,
      binlogServerId: null,
      metrics: null,
      digests: true,
      logFormat: 'text',
      tlsMode: 'auto',
      tls: null,
      requireSecureTransport: false,
      backendTls: 'auto',
      backendTlsCa: null,
      backendTlsVerify: false,
    });
  });

  test('query cache options are written as the server writes them', () => {
    const config = parseProxyConfig(
      ['--query-cache-size', '100M', '--query-cache-limit', '512K', '--query-cache-type', 'DEMAND'],
      { NICECACHE_QUERY_CACHE_TTL: '30', NICECACHE_ADMIN_USER: 'meta' },
    )!;
    assert.equal(config.queryCacheSize, 100 * 1024 * 1024);
    assert.equal(config.queryCacheLimit, 512 * 1024);
    assert.equal(config.queryCacheType, 2);
    assert.equal(config.queryCacheTtlMs, 30_000);
    assert.equal(config.adminUser, 'meta');
    assert.equal(
      parseProxyConfig(['--defer-transactions', 'off'], {})!.deferTransactions,
      false,
      '--defer-transactions off',
    );
    assert.equal(parseProxyConfig(['--digests', 'off'], {})!.digests, false, '--digests off');
    assert.equal(parseProxyConfig([], { NICECACHE_DIGESTS: 'off' })!.digests, false);
    assert.throws(() => parseProxyConfig(['--query-cache-size', '64MB'], {}), ConfigError);
    assert.throws(() => parseProxyConfig(['--query-cache-type', '3'], {}), ConfigError);
  });

  test('options beat environment variables, which beat the config file', () => {
    writeFileSync(
      file,
      JSON.stringify({ workers: 3, backend: 'db.file:3307', 'drain-timeout': 5 }),
    );
    const env = {
      NICECACHE_CONFIG: file,
      NICECACHE_BACKEND: 'db.env:3308',
      NICECACHE_WORKERS: '5',
    };
    const config = parseProxyConfig(['--workers', '7'], env)!;
    assert.equal(config.workers, 7);
    assert.deepEqual(config.backend, { host: 'db.env', port: 3308 });
    assert.equal(config.drainTimeoutMs, 5);
    const fromFile = parseProxyConfig(['--config', file], {})!;
    assert.equal(fromFile.workers, 3);
    assert.deepEqual(fromFile.backend, { host: 'db.file', port: 3307 });
  });

  test('bad values are clear errors', () => {
    assert.throws(
      () => parseProxyConfig(['--workers', '0'], {}),
      /--workers: expected a positive integer/,
    );
    assert.throws(
      () => parseProxyConfig(['--listen', 'nowhere'], {}),
      /--listen: expected HOST:PORT/,
    );
    assert.throws(() => parseProxyConfig(['--listen', 'h:70000'], {}), ConfigError);
    assert.throws(() => parseProxyConfig(['--frobnicate'], {}), ConfigError);
    writeFileSync(file, JSON.stringify({ wrokers: 2 }));
    assert.throws(() => parseProxyConfig(['--config', file], {}), /unknown key 'wrokers'/);
    writeFileSync(file, '{ not json');
    assert.throws(() => parseProxyConfig(['--config', file], {}), /config file/);
  });

  test('lifecycle options: --require-backend, --handshake-timeout, where the password came from', () => {
    const flags = parseProxyConfig(['--require-backend', '--handshake-timeout', '250'], {})!;
    assert.equal(flags.requireBackend, true);
    assert.equal(flags.handshakeTimeoutMs, 250);
    assert.equal(parseProxyConfig([], { NICECACHE_REQUIRE_BACKEND: '1' })!.requireBackend, true);
    writeFileSync(file, JSON.stringify({ 'require-backend': true, 'admin-password': 'x' }));
    const fromFile = parseProxyConfig(['--config', file], {})!;
    assert.equal(fromFile.requireBackend, true);
    assert.equal(fromFile.adminPasswordOnCommandLine, false);
    assert.equal(parseProxyConfig(['--admin-password', 'x'], {})!.adminPasswordOnCommandLine, true);
    assert.equal(
      parseProxyConfig([], { NICECACHE_ADMIN_PASSWORD: 'x' })!.adminPasswordOnCommandLine,
      false,
    );
    assert.throws(
      () => parseProxyConfig([], { NICECACHE_REQUIRE_BACKEND: 'maybe' }),
      /--require-backend: expected true or false/,
    );
    assert.throws(() => parseProxyConfig(['--handshake-timeout', '0'], {}), ConfigError);
  });

  test('binlog options: mode, lag bound and server id, from flags, environment and file', () => {
    const flags = parseProxyConfig(
      ['--binlog', 'ON', '--binlog-max-lag', '250', '--binlog-server-id', '4000000000'],
      {},
    )!;
    assert.equal(flags.binlog, 'on');
    assert.equal(flags.binlogMaxLagMs, 250);
    assert.equal(flags.binlogServerId, 4000000000);
    const env = parseProxyConfig([], { NICECACHE_BINLOG: 'off', NICECACHE_BINLOG_MAX_LAG: '50' })!;
    assert.equal(env.binlog, 'off');
    assert.equal(env.binlogMaxLagMs, 50);
    writeFileSync(file, JSON.stringify({ binlog: 'on', 'binlog-server-id': 7 }));
    const fromFile = parseProxyConfig(['--config', file], {})!;
    assert.equal(fromFile.binlog, 'on');
    assert.equal(fromFile.binlogServerId, 7);
    assert.throws(
      () => parseProxyConfig(['--binlog', 'sometimes'], {}),
      /--binlog: expected auto, on or off/,
    );
    assert.throws(() => parseProxyConfig(['--binlog-max-lag', '0'], {}), /--binlog-max-lag/);
    assert.throws(() => parseProxyConfig(['--binlog-server-id', '0'], {}), /--binlog-server-id/);
    assert.throws(() => parseProxyConfig(['--binlog-server-id', '4294967296'], {}), ConfigError);
  });

  test('--metrics and --log-format, from a flag or the environment', () => {
    assert.deepEqual(parseProxyConfig(['--metrics', '0.0.0.0:9104'], {})!.metrics, {
      host: '0.0.0.0',
      port: 9104,
    });
    assert.deepEqual(parseProxyConfig([], { NICECACHE_METRICS: '127.0.0.1:0' })!.metrics, {
      host: '127.0.0.1',
      port: 0,
    });
    assert.throws(() => parseProxyConfig(['--metrics', 'nowhere'], {}), /--metrics/);
    assert.equal(parseProxyConfig(['--log-format', 'JSON'], {})!.logFormat, 'json');
    assert.equal(parseProxyConfig([], { NICECACHE_LOG_FORMAT: 'json' })!.logFormat, 'json');
    assert.throws(() => parseProxyConfig(['--log-format', 'xml'], {}), /--log-format/);
  });

  test('--tls-cert and --tls-key: both or neither, from flags or the environment', () => {
    assert.equal(parseProxyConfig([], {})!.tls, null);
    assert.deepEqual(parseProxyConfig(['--tls-cert', 'c.pem', '--tls-key', 'k.pem'], {})!.tls, {
      certFile: 'c.pem',
      keyFile: 'k.pem',
    });
    assert.deepEqual(
      parseProxyConfig([], { NICECACHE_TLS_CERT: 'c.pem', NICECACHE_TLS_KEY: 'k.pem' })!.tls,
      { certFile: 'c.pem', keyFile: 'k.pem' },
    );
    assert.throws(() => parseProxyConfig(['--tls-cert', 'c.pem'], {}), ConfigError);
    assert.throws(() => parseProxyConfig(['--tls-key', 'k.pem'], {}), /go together/);
  });

  test('--backend-tls: off on loopback and preferred elsewhere by default, or as given', () => {
    const inForce = (args: string[]): string => backendTlsInForce(parseProxyConfig(args, {})!);
    assert.equal(inForce([]), 'off');
    assert.equal(inForce(['--backend', 'localhost:3306']), 'off');
    assert.equal(inForce(['--backend', '[::1]:3306']), 'off');
    assert.equal(inForce(['--backend', 'db.internal:3306']), 'preferred');
    assert.equal(inForce(['--backend', '10.0.0.5:3306', '--backend-tls', 'off']), 'off');
    assert.equal(inForce(['--backend-tls', 'REQUIRED']), 'required');
    assert.equal(inForce(['--backend-tls', 'follow']), 'follow');
    const config = parseProxyConfig([], {
      NICECACHE_BACKEND_TLS: 'preferred',
      NICECACHE_BACKEND_TLS_CA: 'ca.pem',
      NICECACHE_BACKEND_TLS_VERIFY: 'true',
    })!;
    assert.deepEqual(
      [config.backendTls, config.backendTlsCa, config.backendTlsVerify],
      ['preferred', 'ca.pem', true],
    );
    assert.throws(
      () => parseProxyConfig(['--backend-tls', 'maybe'], {}),
      /--backend-tls: expected/,
    );
  });

  test('--require-secure-transport: with TLS to offer only', () => {
    const tls = ['--tls-cert', 'c.pem', '--tls-key', 'k.pem'];
    assert.equal(parseProxyConfig(tls, {})!.requireSecureTransport, false);
    assert.equal(
      parseProxyConfig([...tls, '--require-secure-transport'], {})!.requireSecureTransport,
      true,
    );
    assert.equal(
      parseProxyConfig(tls, { NICECACHE_REQUIRE_SECURE_TRANSPORT: 'true' })!.requireSecureTransport,
      true,
    );
    // Without certificate files, with the self-signed one made at start; not with none.
    assert.equal(
      parseProxyConfig(['--require-secure-transport'], {})!.requireSecureTransport,
      true,
    );
    assert.throws(
      () => parseProxyConfig(['--require-secure-transport'], { NICECACHE_TLS: 'off' }),
      /with --tls off: no secure transport/,
    );
  });

  test('changedSettings names the options that differ', () => {
    const before = parseProxyConfig([], {})!;
    assert.deepEqual(changedSettings(before, parseProxyConfig([], {})!), []);
    const after = parseProxyConfig(['--workers', '9', '--backend', 'other:3306'], {})!;
    assert.deepEqual(changedSettings(before, after), ['--backend', '--workers']);
  });

  test('IPv6 addresses in brackets', () => {
    assert.deepEqual(parseHostPort('[::1]:6033', '--listen'), { host: '::1', port: 6033 });
  });

  test('--help explains every option with its variable and default', () => {
    assert.equal(parseProxyConfig(['--help'], {}), null);
    const help = proxyHelp();
    for (const spec of proxyOptionSpecs) {
      assert.ok(help.includes(`--${spec.flag}`), spec.flag);
      assert.ok(help.includes(spec.env), spec.env);
    }
  });
});
