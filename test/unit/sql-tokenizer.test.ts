/**
 * The SQL tokenizer: token kinds and boundaries on tricky lexing, comments of every kind
 * (executable ones included), and the cache key text.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Kw } from '../../src/sql/keywords.ts';
import { serverVersionNumber } from '../../src/sql/server-version.ts';
import {
  cacheKeyText,
  tokenize,
  TokenKind,
  type TokenizerOptions,
} from '../../src/sql/tokenizer.ts';
import { WordTable } from '../../src/sql/word-table.ts';

const PLAIN: TokenizerOptions = { ansiQuotes: false };

const KIND_NAMES: Record<number, string> = {
  [TokenKind.Word]: 'word',
  [TokenKind.QuotedIdentifier]: 'quoted',
  [TokenKind.String]: 'string',
  [TokenKind.Number]: 'number',
  [TokenKind.UserVariable]: 'uservar',
  [TokenKind.SystemVariable]: 'sysvar',
  [TokenKind.Placeholder]: 'placeholder',
  [TokenKind.Operator]: 'op',
};

/** "kind:text" for every token. */
function lex(sql: string, options: TokenizerOptions = PLAIN): string[] {
  const tokens = tokenize(sql, options);
  assert.equal(tokens.error, null, `lexing ${sql}`);
  const out: string[] = [];
  for (let i = 0; i < tokens.count; i++)
    out.push(`${KIND_NAMES[tokens.kinds[i]!]}:${tokens.text(i)}`);
  return out;
}

