/**
 * Reads from information_schema what the statement text does not say about tables: which base
 * tables a view reads, which tables a table's triggers write, which child tables a parent's
 * cascading foreign keys write, which tables enabled events write (the server's scheduler runs them where the proxy cannot see), and in which
 * tables a MERGE table's rows are stored (its UNION, from SHOW CREATE TABLE: information_schema
 * does not show it), which stored procedures run no DDL (a CALL of one needs no reload of all
 * this) and what they write, and which tables' triggers may create a (temporary) table. The
 * result is a plain SchemaSnapshot for TableDependencies.
 *
 * Whatever cannot be known is recorded as '*' (UNKNOWN_TABLE), never left out: a view whose
 * definition is hidden or not understood makes its readers uncacheable, a trigger whose body is
 * not understood makes writes to its table invalidate everything. What information_schema hides
 * entirely cannot be recorded at all, so the connection should belong to a user who may see it
 * (see loadSchemaSnapshot). A table whose engine may keep its rows elsewhere (CONNECT, FEDERATED,
 * SPIDER...) or is not known is recorded as stored in '*'.
 */
import { UNKNOWN_TABLE } from '../cache/table-dependencies.ts';
import type { PointKey, SchemaSnapshot, TemporaryProcedure } from '../cache/table-dependencies.ts';
import {
  COLON,
  COMMA,
  DOT,
  EQUALS,
  LEFT_PARENTHESIS,
  RIGHT_PARENTHESIS,
  SEMICOLON,
} from '../sql/char-codes.ts';
import { MAX_KEY_BYTES } from '../sql/key-bytes.ts';
import { keyTextCollation } from '../sql/key-text.ts';
import { KeyKind } from '../sql/point-access.ts';
import { Kw } from '../sql/keywords.ts';
import { classify, serverVersionNumber } from '../sql/statement-classifier.ts';
import type {
  ClassifyOptions,
  LowerCaseTableNames,
  TableRef,
} from '../sql/statement-classifier.ts';
import { catalogNameOf, routineNameOf } from '../sql/name-encoding.ts';
import { isSystemSchema } from '../sql/table-ref.ts';
import { TokenKind, tokenize } from '../sql/tokenizer.ts';
import type { TokenList } from '../sql/tokenizer.ts';
import type { MysqlConnection } from './mysql-connection.ts';
import type { KeptProgramRows } from './kept-program-rows.ts';

export interface SchemaMetadataOptions {
  /** The server's lower_case_table_names; read from the server when undefined. */
  lowerCaseTableNames?: LowerCaseTableNames | undefined;
  /** As ClassifyOptions.serverVersion; read from the server (@@version) when undefined. */
  serverVersion?: number | undefined;
  /**
   * ANSI_QUOTES of the loading session, for view definitions. Servers print those with backtick
   * identifiers and single-quoted strings whatever the mode, so false (the default) fits.
   */
  ansiQuotes?: boolean;
  /**
   * Rows of routines and events kept from the caller's earlier loads while no DDL may have
   * changed them (see KeptProgramRows); read every time when undefined.
   */
  programRows?: KeptProgramRows | undefined;
}

/**
 * Engines known to keep a table's rows to themselves, upper-cased: a write to such a table
 * changes only it, a read of it reads only it. Any other engine (CONNECT, FEDERATED, SPIDER,
 * OQGRAPH read and write other tables, other servers or files; a table whose engine is missing
 * shows none) may store its rows anywhere, so its readers are not cached and its writes
 * invalidate everything. MRG_MYISAM is followed through its UNION.
 */
const SELF_CONTAINED_ENGINES = new Set([
  'INNODB',
  'MYISAM',
  'ARIA',
  'MEMORY',
  'HEAP',
  'CSV',
  'ARCHIVE',
  'BLACKHOLE',
  'ROCKSDB',
  'S3',
  'MROONGA',
  'SEQUENCE',
]);
const MERGE_ENGINE = 'MRG_MYISAM';

/** All the loader needs of a connection. */
export type MetadataConnection = Pick<MysqlConnection, 'queryRows'>;

/** Written in the SQL as well as checked in code, so the server skips them early. */
const NOT_SYSTEM = (column: string): string =>
  `${column} NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`;

const CASCADING_RULES = new Set(['CASCADE', 'SET NULL', 'SET DEFAULT']);

/**
 * Loads the snapshot. Not atomic: DDL running meanwhile may be half seen, so the caller reloads
 * after DDL it relays. information_schema shows only what the connection's user may see:
 * - tables and views it has no privilege on are left out (their readers are then not cached,
 *   but the triggers and foreign keys of such tables cannot be followed);
 * - a view's definition is empty without SHOW VIEW: the view is recorded as reading '*';
 * - triggers are listed only with the TRIGGER privilege (MariaDB 10.11 was seen to list them
 *   with INSERT or UPDATE too, not with SELECT alone): nothing tells that one is hidden;
 * - foreign keys are read from InnoDB's dictionary (INNODB_SYS_FOREIGN) with PROCESS, which
 *   opens no table; without it from information_schema's views, which open every table:
 * - foreign key rules (REFERENTIAL_CONSTRAINTS) need some privilege beyond SELECT; the keys
 *   themselves show in KEY_COLUMN_USAGE with SELECT alone, and a key whose rules are hidden is
 *   taken as cascading.
 * - events are listed only with the EVENT privilege on their schema: a hidden event's writes
 *   cannot be followed either.
 * Global SELECT, SHOW VIEW, TRIGGER and EVENT let the user see everything that matters, and
 * PROCESS lets the load open no table.
 */
