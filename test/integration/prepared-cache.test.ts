/**
 * Prepared statements and the query cache, with raw packets: an execution is keyed by its
 * statement's text and its parameters as the client bound them, never by the statement id, so
 * the prepare → execute → close pattern hits from its second round on. Every scenario runs
 * directly and through the proxy, replies compared byte for byte (prepare replies with their
 * statement ids masked), and the proxy's counters say which executions were hits.
 *
 * An execution answered from the cache never reaches the server. When a later one omits the
 * types (new-params-bound 0) and reaches it, the server would use types it never received: the
 * proxy sends that execution with the types the client bound last. The scenarios here make the
 * server's view and the client's differ in every way a client can (other types, NULLs, a reset,
 * long data, a cursor) and compare what the server answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Command } from '../../src/protocol/constants.ts';
import {
  LONG_DATA,
  execute,
  fetch,
  sendLongData,
  statementCommand,
} from '../../src/protocol/statement-commands.ts';
import type { Param } from '../../src/protocol/statement-commands.ts';
import {
  ProxyHarness,
  WARM_DB,
  connectDirect,
  differential,
  rowsOf,
  runStatements,
} from '../support/cache-scenario.ts';
import type { Run, Session } from '../support/cache-scenario.ts';
import { BACKEND_HOST, BACKEND_PORT } from '../support/env.ts';
import { replyError } from '../support/raw-client.ts';

const DB = 'nc_prepared';

const SETUP = [
  `DROP DATABASE IF EXISTS ${DB}`,
  `CREATE DATABASE ${DB}`,
  `USE ${DB}`,
  'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40), d DOUBLE) ENGINE=InnoDB',
  "INSERT INTO t VALUES (1, 'one', 1.5), (2, 'two', 2.5), (3, 'three', 3.5), (12, 'twelve', 12.5)",
  'RESET QUERY CACHE',
];

const BY_ID = 'SELECT id, v FROM t WHERE id = ?';
/** `? + 0` echoes the parameter as the server read it: its type decides the value. */
const ECHO = 'SELECT id, ? + 0 AS echoed FROM t WHERE id = 1';

/** COM_STMT_EXECUTE with these parameters and the new-params-bound flag 0: no types. */
function executeWithoutTypes(statementId: number, params: Param[], cursor = false): Buffer {
  const full = execute(statementId, params, cursor);
  if (params.length === 0) return full;
  const bitmapEnd = 10 + ((params.length + 7) >> 3);
  return Buffer.concat([
    full.subarray(0, bitmapEnd),
    Buffer.from([0]),
    full.subarray(bitmapEnd + 1 + 2 * params.length),
  ]);
}

function close(session: Session, id: number): void {
  session.client.sendOnly(statementCommand(Command.STMT_CLOSE, id));
}

/**
 * A command naming a statement the server does not know: its 1243, whose words name the id (ids
 * come from a server-wide counter, so they differ between the runs and the reply is not recorded).
 */
async function unknownStatement(run: Run, session: Session, step: string, payload: Buffer) {
  const reply = await session.client.command(payload);
  const error = replyError(reply);
  run.check(error?.errno === 1243, `${step}: ${error?.errno ?? 'no error'}, expected 1243`);
}

/** One prepare → execute → close round, the way PHP and Go's database/sql run a query. */
async function round(session: Session, sql: string, params: Param[]): Promise<void> {
  const id = await session.prepare(sql);
  await session.command(`execute ${sql} [${params.map(String).join(', ')}]`, execute(id, params));
  close(session, id);
}