describe('tokens', () => {
  const cases: Array<[string, string[], TokenizerOptions?]> = [
    ['SELECT a FROM t', ['word:SELECT', 'word:a', 'word:FROM', 'word:t']],
    ['sElEcT\t*\nfrom\r\nt', ['word:sElEcT', 'op:*', 'word:from', 'word:t']],
    ['`my table`.`a``b`', ['quoted:`my table`', 'op:.', 'quoted:`a``b`']],
    ['"x"', ['string:"x"']],
    ['"x"', ['quoted:"x"'], { ansiQuotes: true }],
    ["'it''s'", ["string:'it''s'"]],
    ["'a\\'b'", ["string:'a\\'b'"]],
    ["'a\\\\' 'b'", ["string:'a\\\\'", "string:'b'"]],
    [
      "'a\\' , 'b'",
      ["string:'a\\'", 'op:,', "string:'b'"],
      { ansiQuotes: false, noBackslashEscapes: true },
    ],
    ['"a""b"', ['string:"a""b"']],
    ["_utf8mb4'x'", ["string:_utf8mb4'x'"]],
    ["_binary 'x'", ['word:_binary', "string:'x'"]],
    ["N'x' n'y'", ["string:N'x'", "string:n'y'"]],
    ["X'1F' x'aa' B'01' b'1'", ["string:X'1F'", "string:x'aa'", "string:B'01'", "string:b'1'"]],
    [
      '1 1.5 .5 1e5 1.5E-3 2e+2 1.',
      [
        'number:1',
        'number:1.5',
        'number:.5',
        'number:1e5',
        'number:1.5E-3',
        'number:2e+2',
        'number:1.',
      ],
    ],
    ['0x1F 0b101 0X1f', ['number:0x1F', 'number:0b101', 'word:0X1f']],
    ['0xZZ 1abc 123_t 123e', ['word:0xZZ', 'word:1abc', 'word:123_t', 'word:123e']],
    ['2e5x', ['number:2e5', 'word:x']],
    ['t.1col t.5', ['word:t', 'op:.', 'word:1col', 'word:t', 'op:.', 'word:5']],
    ['SELECT .5', ['word:SELECT', 'number:.5']],
    ['a.b.c', ['word:a', 'op:.', 'word:b', 'op:.', 'word:c']],
    [
      '@x @`a b` @\'q\' @"d" @a.b$c',
      ['uservar:@x', 'uservar:@`a b`', "uservar:@'q'", 'uservar:@"d"', 'uservar:@a.b$c'],
    ],
    [
      '@@version @@session.sql_mode @@GLOBAL.x',
      ['sysvar:@@version', 'sysvar:@@session.sql_mode', 'sysvar:@@GLOBAL.x'],
    ],
    [
      'a = ? AND b IN (?, ?)',
      [
        'word:a',
        'op:=',
        'placeholder:?',
        'word:AND',
        'word:b',
        'word:IN',
        'op:(',
        'placeholder:?',
        'op:,',
        'placeholder:?',
        'op:)',
      ],
    ],
    [
      'a<=>b<=c>=d<>e!=f:=g',
      [
        'word:a',
        'op:<=>',
        'word:b',
        'op:<=',
        'word:c',
        'op:>=',
        'word:d',
        'op:<>',
        'word:e',
        'op:!=',
        'word:f',
        'op::=',
        'word:g',
      ],
    ],
    [
      'a||b&&c<<1>>2',
      ['word:a', 'op:||', 'word:b', 'op:&&', 'word:c', 'op:<<', 'number:1', 'op:>>', 'number:2'],
    ],
    ['café naïve', ['word:café', 'word:naïve']],
    ['$x _y', ['word:$x', 'word:_y']],
  ];
  for (const [sql, expected, options] of cases) {
    test(sql, () => assert.deepEqual(lex(sql, options), expected));
  }

  test('keywords are recognised in any letter case, other words are not', () => {
    const tokens = tokenize('select SeLeCt FROM sbtest1 `select`', PLAIN);
    assert.equal(tokens.ids[0], Kw.SELECT);
    assert.equal(tokens.ids[1], Kw.SELECT);
    assert.equal(tokens.ids[2], Kw.FROM);
    assert.equal(tokens.ids[3], -1);
    assert.equal(tokens.ids[4], -1);
  });

  test('a word after a qualifying dot is a name even when reserved', () => {
    const tokens = tokenize('t.select', PLAIN);
    assert.equal(tokens.ids[2], -1);
  });

  test('identifier() undoes quoting', () => {
    const tokens = tokenize('`a``b` "c""d" plain', { ansiQuotes: true });
    assert.equal(tokens.identifier(0), 'a`b');
    assert.equal(tokens.identifier(1), 'c"d');
    assert.equal(tokens.identifier(2), 'plain');
  });

  test('unterminated strings, identifiers and comments are errors', () => {
    assert.equal(tokenize("SELECT 'abc", PLAIN).error, 'unterminated string');
    assert.equal(tokenize('SELECT `abc', PLAIN).error, 'unterminated identifier');
    assert.equal(tokenize('SELECT 1 /* abc', PLAIN).error, 'unterminated comment');
    assert.equal(tokenize('SELECT 1 /*! abc', PLAIN).error, 'unterminated comment');
    assert.equal(tokenize("SELECT 'a\\'", PLAIN).error, 'unterminated string');
    assert.equal(
      tokenize("SELECT 'a\\'", { ansiQuotes: false, noBackslashEscapes: true }).error,
      null,
    );
  });

  test('a list can be reused and grows past its initial size', () => {
    const sql = Array.from({ length: 500 }, (_, i) => `c${i}`).join(', ');
    const first = tokenize(sql, PLAIN);
    assert.equal(first.count, 999);
    const again = tokenize('SELECT 1', PLAIN, first);
    assert.equal(again, first);
    assert.equal(again.count, 2);
  });
});