export async function loadSchemaSnapshot(
  connection: MetadataConnection,
  options: SchemaMetadataOptions,
): Promise<SchemaSnapshot> {
  let { lowerCaseTableNames, serverVersion } = options;
  if (lowerCaseTableNames === undefined || serverVersion === undefined) {
    const [row] = await connection.queryRows('SELECT @@lower_case_table_names, @@version');
    lowerCaseTableNames ??= lowerCaseTableNamesOf(row?.[0] ?? null);
    serverVersion ??= serverVersionNumber(row?.[1] ?? '') ?? undefined;
  }
  const lctn = lowerCaseTableNames;
  // Names in the form the router reads statements' names in (see name-encoding.ts); null for
  // one no statement's spelling is resolved to. Such a table is left out, as the router never
  // asks about it; where it is read (through a view or a MERGE table) it stands for the unknown
  // table; where it is written (by a trigger, a cascade, an event) it is left out too: no
  // result read from it is ever stored.
  const qualify = (schema: string, name: string): string | null => {
    const owner = catalogNameOf(schema, lctn);
    const table = catalogNameOf(name, lctn);
    return owner === null || table === null ? null : `${owner}.${table}`;
  };
  const reference =
    (defaultSchema: string) =>
    (table: TableRef): string | null =>
      qualify(table.schema ?? defaultSchema, table.name);

  const kept = options.programRows;
  const programRows = (sql: string): Promise<Array<Array<string | null>>> =>
    kept === undefined ? connection.queryRows(sql) : kept.read(connection, sql);

  // One round trip: the client pipelines the queries.
  const [
    tables,
    views,
    triggers,
    innodbForeignKeys,
    events,
    routines,
    routineCount,
    udfs,
    primaryKeys,
    otherUniqueKeys,
    collations,
  ] = await Promise.all([
    connection.queryRows(
      `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES WHERE ${NOT_SYSTEM('TABLE_SCHEMA')}`,
    ),
    connection.queryRows(
      `SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE ${NOT_SYSTEM('TABLE_SCHEMA')}`,
    ),
    connection.queryRows(
      `SELECT TRIGGER_SCHEMA, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT, SQL_MODE, ACTION_TIMING, EVENT_MANIPULATION FROM information_schema.TRIGGERS WHERE ${NOT_SYSTEM('EVENT_OBJECT_SCHEMA')}`,
    ),
    // InnoDB's own list of foreign keys opens no table; it needs PROCESS (see innodbCascades).
    connection
      .queryRows('SELECT FOR_NAME, REF_NAME, TYPE FROM information_schema.INNODB_SYS_FOREIGN')
      .catch(() => null),
    // Listed only with the EVENT privilege on their schema. Any schema's: they may write ours.
    programRows(
      `SELECT EVENT_SCHEMA, EVENT_DEFINITION, SQL_MODE FROM information_schema.EVENTS WHERE STATUS <> 'DISABLED'`,
    ),
    // A body is shown to its definer and to accounts with SHOW CREATE ROUTINE (or global
    // SELECT); a hidden one comes as NULL, and that procedure is taken to run DDL. Every
    // schema's, the system ones too: an unqualified CALL may run in any (see ddlFreeProcedures).
    programRows(
      `SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, ROUTINE_DEFINITION, SQL_MODE FROM information_schema.ROUTINES`,
    ),
    // Whether those are all there are: ROUTINES leaves out what the account may not see. The
    // engine keeps the count: no row is read.
    connection
      .queryRows('SELECT COUNT(*) FROM mysql.proc')
      .then((rows) => Number(rows[0]?.[0] ?? NaN))
      .catch(() => NaN),
    // Loadable functions (UDFs): an unqualified call of one of these names runs it, not the
    // stored function of the same name. Null when they cannot be read.
    programRows('SELECT name FROM mysql.func')
      .then((rows) => new Set(rows.map(([name]) => (name ?? '').toLowerCase())))
      .catch(() => null),
    // The primary keys' columns, from InnoDB's dictionary (PROCESS; opens no table).
    connection.queryRows(INNODB_PRIMARY_KEYS).catch(() => null),
    // The tables with another unique key: the same dictionary.
    connection.queryRows(INNODB_OTHER_UNIQUE_KEYS).catch(() => null),
    // The collations' names by id, for keys of strings: the full names of all (10.10 and later
    // name theirs per character set), or the older list's.
    connection
      .queryRows(KEY_TEXT_COLLATIONS_BY_ID)
      .catch(() => connection.queryRows(OLDER_KEY_TEXT_COLLATIONS_BY_ID))
      .catch(() => null),
  ]);

  const snapshot: SchemaSnapshot = {
    baseTables: new Map(),
    views: new Map(),
    triggerWrites: new Map(),
    cascades: new Map(),
    writingViews: new Set(),
    cacheRequestingViews: new Set(),
    storedIn: new Map(),
  };

  // Definitions (views, MERGE tables, column defaults) as the server prints them.
  const viewOptions: ClassifyOptions = {
    ansiQuotes: options.ansiQuotes ?? false,
    lowerCaseTableNames: lctn,
    serverVersion,
  };

  const writtenBehind = new Set<string>();
  const mergeTables: Array<[schema: string, name: string, key: string]> = [];
  for (const [schema, name, type, engine] of tables) {
    if (schema == null || name == null || isSystemSchema(schema)) continue;
    // A session's temporary tables are its own; information_schema's are no user data.
    if (type === 'TEMPORARY' || type === 'SYSTEM VIEW') continue;
    const key = qualify(schema, name);
    if (key === null) continue;
    // Unknown until its VIEWS row is read: a view listed here but not there stays unknown.
    if (type === 'VIEW') {
      snapshot.views.set(key, [UNKNOWN_TABLE]);
      // Until its definition shows otherwise, reading it may write.
      snapshot.writingViews!.add(key);
    }
    // BASE TABLE, SYSTEM VERSIONED, SEQUENCE, and whatever a server adds: stored rows.
    else {
      snapshot.baseTables.set(key, engine ?? '');
      // An INSERT into a table whose column defaults to NEXTVAL(s) advances s, and which tables
      // do is only in the column definitions (information_schema.COLUMNS opens every table to
      // show them): a sequence is taken as written behind the proxy's back, never cached.
      if (type === 'SEQUENCE') writtenBehind.add(key);
      const kind = (engine ?? '').toUpperCase();
      if (kind === MERGE_ENGINE) mergeTables.push([schema, name, key]);
      else if (!SELF_CONTAINED_ENGINES.has(kind)) {
        snapshot.storedIn!.set(key, [UNKNOWN_TABLE]);
      }
    }
  }

  // A MERGE table's UNION is only in its definition; one SHOW CREATE TABLE each, pipelined.
  const mergeDefinitions = await Promise.all(
    mergeTables.map(([schema, name]) =>
      connection
        .queryRows(`SHOW CREATE TABLE ${quoteName(schema)}.${quoteName(name)}`)
        .then((rows) => rows[0]?.[1] ?? null)
        // Dropped meanwhile, or a UNION table is missing or not MyISAM: the server cannot say.
        .catch(() => null),
    ),
  );
  mergeTables.forEach(([schema, , key], index) => {
    const union = mergeUnion(mergeDefinitions[index] ?? null, viewOptions);
    const stores = union?.map(reference(schema));
    snapshot.storedIn!.set(
      key,
      stores === undefined || stores.includes(null) ? [UNKNOWN_TABLE] : (stores as string[]),
    );
  });

  // Views that would write nothing but for the stored functions they call: judged once the
  // routines are known (below). `owner`: the view's schema, an unqualified call's.
  const callingViews = new Map<string, { calls: readonly TableRef[]; owner: string }>();
  for (const [schema, name, definition] of views) {
    if (schema == null || name == null || isSystemSchema(schema)) continue;
    const key = qualify(schema, name);
    if (key === null) continue;
    snapshot.views.set(key, viewReads(definition ?? null, reference(schema), viewOptions));
    if (definition != null && definition.trim() !== '') {
      const info = classify(definition, viewOptions);
      if (info.kind === 'select' && !info.multiStatement) {
        if (!info.writesEverything) snapshot.writingViews!.delete(key);
        else if (!info.writesEverythingWithoutFunctions && info.routineCalls !== null)
          callingViews.set(key, { calls: info.routineCalls, owner: schema });
      }
      if (info.sqlCache === 'SQL_CACHE') snapshot.cacheRequestingViews!.add(key);
    }
  }

  // Views whose reading may write, through the views they read: a stored function in one may
  // create a table, as in a procedure's or a trigger's body.
  const writingViews = new Set(snapshot.writingViews);
  for (let changed = true; changed;) {
    changed = false;
    for (const [view, reads] of snapshot.views) {
      if (writingViews.has(view) || !reads.some((read) => writingViews.has(read))) continue;
      writingViews.add(view);
      changed = true;
    }
  }
  // Reading every body costs milliseconds per load with a few hundred routines: the rows kept
  // from an earlier load (the same array, see KeptProgramRows) are read again only when what
  // else the reading depends on changed.
  const context = [
    routineCount,
    lctn,
    serverVersion,
    udfs === null ? null : [...udfs].sort().join(','),
    [...writingViews].sort().join(','),
  ].join('|');
  const remembered = routineKnowledgeMemo.get(routines);
  const procedures =
    remembered?.context === context
      ? remembered.knowledge
      : ddlFreeProcedures(
          routines,
          routineCount,
          udfs,
          lctn,
          serverVersion,
          reference,
          writingViews,
        );
  routineKnowledgeMemo.set(routines, { context, knowledge: procedures });
  snapshot.ddlFreeProcedures = procedures.free;
  snapshot.ddlFreeNames = procedures.freeNames;
  if (udfs !== null) snapshot.udfNames = new Set(udfs);
  snapshot.procedureWrites = procedures.writes;
  snapshot.temporaryProcedures = procedures.temporaryOnly;
  snapshot.temporaryProcedureNames = procedures.temporaryNames;

  // A view whose stored functions all run no DDL and write no table, through whatever they
  // call, writes nothing when read and creates no table: it is no writing view. What its
  // functions read, and when they run, is not in its definition: its results are never stored
  // (functionViews). The routines above were judged with it still among the writing views, so
  // a routine that reads one is taken to run DDL, as before: conservative, and no fixed point
  // of views and routines is needed.
  snapshot.functionViews = new Set();
  for (const [view, { calls, owner }] of callingViews) {
    if (functionWritesOf(calls, owner, procedures, lctn)?.length !== 0) continue;
    snapshot.writingViews!.delete(view);
    snapshot.functionViews.add(view);
  }

  // What the stored functions a body calls write, when every one is known (see
  // functionWritesOf); `owner`, the body's own schema, is an unqualified call's.
  const functionWrites =
    (owner: string) =>
    (calls: readonly TableRef[] | null): string[] | null =>
      functionWritesOf(calls, owner, procedures, lctn);

  const triggerWrites = new Map<string, Set<string>>();
  // The columns of each table whose value a BEFORE INSERT or UPDATE trigger may set, and the
  // tables one of whose such triggers cannot be read (any column).
  const triggerSetColumns = new Map<string, Set<string>>();
  const triggerSetsAny = new Set<string>();
  snapshot.temporaryTableTriggers = new Set();
  for (const [triggerSchema, schema, table, body, sqlMode, timing, event] of triggers) {
    if (triggerSchema == null || schema == null || table == null || isSystemSchema(schema)) {
      continue;
    }
    const owner = catalogNameOf(triggerSchema, lctn);
    const key = qualify(schema, table);
    if (
      key !== null &&
      (owner === null ||
        triggerMayCreateTables(body ?? null, owner, sqlMode ?? '', procedures, {
          lowerCaseTableNames: lctn,
          serverVersion,
        }))
    ) {
      snapshot.temporaryTableTriggers.add(key);
    }
    const written = triggerBodyWrites(
      body ?? null,
      reference(triggerSchema),
      functionWrites(triggerSchema),
      sqlMode ?? '',
      { lowerCaseTableNames: lctn, serverVersion },
    );
    addAll(triggerWrites, qualify(schema, table), written);
    if (key !== null && timing === 'BEFORE' && (event === 'INSERT' || event === 'UPDATE')) {
      const set = newColumnsSet(body ?? null, sqlMode ?? '', {
        lowerCaseTableNames: lctn,
        serverVersion,
      });
      if (set === null) triggerSetsAny.add(key);
      else addAll(triggerSetColumns, key, set);
    }
  }
  for (const [table, written] of triggerWrites) {
    // Kept even when empty: a table with triggers is one whose writes may change session state.
    snapshot.triggerWrites.set(table, written.has(UNKNOWN_TABLE) ? [UNKNOWN_TABLE] : [...written]);
  }

  // An event's body is a statement or a block, like a trigger's.
  for (const [schema, body, sqlMode] of events) {
    if (schema == null) continue;
    const written = triggerBodyWrites(
      body ?? null,
      reference(schema),
      functionWrites(schema),
      sqlMode ?? '',
      {
        lowerCaseTableNames: lctn,
        serverVersion,
      },
    );
    for (const table of written) writtenBehind.add(table);
  }
  snapshot.writtenBehind = writtenBehind.has(UNKNOWN_TABLE) ? [UNKNOWN_TABLE] : [...writtenBehind];

  const pointKeys = innodbPointKeys(primaryKeys, otherUniqueKeys, collations);
  if (pointKeys !== null) {
    snapshot.pointKeys = new Map();
    for (const [[schema, name], pointKey] of pointKeys) {
      if (isSystemSchema(schema)) continue;
      const key = qualify(schema, name);
      if (key === null || !snapshot.baseTables.has(key)) continue;
      const set = triggerSetColumns.get(key);
      const movedByTriggers =
        triggerSetsAny.has(key) || pointKey.columns.some((column) => set?.has(column) ?? false);
      snapshot.pointKeys.set(key, { ...pointKey, movedByTriggers });
    }
  }

  const cascades = new Map<string, Set<string>>();
  const fromInnodb = innodbCascades(innodbForeignKeys);
  if (fromInnodb !== null) {
    for (const [child, parent] of fromInnodb) {
      if (isSystemSchema(child[0]) || isSystemSchema(parent[0])) continue;
      addAll(cascades, qualify(parent[0], parent[1]), [qualify(child[0], child[1])]);
    }
    for (const [parent, children] of cascades) snapshot.cascades.set(parent, [...children]);
    return snapshot;
  }
  // information_schema's views of the keys open every table they look at (through its engine,
  // not just its definition, which also pins what the engine cached about it): read only when
  // InnoDB's own list cannot be.
  const [foreignKeys, rules] = await Promise.all([
    connection.queryRows(
      `SELECT DISTINCT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, TABLE_SCHEMA, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE REFERENCED_TABLE_NAME IS NOT NULL AND ${NOT_SYSTEM('TABLE_SCHEMA')}`,
    ),
    connection.queryRows(
      `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME, UPDATE_RULE, DELETE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE ${NOT_SYSTEM('CONSTRAINT_SCHEMA')}`,
    ),
  ]);
  const ruled = new Set<string>();
  for (const [schema, table, constraint, parentSchema, parent, onUpdate, onDelete] of rules) {
    if (schema == null || table == null || parentSchema == null || parent == null) continue;
    if (isSystemSchema(schema) || isSystemSchema(parentSchema)) continue;
    ruled.add(constraintKey(schema, table, constraint ?? null));
    if (CASCADING_RULES.has(onUpdate ?? '') || CASCADING_RULES.has(onDelete ?? '')) {
      addAll(cascades, qualify(parentSchema, parent), [qualify(schema, table)]);
    }
  }
  for (const [schema, table, constraint, tableSchema, parentSchema, parent] of foreignKeys) {
    if (schema == null || table == null || tableSchema == null) continue;
    if (parentSchema == null || parent == null) continue;
    if (isSystemSchema(tableSchema) || isSystemSchema(parentSchema)) continue;
    // Its rules were hidden from this user: it may cascade.
    if (!ruled.has(constraintKey(schema, table, constraint ?? null))) {
      addAll(cascades, qualify(parentSchema, parent), [qualify(tableSchema, table)]);
    }
  }
  for (const [parent, children] of cascades) snapshot.cascades.set(parent, [...children]);

  return snapshot;
}

