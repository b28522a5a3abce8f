/**
 * Views kept per length of a reused read buffer: each view shows the bytes of the read it is
 * asked for, whatever was read before, into that buffer or another.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StartViews } from '../../src/protocol/start-views.ts';

test('every view is of the read it is asked for', () => {
  for (const from of [0, 4]) {
    const views = new StartViews(from);
    const buffer = Buffer.alloc(256);
    const other = Buffer.alloc(256);
    // Same length, other bytes; lengths 64 apart (one place among the kept views); an empty
    // read; another buffer, as after a write held the first; and the first one again.
    const reads: Array<[Buffer, string]> = [
      [buffer, 'abcdefgh'],
      [buffer, 'ijklmnop'],
      [buffer, 'abcdefgh' + 'x'.repeat(64)],
      [buffer, 'abcd'],
      [other, 'qrstuvwx'],
      [buffer, 'yzabcdef'],
    ];
    for (const [target, text] of reads) {
      const length = target.write(text, 'latin1');
      const view = views.of(target, length);
      assert.equal(view.buffer, target.buffer);
      assert.equal(view.toString('latin1'), text.slice(from));
    }
    // Asked again for a length it holds: the same view, no new one.
    assert.equal(views.of(buffer, 8), views.of(buffer, 8));
  }
});
