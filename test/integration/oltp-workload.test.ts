/**
 * Our oltp_* workloads against the real sysbench 1.0.20: the server's general log records what
 * sysbench sends (prepare, cleanup, and runs with server-side prepared statements and without),
 * and our statements must match it statement for statement — same kinds in the same order, same
 * SQL once literals are set aside, values from the same ranges. The values themselves differ:
 * our random source is sysbench's algorithm, not its seeding.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import mariadb from 'mariadb';
import type { Connection } from 'mariadb';
import {
  DEFAULT_OLTP_OPTIONS,
  WORKLOADS,
  cleanupStatements,
  inlineParams,
  oltpTransaction,
  prepareStatements,
} from '../../src/bench/oltp-workload.ts';
import type { OltpOptions, OltpStatement, WorkloadName } from '../../src/bench/oltp-workload.ts';
import { DEFAULT_RANDOM_OPTIONS, SysbenchRandom } from '../../src/bench/random.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from '../support/env.ts';

const SYSBENCH = '/usr/bin/sysbench';
/** Where sysbench prepares and runs while the general log records it. */
const CAPTURE_DB = 'nc_oltp_capture';
/** Where our own prepare SQL runs, to compare the tables it makes with sysbench's. */
const OURS_DB = 'nc_oltp_ours';
const OURS_VARIANT_DB = 'nc_oltp_ours_variant';
const DATABASES = [CAPTURE_DB, OURS_DB, OURS_VARIANT_DB];

const TABLES = 2;
const TABLE_SIZE = 1000;
const EVENTS = 50;
const OPTIONS: OltpOptions = { ...DEFAULT_OLTP_OPTIONS, tables: TABLES, tableSize: TABLE_SIZE };

/**
 * Non-default table options, on a table big enough for several INSERT batches: ids sent by the
 * client, the id index a plain KEY, no k index, another engine.
 */
const VARIANT_SYSBENCH_ARGS = [
  '--tables=1',
  '--table-size=6000',
  '--auto-inc=off',
  '--secondary=on',
  '--create-secondary=off',
  '--mysql-storage-engine=MyISAM',
];
const VARIANT_OPTIONS: OltpOptions = {
  ...DEFAULT_OLTP_OPTIONS,
  tables: 1,
  tableSize: 6000,
  autoInc: false,
  secondary: true,
  createSecondary: false,
  engine: 'MyISAM',
};

/** sysbench's multi-row INSERT buffer, 512 KiB including a terminating NUL. */
const BULK_BUFFER_BYTES = 512 * 1024;

interface Capture {
  name: string;
  workload: WorkloadName;
  psMode: 'auto' | 'disable';
  args: string[];
  options: OltpOptions;
}

// The defaults of each workload in both modes, plus non-default counts: the auto-mode ones keep
// every count above zero, because sysbench prepares a statement even when it never runs it.
const CAPTURES: Capture[] = [
  ...WORKLOADS.flatMap((workload) =>
    (['disable', 'auto'] as const).map((psMode) => ({
      name: `${workload}, --db-ps-mode=${psMode}`,
      workload,
      psMode,
      args: [],
      options: OPTIONS,
    })),
  ),
  {
    name: 'oltp_read_write, --db-ps-mode=disable, other counts, --skip-trx=on',
    workload: 'oltp_read_write',
    psMode: 'disable',
    args: [
      '--range-size=7',
      '--point-selects=3',
      '--simple-ranges=2',
      '--sum-ranges=0',
      '--order-ranges=2',
      '--distinct-ranges=0',
      '--index-updates=2',
      '--non-index-updates=3',
      '--delete-inserts=2',
      '--skip-trx=on',
    ],
    options: {
      ...OPTIONS,
      rangeSize: 7,
      pointSelects: 3,
      simpleRanges: 2,
      sumRanges: 0,
      orderRanges: 2,
      distinctRanges: 0,
      indexUpdates: 2,
      nonIndexUpdates: 3,
      deleteInserts: 2,
      skipTrx: true,
    },
  },
  {
    name: 'oltp_read_only, --db-ps-mode=auto, --range-selects=off, --point-selects=4',
    workload: 'oltp_read_only',
    psMode: 'auto',
    args: ['--range-selects=off', '--point-selects=4'],
    options: { ...OPTIONS, rangeSelects: false, pointSelects: 4 },
  },
  {
    // oltp_point_select runs one point select per event whatever --point-selects says.
    name: 'oltp_point_select, --db-ps-mode=disable, --point-selects=5',
    workload: 'oltp_point_select',
    psMode: 'disable',
    args: ['--point-selects=5'],
    options: { ...OPTIONS, pointSelects: 5 },
  },
];

