/**
 * The statement memo looked up by bytes: the same entry as by text, and never another text's
 * entry when two texts share a hash.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatementMemo, hashBytes, modeIndex } from '../../src/proxy/statement-memo.ts';
import type { ClassifyMode } from '../../src/proxy/statement-memo.ts';
import { NameEncoding } from '../../src/sql/name-encoding.ts';

const MODE: ClassifyMode = {
  ansiQuotes: false,
  noBackslashEscapes: false,
  lowerCaseTableNames: 0,
  names: NameEncoding.UTF8MB4,
};
const VERSION = '10.11.19-MariaDB';

/** A COM_QUERY payload: the command byte, then the text. */
function payload(sql: string): Buffer {
  return Buffer.concat([Buffer.from([0x03]), Buffer.from(sql, 'latin1')]);
}

function lookUp(memo: StatementMemo, sql: string): ReturnType<StatementMemo['classify']> {
  return memo.classifyBytes(payload(sql), 1, modeIndex(MODE), () => MODE, VERSION);
}

test('a statement looked up by its bytes is the entry of its text', () => {
  const memo = new StatementMemo();
  const sql = 'SELECT c FROM sbtest1 WHERE id=42';
  // The doorkeeper keeps a text from its second sighting on.
  const once = lookUp(memo, sql);
  const first = lookUp(memo, sql);
  assert.notEqual(first, once);
  assert.equal(lookUp(memo, sql), first);
  assert.equal(memo.classify(sql, MODE, VERSION), first);
  assert.equal(first.info.kind, 'select');
  // The entry keeps a copy: the payload it came from may be overwritten by the next read.
  const reused = payload(sql);
  const entry = memo.classifyBytes(reused, 1, modeIndex(MODE), () => MODE, VERSION);
  reused.fill(0x20);
  assert.equal(lookUp(memo, sql), entry);
});

test('two texts with the same hash each get their own entry', () => {
  // Find two statements whose bytes hash alike (32 bits: a few hundred thousand tries).
  const seen = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let id = 0; pair === null; id++) {
    const sql = `SELECT v FROM t WHERE id = ${id}`;
    const bytes = Buffer.from(sql, 'latin1');
    const hash = hashBytes(bytes, 0, bytes.length);
    const other = seen.get(hash);
    if (other !== undefined) pair = [other, sql];
    else seen.set(hash, sql);
  }
  const memo = new StatementMemo();
  const [a, b] = pair;
  lookUp(memo, a);
  lookUp(memo, b);
  const entryA = lookUp(memo, a);
  const entryB = lookUp(memo, b);
  assert.notEqual(entryA, entryB);
  assert.equal(lookUp(memo, a), memo.classify(a, MODE, VERSION));
  assert.equal(lookUp(memo, b), memo.classify(b, MODE, VERSION));
  assert.equal(lookUp(memo, a).bytes!.toString('latin1'), a);
});
