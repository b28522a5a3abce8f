/**
 * The folding of string keys (key-text.ts) against the server's own collations: under every
 * collation the proxy accepts for a point key, every two values of the characters a row may be
 * named by that the server calls equal must fold to one name, or a write by one spelling would
 * leave the cached read of another stale. The values tried: every string of one and two of
 * those characters, in both letter cases. The server's verdict is WEIGHT_STRING, the key it
 * compares and sorts by.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import mariadb from 'mariadb';
import { foldKeyText, keyTextCollation } from '../../src/sql/key-text.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from '../support/env.ts';

type Connection = Awaited<ReturnType<typeof mariadb.createConnection>>;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_.:';
const TABLE = 'key_text_values';

describe('string keys against the server’s collations', () => {
  let connection: Connection;

  before(async () => {
    connection = await mariadb.createConnection({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: BACKEND_DATABASE,
    });
    await connection.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await connection.query(
      `CREATE TABLE ${TABLE} (s VARCHAR(2) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PRIMARY KEY)`,
    );
    const values = [...ALPHABET];
    for (const first of ALPHABET) for (const second of ALPHABET) values.push(first + second);
    await connection.batch(
      `INSERT INTO ${TABLE} VALUES (?)`,
      values.map((value) => [value]),
    );
  });

  after(async () => {
    await connection?.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await connection?.end();
  });

  test('values a collation the proxy accepts calls equal fold alike; the others are refused', async () => {
    // The full names of all (10.10 and later name each character set's apart), as the proxy
    // reads them.
    const collations = await connection
      .query<Array<{ name: string; charset: string }>>(
        'SELECT FULL_COLLATION_NAME AS name, CHARACTER_SET_NAME AS charset FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY',
      )
      .catch(() =>
        connection.query<Array<{ name: string; charset: string }>>(
          'SELECT COLLATION_NAME AS name, CHARACTER_SET_NAME AS charset FROM information_schema.COLLATIONS',
        ),
      );
    let accepted = 0;
    let refusedUnsound = 0;
    for (const { name, charset } of collations) {
      if (!['latin1', 'ascii', 'utf8mb3', 'utf8mb4'].includes(charset)) continue;
      const groups = await connection.query<Array<{ members: string }>>(
        `SELECT GROUP_CONCAT(s SEPARATOR ' ') AS members FROM ${TABLE} ` +
          `GROUP BY WEIGHT_STRING(CONVERT(s USING ${charset}) COLLATE ${name}) HAVING COUNT(*) > 1`,
      );
      const unsound = groups
        .map(({ members }) => members.split(' '))
        .filter((members) => new Set(members.map((m) => foldKeyText(m, 0, m.length))).size > 1);
      if (keyTextCollation(name, 40) < 0) {
        if (unsound.length > 0) refusedUnsound++;
        continue;
      }
      accepted++;
      assert.deepEqual(unsound.slice(0, 3), [], `${name}: equal values with different names`);
    }
    // Not vacuous: the server's defaults are among those accepted, and roman and lithuanian,
    // which take letters for others, among those refused.
    assert.ok(accepted >= 20, `only ${accepted} collations accepted`);
    assert.ok(refusedUnsound >= 2, `only ${refusedUnsound} unsound collations met`);
    for (const name of ['latin1_swedish_ci', 'utf8mb4_general_ci', 'utf8mb4_bin']) {
      assert.ok(keyTextCollation(name, 40) > 0, name);
    }
  });

  test('how many characters a key column of each character set holds', () => {
    assert.equal(keyTextCollation('latin1_swedish_ci', 8), 8);
    assert.equal(keyTextCollation('utf8mb4_general_ci', 80), 20);
    assert.equal(keyTextCollation('utf8mb3_unicode_ci', 60), 20);
    assert.equal(keyTextCollation('utf8mb4_uca1400_ai_ci', 40), 10);
    assert.equal(keyTextCollation('utf8mb4_roman_ci', 40), -1);
    assert.equal(keyTextCollation('utf16_general_ci', 40), -1, 'not ASCII’s bytes');
    assert.equal(keyTextCollation('binary', 40), -1);
    assert.equal(keyTextCollation('', 40), -1);
  });
});