interface Logged {
  command: 'Query' | 'Prepare' | 'Execute';
  text: string;
}

let admin: Connection | undefined;
let savedLog: { output: string; enabled: number } | undefined;
const seenConnections = new Set<number>();

let variantPrepare: Logged[] = [];
let variantCleanup: Logged[] = [];
let variantShowCreate = '';
let defaultPrepare: Logged[] = [];
const defaultShowCreate: string[] = [];
const runs = new Map<string, Logged[]>();

function sysbench(args: string[]): Promise<string> {
  const connection = [
    '--db-driver=mysql',
    `--mysql-host=${BACKEND_HOST}`,
    `--mysql-port=${BACKEND_PORT}`,
    `--mysql-user=${BACKEND_USER}`,
    `--mysql-password=${BACKEND_PASSWORD}`,
    `--mysql-db=${CAPTURE_DB}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(SYSBENCH, [...args.slice(0, 1), ...connection, ...args.slice(1)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`sysbench ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Runs sysbench and returns what its connections sent, in order. Its connections are told apart
 * from everyone else's by their Connect entries naming the capture database; sysbench runs one at
 * a time, so the ones not seen before are this run's.
 */
async function sysbenchLogged(args: string[]): Promise<Logged[]> {
  await sysbench(args);
  const connects = await admin!.query<{ id: bigint | number }[]>(
    `SELECT thread_id AS id FROM mysql.general_log
      WHERE command_type = 'Connect' AND argument LIKE ?`,
    [`% on ${CAPTURE_DB} %`],
  );
  const ids = connects.map(({ id }) => Number(id)).filter((id) => !seenConnections.has(id));
  for (const id of ids) seenConnections.add(id);
  assert.ok(ids.length > 0, `no connection of sysbench ${args.join(' ')} in the general log`);
  // The log table is CSV: rows come back in the order they were logged.
  const rows = await admin!.query<{ id: bigint | number; command: string; text: string }[]>(
    `SELECT thread_id AS id, command_type AS command, CONVERT(argument USING utf8mb4) AS text
       FROM mysql.general_log
      WHERE thread_id IN (?) AND command_type IN ('Query', 'Prepare', 'Execute')`,
    [ids],
  );
  return ids
    .sort((a, b) => a - b)
    .flatMap((id) => rows.filter((row) => Number(row.id) === id))
    .map(({ command, text }) => ({ command: command as Logged['command'], text }));
}

async function showCreateTables(connection: Connection, db: string, tables: number) {
  const statements: string[] = [];
  for (let table = 1; table <= tables; table++) {
    const [row] = await connection.query<Record<string, string>[]>(
      `SHOW CREATE TABLE ${db}.sbtest${table}`,
    );
    statements.push(row!['Create Table']!);
  }
  return statements;
}

before(async () => {
  try {
    await access(SYSBENCH, constants.X_OK);
  } catch {
    assert.fail(
      `${SYSBENCH} is missing: install sysbench 1.0.20, Debian's package sysbench (apt-get install sysbench)`,
    );
  }
  admin = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
  });
  for (const db of DATABASES) {
    await admin.query(`DROP DATABASE IF EXISTS ${db}`);
    await admin.query(`CREATE DATABASE ${db}`);
  }
  const [log] = await admin.query<{ output: string; enabled: bigint | number }[]>(
    'SELECT @@GLOBAL.log_output AS output, @@GLOBAL.general_log AS enabled',
  );
  savedLog = { output: log!.output, enabled: Number(log!.enabled) };
  await admin.query('TRUNCATE TABLE mysql.general_log');
  await admin.query("SET GLOBAL log_output = 'TABLE'");
  await admin.query('SET GLOBAL general_log = 1');

  variantPrepare = await sysbenchLogged(['oltp_read_write', ...VARIANT_SYSBENCH_ARGS, 'prepare']);
  [variantShowCreate = ''] = await showCreateTables(admin, CAPTURE_DB, 1);
  // Two tables, though only one exists: cleanup drops every table up to --tables.
  variantCleanup = await sysbenchLogged(['oltp_read_write', `--tables=${TABLES}`, 'cleanup']);

  const tableArgs = [`--tables=${TABLES}`, `--table-size=${TABLE_SIZE}`];
  defaultPrepare = await sysbenchLogged(['oltp_read_write', ...tableArgs, 'prepare']);
  defaultShowCreate.push(...(await showCreateTables(admin, CAPTURE_DB, TABLES)));

  for (const capture of CAPTURES) {
    const args = [
      capture.workload,
      ...tableArgs,
      '--threads=1',
      `--events=${EVENTS}`,
      '--time=0',
      '--rand-seed=1',
      `--db-ps-mode=${capture.psMode}`,
      ...capture.args,
      'run',
    ];
    runs.set(capture.name, await sysbenchLogged(args));
  }
  await admin.query('SET GLOBAL general_log = 0');
});

