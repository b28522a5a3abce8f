/**
 * TableDependencies on hand-made snapshots: views expanded recursively, writes closed over
 * triggers and cascades, cycles that end, unknowns that poison, and answers that stay right
 * whichever name is asked first.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TableDependencies, UNKNOWN_TABLE } from '../../src/cache/table-dependencies.ts';
import type { SchemaSnapshot } from '../../src/cache/table-dependencies.ts';

interface Spec {
  tables?: string[];
  views?: Record<string, string[]>;
  triggers?: Record<string, string[]>;
  cascades?: Record<string, string[]>;
  storedIn?: Record<string, string[]>;
}

function snapshot(spec: Spec): SchemaSnapshot {
  return {
    baseTables: new Map((spec.tables ?? []).map((name) => [name, 'InnoDB'])),
    views: new Map(Object.entries(spec.views ?? {})),
    triggerWrites: new Map(Object.entries(spec.triggers ?? {})),
    cascades: new Map(Object.entries(spec.cascades ?? {})),
    storedIn: new Map(Object.entries(spec.storedIn ?? {})),
  };
}

function sorted<T>(value: readonly string[] | T): string[] | T {
  return Array.isArray(value) ? [...(value as readonly string[])].sort() : (value as T);
}

describe('TableDependencies', () => {
  test('reads: base tables as they are, views expanded through views, unknowns refused', () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.a', 's.b', 's.c'],
        views: {
          's.v1': ['s.a', 's.b'],
          's.v2': ['s.v1', 's.c', 's.a'],
          's.hidden': [UNKNOWN_TABLE],
          's.over_hidden': ['s.a', 's.hidden'],
          's.over_missing': ['s.a', 'other.gone'],
          's.constant': [],
        },
      }),
    );
    assert.deepEqual(deps.readsOf('s.a'), ['s.a']);
    assert.deepEqual(sorted(deps.readsOf('s.v1')), ['s.a', 's.b']);
    assert.deepEqual(sorted(deps.readsOf('s.v2')), ['s.a', 's.b', 's.c']);
    assert.deepEqual(deps.readsOf('s.constant'), []);
    assert.equal(deps.readsOf('s.hidden'), null);
    assert.equal(deps.readsOf('s.over_hidden'), null);
    assert.equal(deps.readsOf('s.over_missing'), null);
    assert.equal(deps.readsOf('s.nothing'), null);
    assert.equal(deps.engineOf('s.a'), 'InnoDB');
    assert.equal(deps.engineOf('s.v1'), undefined);
  });

  test('views that read each other end', () => {
    const deps = new TableDependencies(
      snapshot({ tables: ['s.a'], views: { 's.v1': ['s.v2', 's.a'], 's.v2': ['s.v1'] } }),
    );
    assert.deepEqual(deps.readsOf('s.v1'), ['s.a']);
    assert.deepEqual(deps.readsOf('s.v2'), ['s.a']);
  });

  test('views that write, call stored functions or say SQL_CACHE: through the views over them', () => {
    const deps = new TableDependencies({
      ...snapshot({
        tables: ['s.a'],
        views: {
          's.writes': [UNKNOWN_TABLE],
          's.calls': [UNKNOWN_TABLE],
          's.asks': ['s.a'],
          's.over_calls': ['s.calls'],
          's.over_all': ['s.over_calls', 's.writes', 's.asks'],
          's.loop_a': ['s.loop_b'],
          's.loop_b': ['s.loop_a', 's.calls'],
          's.plain': ['s.a'],
        },
      }),
      writingViews: new Set(['s.writes']),
      functionViews: new Set(['s.calls']),
      cacheRequestingViews: new Set(['s.asks']),
    });
    const which = (ask: (name: string) => boolean): string[] =>
      [
        's.a',
        's.writes',
        's.calls',
        's.asks',
        's.over_calls',
        's.over_all',
        's.loop_a',
        's.plain',
      ].filter(ask);
    assert.deepEqual(
      which((name) => deps.readMayWrite(name)),
      ['s.writes', 's.over_all'],
    );
    assert.deepEqual(
      which((name) => deps.readCallsFunctions(name)),
      ['s.calls', 's.over_calls', 's.over_all', 's.loop_a'],
    );
    assert.deepEqual(
      which((name) => deps.requestsCache(name)),
      ['s.asks', 's.over_all'],
    );
    assert.equal(deps.hasFunctionViews, true);
    assert.equal(new TableDependencies(snapshot({ tables: ['s.a'] })).hasFunctionViews, false);
  });

  test('writes: triggers and cascades, transitively', () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.orders', 's.audit', 's.log', 's.parent', 's.child', 's.grandchild', 's.x'],
        triggers: { 's.orders': ['s.audit'], 's.audit': ['s.log'], 's.child': ['s.x'] },
        cascades: { 's.parent': ['s.child'], 's.child': ['s.grandchild'] },
      }),
    );
    assert.deepEqual(deps.writesOf('s.orders'), ['s.orders', 's.audit', 's.log']);
    assert.deepEqual(deps.writesOf('s.audit'), ['s.audit', 's.log']);
    // The child's trigger is followed though cascades do not fire triggers on MySQL/MariaDB:
    // an extra invalidation, never a stale result on a server that does fire them.
    assert.deepEqual(sorted(deps.writesOf('s.parent')), [
      's.child',
      's.grandchild',
      's.parent',
      's.x',
    ]);
    assert.deepEqual(deps.writesOf('s.grandchild'), ['s.grandchild']);
    // Unknown to the snapshot (created since, temporary): it writes itself.
    assert.deepEqual(deps.writesOf('s.new_table'), ['s.new_table']);
  });

  test('writes: an unknown trigger anywhere on the way writes everything', () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.a', 's.b', 's.c', 's.p', 's.q'],
        triggers: { 's.a': ['s.b'], 's.b': ['s.c', UNKNOWN_TABLE], 's.q': [UNKNOWN_TABLE] },
        cascades: { 's.p': ['s.q'] },
      }),
    );
    assert.equal(deps.writesOf('s.a'), 'everything');
    assert.equal(deps.writesOf('s.b'), 'everything');
    assert.deepEqual(deps.writesOf('s.c'), ['s.c']);
    assert.equal(deps.writesOf('s.p'), 'everything');
  });

  test('writes through a view write its base tables; an unknown view writes everything', () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.a', 's.b', 's.audit'],
        views: { 's.v': ['s.a', 's.b'], 's.hidden': [UNKNOWN_TABLE] },
        triggers: { 's.a': ['s.audit'], 's.audit': ['s.v'] },
      }),
    );
    assert.deepEqual(sorted(deps.writesOf('s.v')), ['s.a', 's.audit', 's.b']);
    assert.equal(deps.writesOf('s.hidden'), 'everything');
  });

  test('cycles: two tables whose triggers write each other', () => {
    const spec: Spec = {
      tables: ['s.a', 's.b', 's.c'],
      triggers: { 's.a': ['s.b'], 's.b': ['s.a', 's.c'] },
      cascades: { 's.c': ['s.c'] },
    };
    const deps = new TableDependencies(snapshot(spec));
    assert.deepEqual(deps.writesOf('s.a'), ['s.a', 's.b', 's.c']);
    assert.deepEqual(deps.writesOf('s.b'), ['s.b', 's.a', 's.c']);
    assert.deepEqual(deps.writesOf('s.c'), ['s.c']);
  });

  test('memoised: the same answer object, whole whichever name in a cycle comes first', () => {
    const spec: Spec = {
      tables: ['s.a', 's.b', 's.c', 's.d'],
      views: { 's.v': ['s.a', 's.d'] },
      triggers: { 's.a': ['s.b'], 's.b': ['s.a', 's.c'] },
      cascades: { 's.c': ['s.d'] },
    };
    const fresh = (): TableDependencies => new TableDependencies(snapshot(spec));
    const expected = {
      a: ['s.a', 's.b', 's.c', 's.d'],
      b: ['s.a', 's.b', 's.c', 's.d'],
      c: ['s.c', 's.d'],
      v: ['s.a', 's.b', 's.c', 's.d'],
    };
    // Every order of first questions gives the same answers as a fresh instance asked once.
    for (const order of [
      ['a', 'b', 'c', 'v'],
      ['b', 'a', 'v', 'c'],
      ['c', 'v', 'b', 'a'],
      ['v', 'c', 'a', 'b'],
    ] as const) {
      const deps = fresh();
      for (const name of order) {
        assert.deepEqual(sorted(deps.writesOf(`s.${name}`)), expected[name], order.join());
      }
      for (const name of order) {
        assert.deepEqual(sorted(deps.writesOf(`s.${name}`)), expected[name], order.join());
      }
    }

    const deps = fresh();
    const writes = deps.writesOf('s.a');
    assert.equal(deps.writesOf('s.a'), writes, 'the stored answer, not a new one');
    const reads = deps.readsOf('s.v');
    assert.equal(deps.readsOf('s.v'), reads);
    assert.equal(deps.readsOf('s.unknown'), null);
    assert.equal(deps.readsOf('s.unknown'), null);
    // Shared answers cannot be changed by one caller behind the others' backs.
    assert.ok(Object.isFrozen(writes));
    assert.ok(Object.isFrozen(reads));
  });

  test('tables stored in other tables: MERGE over tables and views of it; unknown storage', () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.t1', 's.t2', 's.m', 's.m_of_m', 's.remote', 's.audit'],
        views: { 's.vm': ['s.m'] },
        triggers: { 's.t1': ['s.audit'] },
        storedIn: { 's.m': ['s.t1', 's.t2'], 's.m_of_m': ['s.m'], 's.remote': [UNKNOWN_TABLE] },
      }),
    );
    assert.deepEqual(sorted(deps.readsOf('s.m')), ['s.m', 's.t1', 's.t2']);
    assert.deepEqual(sorted(deps.readsOf('s.vm')), ['s.m', 's.t1', 's.t2']);
    assert.deepEqual(sorted(deps.readsOf('s.m_of_m')), ['s.m', 's.m_of_m', 's.t1', 's.t2']);
    assert.deepEqual(sorted(deps.writesOf('s.m')), ['s.audit', 's.m', 's.t1', 's.t2']);
    assert.deepEqual(sorted(deps.writesOf('s.vm')), ['s.audit', 's.m', 's.t1', 's.t2']);
    // A UNION table's own writes change it alone: readers of the MERGE table depend on it.
    assert.deepEqual(deps.writesOf('s.t2'), ['s.t2']);
    assert.equal(deps.readsOf('s.remote'), null);
    assert.equal(deps.writesOf('s.remote'), 'everything');
    assert.equal(deps.engineOf('s.remote'), 'InnoDB');
  });

  test("a row event changes its table's rows only: unless a cascade or a MERGE writes elsewhere", () => {
    const deps = new TableDependencies(
      snapshot({
        tables: ['s.plain', 's.audited', 's.audit', 's.parent', 's.child', 's.m', 's.t1'],
        views: { 's.v': ['s.plain'] },
        triggers: { 's.audited': ['s.audit'] },
        cascades: { 's.parent': ['s.child'] },
        storedIn: { 's.m': ['s.t1'] },
      }),
    );
    // A trigger's writes are logged as row events of their own.
    for (const name of ['s.plain', 's.audited', 's.audit', 's.child', 's.t1'])
      assert.equal(deps.rowEventsWriteItselfOnly(name), true, name);
    // A cascade is not logged; a MERGE table's rows are its UNION tables'; a view is no table.
    for (const name of ['s.parent', 's.m', 's.v', 's.unknown'])
      assert.equal(deps.rowEventsWriteItselfOnly(name), false, name);
  });

  test('tables written behind the proxy (by events) are not readable; unknown ones poison all', () => {
    const some = new TableDependencies({
      ...snapshot({ tables: ['s.a', 's.b'], views: { 's.v': ['s.a', 's.b'] } }),
      writtenBehind: ['s.a'],
    });
    assert.equal(some.readsOf('s.a'), null);
    assert.equal(some.readsOf('s.v'), null);
    assert.deepEqual(some.readsOf('s.b'), ['s.b']);
    assert.deepEqual(some.writesOf('s.a'), ['s.a']);
    const all = new TableDependencies({
      ...snapshot({ tables: ['s.a', 's.b'] }),
      writtenBehind: [UNKNOWN_TABLE],
    });
    assert.equal(all.readsOf('s.b'), null);
  });
});
