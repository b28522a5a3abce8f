/**
 * Statements run on the test server directly, not through a proxy: a test's setup and cleanup.
 */
import mysql from 'mysql2/promise';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from './env.ts';

/** Runs `sql` in order on one connection; each statement's first column comes back as text. */
export async function onServer(
  sql: readonly string[],
  database = BACKEND_DATABASE,
): Promise<string[][]> {
  const connection = await mysql.createConnection({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database,
    rowsAsArray: true,
  });
  const results: string[][] = [];
  try {
    for (const statement of sql) {
      const [rows] = await connection.query(statement);
      results.push(Array.isArray(rows) ? (rows as unknown[][]).map((row) => String(row[0])) : []);
    }
  } finally {
    await connection.end();
  }
  return results;
}