after(async () => {
  if (admin === undefined) return;
  try {
    if (savedLog !== undefined) {
      await admin.query('SET GLOBAL general_log = 0');
      // The capture (megabytes of INSERTs) is of no use to anyone else.
      await admin.query('TRUNCATE TABLE mysql.general_log');
      await admin.query('SET GLOBAL log_output = ?', [savedLog.output]);
      await admin.query('SET GLOBAL general_log = ?', [savedLog.enabled]);
    }
    for (const db of DATABASES) await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  } finally {
    await admin.end();
  }
});

function newRandom(): SysbenchRandom {
  return new SysbenchRandom({ ...DEFAULT_RANDOM_OPTIONS, seed: 1 }, 0);
}

// --- Run statements -----------------------------------------------------------------------------

/** A statement with its table number and literal values taken out. */
interface Shape {
  shape: string;
  table: number | null;
  values: string[];
}

// A quoted string, or an integer standing on its own (not the 1 of `k=k+1`, not a table name's).
const LITERAL = /'(?:[^'\\]|\\.)*'|(?<![\w+])\d+/g;

function normalise(text: string): Shape {
  let table: number | null = null;
  const values: string[] = [];
  const shape = text
    .replace(/\bsbtest(\d+)\b/g, (_, n: string) => {
      table = Number(n);
      return 'sbtestN';
    })
    .replace(LITERAL, (literal) => {
      values.push(literal);
      return '?';
    });
  return { shape, table, values };
}

/** sysbench's statements of the oltp_* scripts, by their names in oltp_common.lua. */
const KIND_BY_SHAPE = new Map([
  ['BEGIN', 'begin'],
  ['COMMIT', 'commit'],
  ['SELECT c FROM sbtestN WHERE id=?', 'point_selects'],
  ['SELECT c FROM sbtestN WHERE id BETWEEN ? AND ?', 'simple_ranges'],
  ['SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ? AND ?', 'sum_ranges'],
  ['SELECT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c', 'order_ranges'],
  ['SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c', 'distinct_ranges'],
  ['UPDATE sbtestN SET k=k+1 WHERE id=?', 'index_updates'],
  ['UPDATE sbtestN SET c=? WHERE id=?', 'non_index_updates'],
  ['DELETE FROM sbtestN WHERE id=?', 'deletes'],
  ['INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)', 'inserts'],
]);

