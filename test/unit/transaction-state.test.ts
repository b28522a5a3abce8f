/**
 * A session's transaction as the cache sees it, driven by the status flags of replies as the
 * server sends them, over a real registry. What other sessions rely on: a write outside a
 * transaction invalidates as soon as its reply is in; inside one, its tables stay marked until
 * the transaction ends (commit, rollback, error that ends it, lost connection), and then a
 * result read meanwhile is stale; what the writing session relies on: it knows its own writes,
 * its snapshot's number, and the isolation level the transaction runs at.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidationRegistry } from '../../src/cache/invalidation-registry.ts';
import { ServerStatus } from '../../src/protocol/constants.ts';
import { TransactionState } from '../../src/proxy/transaction-state.ts';
import type { WriteMarks } from '../../src/proxy/transaction-state.ts';

const AUTOCOMMIT = ServerStatus.AUTOCOMMIT;
const IN_TRANS = ServerStatus.IN_TRANS | ServerStatus.AUTOCOMMIT;
/** After SET autocommit = 0: every statement opens a transaction that stays open. */
const MANUAL = 0;
const MANUAL_IN_TRANS = ServerStatus.IN_TRANS;
/** The status of a reply that was an error: the flags are not known. */
const ERROR = -1;

interface Setup {
  registry: InvalidationRegistry;
  txn: TransactionState;
  t: number;
  u: number;
}

function setup(status: number = AUTOCOMMIT): Setup {
  const registry = new InvalidationRegistry(InvalidationRegistry.allocate(1024));
  const txn = new TransactionState(registry);
  txn.status = status;
  const t = registry.slotOf('test.t');
  let u = registry.slotOf('test.u');
  for (let i = 0; u === t; i++) u = registry.slotOf(`test.u${i}`);
  return { registry, txn, t, u };
}

function writes(...slots: number[]): WriteMarks {
  return {
    slots: Int32Array.from(slots),
    everything: false,
    schemaChange: false,
    leavesPrograms: false,
  };
}

const EVERYTHING: WriteMarks = {
  slots: null,
  everything: true,
  schemaChange: false,
  leavesPrograms: false,
};

/** One statement sent and answered with `status`, as the router drives the state. */
function run(
  { registry, txn }: Setup,
  status: number,
  marks: WriteMarks | null = null,
  options: { establishesSnapshot?: boolean; setsIsolation?: boolean } = {},
): number {
  const seqBefore = registry.sequence();
  if (marks !== null) txn.begin(marks);
  txn.onReply(
    status,
    seqBefore,
    marks,
    options.establishesSnapshot ?? false,
    options.setsIsolation ?? false,
    'REPEATABLE-READ',
  );
  return seqBefore;
}

/** May another session serve a result of `slot` it read at `fillSeq`? */
function servable({ registry }: Setup, slot: number, fillSeq: number): boolean {
  return registry.isFresh(Int32Array.from([slot]), fillSeq, fillSeq);
}

describe('transaction state: autocommit', () => {
  test('a write invalidates its tables once its reply is in, and holds nothing after', () => {
    const s = setup();
    const fill = s.registry.sequence();
    s.txn.begin(writes(s.t));
    assert.equal(s.registry.inFlight(s.t), 1, 'marked before it is sent');
    s.txn.onReply(AUTOCOMMIT, fill, writes(s.t), false, false, 'REPEATABLE-READ');
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(servable(s, s.t, fill), false, 'a result read before the write is stale');
    assert.ok(servable(s, s.t, s.registry.sequence()), 'results read after it are good');
    assert.equal(s.txn.inTransaction, false);
    assert.equal(s.txn.wrote(Int32Array.from([s.t])), false, 'nothing held for later');
  });

  test('a write that failed still invalidates (it may have changed rows before failing)', () => {
    const s = setup();
    const fill = s.registry.sequence();
    run(s, ERROR, writes(s.t));
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(servable(s, s.t, fill), false);
    assert.equal(s.txn.inTransaction, false, 'an error keeps the last known state');
  });
});

