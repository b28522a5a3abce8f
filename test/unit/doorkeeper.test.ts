/**
 * The doorkeeper in front of the statement memo: a text is "seen before" only from its second
 * sighting, and the filter forgets everything at once after its bound.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Doorkeeper } from '../../src/cache/doorkeeper.ts';
import { hashText } from '../../src/sql/statement-shape.ts';

describe('doorkeeper', () => {
  test('says seen only from the second sighting, and forgets after resetAfter sightings', () => {
    const doorkeeper = new Doorkeeper(1 << 16, 5);
    const seen = (text: string): boolean => doorkeeper.seenBefore(hashText(text));
    assert.equal(seen('SELECT 1'), false);
    assert.equal(seen('SELECT 1'), true);
    assert.equal(seen('SELECT 2'), false);
    assert.equal(seen('SELECT 1'), true);
    // The fifth sighting clears the bits first.
    assert.equal(seen('SELECT 1'), false);
    assert.equal(seen('SELECT 1'), true);
  });

  test('distinct texts mostly stay unseen while the filter is far from full', () => {
    const doorkeeper = new Doorkeeper(1 << 18, 1 << 20);
    let seen = 0;
    for (let id = 0; id < 20_000; id++) {
      if (doorkeeper.seenBefore(hashText(`SELECT c FROM sbtest1 WHERE id=${id}`))) seen++;
    }
    // 20k of 262k bits set at most: a collision rate near 4%.
    assert.ok(seen < 1500, `${seen} false sightings`);
  });
});

describe('a doorkeeper threads share', () => {
  test('a sighting in one view counts in every view of the same memory', () => {
    const shared = Doorkeeper.allocate(1 << 16);
    const one = new Doorkeeper(1 << 16, 1000, shared);
    const other = new Doorkeeper(1 << 16, 1000, shared);
    const hash = hashText('SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104');
    assert.equal(one.seenBefore(hash), false);
    assert.equal(other.seenBefore(hash), true, 'seen by the other view');
    other.reset();
    assert.equal(one.seenBefore(hash), false, 'a reset in one clears them all');
  });

  test('memory of another size is refused', () => {
    assert.throws(() => new Doorkeeper(1 << 16, 10, Doorkeeper.allocate(1 << 15)), RangeError);
  });
});