describe('comments', () => {
  const cases: Array<[string, string[]]> = [
    ['SELECT 1 -- comment', ['word:SELECT', 'number:1']],
    ['SELECT 1 --\tcomment\n+ 2', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 --', ['word:SELECT', 'number:1']],
    ['SELECT 1--1', ['word:SELECT', 'number:1', 'op:-', 'op:-', 'number:1']],
    ['SELECT 1 --x', ['word:SELECT', 'number:1', 'op:-', 'op:-', 'word:x']],
    ['SELECT 1 # comment\n, 2', ['word:SELECT', 'number:1', 'op:,', 'number:2']],
    [
      "SELECT '#not' , '-- not', '/* not */'",
      ['word:SELECT', "string:'#not'", 'op:,', "string:'-- not'", 'op:,', "string:'/* not */'"],
    ],
    ['SELECT /* a */ 1 /* b */', ['word:SELECT', 'number:1']],
    ['SELECT 1 /* a /* b */ + 2', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT `a -- b` FROM t', ['word:SELECT', 'quoted:`a -- b`', 'word:FROM', 'word:t']],
    ['SELECT 1 /*! + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 /*!40101 + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 /*!101119+2*/', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 /*M! + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 /*M!100100 + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    // MariaDB never runs MySQL-style comments numbered 50700..99999, but runs /*M! ones.
    ['SELECT 1 /*!50700 + 2 */', ['word:SELECT', 'number:1']],
    ['SELECT 1 /*!99999 + 2 */', ['word:SELECT', 'number:1']],
    ['SELECT 1 /*M!50700 + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    ['SELECT 1 /*!50699 + 2 */', ['word:SELECT', 'number:1', 'op:+', 'number:2']],
    // Fewer than 5 digits is no version: the digits are SQL.
    ['SELECT 1 /*!1234 */', ['word:SELECT', 'number:1', 'number:1234']],
    // A plain comment inside an executable one ends at its own */.
    [
      'SELECT 1 /*! + 1 /* c */ + 1 */',
      ['word:SELECT', 'number:1', 'op:+', 'number:1', 'op:+', 'number:1'],
    ],
    ['/*M*/ SELECT 1', ['word:SELECT', 'number:1']],
    ['SELECT 1 /*!*/', ['word:SELECT', 'number:1']],
  ];
  for (const [sql, expected] of cases) {
    test(sql.replace(/\s+/g, ' '), () => assert.deepEqual(lex(sql), expected));
  }

  test('versioned comments follow the server version when it is known', () => {
    const at = (serverVersion: number, sql: string): number =>
      tokenize(sql, { ansiQuotes: false, serverVersion }).count;
    assert.equal(at(101119, 'SELECT 1 /*!101119 + 2 */'), 4);
    assert.equal(at(101119, 'SELECT 1 /*!101120 + 2 */'), 2);
    assert.equal(at(101119, 'SELECT 1 /*M!110000 + 2 */'), 2);
    assert.equal(at(110402, 'SELECT 1 /*M!110000 + 2 */'), 4);
    // 7 digits: a 6-digit version followed by SQL.
    assert.equal(at(101119, 'SELECT 1 /*!9999999 + 2 */'), 2);
  });

  test('an unknown server version makes 6-digit versions uncertain, 5-digit ones not', () => {
    const six = tokenize('SELECT 1 /*!100100 + 2 */', PLAIN);
    assert.equal(six.uncertainVersionedComment, true);
    assert.equal(six.count, 4);
    assert.equal(tokenize('SELECT 1 /*!40101 + 2 */', PLAIN).uncertainVersionedComment, false);
    assert.equal(
      tokenize('SELECT 1 /*!100100 + 2 */', { ansiQuotes: false, serverVersion: 100100 })
        .uncertainVersionedComment,
      false,
    );
  });

  test('hasComments tells comments that do not run from executable ones', () => {
    const flags = (sql: string): [boolean, boolean] => {
      const tokens = tokenize(sql, PLAIN);
      return [tokens.hasComments, tokens.hasExecutableComments];
    };
    assert.deepEqual(flags('SELECT 1'), [false, false]);
    assert.deepEqual(flags('/* x */ SELECT 1'), [true, false]);
    assert.deepEqual(flags('SELECT 1 -- x'), [true, false]);
    assert.deepEqual(flags('SELECT 1 # x'), [true, false]);
    assert.deepEqual(flags('SELECT /*! 1 */'), [false, true]);
    assert.deepEqual(flags('SELECT 1 /*!50700 x */'), [true, false]);
    assert.deepEqual(flags("SELECT '/* x */'"), [false, false]);
  });

  test('a nested executable comment is an error', () => {
    assert.equal(tokenize('SELECT /*! 1 /*! 2 */ */', PLAIN).error, 'nested executable comment');
  });
});

describe('cache key text', () => {
  const key = (sql: string, options: TokenizerOptions = PLAIN): string =>
    cacheKeyText(sql, options);

  test('a leading trace comment does not split the cache', () => {
    assert.equal(key('/* trace-id=42 */ SELECT 1'), 'SELECT 1');
    assert.equal(key('/* a */ /* b */\n  SELECT 1'), 'SELECT 1');
    assert.equal(key('-- a\n# b\nSELECT 1'), 'SELECT 1');
  });

  test('a trailing comment, whitespace and semicolons do not either', () => {
    assert.equal(key('SELECT 1 /* app=x */'), 'SELECT 1');
    assert.equal(key("SELECT 1 /*traceparent='00-ab-cd-01'*/"), 'SELECT 1');
    assert.equal(key('SELECT 1 -- x'), 'SELECT 1');
    assert.equal(key('SELECT 1 # x'), 'SELECT 1');
    assert.equal(key('  \n\tSELECT 1 ;; \n'), 'SELECT 1');
  });

  test('comments inside the statement are kept: they name result columns', () => {
    assert.equal(key('SELECT 1 /* c */ + 1'), 'SELECT 1 /* c */ + 1');
    assert.equal(
      key('/* t */ SELECT a FROM t WHERE /* x */ b = 1 -- y'),
      'SELECT a FROM t WHERE /* x */ b = 1',
    );
  });

  test('whitespace and letter case are kept', () => {
    assert.equal(key('SELECT  1'), 'SELECT  1');
    assert.notEqual(key('SELECT 1  +  1'), key('SELECT 1+1'));
    assert.equal(key('select A from T'), 'select A from T');
  });

  test('executable comments are SQL and stay, markers included', () => {
    assert.equal(key('/*!40101 SET NAMES utf8 */'), '/*!40101 SET NAMES utf8 */');
    assert.equal(key('SELECT /*! SQL_NO_CACHE */ 1'), 'SELECT /*! SQL_NO_CACHE */ 1');
    assert.equal(key('SELECT 1 /*M! + 1 */ -- x'), 'SELECT 1 /*M! + 1 */');
    assert.notEqual(key('/*! SELECT 1 */'), key('SELECT 1'));
    // A versioned comment the server skips is a comment.
    assert.equal(key('SELECT 1 /*!50700 + 1 */'), 'SELECT 1');
  });

  test('strings that look like comments are not comments', () => {
    assert.equal(key("SELECT '/* x */' -- y"), "SELECT '/* x */'");
    assert.equal(key("SELECT '-- x'"), "SELECT '-- x'");
  });

  test('a text of comments only has an empty key', () => {
    assert.equal(key('/* nothing */ -- at all'), '');
    assert.equal(key(''), '');
  });
});

describe('server version numbers', () => {
  test('read from handshake version strings', () => {
    assert.equal(serverVersionNumber('10.11.19-MariaDB-0+deb12u1'), 101119);
    assert.equal(serverVersionNumber('5.5.5-10.6.4-MariaDB-log'), 100604);
    assert.equal(serverVersionNumber('11.4.2-MariaDB'), 110402);
    assert.equal(serverVersionNumber('8.0.36'), 80036);
    assert.equal(serverVersionNumber('unknown'), null);
  });
});

describe('word table', () => {
  test('looks words up in any case, from a slice, and misses others', () => {
    const table = new WordTable(['select', 'FROM', 'x']);
    assert.equal(table.lookup('..SeLeCt..', 2, 8), 0);
    assert.equal(table.lookup('from', 0, 4), 1);
    assert.equal(table.lookup('X', 0, 1), 2);
    assert.equal(table.lookup('selec', 0, 5), -1);
    assert.equal(table.lookup('selects', 0, 7), -1);
    assert.equal(table.lookup('', 0, 0), -1);
    assert.equal(table.lookup('séléct', 0, 6), -1);
  });

  test('refuses duplicates and words that are not plain ASCII', () => {
    assert.throws(() => new WordTable(['a', 'A']), /duplicate/);
    assert.throws(() => new WordTable(['a b']), /plain ASCII/);
  });
});