function kindOf(shape: Shape, where: string): string {
  const kind = KIND_BY_SHAPE.get(shape.shape);
  assert.ok(kind !== undefined, `${where}: not an oltp statement: ${shape.shape}`);
  return kind;
}

const C_LITERAL = /^'\d{11}(?:-\d{11}){9}'$/;
const PAD_LITERAL = /^'\d{11}(?:-\d{11}){4}'$/;

function assertId(literal: string | undefined, options: OltpOptions, where: string): number {
  assert.match(literal ?? '', /^\d+$/, `${where}: id ${literal}`);
  const id = Number(literal);
  assert.ok(
    id >= 1 && id <= options.tableSize,
    `${where}: ${id} outside [1, ${options.tableSize}]`,
  );
  return id;
}

/** The value ranges of oltp_common.lua, applied alike to sysbench's statements and ours. */
function assertValues(kind: string, { values, table }: Shape, options: OltpOptions, where: string) {
  if (kind === 'begin' || kind === 'commit') {
    assert.deepEqual(values, [], where);
    return;
  }
  assert.ok(table !== null && table >= 1 && table <= options.tables, `${where}: table ${table}`);
  switch (kind) {
    case 'point_selects':
    case 'index_updates':
    case 'deletes':
      assert.equal(values.length, 1, where);
      assertId(values[0], options, where);
      break;
    case 'simple_ranges':
    case 'sum_ranges':
    case 'order_ranges':
    case 'distinct_ranges': {
      assert.equal(values.length, 2, where);
      const start = assertId(values[0], options, where);
      // The end is start + range_size - 1, even past the last row.
      assert.equal(Number(values[1]), start + options.rangeSize - 1, where);
      break;
    }
    case 'non_index_updates':
      assert.equal(values.length, 2, where);
      assert.match(values[0]!, C_LITERAL, where);
      assertId(values[1], options, where);
      break;
    case 'inserts':
      assert.equal(values.length, 4, where);
      assertId(values[0], options, where);
      assertId(values[1], options, where);
      assert.match(values[2]!, C_LITERAL, where);
      assert.match(values[3]!, PAD_LITERAL, where);
      break;
    default:
      assert.fail(`${where}: unexpected kind ${kind}`);
  }
}

/** sysbench picks one table per group of statements; a delete and its insert form one group. */
function groupOf(kind: string): string {
  return kind === 'deletes' || kind === 'inserts' ? 'delete_inserts' : kind;
}

/**
 * The structure inside one event: each group of statements on one table, each insert
 * re-creating the row its delete removed. Returns how many tables the event touched.
 */
function assertEvent(event: Array<{ kind: string } & Shape>, where: string): number {
  const tables = new Set<number>();
  for (let i = 0; i < event.length; i++) {
    const current = event[i]!;
    if (current.table !== null) tables.add(current.table);
    const previous = event[i - 1];
    if (previous === undefined || groupOf(previous.kind) !== groupOf(current.kind)) continue;
    assert.equal(current.table, previous.table, `${where}, statement ${i}: table within a group`);
    if (current.kind === 'inserts') {
      assert.equal(previous.kind, 'deletes', `${where}, statement ${i}`);
      assert.equal(current.values[0], previous.values[0], `${where}, statement ${i}: same id`);
    }
  }
  return tables.size;
}

