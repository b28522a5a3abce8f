/**
 * Single flight: identical misses in one worker wait for the first instead of all asking the
 * server, and never for longer than the bound. What sessions rely on: a waiter is always woken
 * (reply in, flight abandoned, or bound reached), exactly once, on its own turn of the event
 * loop; a flight past its bound or already landed takes no new waiters; a miss waits only for
 * a flight of its own key, though flights are kept by the key's hash; and finishing an old flight
 * never ends a newer one in its place.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { SingleFlight } from '../../src/cache/single-flight.ts';

const MAX_WAIT_MS = 50;

/** Lets immediates queued so far run (waiters resume on their own turn). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('single flight', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('a miss joins the flight of the same key only', () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    assert.equal(flights.joinable('k', 0), null, 'nothing to wait for before any flight');
    const flight = flights.start('k', 0);
    assert.equal(flights.joinable('k', 1), flight);
    assert.equal(flights.joinable('other', 1), null, 'another key never waits for it');
  });

  test('when the reply is in, every waiter resumes once, after the finishing code returns', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    const flight = flights.start('k', 0);
    const woken: number[] = [];
    for (let waiter = 0; waiter < 3; waiter++) flight.wait(() => woken.push(waiter), MAX_WAIT_MS);
    flights.finish(flight);
    // The session whose reply ended is still inside its handler: others must not run inside it.
    assert.deepEqual(woken, []);
    await nextTurn();
    assert.deepEqual(woken.sort(), [0, 1, 2]);
    // The bound's timer was cleared: it wakes nobody a second time.
    mock.timers.tick(MAX_WAIT_MS * 2);
    await nextTurn();
    assert.deepEqual(woken.sort(), [0, 1, 2]);
    assert.equal(flights.joinable('k', 1), null, 'a landed flight takes no new waiters');
  });

  test('a flight that never lands lets its waiters go at the bound', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    const flight = flights.start('k', 0);
    let woken = 0;
    flight.wait(() => woken++, MAX_WAIT_MS);
    mock.timers.tick(MAX_WAIT_MS - 1);
    await nextTurn();
    assert.equal(woken, 0, 'still waiting within the bound');
    mock.timers.tick(1);
    await nextTurn();
    assert.equal(woken, 1, 'woken at the bound although the first miss is still running');
    assert.equal(flights.joinable('k', 1), null, 'newcomers go to the server themselves');
    // The slow reply arrives later: nobody is woken twice.
    flights.finish(flight);
    await nextTurn();
    assert.equal(woken, 1);
  });

  test('a flight older than the bound takes no new waiters, even before its timer ran', () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    flights.start('k', 1000);
    assert.notEqual(flights.joinable('k', 1000 + MAX_WAIT_MS - 1), null);
    assert.equal(flights.joinable('k', 1000 + MAX_WAIT_MS), null);
  });

  test('keys whose hashes share a place: the newer flight takes it, the older still lands', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    // Hashes that differ only above the place's bits.
    const first = flights.start('a', 0, 7);
    let firstWoken = 0;
    first.wait(() => firstWoken++, MAX_WAIT_MS);
    const second = flights.start('b', 0, 7 + 2 ** 20);
    assert.equal(flights.joinable('a', 1, 7), null, 'its place is taken: the miss asks the server');
    assert.equal(flights.joinable('b', 1, 7 + 2 ** 20), second);
    flights.finish(first);
    await nextTurn();
    assert.equal(firstWoken, 1, 'the older flight’s waiter is woken when it lands');
    assert.equal(flights.joinable('b', 1, 7 + 2 ** 20), second, 'the newer one stays in place');
    flights.finish(second);
    assert.equal(flights.joinable('b', 1, 7 + 2 ** 20), null);
  });

  test('finishing an older flight leaves a newer one of the same key in place', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    const old = flights.start('k', 0);
    let oldWoken = 0;
    old.wait(() => oldWoken++, MAX_WAIT_MS);
    // The old flight's waiters went at the bound; a new miss of the same key starts a flight.
    mock.timers.tick(MAX_WAIT_MS);
    const newer = flights.start('k', MAX_WAIT_MS);
    flights.finish(old);
    await nextTurn();
    assert.equal(oldWoken, 1);
    assert.equal(flights.joinable('k', MAX_WAIT_MS + 1), newer);
    flights.finish(newer);
    assert.equal(flights.joinable('k', MAX_WAIT_MS + 1), null);
  });

  test('two keys of one hash: a miss waits only for its own key, and each finish ends its own', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    const HASH = 7;
    const first = flights.start('a', 0, HASH);
    assert.equal(flights.joinable('a', 1, HASH), first);
    assert.equal(flights.joinable('b', 1, HASH), null, "another key's flight is no reply for it");
    let firstWoken = 0;
    first.wait(() => firstWoken++, MAX_WAIT_MS);
    // The other key's miss takes the place over; the first flight's waiters still wake.
    const second = flights.start('b', 1, HASH);
    assert.equal(flights.joinable('a', 2, HASH), null);
    assert.equal(flights.joinable('b', 2, HASH), second);
    flights.finish(first);
    await nextTurn();
    assert.equal(firstWoken, 1);
    assert.equal(
      flights.joinable('b', 2, HASH),
      second,
      'the older flight left the newer in place',
    );
    flights.finish(second);
    assert.equal(flights.joinable('b', 2, HASH), null);
  });

  test('an abandoned flight (its connection lost) wakes its waiters like a landed one', async () => {
    const flights = new SingleFlight(MAX_WAIT_MS);
    const flight = flights.start('k', 0);
    let woken = 0;
    flight.wait(() => woken++, MAX_WAIT_MS);
    flight.land();
    await nextTurn();
    assert.equal(woken, 1);
    assert.equal(flights.joinable('k', 1), null);
  });
});
