/**
 * The prepare → execute → close pattern of real drivers (what PHP's mysqli and PDO, Go's
 * database/sql and Connector/J without its statement cache do for every query): mysql2's
 * prepare/execute/close and the mariadb connector's prepare/execute/close, run directly and
 * through the proxy (directly with the greeting narrowed as the proxy narrows it, so the driver
 * asks for the same features). A recorder between each driver and its target keeps the reply to every
 * COM_STMT_EXECUTE, which must be the server's byte for byte; the proxy's Qcache_hits must say
 * that every round from the second on was answered from the cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { Command } from '../../src/protocol/constants.ts';
import { ProxyHarness, WARM_TABLE_STATEMENTS, runStatements } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';
import { startReplyRecorder } from '../support/reply-recorder.ts';
import type { ReplyRecorder } from '../support/reply-recorder.ts';

const DB = 'nc_prepared_drivers';
const ROUNDS = 5;
const SQL = 'SELECT id, v, d FROM t WHERE id = ? OR v = ? ORDER BY id';
/** Each round's parameters: an integer, a string, and a NULL in turn. */
const PARAMS: Array<[number | null, string | null]> = [
  [1, null],
  [2, 'three'],
  [null, 'twelve'],
];

interface Target {
  host: string;
  port: number;
}

type Rounds = (at: Target) => Promise<void>;

/** mysql2: connection.prepare, statement.execute, connection.unprepare. */
const mysql2Rounds: Rounds = async (at) => {
  const connection = await mysql.createConnection({
    host: at.host,
    port: at.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
  });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const params of PARAMS) {
        const statement = await connection.prepare(SQL);
        await statement.execute(params);
        // unprepare sends COM_STMT_CLOSE and forgets the statement (close() alone keeps it
        // in mysql2's cache, and the next prepare would hand back the closed id).
        connection.unprepare(SQL);
      }
    }
  } finally {
    await connection.end();
  }
};

/** The mariadb connector: connection.prepare, statement.execute, statement.close. */
const mariadbRounds: Rounds = async (at) => {
  const connection = await mariadb.createConnection({
    host: at.host,
    port: at.port,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: DB,
    // Every prepare reaches the server, as with PHP or Go: no statement cache in the driver.
    prepareCacheLength: 0,
  });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const params of PARAMS) {
        const statement = await connection.prepare(SQL);
        await statement.execute(params);
        statement.close();
      }
    }
  } finally {
    await connection.end();
  }
};

describe('drivers: prepare → execute → close hits from the second round on', () => {
  let proxy: ProxyHarness;

  before(async () => {
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      ...WARM_TABLE_STATEMENTS,
      `DROP DATABASE IF EXISTS ${DB}`,
      `CREATE DATABASE ${DB}`,
      `CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(40), d DOUBLE) ENGINE=InnoDB`,
      `INSERT INTO ${DB}.t VALUES (1, 'one', 1.5), (2, 'two', 2.5), (3, 'three', 3.5), (12, 'twelve', 12.5)`,
    ]);
    // Each driver runs its rounds on one connection, so on one worker and its store.
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    const code = await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${DB}`]);
    assert.equal(code, 0, 'the proxy exits cleanly');
  });

  async function compare(rounds: Rounds): Promise<void> {
    const record = async (target: Target, asTheProxy: boolean): Promise<ReplyRecorder> => {
      const recorder = await startReplyRecorder(target.host, target.port, asTheProxy);
      try {
        await rounds({ host: '127.0.0.1', port: recorder.port });
      } finally {
        await recorder.close();
      }
      return recorder;
    };
    const direct = await record({ host: BACKEND_HOST, port: BACKEND_PORT }, true);
    const before = await proxy.counters();
    const viaProxy = await record({ host: proxy.host, port: proxy.port }, false);
    const now = await proxy.counters();
    const executions = (recorder: ReplyRecorder): Buffer[] =>
      recorder.replies
        .filter((reply) => reply.command === Command.STMT_EXECUTE)
        .map((reply) => reply.bytes);
    const expected = executions(direct);
    const actual = executions(viaProxy);
    assert.equal(expected.length, ROUNDS * PARAMS.length, 'every execution was recorded');
    assert.equal(actual.length, expected.length, 'as many executions through the proxy');
    for (let index = 0; index < expected.length; index++) {
      assert.ok(
        actual[index]!.equals(expected[index]!),
        `execution ${index}: the proxy's reply differs from the server's\n` +
          `  server: ${expected[index]!.toString('hex')}\n  proxy:  ${actual[index]!.toString('hex')}`,
      );
    }
    const delta = (name: string): number => (now.get(name) ?? NaN) - (before.get(name) ?? NaN);
    assert.equal(delta('inserts'), PARAMS.length, 'the first round fills the cache');
    assert.equal(delta('hits'), (ROUNDS - 1) * PARAMS.length, 'every later round is a hit');
  }

  test('mysql2: prepare, execute, unprepare', async () => {
    await runStatements(proxy.host, proxy.port, ['RESET QUERY CACHE']);
    await compare(mysql2Rounds);
  });

  test('the mariadb connector: prepare, execute, close', async () => {
    await runStatements(proxy.host, proxy.port, ['RESET QUERY CACHE']);
    await compare(mariadbRounds);
  });
});
