import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readProbe } from '../../src/proxy/session-probe.ts';
import {
  NameEncoding,
  catalogNameOf,
  isUnresolvableName,
  nameEncodingOf,
  routineNameOf,
  statementName,
  withResolvableNames,
} from '../../src/sql/name-encoding.ts';
import { classify } from '../../src/sql/statement-classifier.ts';

/** A statement's bytes as a utf8mb4 client sends them, read as the router reads them. */
const asSent = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

test('the metadata and a utf8 client spell a non-ASCII name alike', () => {
  for (const name of ['t_é', 'таблица', 't$ї', '😀']) {
    const info = classify(asSent(`SELECT * FROM \`${name}\``), {
      ansiQuotes: false,
      noBackslashEscapes: false,
      lowerCaseTableNames: 0,
    });
    assert.equal(info.reads[0]!.name, catalogNameOf(name, 0));
  }
  assert.equal(catalogNameOf('Plain', 0), 'Plain');
  assert.equal(catalogNameOf('Plain', 1), 'plain');
  assert.equal(catalogNameOf('Plain', 2), 'plain');
  // Lowering UTF-8 bytes read as Latin-1 is not the server's lowering.
  assert.equal(catalogNameOf('É', 1), null);
  assert.equal(catalogNameOf('é', 2), null);
});

test('non-ASCII names are resolved only for utf8 clients under lower_case_table_names 0', () => {
  assert.equal(nameEncodingOf('utf8mb4'), NameEncoding.UTF8MB4);
  assert.equal(nameEncodingOf('UTF8'), NameEncoding.UTF8MB3);
  assert.equal(nameEncodingOf('utf8mb3'), NameEncoding.UTF8MB3);
  assert.equal(nameEncodingOf('latin1'), NameEncoding.OTHER);
  const e = asSent('é');
  const emoji = asSent('😀');
  assert.equal(statementName(e, NameEncoding.UTF8MB4, 0), e);
  assert.equal(statementName(e, NameEncoding.UTF8MB3, 0), e);
  assert.ok(isUnresolvableName(statementName(e, NameEncoding.OTHER, 0)));
  assert.ok(isUnresolvableName(statementName(e, NameEncoding.UTF8MB4, 1)));
  assert.equal(statementName(emoji, NameEncoding.UTF8MB4, 0), emoji);
  assert.ok(isUnresolvableName(statementName(emoji, NameEncoding.UTF8MB3, 0)));
  assert.equal(statementName('plain', NameEncoding.OTHER, 1), 'plain');
  // Marked once, however often asked.
  const marked = statementName(e, NameEncoding.OTHER, 0);
  assert.equal(statementName(marked, NameEncoding.OTHER, 0), marked);
});

test('a statement keeps its info when every name is resolvable, else its names are marked', () => {
  const options = { ansiQuotes: false, noBackslashEscapes: false, lowerCaseTableNames: 0 as const };
  const ascii = classify('UPDATE t SET a = (SELECT b FROM s.u)', options);
  assert.equal(withResolvableNames(ascii, NameEncoding.OTHER, 0), ascii);
  const mixed = classify(asSent('UPDATE t SET a = (SELECT b FROM `é`.u)'), options);
  assert.equal(withResolvableNames(mixed, NameEncoding.UTF8MB4, 0), mixed);
  const marked = withResolvableNames(mixed, NameEncoding.OTHER, 0);
  assert.deepEqual(marked.writes, [{ schema: null, name: 't' }]);
  const u = marked.reads.find((table) => table.name === 'u')!;
  assert.ok(isUnresolvableName(u.schema!));
  assert.equal(
    mixed.reads.find((table) => table.name === 'u')!.schema,
    asSent('é'),
    'the memo entry of another mode is untouched',
  );
});

test('the probe reads the current schema as its UTF-8 bytes, whatever the results charset', () => {
  const row = (hex: string | null, lctn: string, charset: string): Array<string | null> => [
    hex,
    'root@%',
    null,
    lctn,
    '',
    'REPEATABLE-READ',
    charset,
    ...Array.from({ length: 17 }, () => ''),
  ];
  const schema = 'db_ї';
  const hex = Buffer.from(schema, 'utf8').toString('hex').toUpperCase();
  assert.equal(readProbe(row(hex, '0', 'latin1'))!.schema, asSent(schema));
  assert.equal(readProbe(row(hex, '0', 'latin1'))!.names, NameEncoding.OTHER);
  assert.equal(readProbe(row(hex, '0', 'utf8mb3'))!.names, NameEncoding.UTF8MB3);
  assert.ok(isUnresolvableName(readProbe(row(hex, '1', 'utf8mb4'))!.schema!));
  assert.equal(readProbe(row('4142', '1', 'utf8mb4'))!.schema, 'ab');
  assert.equal(readProbe(row(null, '0', 'utf8mb4'))!.schema, null);
  assert.equal(readProbe(row('zz', '0', 'utf8mb4')), null);
});

test('a routine name is lowered whatever lower_case_table_names says, and only in ASCII', () => {
  assert.equal(routineNameOf('My_Proc'), 'my_proc');
  // Lowering UTF-8 bytes read as Latin-1 is not how the server lowers the name: never found.
  assert.equal(routineNameOf(asSent('Één')), null);
  assert.equal(routineNameOf(statementName(asSent('é'), NameEncoding.OTHER, 0)), null);
  assert.equal(routineNameOf(''), null);
});