for (const capture of CAPTURES) {
  test(`${capture.name}: the same statements as sysbench`, () => {
    const logged = runs.get(capture.name);
    assert.ok(logged !== undefined, 'not captured');
    const { options } = capture;

    const random = newRandom();
    const events = Array.from({ length: EVENTS }, () =>
      oltpTransaction(capture.workload, options, random),
    );
    const ours: OltpStatement[] = events.flat();

    let sent: Logged[];
    if (capture.psMode === 'disable') {
      // Everything goes as text, BEGIN and COMMIT included.
      assert.deepEqual(
        logged.filter(({ command }) => command !== 'Query'),
        [],
        'no server-side statements with --db-ps-mode=disable',
      );
      sent = logged;
    } else {
      // Everything is prepared server-side up front, BEGIN and COMMIT included, and then only
      // executed: nothing goes as text. The statements prepared are exactly our SQL.
      assert.deepEqual(
        logged.filter(({ command }) => command === 'Query'),
        [],
        'no text queries with --db-ps-mode=auto',
      );
      const prepared = new Set(logged.filter((l) => l.command === 'Prepare').map((l) => l.text));
      const firstExecute = logged.findIndex(({ command }) => command === 'Execute');
      assert.ok(
        logged.slice(firstExecute).every(({ command }) => command === 'Execute'),
        'all statements are prepared before the first execution',
      );
      // With two tables and fifty events every group has used both tables, so our SQL covers
      // every statement sysbench prepared.
      assert.deepEqual(
        [...new Set(ours.map(({ sql }) => sql))].sort(),
        [...prepared].sort(),
        'the prepared SQL',
      );
      sent = logged.slice(firstExecute);
    }

    assert.equal(sent.length, ours.length, 'statement count of fifty events');
    // Events touching more than one table, sysbench's and ours.
    let theirsMultiTable = 0;
    let oursMultiTable = 0;
    let offset = 0;
    events.forEach((event, e) => {
      const theirsInEvent: Array<{ kind: string } & Shape> = [];
      const oursInEvent: Array<{ kind: string } & Shape> = [];
      event.forEach((statement, i) => {
        const where = `event ${e}, statement ${i}`;
        const theirs = normalise(sent[offset + i]!.text);
        const mine = normalise(inlineParams(statement));
        assert.equal(mine.shape, theirs.shape, where);
        const kind = kindOf(theirs, `sysbench ${where}`);
        assert.equal(statement.kind, kind, where);
        assert.equal(kindOf(mine, where), kind, where);
        assertValues(kind, theirs, options, `sysbench ${where}`);
        assertValues(kind, mine, options, `ours ${where}`);
        // The text form is the prepared SQL with each placeholder replaced by one literal.
        assert.equal(mine.values.length, statement.params.length, where);
        theirsInEvent.push({ kind, ...theirs });
        oursInEvent.push({ kind, ...mine });
      });
      offset += event.length;
      if (assertEvent(theirsInEvent, `sysbench event ${e}`) > 1) theirsMultiTable++;
      if (assertEvent(oursInEvent, `our event ${e}`) > 1) oursMultiTable++;
    });
    // The table is chosen per group, not per event: with several groups per event, some events
    // touch both tables.
    const groups = new Set(ours.map(({ kind }) => groupOf(kind)).filter((k) => k !== 'begin'));
    if (groups.size > 2) {
      assert.ok(theirsMultiTable > 0, 'sysbench uses several tables in one event');
      assert.ok(oursMultiTable > 0, 'we use several tables in one event');
    }
  });
}

// --- Prepare and cleanup ------------------------------------------------------------------------

type PrepareKind = 'create_table' | 'insert' | 'create_index';

function prepareKind(sql: string): PrepareKind {
  if (sql.startsWith('CREATE TABLE ')) return 'create_table';
  if (sql.startsWith('INSERT INTO ')) return 'insert';
  if (sql.startsWith('CREATE INDEX ')) return 'create_index';
  assert.fail(`not a prepare statement: ${sql.slice(0, 80)}`);
}