/** InnoDB's foreign key TYPE bits for ON DELETE CASCADE, SET NULL, ON UPDATE CASCADE, SET NULL. */
const INNODB_CASCADING_TYPES = 1 | 2 | 4 | 8;

/**
 * [child, parent] ([schema, table] each) of every cascading foreign key in InnoDB's dictionary
 * (INNODB_SYS_FOREIGN; InnoDB is the engine with foreign keys); null when it could not be read
 * (no PROCESS privilege, the plugin disabled) or a name in it cannot be decoded: then
 * information_schema's views must be read instead.
 */
function innodbCascades(
  rows: Array<Array<string | null>> | null,
): Array<[child: [string, string], parent: [string, string]]> | null {
  if (rows === null) return null;
  const keys: Array<[[string, string], [string, string]]> = [];
  for (const [childName, parentName, type] of rows) {
    const child = innodbTableName(childName ?? null);
    const parent = innodbTableName(parentName ?? null);
    const bits = Number(type);
    if (child === null || parent === null || !Number.isInteger(bits)) return null;
    // A table ALTER TABLE is building: it takes the real one's name when done (DDL, reloaded).
    if (child[1].startsWith('#sql') || parent[1].startsWith('#sql')) continue;
    if ((bits & INNODB_CASCADING_TYPES) !== 0) keys.push([child, parent]);
  }
  return keys;
}

