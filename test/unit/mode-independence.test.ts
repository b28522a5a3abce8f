import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tokenizesTheSameInEveryMode } from '../../src/sql/mode-independence.ts';

test('a text of plain ASCII without backslashes or double quotes reads the same in every mode', () => {
  assert.equal(tokenizesTheSameInEveryMode("CALL p('abc', `x`)"), true);
  assert.equal(tokenizesTheSameInEveryMode('SET @a = 1'), true);
});

test('backslashes, double quotes and bytes above 0x7F depend on the session’s mode or charset', () => {
  assert.equal(tokenizesTheSameInEveryMode("SET @a = 'x\\'"), false);
  assert.equal(tokenizesTheSameInEveryMode('SET @a = "x"'), false);
  assert.equal(tokenizesTheSameInEveryMode(`SET @a = '${String.fromCharCode(0x83, 0x5c)}'`), false);
});