const collapse = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** A multi-row INSERT's header and rows; every row checked against sysbench's row format. */
function insertRows(sql: string, options: OltpOptions, where: string) {
  const header = /^INSERT INTO sbtest\d+\((?:id, )?k, c, pad\) VALUES/.exec(sql)?.[0];
  assert.ok(header !== undefined, `${where}: header of ${sql.slice(0, 80)}`);
  const body = sql.slice(header.length);
  assert.ok(body.startsWith('(') && body.endsWith(')'), where);
  const rows = body.slice(1, -1).split('),(');
  const row = options.autoInc
    ? /^(\d+), ('[^']*'), ('[^']*')$/
    : /^(\d+), (\d+), ('[^']*'), ('[^']*')$/;
  for (const text of rows) {
    const match = row.exec(text);
    assert.ok(match, `${where}: row (${text})`);
    const [k, c, pad] = match.slice(options.autoInc ? 1 : 2);
    assertId(k, options, `${where}: k`);
    assert.match(c!, C_LITERAL, where);
    assert.match(pad!, PAD_LITERAL, where);
  }
  return { header, rows: rows.map((text) => `(${text})`) };
}

/**
 * Checks a prepare's statements and returns their kinds and DDL. INSERT batches are cut where
 * sysbench cuts them: a batch plus ',' plus the next batch's first row plus a NUL would
 * overflow the buffer, and every batch fits.
 */
function describePrepare(statements: string[], options: OltpOptions, where: string) {
  const kinds = statements.map(prepareKind);
  const ddl = statements.filter((sql) => !sql.startsWith('INSERT')).map(collapse);
  const inserts = statements.filter((sql) => sql.startsWith('INSERT'));
  const batches = inserts.map((sql, i) => insertRows(sql, options, `${where} batch ${i}`));
  batches.forEach((batch, i) => {
    const next = batches[i + 1];
    const length = inserts[i]!.length;
    assert.ok(length + 1 <= BULK_BUFFER_BYTES, `${where} batch ${i} fits`);
    if (next !== undefined && next.header === batch.header) {
      assert.ok(
        length + 1 + next.rows[0]!.length + 1 > BULK_BUFFER_BYTES,
        `${where} batch ${i} full`,
      );
    }
  });
  const rowsPerTable = new Map<string, number>();
  for (const { header, rows } of batches) {
    rowsPerTable.set(header, (rowsPerTable.get(header) ?? 0) + rows.length);
  }
  const headers = [...rowsPerTable.keys()];
  assert.deepEqual(
    [...rowsPerTable.values()],
    Array<number>(options.tables).fill(options.tableSize),
  );
  if (!options.autoInc) {
    // Client-side ids run 1..table_size in order.
    const ids = batches.flatMap(({ rows }) => rows.map((row) => Number(/^\((\d+),/.exec(row)![1])));
    assert.deepEqual(
      ids,
      Array.from({ length: options.tableSize }, (_, i) => i + 1),
    );
  }
  return { kinds, ddl, headers, batchCount: batches.length };
}

async function runOurs(db: string, statements: Iterable<string>): Promise<void> {
  const connection = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: db,
  });
  try {
    for (const sql of statements) await connection.query(sql);
  } finally {
    await connection.end();
  }
}

for (const [name, options, captured, db] of [
  ['default options, 2 tables', OPTIONS, () => defaultPrepare, OURS_DB],
  [
    'ids from the client, KEY xid, no k index, MyISAM, several batches',
    VARIANT_OPTIONS,
    () => variantPrepare,
    OURS_VARIANT_DB,
  ],
] as const) {
  test(`prepare (${name}): the SQL sysbench sends, and the same tables`, async () => {
    const logged = captured();
    assert.ok(logged.length > 0, 'not captured');
    assert.ok(
      logged.every(({ command }) => command === 'Query'),
      'prepare sends text only',
    );
    const theirs = describePrepare(
      logged.map(({ text }) => text),
      options,
      'sysbench',
    );
    const ours = describePrepare([...prepareStatements(options, newRandom())], options, 'ours');
    assert.deepEqual(ours.kinds, theirs.kinds);
    assert.deepEqual(ours.ddl, theirs.ddl);
    assert.deepEqual(ours.headers, theirs.headers);
    assert.equal(ours.batchCount, theirs.batchCount);

    await runOurs(db, prepareStatements(options, newRandom()));
    const expected = db === OURS_DB ? defaultShowCreate : [variantShowCreate];
    assert.deepEqual(await showCreateTables(admin!, db, options.tables), expected);
    const [count] = await admin!.query<{ n: bigint | number; low: number; high: number }[]>(
      `SELECT COUNT(*) AS n, MIN(id) AS low, MAX(id) AS high FROM ${db}.sbtest1`,
    );
    assert.deepEqual(
      { n: Number(count!.n), low: count!.low, high: count!.high },
      { n: options.tableSize, low: 1, high: options.tableSize },
    );
  });
}

