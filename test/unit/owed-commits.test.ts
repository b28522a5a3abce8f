/**
 * The worker's timer for COMMITs the proxy answered and still owes the server: set only while a
 * session owes one, each owing session asked once per delay until it has sent its COMMIT.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { OwedCommits } from '../../src/proxy/owed-commits.ts';

const DELAY_MS = 5;

/** Waits until `done` holds, a few delays at a time (the timer is unref'd, not the test). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += DELAY_MS) {
    if (waited > 5000) assert.fail('the owed COMMITs were never flushed');
    await sleep(DELAY_MS);
  }
}

describe('owed COMMITs', () => {
  test('no timer while nothing is owed; one for every owing session, gone once they flushed', async () => {
    const owed = new OwedCommits(DELAY_MS);
    assert.equal(owed.armed, false);
    const calls = { a: 0, b: 0 };
    owed.add(() => (calls.a++, false));
    owed.add(() => (calls.b++, false));
    assert.equal(owed.armed, true);
    assert.equal(owed.size, 2);
    await until(() => calls.a > 0 && calls.b > 0);
    assert.deepEqual(calls, { a: 1, b: 1 });
    assert.equal(owed.armed, false);
    assert.equal(owed.size, 0);
    await sleep(DELAY_MS * 4);
    assert.deepEqual(calls, { a: 1, b: 1 }, 'a session that sent its COMMIT is not asked again');
  });

  test('a session busy when asked is asked again until it has sent its COMMIT', async () => {
    const owed = new OwedCommits(DELAY_MS);
    let calls = 0;
    // Busy twice (a reply still coming), then sends it.
    owed.add(() => ++calls < 3);
    await until(() => calls === 3);
    assert.equal(owed.armed, false);
    await sleep(DELAY_MS * 4);
    assert.equal(calls, 3);
  });

  test('a session added twice before the timer is asked once', async () => {
    const owed = new OwedCommits(DELAY_MS);
    let calls = 0;
    const flush = (): boolean => (calls++, false);
    owed.add(flush);
    owed.add(flush);
    await until(() => !owed.armed);
    assert.equal(calls, 1);
  });
});