const INNODB_PRIMARY_KEYS =
  'SELECT t.NAME, f.NAME, c.MTYPE, c.PRTYPE, c.LEN, f.POS FROM information_schema.INNODB_SYS_INDEXES i' +
  ' JOIN information_schema.INNODB_SYS_TABLES t ON t.TABLE_ID = i.TABLE_ID' +
  ' JOIN information_schema.INNODB_SYS_FIELDS f ON f.INDEX_ID = i.INDEX_ID' +
  ' LEFT JOIN information_schema.INNODB_SYS_COLUMNS c ON c.TABLE_ID = i.TABLE_ID AND c.NAME = f.NAME' +
  " WHERE i.NAME = 'PRIMARY'";

/**
 * The tables with a unique key besides the primary key, in InnoDB's dictionary: an index whose
 * TYPE has DICT_UNIQUE (2), or DICT_VIRTUAL (128), as the server's long UNIQUE keys (a BLOB's,
 * or USING HASH) are: InnoDB sees a plain index over a hidden virtual column `DB_ROW_HASH_n`
 * and the server checks the uniqueness itself. An index over a virtual column of the user's
 * counts too, as does the unique index InnoDB adds to a table with a FULLTEXT key
 * (FTS_DOC_ID_INDEX): each only costs an upsert its row bound.
 */
const INNODB_OTHER_UNIQUE_KEYS =
  'SELECT DISTINCT t.NAME FROM information_schema.INNODB_SYS_INDEXES i' +
  ' JOIN information_schema.INNODB_SYS_TABLES t ON t.TABLE_ID = i.TABLE_ID' +
  " WHERE i.NAME <> 'PRIMARY' AND (i.TYPE & 130) <> 0";

/** The collations a key of strings may have (key-text.ts), by id. */
const KEY_TEXT_CHARACTER_SETS = "('latin1', 'ascii', 'utf8', 'utf8mb3', 'utf8mb4')";
const KEY_TEXT_COLLATIONS_BY_ID =
  'SELECT ID, FULL_COLLATION_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY' +
  ` WHERE CHARACTER_SET_NAME IN ${KEY_TEXT_CHARACTER_SETS}`;
const OLDER_KEY_TEXT_COLLATIONS_BY_ID =
  'SELECT ID, COLLATION_NAME FROM information_schema.COLLATIONS' +
  ` WHERE CHARACTER_SET_NAME IN ${KEY_TEXT_CHARACTER_SETS}`;

/** InnoDB's main type of integers (DATA_INT), and its flag of unsigned ones (DATA_UNSIGNED). */
const INNODB_DATA_INT = 6;
const INNODB_UNSIGNED = 512;
/**
 * InnoDB's main types of strings of a character set: DATA_VARCHAR and DATA_CHAR (latin1's),
 * DATA_VARMYSQL and DATA_MYSQL (any other's); the server's type codes of VARCHAR, VAR_STRING
 * and CHAR (the low byte of PRTYPE: ENUM and SET, kept as integers, say CHAR there too); and
 * where PRTYPE keeps the column's collation.
 */
const INNODB_STRING_TYPES = new Set([1, 2, 12, 13]);
const STRING_TYPES = new Set([15, 253, 254]);
/**
 * InnoDB's main types of binary strings, DATA_FIXBINARY (BINARY) and DATA_BINARY (VARBINARY),
 * and the server's type codes of BINARY (the CHAR code) and VARBINARY (the VARCHAR code); their
 * collation is `binary`, whose id this is.
 */
const INNODB_FIXBINARY = 3;
const INNODB_BINARY = 4;
const BINARY_TYPE = 254;
const VARBINARY_TYPE = 15;
const BINARY_COLLATION = 63;
const INNODB_COLLATION_SHIFT = 16;
const INNODB_COLLATION_MASK = 0x7fff;
/**
 * The server's type codes (the low byte of PRTYPE) of TINYINT, SMALLINT, INT, BIGINT and
 * MEDIUMINT. InnoDB keeps YEAR, ENUM and SET as integers too, but `y = 5` means 2005 to a YEAR
 * column: those are in no point key.
 */
const INTEGER_TYPES = new Set([1, 2, 3, 8, 9]);
const PLAIN_COLUMN = /^[A-Za-z0-9_]+$/;

/**
 * What a key column of InnoDB's main type `mtype` and PRTYPE `prtype` holds when it holds bytes
 * (BINARY, VARBINARY: key-bytes.ts), or -1.
 */
function bytesKind(mtype: number, prtype: number): KeyKind | -1 {
  if (((prtype >>> INNODB_COLLATION_SHIFT) & INNODB_COLLATION_MASK) !== BINARY_COLLATION) return -1;
  if (mtype === INNODB_FIXBINARY && (prtype & 0xff) === BINARY_TYPE) return KeyKind.FIXED_BYTES;
  if (mtype === INNODB_BINARY && (prtype & 0xff) === VARBINARY_TYPE) return KeyKind.BYTES;
  return -1;
}

/**
 * The point keys (SchemaSnapshot.pointKeys) in InnoDB's dictionary: primary keys of integer
 * columns, columns of bytes (BINARY, VARBINARY) and string columns of a collation key-text.ts
 * folds (`collations`: their names by id; null when they could not be read), one or several
 * ([schema, table] each, as innodbTableName reads it); null when they could not be read. Partitions (`t#P#p0`), tables
 * ALTER TABLE is building and names that need decoding are left out. `otherUnique` lists the
 * tables with another unique key (INNODB_OTHER_UNIQUE_KEYS); null when it could not be read, and
 * then no key is taken as its table's only one.
 */
function innodbPointKeys(
  rows: Array<Array<string | null>> | null,
  otherUnique: Array<Array<string | null>> | null,
  collations: Array<Array<string | null>> | null,
): Array<[table: [string, string], key: PointKey]> | null {
  if (rows === null) return null;
  const collationNames = new Map((collations ?? []).map(([id, name]) => [Number(id), name ?? '']));
  const withOtherKeys =
    otherUnique === null ? null : new Set(otherUnique.map(([name]) => name ?? ''));
  const keys = new Map<string, Array<Array<string | null>>>();
  for (const row of rows) {
    const name = row[0] ?? null;
    if (name === null) continue;
    const fields = keys.get(name);
    if (fields === undefined) keys.set(name, [row]);
    else fields.push(row);
  }
  const pointKeys: Array<[[string, string], PointKey]> = [];
  for (const [name, fields] of keys) {
    if (name.includes('#') || name.includes('@')) continue;
    const table = innodbTableName(name);
    if (table === null) continue;
    // In the key's order: a key's row is named by its values in that order (row-slots.ts).
    fields.sort((a, b) => Number(a[5]) - Number(b[5]));
    const columns: string[] = [];
    const kinds: KeyKind[] = [];
    const max: number[] = [];
    for (const [, column, mtype, prtype, len, position] of fields) {
      if (column == null || !PLAIN_COLUMN.test(column)) break;
      if (Number(position) !== columns.length) break;
      const bytes = Number(len);
      const type = Number(prtype);
      const binary = bytesKind(Number(mtype), type);
      if (INNODB_STRING_TYPES.has(Number(mtype)) && STRING_TYPES.has(type & 0xff)) {
        const collation = (type >>> INNODB_COLLATION_SHIFT) & INNODB_COLLATION_MASK;
        const characters = keyTextCollation(collationNames.get(collation) ?? '', bytes);
        if (characters < 0) break;
        kinds.push(KeyKind.TEXT);
        max.push(characters);
      } else if (binary !== -1) {
        if (bytes < 1 || bytes > MAX_KEY_BYTES) break;
        kinds.push(binary);
        max.push(bytes);
      } else {
        if (Number(mtype) !== INNODB_DATA_INT || !INTEGER_TYPES.has(type & 0xff)) break;
        if (![1, 2, 3, 4, 8].includes(bytes)) break;
        const bits = (type & INNODB_UNSIGNED) !== 0 ? 8 * bytes : 8 * bytes - 1;
        kinds.push(KeyKind.INTEGER);
        max.push(Math.min(2 ** bits - 1, Number.MAX_SAFE_INTEGER));
      }
      columns.push(column.toLowerCase());
    }
    if (columns.length !== fields.length) continue;
    const soleUniqueKey = withOtherKeys !== null && !withOtherKeys.has(name);
    pointKeys.push([table, { columns, kinds, max, soleUniqueKey, movedByTriggers: false }]);
  }
  return pointKeys;
}

