/**
 * The lean client the benchmark driver uses, against the real server and through the proxy:
 * login, text and prepared commands, pipelining, errors, a lost connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MysqlConnection, ServerError } from '../../src/upstream/mysql-connection.ts';
import type { ConnectionOptions } from '../../src/upstream/mysql-connection.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';
import { startProxyProcess } from '../support/proxy-process.ts';
import type { ProxyProcess } from '../support/proxy-process.ts';

const direct: ConnectionOptions = {
  host: BACKEND_HOST,
  port: BACKEND_PORT,
  user: BACKEND_USER,
  password: BACKEND_PASSWORD,
  database: BACKEND_DATABASE,
};

describe('MysqlConnection', () => {
  let proxy: ProxyProcess;

  before(async () => {
    proxy = await startProxyProcess({ workers: 2 });
    const admin = await MysqlConnection.connect(direct);
    await admin.query("CREATE USER IF NOT EXISTS 'nc_conn'@'127.0.0.1' IDENTIFIED BY 'secret-1'");
    await admin.query("GRANT SELECT ON *.* TO 'nc_conn'@'127.0.0.1'");
    admin.close();
  });

  after(async () => {
    const admin = await MysqlConnection.connect(direct);
    await admin.query("DROP USER IF EXISTS 'nc_conn'@'127.0.0.1'");
    admin.close();
    assert.equal(await proxy.stop(), 0);
  });

  for (const via of ['server', 'proxy'] as const) {
    const options = (): ConnectionOptions =>
      via === 'server' ? direct : { ...direct, host: proxy.host, port: proxy.port };

    test(`text queries, rows and errors (${via})`, async () => {
      const connection = await MysqlConnection.connect(options());
      assert.deepEqual(await connection.queryRows("SELECT 1, NULL, 'x ✓', ''"), [
        ['1', null, 'x ✓', ''],
      ]);
      assert.deepEqual(await connection.queryRows('SELECT seq FROM seq_1_to_3'), [
        ['1'],
        ['2'],
        ['3'],
      ]);
      const ok = await connection.query('DO 1');
      assert.equal(ok.error, null);
      assert.ok(ok.status & 0x0002, 'autocommit flag in the OK');
      const bad = await connection.query('SELEC 1');
      assert.equal(bad.error?.errno, 1064);
      assert.equal(bad.error?.sqlState, '42000');
      await assert.rejects(
        connection.queryRows('SELECT * FROM no_such_table'),
        (error: ServerError) => {
          assert.equal(error.errno, 1146);
          return true;
        },
      );
      connection.close();
    });

    test(`prepared statements (${via})`, async () => {
      const connection = await MysqlConnection.connect(options());
      const statement = await connection.prepare('SELECT ? + ?, ?');
      assert.equal(statement.parameterCount, 3);
      assert.equal((await connection.execute(statement, [1, 2, 'three'])).error, null);
      const wrong = await connection.execute(statement, [1]);
      assert.equal(wrong.error?.errno, 1210, 'too few parameters is the server’s error');
      connection.closeStatement(statement);
      assert.equal((await connection.execute(statement, [1, 2, 3])).error?.errno, 1243);
      await assert.rejects(connection.prepare('SELECT FROM'), ServerError);
      connection.close();
    });

    test(`pipelined commands resolve in order (${via})`, async () => {
      const connection = await MysqlConnection.connect(options());
      const values = await Promise.all(
        Array.from({ length: 200 }, (_, i) => connection.queryRows(`SELECT ${i}`)),
      );
      assert.deepEqual(
        values.map((rows) => Number(rows[0]![0])),
        Array.from({ length: 200 }, (_, i) => i),
      );
      connection.close();
    });

    test(`passwords, and refused logins (${via})`, async () => {
      const user = await MysqlConnection.connect({
        ...options(),
        user: 'nc_conn',
        password: 'secret-1',
      });
      assert.deepEqual(await user.queryRows('SELECT CURRENT_USER()'), [['nc_conn@127.0.0.1']]);
      user.close();
      await assert.rejects(
        MysqlConnection.connect({ ...options(), user: 'nc_conn', password: 'wrong' }),
        (error: ServerError) => {
          assert.equal(error.errno, 1045);
          assert.equal(error.sqlState, '28000');
          return true;
        },
      );
    });

    test(`a killed connection rejects what is pending (${via})`, async () => {
      const connection = await MysqlConnection.connect(options());
      const [[id]] = (await connection.queryRows('SELECT CONNECTION_ID()')) as [[string]];
      // The server answers the killed statement with an error or just closes the connection.
      const outcome = connection.query('SELECT SLEEP(5)').then(
        (result) => result.error?.errno,
        (error: Error) => error.message,
      );
      const admin = await MysqlConnection.connect(direct);
      await admin.query(`KILL CONNECTION ${id}`);
      admin.close();
      const reported = await outcome;
      assert.ok(reported === 1927 || reported === 'connection closed', `got ${String(reported)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(connection.closed, true);
      await assert.rejects(connection.query('SELECT 1'));
    });
  }
});