describe('transaction state: explicit transactions', () => {
  test('writes stay marked until COMMIT; then results read during the transaction are stale', () => {
    const s = setup();
    run(s, IN_TRANS); // BEGIN
    assert.ok(s.txn.inTransaction);
    run(s, IN_TRANS, writes(s.t));
    assert.equal(s.registry.inFlight(s.t), 1, 'the write is uncommitted: still in flight');
    assert.ok(
      s.txn.wrote(Int32Array.from([s.t])),
      'the session reads its own writes from the server',
    );
    assert.equal(s.txn.wrote(Int32Array.from([s.u])), false);
    const readDuring = s.registry.sequence();
    assert.equal(servable(s, s.t, readDuring), false, 'nobody is served the table meanwhile');
    assert.ok(servable(s, s.u, readDuring), 'other tables are not held');
    run(s, AUTOCOMMIT); // COMMIT
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(servable(s, s.t, readDuring), false, 'a result read before the commit is stale');
    assert.ok(servable(s, s.t, s.registry.sequence()));
    assert.equal(s.txn.wrote(Int32Array.from([s.t])), false);
  });

  test('writing one table twice holds one mark, released once at the end', () => {
    const s = setup();
    run(s, IN_TRANS);
    run(s, IN_TRANS, writes(s.t));
    run(s, IN_TRANS, writes(s.t, s.u));
    assert.equal(s.registry.inFlight(s.t), 1);
    assert.equal(s.registry.inFlight(s.u), 1);
    run(s, AUTOCOMMIT); // ROLLBACK: the rows are back, results read meanwhile may not be
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(s.registry.inFlight(s.u), 0);
  });

  test('a write whose tables are unknown holds everything until the end, once', () => {
    const s = setup();
    run(s, IN_TRANS);
    run(s, IN_TRANS, EVERYTHING);
    run(s, IN_TRANS, EVERYTHING);
    const readDuring = s.registry.sequence();
    assert.equal(servable(s, s.u, readDuring), false);
    assert.ok(s.txn.wrote(Int32Array.from([s.u])));
    run(s, AUTOCOMMIT);
    assert.equal(servable(s, s.u, readDuring), false);
    assert.ok(servable(s, s.u, s.registry.sequence()), 'nothing left marked');
  });

  test('an error inside a transaction keeps the marks (it may not have ended it)', () => {
    const s = setup();
    run(s, IN_TRANS);
    run(s, IN_TRANS, writes(s.t));
    run(s, ERROR, writes(s.u));
    assert.ok(s.txn.inTransaction);
    assert.equal(s.registry.inFlight(s.t), 1);
    assert.equal(s.registry.inFlight(s.u), 1, 'the failed statement may have written');
    // A deadlock rolls the transaction back: the next reply's flags say so.
    run(s, AUTOCOMMIT);
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(s.registry.inFlight(s.u), 0);
  });

  test('an implicit commit (DDL, say) inside a transaction releases the marks', () => {
    const s = setup();
    run(s, IN_TRANS);
    run(s, IN_TRANS, writes(s.t));
    const readDuring = s.registry.sequence();
    run(s, AUTOCOMMIT, {
      slots: null,
      everything: false,
      schemaChange: true,
      leavesPrograms: false,
    });
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(servable(s, s.t, readDuring), false);
    assert.equal(s.registry.schemaChangesInFlight(), 0, 'the DDL mark is released too');
  });

  test('a lost connection releases what the transaction held (the server rolls back)', () => {
    const s = setup();
    run(s, IN_TRANS);
    run(s, IN_TRANS, writes(s.t));
    run(s, IN_TRANS, EVERYTHING);
    const pending = writes(s.u);
    s.txn.begin(pending); // sent; its reply never comes
    const readDuring = s.registry.sequence();
    s.txn.abandon(pending);
    s.txn.releaseAll();
    assert.equal(s.registry.inFlight(s.t), 0);
    assert.equal(s.registry.inFlight(s.u), 0);
    assert.equal(servable(s, s.t, readDuring), false);
    assert.ok(servable(s, s.t, s.registry.sequence()), 'nothing left marked');
  });
});

describe('transaction state: own slots (rows added, which only the writer reads before commit)', () => {
  const adds = (s: Setup): WriteMarks => ({ ...writes(s.u), ownSlots: Int32Array.of(s.t) });

  test('outside a transaction: written for its own reads while sent, and no more once answered', () => {
    const s = setup();
    const marks = adds(s);
    s.txn.begin(marks);
    assert.equal(s.registry.inFlight(s.t), 0, 'the registry is not told');
    assert.ok(s.txn.wrote(Int32Array.of(s.t)), 'a read sent after it sees its rows');
    s.txn.onReply(AUTOCOMMIT, 0, marks, false, false, 'REPEATABLE-READ');
    assert.equal(s.txn.wrote(Int32Array.of(s.t)), false, 'committed: anyone may read them');
  });

  test('in a transaction: held until it ends, counted across several writes sent at once', () => {
    const s = setup();
    run(s, IN_TRANS);
    const first = adds(s);
    const second = adds(s);
    s.txn.begin(first);
    s.txn.begin(second);
    s.txn.onReply(IN_TRANS, 0, first, false, false, 'REPEATABLE-READ');
    assert.ok(s.txn.wrote(Int32Array.of(s.t)));
    s.txn.onReply(IN_TRANS, 0, second, false, false, 'REPEATABLE-READ');
    run(s, IN_TRANS);
    assert.ok(s.txn.wrote(Int32Array.of(s.u, s.t)), 'still in the transaction');
    run(s, AUTOCOMMIT);
    assert.equal(s.txn.wrote(Int32Array.of(s.t)), false, 'ended');
  });

  test('a write whose reply never comes lets go of its own slots', () => {
    const s = setup();
    const marks = adds(s);
    s.txn.begin(marks);
    s.txn.abandon(marks);
    assert.equal(s.txn.wrote(Int32Array.of(s.t)), false);
  });
});