const ENCODED_CHARACTER = /@([0-9a-f]{4})/g;

/**
 * "schema/table" as InnoDB writes it, in the server's file-name encoding: a character other than
 * a letter, digit or _ is @ and four hex digits. Some letters take a shorter form (é is @0p),
 * which is not decoded here: null.
 */
function innodbTableName(name: string | null): [string, string] | null {
  if (name === null) return null;
  const parts = name.split('/');
  if (parts.length !== 2) return null;
  const decoded = parts.map((part) =>
    part.replace(ENCODED_CHARACTER, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
  );
  // Every @ of the encoding was one of those four-digit forms.
  const encodings = parts.map((part) => part.split('@').length - 1);
  const fourDigit = parts.map((part) => [...part.matchAll(ENCODED_CHARACTER)].length);
  if (encodings[0] !== fourDigit[0] || encodings[1] !== fourDigit[1]) return null;
  return [decoded[0]!, decoded[1]!];
}

function quoteName(name: string): string {
  return '`' + name.replaceAll('`', '``') + '`';
}

/**
 * The tables of a MERGE table's `UNION=(...)` in its SHOW CREATE TABLE text, unqualified ones
 * as written (in the MERGE table's schema); [] when it has none (a MERGE table may be empty),
 * null when the text is missing or not understood.
 */
function mergeUnion(definition: string | null, options: ClassifyOptions): TableRef[] | null {
  if (definition === null) return null;
  const tokens = tokenize(definition, options);
  if (tokens.error !== null) return null;
  for (let i = 0; i < tokens.count; i++) {
    if (!isWord(tokens, i, Kw.UNION)) continue;
    let at = i + 1;
    if (isOperator(tokens, at, EQUALS)) at++;
    if (!isOperator(tokens, at, LEFT_PARENTHESIS)) return null;
    at++;
    const union: TableRef[] = [];
    for (;;) {
      if (!isName(tokens, at))
        return union.length === 0 && isRightParenthesis(tokens, at) ? [] : null;
      let table: TableRef = { schema: null, name: tokens.identifier(at) };
      at++;
      if (isOperator(tokens, at, DOT) && isName(tokens, at + 1)) {
        table = { schema: table.name, name: tokens.identifier(at + 1) };
        at += 2;
      }
      union.push(table);
      if (isOperator(tokens, at, COMMA)) at++;
      else return isRightParenthesis(tokens, at) ? union : null;
    }
  }
  return [];
}

function isRightParenthesis(tokens: TokenList, index: number): boolean {
  return isOperator(tokens, index, RIGHT_PARENTHESIS);
}

function lowerCaseTableNamesOf(value: string | null): LowerCaseTableNames {
  const number = value === null ? NaN : Number(value);
  if (number === 0 || number === 1 || number === 2) return number;
  throw new Error(`unexpected lower_case_table_names: ${value}`);
}

function constraintKey(schema: string, table: string, constraint: string | null): string {
  return `${schema}\0${table}\0${constraint ?? ''}`;
}

/** Adds `values` to `key`'s set; names no statement is resolved to (null) are left out. */
function addAll(
  map: Map<string, Set<string>>,
  key: string | null,
  values: Iterable<string | null>,
): void {
  if (key === null) return;
  let set = map.get(key);
  if (set === undefined) {
    set = new Set();
    map.set(key, set);
  }
  for (const value of values) if (value !== null) set.add(value);
}

/**
 * The tables and views a view's definition reads (qualified by `qualify`, which knows the view's
 * schema); '*'
 * when the definition is hidden (no SHOW VIEW), not understood, or one whose results must not be
 * cached at all (a non-deterministic or stored function, a system variable): the statement that
 * reads the view cannot show what is inside it, so the view has to say it.
 */
function viewReads(
  definition: string | null,
  qualify: (table: TableRef) => string | null,
  options: ClassifyOptions,
): string[] {
  if (definition === null || definition.trim() === '') return [UNKNOWN_TABLE];
  const info = classify(definition, options);
  const understood =
    info.kind === 'select' &&
    !info.multiStatement &&
    !info.writesEverything &&
    (info.cacheable || info.notCacheableReason === 'no tables');
  if (!understood) return [UNKNOWN_TABLE];
  const reads = new Set<string>();
  for (const table of info.reads) {
    const name = qualify(table);
    if (name === null) return [UNKNOWN_TABLE];
    reads.add(name);
  }
  return [...reads];
}

/**
 * The tables a trigger body writes (qualified by `qualify`, which knows the trigger's schema;
 * names it cannot qualify are left out); '*' when unknown. A single statement is classified as
 * it is; a BEGIN ... END block of plain statements is split at its semicolons and each
 * classified; any flow control (IF, loops, handlers, cursors, nested blocks, labels) makes it
 * unknown, since following it is not worth a parser of its own. A statement that calls stored
 * functions adds what `functionWrites` says they write, or is unknown when it cannot say.
 *
 * The body is read under the sql_mode it was created with (TRIGGERS.SQL_MODE), not the session's:
 * ANSI_QUOTES decides whether "x" is a table or a string. Under ORACLE it is PL/SQL, which the
 * classifier does not read.
 */
function triggerBodyWrites(
  body: string | null,
  qualify: (table: TableRef) => string | null,
  functionWrites: (calls: readonly TableRef[] | null) => string[] | null,
  sqlMode: string,
  base: Pick<ClassifyOptions, 'lowerCaseTableNames' | 'serverVersion'>,
): string[] {
  const options = bodyOptions(sqlMode, base);
  if (body === null || options === null) return [UNKNOWN_TABLE];
  const statements = bodyStatements(body, options);
  if (statements === null) return [UNKNOWN_TABLE];
  const written = new Set<string>();
  for (const statement of statements) {
    const info = classify(statement, options);
    if (info.writesEverythingWithoutFunctions || info.multiStatement) return [UNKNOWN_TABLE];
    if (info.writesEverything) {
      const called = functionWrites(info.routineCalls);
      if (called === null) return [UNKNOWN_TABLE];
      for (const name of called) written.add(name);
    }
    for (const table of info.writes) {
      const name = qualify(table);
      if (name !== null) written.add(name);
    }
  }
  return [...written];
}

/**
 * The columns (lowercased) whose value a BEFORE INSERT or UPDATE trigger's body may set: each
 * `NEW.col` in a statement that is no INSERT, REPLACE, UPDATE or DELETE (`SET NEW.col = …`,
 * `SELECT … INTO NEW.col`, a CALL's OUT parameter; a SET reading one counts too). Those four
 * only read NEW's values. Null when the body cannot be read (flow control, ORACLE mode): any
 * column, then.
 */
function newColumnsSet(
  body: string | null,
  sqlMode: string,
  base: Pick<ClassifyOptions, 'lowerCaseTableNames' | 'serverVersion'>,
): string[] | null {
  const options = bodyOptions(sqlMode, base);
  if (body === null || options === null) return null;
  const statements = bodyStatements(body, options);
  if (statements === null) return null;
  const columns: string[] = [];
  for (const statement of statements) {
    const kind = classify(statement, options).kind;
    if (kind === 'insert' || kind === 'replace' || kind === 'update' || kind === 'delete') continue;
    const tokens = tokenize(statement, options);
    if (tokens.error !== null) return null;
    for (let i = 0; i + 2 < tokens.count; i++) {
      if (isWordText(tokens, i, 'NEW') && isOperator(tokens, i + 1, DOT) && isName(tokens, i + 2))
        columns.push(tokens.identifier(i + 2).toLowerCase());
    }
  }
  return columns;
}

/**
 * The tables the stored functions `calls` write (as StatementInfo.routineCalls, read in a body
 * of the schema `owner`), with the routines they call; null when one of them is not known to
 * run no DDL, writes what cannot be told, or may be a loadable function (UDF) of that name,
 * which an unqualified call runs instead.
 */
function functionWritesOf(
  calls: readonly TableRef[] | null,
  owner: string,
  routines: RoutineKnowledge,
  lctn: LowerCaseTableNames,
): string[] | null {
  if (calls === null) return null;
  const tables: string[] = [];
  for (const call of calls) {
    const schema = catalogNameOf(call.schema ?? owner, lctn);
    const name = routineNameOf(call.name);
    if (schema === null || name === null) return null;
    if (call.schema === null && (routines.udfs === null || routines.udfs.has(name))) return null;
    // Only functions that run no DDL and tell what they write are there.
    const written = routines.writes.get(`${schema}.${name}()`);
    if (written === undefined) return null;
    tables.push(...written);
  }
  return tables;
}

/**
 * What was known of a list of routine rows, and under what else (see loadSchemaSnapshot); held
 * only as long as the rows are.
 */
const routineKnowledgeMemo = new WeakMap<
  ReadonlyArray<ReadonlyArray<string | null>>,
  { context: string; knowledge: RoutineKnowledge }
>();

/** What the routine list tells (see ddlFreeProcedures); every name "schema.name", lowered. */
interface RoutineKnowledge {
  /**
   * Routines that run no DDL and create no table: procedures as "schema.name", stored
   * functions as "schema.name()" (the name lowered), as SchemaSnapshot.ddlFreeProcedures.
   */
  free: Set<string>;
  /** Names all of whose routines are free: "name" of procedures, "name()" of functions. */
  freeNames: Set<string>;
  /** Stored functions, "schema.name". */
  functions: Set<string>;
  /** Names of loadable functions (UDFs), lowered; null when they could not be read. */
  udfs: ReadonlySet<string> | null;
  /** Views whose reading may write ("schema.view"), through the views they read. */
  writingViews: ReadonlySet<string>;
  /** The list was the server's whole list: what it does not hold does not exist. */
  complete: boolean;
  /** Free routines whose writes are told, with those of the routines they call. */
  writes: Map<string, string[]>;
  /** Procedures that run no DDL but temporary tables' (see SchemaSnapshot.temporaryProcedures). */
  temporaryOnly: Map<string, TemporaryProcedure>;
  /** The same by name (see SchemaSnapshot.temporaryProcedureNames). */
  temporaryNames: Map<string, TemporaryProcedure>;
}

/**
 * A trigger body that may create a (temporary) table, as a trigger may: CREATE in it, a CALL of
 * a procedure not known to create none, a call of a stored function (any name before a
 * parenthesis when the routine list is not whole), a read of a view whose reading may write, or
 * a body that cannot be read.
 */
function triggerMayCreateTables(
  body: string | null,
  owner: string,
  sqlMode: string,
  routines: RoutineKnowledge,
  base: Pick<ClassifyOptions, 'lowerCaseTableNames' | 'serverVersion'>,
): boolean {
  if (body === null) return true;
  // Without the whole routine list any call may be of a stored function.
  if (!routines.complete && /[(]|\bCALL\b/i.test(body)) return true;
  const calls = procedureCalls(body, owner, sqlMode, routines, base);
  return calls === null || calls.some((callee) => !routines.free.has(callee));
}

/**
 * The procedures ("schema.name", the name lowered) and stored functions ("schema.name()") that
 * run no DDL and create no table: none in their own body, and none in any routine they call,
 * followed to the end (a cycle of calls without DDL runs none); and the names (lowered, "name()"
 * for functions) all of whose routines, in every schema, are such, so that a CALL of the name
 * (an unqualified call of the function) is one wherever it runs (or fails, where there is none).
 * A function name is no such name when a loadable function (UDF) has it, or when `udfs` could
 * not be read: an unqualified call would run the UDF.
 * Known only from the whole list of routines (`count`, mysql.proc's): ROUTINES leaves out what
 * the account may not see, and a stored function (which may create a temporary table) it does
 * not list would look like any other name. Nothing is known either when a routine's name is
 * outside ASCII (the server compares routine names under utf8_general_ci, where `tóuch` is
 * `touch`) or when packages exist (their routines are called as `package.routine`).
 */
function ddlFreeProcedures(
  rows: ReadonlyArray<ReadonlyArray<string | null>>,
  count: number,
  udfs: ReadonlySet<string> | null,
  lctn: LowerCaseTableNames,
  serverVersion: number | undefined,
  reference: (schema: string) => (table: TableRef) => string | null,
  writingViews: ReadonlySet<string>,
): RoutineKnowledge {
  const nothing: RoutineKnowledge = {
    free: new Set(),
    freeNames: new Set(),
    functions: new Set(),
    udfs,
    writingViews,
    complete: false,
    writes: new Map(),
    temporaryOnly: new Map(),
    temporaryNames: new Map(),
  };
  if (rows.length !== count) return nothing;
  const functions = new Set<string>();
  // Procedures and functions, each by its key (see RoutineKnowledge.free) and its name's.
  const procedures: Array<
    [
      key: string,
      name: string,
      owner: string,
      body: string | null,
      sqlMode: string,
      schema: string,
      isFunction: boolean,
    ]
  > = [];
  for (const [schema, name, type, body, sqlMode] of rows) {
    const owner = schema == null ? null : catalogNameOf(schema, lctn);
    const routine = name == null ? null : routineNameOf(name);
    if (owner === null || routine === null) return nothing;
    if (type !== 'FUNCTION' && type !== 'PROCEDURE') return nothing;
    const call = type === 'FUNCTION' ? '()' : '';
    if (type === 'FUNCTION') functions.add(`${owner}.${routine}`);
    procedures.push([
      `${owner}.${routine}${call}`,
      `${routine}${call}`,
      owner,
      body ?? null,
      sqlMode ?? '',
      schema!,
      type === 'FUNCTION',
    ]);
  }
  const hazards = { functions, udfs, writingViews };
  const callees = new Map<string, string[]>();
  // The temporary tables a procedure's own body creates (a function's may too, but a statement
  // calling one is not followed that far: it is not free).
  const ownTemporaries = new Map<string, string[]>();
  for (const [key, , owner, body, sqlMode, , isFunction] of procedures) {
    const temporaries: string[] = [];
    const calls = procedureCalls(
      body,
      owner,
      sqlMode,
      hazards,
      { lowerCaseTableNames: lctn, serverVersion },
      isFunction ? null : temporaries,
    );
    if (calls === null) continue;
    callees.set(key, calls);
    if (temporaries.length > 0) ownTemporaries.set(key, temporaries);
  }
  // Routines that run no DDL but temporary tables', through all they call; then among them
  // those that run none at all.
  const withoutDdl = (candidates: Iterable<string>): Set<string> => {
    const kept = new Set(candidates);
    for (let changed = true; changed;) {
      changed = false;
      for (const procedure of kept) {
        if (callees.get(procedure)!.every((callee) => kept.has(callee))) continue;
        kept.delete(procedure);
        changed = true;
      }
    }
    return kept;
  };
  const temporaryFree = withoutDdl(callees.keys());
  const free = withoutDdl([...temporaryFree].filter((key) => !ownTemporaries.has(key)));
  const freeNames = new Set(procedures.map(([, name]) => name));
  for (const [key, name] of procedures) if (!free.has(key)) freeNames.delete(name);
  for (const name of freeNames) {
    if (name.endsWith('()') && (udfs === null || udfs.has(name.slice(0, -2)))) {
      freeNames.delete(name);
    }
  }
  // What each procedure writes itself, then with what it calls (all of them without DDL other
  // than temporary tables', so all read), and the temporary tables they create.
  const own = new Map<string, string[] | null>();
  for (const [key, , , body, sqlMode, schema] of procedures) {
    if (!temporaryFree.has(key)) continue;
    own.set(
      key,
      procedureWrites(body!, sqlMode, reference(schema), lctn, serverVersion, udfs !== null),
    );
  }
  const reach = (key: string): { writes: string[] | null; temporaries: string[] } => {
    const tables = new Set<string>();
    const temporaries = new Set<string>();
    const seen = new Set([key]);
    const pending = [key];
    let told = true;
    for (let next = 0; next < pending.length; next++) {
      const procedure = pending[next]!;
      const written = own.get(procedure);
      if (written == null) told = false;
      else for (const table of written) tables.add(table);
      for (const table of ownTemporaries.get(procedure) ?? []) temporaries.add(table);
      for (const callee of callees.get(procedure)!) {
        if (!seen.has(callee)) {
          seen.add(callee);
          pending.push(callee);
        }
      }
    }
    return { writes: told ? [...tables] : null, temporaries: [...temporaries] };
  };
  const writes = new Map<string, string[]>();
  const temporaryOnly = new Map<string, TemporaryProcedure>();
  for (const key of temporaryFree) {
    const reached = reach(key);
    if (free.has(key)) {
      if (reached.writes !== null) writes.set(key, reached.writes);
    } else if (!key.endsWith('()')) {
      temporaryOnly.set(key, reached);
    }
  }
  // Procedure names all of whose procedures, in every schema, are free or temporary-only, one of
  // them at least the latter: what a CALL of the name does wherever it runs, all of theirs.
  const temporaryNames = new Map<string, TemporaryProcedure>();
  for (const [key, name] of procedures) {
    if (temporaryOnly.has(key)) temporaryNames.set(name, { temporaries: [], writes: [] });
  }
  for (const [key, name] of procedures) {
    const named = temporaryNames.get(name);
    if (named === undefined) continue;
    if (!temporaryFree.has(key)) {
      temporaryNames.delete(name);
      continue;
    }
    const done = temporaryOnly.get(key) ?? { temporaries: [], writes: writes.get(key) ?? null };
    named.temporaries.push(...done.temporaries);
    named.writes =
      named.writes === null || done.writes === null ? null : [...named.writes, ...done.writes];
  }
  return {
    free,
    freeNames,
    functions,
    udfs,
    writingViews,
    complete: true,
    writes,
    temporaryOnly,
    temporaryNames,
  };
}

/** Words that begin a statement that writes the tables it names. */
const DML_WORDS = new Set([Kw.INSERT, Kw.REPLACE, Kw.UPDATE, Kw.DELETE, Kw.TRUNCATE]);

/**
 * Words of statements that write what they do not name (privileges, sequences, global settings,
 * files, replication, table maintenance, XA COMMIT of another session's writes) or a sequence's
 * NEXT VALUE FOR: a procedure body holding one anywhere writes what cannot be told, as far as
 * the cache knows.
 */
const UNTOLD_WRITE_WORDS = new Set([
  Kw.GRANT,
  Kw.REVOKE,
  Kw.FLUSH,
  Kw.RESET,
  Kw.GLOBAL,
  Kw.PASSWORD,
  Kw.ROLE,
  Kw.NEXT,
  Kw.LOAD,
  Kw.BINLOG,
  Kw.CHANGE,
  Kw.PURGE,
  Kw.OPTIMIZE,
  Kw.REPAIR,
  Kw.ANALYZE,
  Kw.XA,
]);
/** Built-in functions that write a sequence. */
const SEQUENCE_WRITERS = new Set(['NEXTVAL', 'SETVAL']);

/**
 * The tables a body of a DDL-free procedure writes itself (qualified by `qualify`, which knows
 * the procedure's schema), or null when that cannot be told: each of its statements (split at
 * its semicolons) that holds INSERT, REPLACE, UPDATE, DELETE or TRUNCATE is classified from that
 * word to its end, whatever flow control comes before it (IF ... THEN, WHILE ... DO, a handler),
 * and anything the classifier cannot follow there, or a word of UNTOLD_WRITE_WORDS, a
 * sequence's writer, or a global system variable anywhere, makes it untold. Read under the
 * procedure's own sql_mode, as its calls are. A call of a stored function in one of those
 * statements adds nothing here (`udfsKnown`: no UDF may be taken for one).
 */
function procedureWrites(
  body: string,
  sqlMode: string,
  qualify: (table: TableRef) => string | null,
  lctn: LowerCaseTableNames,
  serverVersion: number | undefined,
  udfsKnown: boolean,
): string[] | null {
  const modes = sqlMode.split(',');
  const options: ClassifyOptions = {
    lowerCaseTableNames: lctn,
    serverVersion,
    ansiQuotes: modes.includes('ANSI_QUOTES'),
    noBackslashEscapes: modes.includes('NO_BACKSLASH_ESCAPES'),
  };
  const tokens = tokenize(body, options);
  if (tokens.error !== null) return null;
  const written = new Set<string>();
  let writer = -1;
  for (let i = 0; i <= tokens.count; i++) {
    if (i === tokens.count || isOperator(tokens, i, SEMICOLON)) {
      if (writer >= 0) {
        const info = classify(tokens.spanText(writer, i - 1), options);
        // The stored functions it calls are among the body's callees (see procedureCalls),
        // whose writes are added to its own; not while a call may be of an unknown UDF.
        const untold = udfsKnown ? info.writesEverythingWithoutFunctions : info.writesEverything;
        if (untold || info.multiStatement) return null;
        for (const table of info.writes) {
          const name = qualify(table);
          if (name === null) return null;
          written.add(name);
        }
      }
      writer = -1;
      continue;
    }
    const kind = tokens.kinds[i];
    if (kind === TokenKind.SystemVariable) {
      // @@global.x, and whatever else begins so: conservatively.
      if (tokens.text(i).toLowerCase().startsWith('@@global')) return null;
      continue;
    }
    if (kind !== TokenKind.Word) continue;
    const word = tokens.ids[i]!;
    if (UNTOLD_WRITE_WORDS.has(word)) return null;
    if (SEQUENCE_WRITERS.has(tokens.identifier(i).toUpperCase())) return null;
    if (writer < 0 && DML_WORDS.has(word)) writer = i;
  }
  return [...written];
}

/**
 * Words that begin or make up DDL, or run statements no text shows (PREPARE and EXECUTE of
 * dynamic SQL): a procedure body holding one anywhere may change the metadata. A word used as
 * an identifier (a column named execute) only makes the answer more cautious than it need be.
 */
const DDL_WORDS = new Set([
  Kw.CREATE,
  Kw.ALTER,
  Kw.DROP,
  Kw.RENAME,
  Kw.PREPARE,
  Kw.EXECUTE,
  Kw.INSTALL,
  Kw.UNINSTALL,
]);

/**
 * The routines a body calls: procedures ("schema.name", the name lowered, qualified by `owner`,
 * the routine's own schema) and stored functions ("schema.name()": a name that is one of
 * `functions`, before a parenthesis, is taken as a call of it even where it names a table); or
 * null when it may run DDL or create a table of its own: a DDL word anywhere, an unqualified
 * call of a loadable function (UDF), or of a stored function while the UDFs are not known (the
 * UDF of that name would run), a name of one of `writingViews` (whose functions may create
 * tables), a CALL whose name cannot be read, a body that is hidden or does not lex. Read under
 * the sql_mode the procedure was
 * created with (ROUTINES.SQL_MODE); under ORACLE a procedure calls another without CALL, so
 * nothing is known of it.
 */
function procedureCalls(
  body: string | null,
  owner: string,
  sqlMode: string,
  hazards: {
    functions: ReadonlySet<string>;
    udfs: ReadonlySet<string> | null;
    writingViews: ReadonlySet<string>;
  },
  base: Pick<ClassifyOptions, 'lowerCaseTableNames' | 'serverVersion'>,
  temporaries: string[] | null = null,
): string[] | null {
  const { functions, udfs, writingViews } = hazards;
  const lctn = base.lowerCaseTableNames;
  const options = bodyOptions(sqlMode, base);
  if (body === null || options === null) return null;
  const tokens = tokenize(body, options);
  if (tokens.error !== null) return null;
  const calls: string[] = [];
  for (let i = 0; i < tokens.count; i++) {
    if (writingViews.size > 0 && isName(tokens, i) && !isOperator(tokens, i + 1, DOT)) {
      const qualified = isOperator(tokens, i - 1, DOT) && isName(tokens, i - 2);
      const schema = qualified ? catalogNameOf(tokens.identifier(i - 2), lctn) : owner;
      const table = catalogNameOf(tokens.identifier(i), lctn);
      if (schema !== null && table !== null && writingViews.has(`${schema}.${table}`)) return null;
    }
    if (isName(tokens, i) && isOperator(tokens, i + 1, LEFT_PARENTHESIS)) {
      const qualified = isOperator(tokens, i - 1, DOT) && isName(tokens, i - 2);
      const schema = qualified
        ? catalogNameOf(tokens.identifier(i - 2), base.lowerCaseTableNames)
        : owner;
      const name = routineNameOf(tokens.identifier(i));
      if (!qualified && name !== null && udfs?.has(name) === true) return null;
      if (schema !== null && name !== null && functions.has(`${schema}.${name}`)) {
        if (!qualified && udfs === null) return null;
        calls.push(`${schema}.${name}()`);
      }
    }
    if (tokens.kinds[i] !== TokenKind.Word) continue;
    const word = tokens.ids[i]!;
    if (DDL_WORDS.has(word)) {
      if (temporaries === null) return null;
      const created = temporaryTablesOf(tokens, i, owner, options);
      if (created === null) return null;
      temporaries.push(...created);
      continue;
    }
    if (word !== Kw.CALL) continue;
    const qualified = isOperator(tokens, i + 2, DOT);
    if (!isName(tokens, i + 1) || (qualified && !isName(tokens, i + 3))) return null;
    const schema = qualified
      ? catalogNameOf(tokens.identifier(i + 1), base.lowerCaseTableNames)
      : owner;
    const name = routineNameOf(tokens.identifier(qualified ? i + 3 : i + 1));
    if (schema === null || name === null) return null;
    calls.push(`${schema}.${name}`);
  }
  return calls;
}

/**
 * The temporary tables ("schema.table", unqualified ones in the routine's schema `owner`) that
 * the statement from token `start` to its semicolon creates or drops, when it is CREATE or DROP
 * TEMPORARY TABLE; null for any other statement. A procedure's own database is the current one
 * while it runs, so that is where its unqualified names are.
 */
function temporaryTablesOf(
  tokens: TokenList,
  start: number,
  owner: string,
  options: ClassifyOptions,
): string[] | null {
  let end = start;
  while (end < tokens.count && !isOperator(tokens, end, SEMICOLON)) end++;
  const info = classify(tokens.spanText(start, end - 1), options);
  if (info.kind !== 'ddl' || !info.temporary || info.ddlObject !== 'table') return null;
  if (info.writesEverything || info.multiStatement) return null;
  const names: string[] = [];
  for (const table of info.writes) {
    const lctn = options.lowerCaseTableNames;
    const schema = table.schema === null ? owner : catalogNameOf(table.schema, lctn);
    const name = catalogNameOf(table.name, lctn);
    if (schema === null || name === null) return null;
    names.push(`${schema}.${name}`);
  }
  return names;
}

/** Words that start a flow-control statement inside a block. */
const FLOW_CONTROL = new Set([
  Kw.BEGIN,
  Kw.IF,
  Kw.CASE,
  Kw.WHILE,
  Kw.LOOP,
  Kw.REPEAT,
  Kw.FOR,
  Kw.DECLARE,
  Kw.LEAVE,
  Kw.ITERATE,
  Kw.RETURN,
  Kw.OPEN,
  Kw.FETCH,
  Kw.CLOSE,
]);
/** Flow-control words the keyword table does not hold. */
const FLOW_CONTROL_TEXT = new Set(['END', 'GOTO']);

/**
 * How a stored body created under `sqlMode` is read: ANSI_QUOTES decides whether "x" is a name
 * or a string, NO_BACKSLASH_ESCAPES what a backslash does. Null under ORACLE, where it is PL/SQL,
 * which the classifier does not read.
 */
function bodyOptions(
  sqlMode: string,
  base: Pick<ClassifyOptions, 'lowerCaseTableNames' | 'serverVersion'>,
): ClassifyOptions | null {
  const modes = sqlMode.split(',');
  if (modes.includes('ORACLE')) return null;
  return {
    ...base,
    ansiQuotes: modes.includes('ANSI_QUOTES'),
    noBackslashEscapes: modes.includes('NO_BACKSLASH_ESCAPES'),
  };
}

/**
 * The statements of a trigger body: the body itself when it is one statement, the statements of
 * a plain `[label:] BEGIN ... END [label]` block, null when it holds flow control or cannot be
 * lexed.
 */
function bodyStatements(body: string, options: ClassifyOptions): string[] | null {
  const tokens = tokenize(body, options);
  if (tokens.error !== null) return null;
  let last = tokens.count - 1;
  while (last >= 0 && isOperator(tokens, last, SEMICOLON)) last--;
  if (last < 0) return [];
  const labelled = isName(tokens, 0) && isOperator(tokens, 1, COLON);
  const begin = labelled ? 2 : 0;
  if (!isWord(tokens, begin, Kw.BEGIN)) {
    return labelled || startsFlowControl(tokens, 0) ? null : [body];
  }
  // BEGIN NOT ATOMIC is the anonymous block's form, not a trigger's.
  if (isWord(tokens, begin + 1, Kw.NOT)) return null;
  if (labelled && !isWordText(tokens, last, 'END')) last--;
  if (last <= begin || !isWordText(tokens, last, 'END')) return null;
  const statements: string[] = [];
  let start = begin + 1;
  for (let i = start; i <= last; i++) {
    if (i < last && !isOperator(tokens, i, SEMICOLON)) continue;
    if (i > start) {
      if (startsFlowControl(tokens, start)) return null;
      statements.push(tokens.spanText(start, i - 1));
    }
    start = i + 1;
  }
  return statements;
}

function startsFlowControl(tokens: TokenList, index: number): boolean {
  if (isOperator(tokens, index + 1, COLON)) return true; // a label
  if (tokens.kinds[index] !== TokenKind.Word) return false;
  return (
    FLOW_CONTROL.has(tokens.ids[index]!) ||
    FLOW_CONTROL_TEXT.has(tokens.identifier(index).toUpperCase())
  );
}

function isOperator(tokens: TokenList, index: number, code: number): boolean {
  return (
    index < tokens.count && tokens.kinds[index] === TokenKind.Operator && tokens.ids[index] === code
  );
}

function isName(tokens: TokenList, index: number): boolean {
  const kind = tokens.kinds[index];
  return index < tokens.count && (kind === TokenKind.Word || kind === TokenKind.QuotedIdentifier);
}

function isWord(tokens: TokenList, index: number, id: number): boolean {
  return index < tokens.count && tokens.kinds[index] === TokenKind.Word && tokens.ids[index] === id;
}

function isWordText(tokens: TokenList, index: number, text: string): boolean {
  return (
    index >= 0 &&
    index < tokens.count &&
    tokens.kinds[index] === TokenKind.Word &&
    tokens.identifier(index).toUpperCase() === text
  );
}
