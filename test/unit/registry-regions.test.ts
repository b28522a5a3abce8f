/**
 * The invalidation registry's per-worker accounting: what a dead worker held is released exactly
 * (numbers raised first, then the marks), other workers' marks untouched; its connections are
 * listed; the schema version moves at the start and the end of a schema change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';

function registries(regions: number): InvalidationRegistry[] {
  const buffer = InvalidationRegistry.allocate(16, regions);
  return Array.from({ length: regions }, (_, region) => new InvalidationRegistry(buffer, region));
}

test('a dead worker’s marks are released, raised first; the others’ stay', () => {
  const [dead, alive] = registries(2) as [InvalidationRegistry, InvalidationRegistry];
  const slots = Int32Array.of(3);
  const fillSeq = dead.sequence();
  dead.beginWrite(3);
  dead.beginWrite(3);
  dead.beginWrite(5);
  dead.beginWriteEverything();
  alive.beginWrite(3);
  assert.equal(dead.inFlight(3), 3);
  assert.equal(dead.heldBy(0), 4);
  assert.equal(alive.heldBy(1), 1);

  const released = alive.releaseWorker(0);
  assert.deepEqual(released, { slots: 3, everything: 1, schemaChanges: 0 });
  assert.equal(alive.inFlight(3), 1, 'the living worker’s mark stays');
  assert.equal(alive.inFlight(5), 0);
  assert.equal(dead.heldBy(0), 0, 'the region is clear for a new worker');
  alive.endWrite(3);
  // A result read before the release is stale: the slot's number was raised.
  assert.equal(alive.isFresh(slots, fillSeq, fillSeq), false);
  const after = alive.sequence();
  assert.equal(alive.isFresh(slots, after, after), true);
});

test('releasing an idle worker changes nothing', () => {
  const [idle, other] = registries(2) as [InvalidationRegistry, InvalidationRegistry];
  const before = other.sequence();
  assert.deepEqual(idle.releaseWorker(0), { slots: 0, everything: 0, schemaChanges: 0 });
  assert.equal(other.sequence(), before);
});

test('a schema change moves the version when it starts and when it ends; a dead one is ended', () => {
  const [first, second] = registries(2) as [InvalidationRegistry, InvalidationRegistry];
  const start = first.schemaVersion();
  first.beginSchemaChange();
  assert.notEqual(second.schemaVersion(), start);
  assert.equal(second.schemaChangesInFlight(), 1);
  const during = second.schemaVersion();
  first.endSchemaChange();
  assert.notEqual(second.schemaVersion(), during);
  assert.equal(second.schemaChangesInFlight(), 0);

  first.beginSchemaChange();
  const held = second.schemaVersion();
  assert.deepEqual(second.releaseWorker(0), { slots: 0, everything: 0, schemaChanges: 1 });
  assert.equal(second.schemaChangesInFlight(), 0);
  assert.notEqual(second.schemaVersion(), held);
});

test('the program version moves when a change that may touch routines ends, or dies', () => {
  const [first, second] = registries(2) as [InvalidationRegistry, InvalidationRegistry];
  const start = second.programVersion();
  first.beginSchemaChange();
  first.endSchemaChange(false);
  assert.equal(second.programVersion(), start, 'DDL of a table leaves it');
  first.beginSchemaChange();
  assert.equal(second.programVersion(), start, 'not before the change is answered');
  first.endSchemaChange();
  const ended = second.programVersion();
  assert.notEqual(ended, start);
  first.beginSchemaChange();
  second.releaseWorker(0);
  assert.notEqual(second.programVersion(), ended, 'a dead worker’s change may have touched any');
});

test('sessions that wrote the program tables are seen from every worker until they close or die', () => {
  const [first, second, third] = registries(3) as [
    InvalidationRegistry,
    InvalidationRegistry,
    InvalidationRegistry,
  ];
  assert.equal(third.programTableWritersOpen(), false);
  first.openProgramTableWriter();
  second.openProgramTableWriter();
  second.openProgramTableWriter();
  assert.equal(third.programTableWritersOpen(), true);
  first.closeProgramTableWriter();
  assert.equal(third.programTableWritersOpen(), true, 'the other worker’s are still open');
  second.closeProgramTableWriter();
  assert.equal(third.programTableWritersOpen(), true);
  third.releaseWorker(1);
  assert.equal(first.programTableWritersOpen(), false, 'a dead worker’s sessions are gone');
});

test('a worker’s backend connections are listed until forgotten', () => {
  const [worker, main] = registries(2) as [InvalidationRegistry, InvalidationRegistry];
  const a = worker.recordConnection(7);
  const b = worker.recordConnection(0xfffffffe);
  worker.recordConnection(9);
  worker.forgetConnection(a);
  assert.deepEqual(main.connectionsOf(0), { ids: [0xfffffffe, 9], overflowed: false });
  // A freed place is reused.
  assert.equal(worker.recordConnection(11), a);
  worker.forgetConnection(b);
  assert.deepEqual(main.connectionsOf(0).ids.sort(), [11, 9].sort());
  main.releaseWorker(0);
  assert.deepEqual(main.connectionsOf(0).ids, []);
  // The one id that cannot be stored is reported as an overflow, never silently lost.
  assert.equal(worker.recordConnection(0xffffffff), -1);
  assert.equal(main.connectionsOf(0).overflowed, true);
});

test('a change of the schema version wakes a waiter', async () => {
  const [registry] = registries(1) as [InvalidationRegistry];
  const version = registry.schemaVersion();
  const woken = registry.schemaVersionChange(version, 5000);
  registry.beginSchemaChange();
  assert.equal(await woken, 'ok');
  // Already moved: resolves at once.
  assert.equal(await registry.schemaVersionChange(version, 5000), 'not-equal');
});