describe('prepared statements: hits from the first execution, byte for byte', () => {
  let proxy: ProxyHarness;
  let savedMaxPacket = '';

  before(async () => {
    const client = await connectDirect();
    savedMaxPacket = rowsOf(
      await client.query('SELECT @@GLOBAL.max_allowed_packet'),
      false,
    )[0]![0]!;
    client.close();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      // A 17 MB execution (sessions read the global value when they connect).
      'SET GLOBAL max_allowed_packet = 67108864',
      `CREATE DATABASE IF NOT EXISTS ${WARM_DB}`,
      `CREATE TABLE IF NOT EXISTS ${WARM_DB}.w (id INT PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT IGNORE INTO ${WARM_DB}.w VALUES (1)`,
    ]);
    proxy = await ProxyHarness.start();
  });

  after(async () => {
    const code = await proxy.stop();
    await runStatements(BACKEND_HOST, BACKEND_PORT, [
      `DROP DATABASE IF EXISTS ${DB}`,
      `SET GLOBAL max_allowed_packet = ${savedMaxPacket}`,
    ]);
    assert.equal(code, 0, 'the proxy exits cleanly');
  });

  const scenario = (script: (run: Run) => Promise<void>): Promise<void> =>
    differential(proxy, { database: DB, setup: SETUP }, script);

  test('prepare → execute → close, repeated: hits from the second round on', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      const b = await run.session('B', { worker: 0 });
      await round(a, BY_ID, [2]);
      await run.expect({ hits: 0, inserts: 1 }, 'the first round fills');
      for (let index = 0; index < 3; index++) await round(a, BY_ID, [2]);
      await run.expect({ hits: 3, inserts: 0 }, 'every later round hits, each with a new id');
      await round(b, BY_ID, [2]);
      await run.expect({ hits: 1, inserts: 0 }, 'another session of the same state hits');
      await round(a, BY_ID, [3]);
      await round(a, BY_ID, ['2']);
      await run.expect({ hits: 0, inserts: 2 }, 'other values and other types are other keys');
      await round(a, BY_ID, [null]);
      await round(a, BY_ID, [null]);
      await run.expect({ hits: 1, inserts: 1 }, 'a NULL parameter (null bitmap) is its own key');
      // Several executions of one fresh statement: the first is a hit, later ones too.
      const id = await a.prepare(BY_ID);
      await a.command('execute [2]', execute(id, [2]));
      await a.command('execute [2] without types', executeWithoutTypes(id, [2]));
      await a.command('execute [3] without types', executeWithoutTypes(id, [3]));
      await run.expect({ hits: 3, inserts: 0 }, 'a fresh statement hits from its first run');
      close(a, id);
    }));

  test('an execution that omits types reaches the server with the types last bound', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 1 });
      // Cached: ECHO with an integer, and with a string.
      await round(a, ECHO, [12]);
      await round(a, ECHO, ['12']);
      await run.expect({ hits: 0, inserts: 2 }, 'both bindings cached');

      // Hit with integer types, then no types: the server must read 7 as an integer.
      let id = await a.prepare(ECHO);
      await a.command('execute [12] (a hit)', execute(id, [12]));
      await a.command('execute [7] without types', executeWithoutTypes(id, [7]));
      await a.command('execute [8] without types', executeWithoutTypes(id, [8]));
      await run.expect({ hits: 1, inserts: 2 }, 'the misses after the hit are stored');
      close(a, id);

      // The server has string types; a hit binds integers; no types: integers they are.
      id = await a.prepare(ECHO);
      await a.command("execute ['5'] (a miss: the server has strings)", execute(id, ['5']));
      await a.command('execute [12] (a hit, integers)', execute(id, [12]));
      await a.command('execute [9] without types', executeWithoutTypes(id, [9]));
      await run.expect({ hits: 1, inserts: 2 }, 'the server was given the integer types');
      // And the other way round: the server has integers, a hit binds strings.
      await a.command("execute ['12'] (a hit, strings)", execute(id, ['12']));
      await a.command("execute ['3.25'] without types", executeWithoutTypes(id, ['3.25']));
      await run.expect({ hits: 1, inserts: 1 }, 'the server was given the string types');
      close(a, id);

      // A statement whose types never reached the server, and nothing cached for it yet.
      id = await a.prepare('SELECT ? + 1 AS next');
      await a.command('execute without types, never bound', executeWithoutTypes(id, [1]), 1210);
      close(a, id);
    }));

  test('NULL parameters: the bitmap is in the key, the types still reach the server', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      const twoParameters = 'SELECT id, v FROM t WHERE id = ? OR v = ? ORDER BY id';
      await round(a, twoParameters, [null, 'two']);
      await round(a, twoParameters, [1, null]);
      await run.expect({ hits: 0, inserts: 2 }, 'cached');
      const id = await a.prepare(twoParameters);
      await a.command('execute [NULL, two] (a hit)', execute(id, [null, 'two']));
      // Types NULL and string, which the server did not receive: a miss sends them.
      await a.command(
        'execute [NULL, three] without types',
        executeWithoutTypes(id, [null, 'three']),
      );
      await a.command('execute [1, NULL] (a hit)', execute(id, [1, null]));
      await a.command('execute [3, NULL] without types', executeWithoutTypes(id, [3, null]));
      // A NULL where the bound type is NULL, then a value: the server refuses what it cannot read.
      await a.command('execute [2, 4] without types', executeWithoutTypes(id, [2, 4]), 1210);
      await run.expect({ hits: 2, inserts: 2 }, 'hits and misses by bitmap and values');
      close(a, id);
    }));

  test('COM_STMT_RESET, long data and cursors after a hit: the server gets the types', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 1 });
      await round(a, ECHO, [12]);
      await run.expect({ hits: 0, inserts: 1 }, 'cached');

      let id = await a.prepare(ECHO);
      await a.command('execute [12] (a hit)', execute(id, [12]));
      await a.command('reset', statementCommand(Command.STMT_RESET, id));
      await a.command('execute [6] without types after a reset', executeWithoutTypes(id, [6]));
      await a.command('reset again', statementCommand(Command.STMT_RESET, id));
      await a.command('execute [12] without types after a reset', executeWithoutTypes(id, [12]));
      await run.expect({ hits: 2, inserts: 1 }, 'a reset keeps the types');
      close(a, id);

      // Long data is not in the packet: not cached, but its types must reach the server.
      id = await a.prepare(ECHO);
      await a.command("execute ['12'] (a miss, strings)", execute(id, ['12']));
      await a.command("execute ['12'] again (a hit)", execute(id, ['12']));
      a.client.sendOnly(sendLongData(id, 0, Buffer.from('40')));
      await a.command('execute long data without types', executeWithoutTypes(id, [LONG_DATA]));
      await run.expect({ hits: 1, bypass_uncacheable: 1 }, 'long data goes to the server');
      close(a, id);

      // A cursor's rows come through COM_STMT_FETCH: never cached, its types reach the server.
      id = await a.prepare(ECHO);
      await a.command('execute [12] (a hit)', execute(id, [12]));
      await a.command('execute [4] with a cursor, no types', executeWithoutTypes(id, [4], true));
      await a.command('fetch', fetch(id, 10));
      await a.command('execute [12] without types (a hit)', executeWithoutTypes(id, [12]));
      await run.expect({ hits: 2, bypass_uncacheable: 1 }, 'a cursor goes to the server');
      close(a, id);
    }));

  test('an execution of 16 MB or more that omits types after a hit: the server gets them first', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      const length = 'SELECT LENGTH(?) AS n, ? AS tag FROM t WHERE id = 1';
      await round(a, length, ['x', 'small']);
      await run.expect({ hits: 0, inserts: 1 }, 'cached');
      const id = await a.prepare(length);
      await a.command("execute ['x', 'small'] (a hit)", execute(id, ['x', 'small']));
      // Strings, as the hit bound them: without them the server refuses the packet (1210).
      const big = 'y'.repeat(17 * 1024 * 1024);
      await a.command('execute 17 MB without types', executeWithoutTypes(id, [big, 'big']));
      await a.command(
        "execute ['x', 'small'] without types",
        executeWithoutTypes(id, ['x', 'small']),
      );
      close(a, id);
    }));

  test('statement ids: a closed id is not answered from the cache, a new one is', () =>
    scenario(async (run) => {
      const a = await run.session('A', { worker: 0 });
      await round(a, BY_ID, [1]);
      await run.expect({ hits: 0, inserts: 1 }, 'cached');
      const id = await a.prepare(BY_ID);
      await a.command('execute [1] (a hit)', execute(id, [1]));
      close(a, id);
      // The server no longer knows the id: its 1243, not the cached result.
      await unknownStatement(run, a, 'execute the closed id', execute(id, [1]));
      // After COM_RESET_CONNECTION the server has no statements left.
      await a.command('reset connection', Buffer.from([Command.RESET_CONNECTION]));
      await unknownStatement(run, a, 'execute after the reset', execute(id, [1]));
      const again = await a.prepare('SELECT v, id FROM t WHERE id = ?');
      await a.command('execute a new statement [1]', execute(again, [1]));
      await a.command('execute it again [1] (a hit)', execute(again, [1]));
      await run.expect({ hits: 2, inserts: 1 }, 'each statement its own results');
      close(a, again);
    }));
});