test('prepare is lazy: the first statement comes before any row is drawn', () => {
  let draws = 0;
  class CountingRandom extends SysbenchRandom {
    override default(a: number, b: number): number {
      draws++;
      return super.default(a, b);
    }
  }
  const counting = new CountingRandom({ ...DEFAULT_RANDOM_OPTIONS, seed: 1 }, 0);
  const firsts: string[] = [];
  for (const sql of prepareStatements({ ...OPTIONS, tableSize: 2_000_000 }, counting)) {
    if (firsts.length === 0) assert.equal(draws, 0, 'rows drawn before CREATE TABLE');
    firsts.push(sql);
    if (firsts.length === 2) break;
  }
  assert.match(firsts[0]!, /^CREATE TABLE sbtest1\(/);
  assert.ok(firsts[1]!.startsWith('INSERT INTO sbtest1(k, c, pad) VALUES('));
  // One batch's rows drawn (plus the one that did not fit), not two million.
  assert.ok(draws < 3000, `${draws} rows drawn for the first batch`);
});

test('cleanup: the DROPs sysbench sends', () => {
  assert.ok(variantCleanup.length > 0, 'not captured');
  assert.deepEqual(
    variantCleanup.map(({ command, text }) => `${command} ${text}`),
    cleanupStatements({ ...OPTIONS, tables: TABLES }).map((sql) => `Query ${sql}`),
  );
});

// --- Against the server ----------------------------------------------------------------------

test('one transaction of each workload runs on the server, as text and as prepared statements', async () => {
  const connection = await mariadb.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: OURS_DB,
  });
  try {
    // The tables come from our own prepare, which may have been skipped if that test failed.
    const [exists] = await connection.query<{ n: bigint | number }[]>(
      `SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ?`,
      [OURS_DB],
    );
    if (Number(exists!.n) !== TABLES) {
      for (const sql of cleanupStatements(OPTIONS)) await connection.query(sql);
      for (const sql of prepareStatements(OPTIONS, newRandom())) await connection.query(sql);
    }
    const random = newRandom();
    for (const workload of WORKLOADS) {
      for (const statement of oltpTransaction(workload, OPTIONS, random)) {
        await connection.query(inlineParams(statement));
      }
      for (const statement of oltpTransaction(workload, OPTIONS, random)) {
        await connection.execute(statement.sql, statement.params);
      }
    }
    // Each delete is followed by the insert of the same id: no row lost or added.
    for (let table = 1; table <= TABLES; table++) {
      const [row] = await connection.query<{ n: bigint | number }[]>(
        `SELECT COUNT(*) AS n FROM sbtest${table}`,
      );
      assert.equal(Number(row!.n), TABLE_SIZE);
    }
  } finally {
    await connection.end();
  }
});

test('inlineParams: integers bare, strings quoted and escaped, one literal per placeholder', () => {
  const statement = {
    kind: 'inserts',
    sql: 'INSERT INTO t VALUES (?, ?, ?)',
    params: [7, "a'b", 'c\\d'],
  };
  assert.equal(inlineParams(statement), "INSERT INTO t VALUES (7, 'a\\'b', 'c\\\\d')");
  assert.throws(() => inlineParams({ ...statement, params: [1, 2] }));
  assert.throws(() => inlineParams({ ...statement, params: [1, 2, 3, 4] }));
  assert.throws(() => inlineParams({ ...statement, params: [1.5, 'x', 'y'] }));
});