describe('transaction state: writes of the program tables', () => {
  const programTables = (): WriteMarks => ({
    slots: null,
    everything: true,
    schemaChange: true,
    leavesPrograms: false,
    programTables: true,
  });

  test('a session that wrote them counts as open once, whatever it writes next, until it closes', () => {
    const s = setup();
    const writes = s.registry.programTableWrites();
    run(s, AUTOCOMMIT, programTables());
    assert.equal(s.registry.programTableWritersOpen(), true);
    assert.notEqual(s.registry.programTableWrites(), writes);
    run(s, AUTOCOMMIT, programTables());
    run(s, ERROR, programTables());
    s.txn.releaseAll();
    assert.equal(s.registry.programTableWritersOpen(), false, 'counted once, released once');
  });

  test('one whose reply never came counts too', () => {
    const s = setup();
    const marks = programTables();
    s.txn.begin(marks);
    s.txn.abandon(marks);
    assert.equal(s.registry.programTableWritersOpen(), true);
    s.txn.releaseAll();
    assert.equal(s.registry.programTableWritersOpen(), false);
  });
});

describe('transaction state: autocommit = 0', () => {
  test('every write opens a transaction that holds its tables until COMMIT', () => {
    const s = setup(MANUAL);
    assert.equal(s.txn.autocommit, false);
    run(s, MANUAL_IN_TRANS, writes(s.t));
    assert.ok(s.txn.inTransaction);
    assert.equal(s.registry.inFlight(s.t), 1);
    run(s, MANUAL); // COMMIT
    assert.equal(s.registry.inFlight(s.t), 0);
  });

  test('a failed first statement still counts as in a transaction: its marks are held', () => {
    const s = setup(MANUAL);
    run(s, ERROR, writes(s.t));
    assert.equal(s.registry.inFlight(s.t), 1, 'the server may have opened the transaction');
    run(s, MANUAL);
    assert.equal(s.registry.inFlight(s.t), 0);
  });
});

describe('transaction state: snapshots and isolation', () => {
  test("the snapshot is the sequence before the transaction's first statement", () => {
    const s = setup();
    const seqAtBegin = run(s, IN_TRANS); // BEGIN
    assert.equal(s.txn.snapshotSeq, seqAtBegin);
    assert.equal(s.txn.snapshotEstablished, false, 'InnoDB has not taken it yet');
    // Another session commits a write meanwhile: the snapshot keeps its number.
    s.registry.beginWrite(s.u);
    s.registry.endWrite(s.u);
    run(s, IN_TRANS, null, { establishesSnapshot: true }); // the first read
    assert.equal(s.txn.snapshotSeq, seqAtBegin);
    assert.ok(s.txn.snapshotEstablished);
    run(s, AUTOCOMMIT);
    const next = run(s, IN_TRANS, null, { establishesSnapshot: true }); // START TRANSACTION ...
    assert.equal(s.txn.snapshotSeq, next, 'a new transaction, a new snapshot');
    assert.ok(s.txn.snapshotEstablished, 'WITH CONSISTENT SNAPSHOT takes it at once');
  });

  test('the transaction runs at the level it began with', () => {
    const s = setup();
    s.txn.onReply(IN_TRANS, s.registry.sequence(), null, false, false, 'READ-COMMITTED');
    assert.equal(s.txn.isolation, 'READ-COMMITTED');
    // SET SESSION TRANSACTION ISOLATION LEVEL inside it changes the next one, not this one.
    s.txn.onReply(IN_TRANS, s.registry.sequence(), null, false, false, 'SERIALIZABLE');
    assert.equal(s.txn.isolation, 'READ-COMMITTED');
  });

  test('SET TRANSACTION (next transaction only) makes that transaction uncacheable', () => {
    const s = setup();
    run(s, AUTOCOMMIT, null, { setsIsolation: true });
    assert.ok(s.txn.isolationOverride, 'the level of the next transaction is not known');
    run(s, IN_TRANS); // BEGIN
    assert.ok(s.txn.isolationOverride);
    assert.equal(s.txn.isolation, null);
    run(s, IN_TRANS);
    assert.ok(s.txn.isolationOverride, 'for the whole transaction');
    run(s, AUTOCOMMIT); // COMMIT
    assert.equal(s.txn.isolationOverride, false, 'the one-off level is gone with it');
  });

  test('a SET TRANSACTION that failed changes nothing', () => {
    const s = setup();
    run(s, ERROR, null, { setsIsolation: true });
    assert.equal(s.txn.isolationOverride, false);
  });
});
