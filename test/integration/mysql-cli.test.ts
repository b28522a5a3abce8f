/**
 * The command-line client, the first thing an operator points at a new proxy. Its output through
 * the proxy must be byte for byte what the server itself makes it print.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const DB = 'nc_cli';
const CLI_USER = 'nc_cli_user';
const CLI_PASSWORD = 'pw3';

/** Both names, when the system has both; on Debian `mysql` is the MariaDB client under another name. */
const clients = ['mariadb', 'mysql'].filter((name) => spawnSync(name, ['--version']).status === 0);

let proxy: ProxyProcess;
let admin: Connection;

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

interface Target {
  host: string;
  port: number;
}

interface Login {
  user: string;
  password: string;
}
const rootLogin: Login = { user: BACKEND_USER, password: BACKEND_PASSWORD };

function runClient(
  client: string,
  target: Target,
  args: string[],
  input?: string,
  login = rootLogin,
): Promise<Run> {
  // --no-defaults (only valid first): an option file on the machine must not make the two runs differ.
  const connection = [
    '--no-defaults',
    '-h',
    target.host,
    '-P',
    String(target.port),
    '--protocol=TCP',
    '-u',
    login.user,
  ];
  if (login.password !== '') connection.push(`--password=${login.password}`);
  return new Promise((resolve, reject) => {
    const child = spawn(client, [...connection, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
    child.stdin.end(input ?? '');
  });
}

const direct = (): Target => ({ host: BACKEND_HOST, port: BACKEND_PORT });
const viaProxy = (): Target => ({ host: proxy.host, port: proxy.port });

/** Runs the client once through the proxy and once directly; both runs must match exactly. */
async function same(client: string, args: string[], input?: string): Promise<Run> {
  const mine = await runClient(client, viaProxy(), args, input);
  const theirs = await runClient(client, direct(), args, input);
  assert.equal(mine.stderr, theirs.stderr, 'stderr');
  assert.equal(mine.code, theirs.code, `exit code; stderr through the proxy: ${mine.stderr}`);
  assert.ok(
    mine.stdout.equals(theirs.stdout),
    `stdout differs:\n--- proxy\n${mine.stdout.toString()}\n--- direct\n${theirs.stdout.toString()}`,
  );
  return mine;
}

before(async () => {
  assert.ok(
    clients.includes('mariadb'),
    'the mariadb command-line client is needed (Debian package mariadb-client)',
  );
  admin = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    multipleStatements: true,
  });
  await admin.query(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}`);
  await admin.query(
    `CREATE TABLE ${DB}.items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(8, 2), note TEXT)`,
  );
  await admin.query(
    `INSERT INTO ${DB}.items VALUES (1, 'apple', 1.50, NULL), (2, 'pear', 2.25, 'tab\\there'), (3, 'fig', 10.00, 'line\\nbreak'), (4, 'crème brûlée', 7.00, '👋')`,
  );
  for (const host of ['127.0.0.1', '%']) {
    await admin.query(`DROP USER IF EXISTS '${CLI_USER}'@'${host}'`);
    await admin.query(`CREATE USER '${CLI_USER}'@'${host}' IDENTIFIED BY '${CLI_PASSWORD}'`);
  }
  proxy = await startProxyProcess({ workers: 2 });
});

after(async () => {
  const code = await proxy?.stop();
  if (admin !== undefined) {
    await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
    await admin.query(`DROP USER IF EXISTS '${CLI_USER}'@'127.0.0.1', '${CLI_USER}'@'%'`);
    await admin.end();
  }
  assert.equal(code, 0, `proxy exit code; its log:\n${proxy?.log()}`);
});

for (const client of clients) {
  describe(`${client} client`, () => {
    test('-e with several statements, warnings shown by SHOW WARNINGS', async () => {
      const sql = [
        'SELECT id, name, price FROM items ORDER BY id',
        "SELECT CAST('12abc' AS SIGNED) AS n",
        'SHOW WARNINGS',
        'SELECT 1/0 AS z',
        'SHOW WARNINGS',
        'CREATE TEMPORARY TABLE t (v TINYINT)',
        // IGNORE turns strict mode's error into warnings.
        'INSERT IGNORE INTO t VALUES (300), (-300), (5)',
        'SHOW WARNINGS',
        'SELECT v FROM t ORDER BY v',
      ].join('; ');
      const run = await same(client, [DB, '--batch', '--raw', '-e', sql]);
      assert.equal(run.code, 0, run.stderr);
      const out = run.stdout.toString();
      assert.match(out, /Warning\t1292\tTruncated incorrect INTEGER value: '12abc'/);
      assert.match(out, /Warning\t1365\tDivision by 0/);
      assert.match(out, /Warning\t1264\tOut of range value for column 'v' at row 1/);
      assert.match(out, /\nv\n-128\n5\n127\n$/);
    });

    test("--batch --raw output is byte for byte the server's, for awkward values too", async () => {
      const sql = [
        'SELECT * FROM items ORDER BY id',
        "SELECT NULL AS n, 'a\\tb\\nc' AS s, _binary x'00ff410a09' AS b, 'héllo 👋' AS u, '' AS e",
        'SELECT seq, REPEAT(CHAR(64 + seq % 26), seq * 13) AS r FROM seq_1_to_2000',
      ].join('; ');
      const run = await same(client, [DB, '--batch', '--raw', '-e', sql]);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(
        run.stdout.includes(Buffer.from([0x00, 0xff, 0x41, 0x0a, 0x09])),
        'binary bytes come through raw',
      );
      assert.ok(run.stdout.includes('crème brûlée'));
      // The table format and --show-warnings take other paths through the client.
      await same(client, [
        DB,
        '--table',
        '--show-warnings',
        '-e',
        "SELECT * FROM items ORDER BY id; SELECT CAST('7x' AS SIGNED) AS n",
      ]);
      await same(client, [DB, '--vertical', '-e', 'SELECT * FROM items WHERE id < 3 ORDER BY id']);
    });

    test('a script on stdin with DELIMITER and a multi-line CREATE PROCEDURE', async () => {
      const script = `
        USE ${DB};
        CREATE TEMPORARY TABLE squares (n INT PRIMARY KEY, sq INT);
        DELIMITER //
        CREATE OR REPLACE PROCEDURE fill_squares(IN upto INT)
        BEGIN
          DECLARE i INT DEFAULT 1;
          WHILE i <= upto DO
            INSERT INTO squares VALUES (i, i * i); -- a semicolon inside the body
            SET i = i + 1;
          END WHILE;
          SELECT COUNT(*) AS rows_made, SUM(sq) AS total FROM squares;
          SELECT n, sq FROM squares WHERE n > upto - 3 ORDER BY n;
        END //
        DELIMITER ;
        CALL fill_squares(12);
        SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '${DB}';
      `;
      const run = await same(client, ['--batch'], script);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        run.stdout.toString(),
        'rows_made\ttotal\n12\t650\nn\tsq\n10\t100\n11\t121\n12\t144\nROUTINE_NAME\tROUTINE_TYPE\nfill_squares\tPROCEDURE\n',
      );
    });

    test("a script that fails halfway stops with the server's error", async () => {
      const script = `SELECT 'before' AS step;\nSELECT * FROM ${DB}.no_such_table;\nSELECT 'after' AS step;\n`;
      const run = await same(client, ['--batch'], script);
      assert.equal(run.code, 1);
      assert.equal(run.stdout.toString(), 'step\nbefore\n');
      // In batch mode the client echoes the failing statement, then the server's error.
      assert.match(
        run.stderr,
        /^ERROR 1146 \(42S02\) at line 2: Table 'nc_cli\.no_such_table' doesn't exist$/m,
      );
    });

    test("a wrong password gets the server's own refusal", async () => {
      const login = { user: CLI_USER, password: 'wrong' };
      const mine = await runClient(client, viaProxy(), ['-e', 'SELECT 1'], undefined, login);
      const theirs = await runClient(client, direct(), ['-e', 'SELECT 1'], undefined, login);
      assert.equal(mine.stderr, theirs.stderr);
      assert.match(mine.stderr, /^ERROR 1045 \(28000\): Access denied for user 'nc_cli_user'@/);
      assert.equal(mine.code, 1);
    });

    test('TLS: a client that prefers it connects in clear, one that requires it fails clearly', async () => {
      // Without options, and with --ssl (which this client treats as a preference), it works.
      for (const extra of [[], ['--ssl']]) {
        const run = await runClient(client, viaProxy(), [
          ...extra,
          '--batch',
          '-e',
          'SELECT 40 + 2 AS answer',
        ]);
        assert.equal(run.code, 0, `${extra.join(' ')}: ${run.stderr}`);
        assert.equal(run.stdout.toString(), 'answer\n42\n');
      }
      // Verifying the server's certificate requires TLS; the proxy offers none yet, and the client must say so.
      const run = await runClient(client, viaProxy(), [
        '--ssl-verify-server-cert',
        '-e',
        'SELECT 1',
      ]);
      assert.notEqual(run.code, 0);
      assert.equal(run.stdout.length, 0);
      assert.match(run.stderr, /SSL|TLS/);
      // The refusal harmed nothing: the next client is served.
      const next = await runClient(client, viaProxy(), ['--batch', '-e', 'SELECT 1 AS ok']);
      assert.equal(next.stdout.toString(), 'ok\n1\n');
    });
  });
}
