/**
 * Before any test file runs: make sure there is a MariaDB the tests can log in to. The one named
 * by NICECACHE_TEST_HOST/PORT (default 127.0.0.1:3306, root, empty password) when it answers,
 * otherwise a throwaway server started here and removed after the last test. Test files run in
 * child processes that inherit the environment set here.
 */
import { startEphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../../src/upstream/ephemeral-server.ts';
import {
  BACKEND_DATABASE,
  BACKEND_HOST,
  BACKEND_PASSWORD,
  BACKEND_PORT,
  BACKEND_USER,
} from './env.ts';
import { RawClient } from './raw-client.ts';
import { WARM_DB, runStatements } from './cache-scenario.ts';

let throwaway: EphemeralServer | null = null;

async function canLogIn(): Promise<boolean> {
  try {
    const client = await RawClient.connect({
      host: BACKEND_HOST,
      port: BACKEND_PORT,
      user: BACKEND_USER,
      password: BACKEND_PASSWORD,
      database: BACKEND_DATABASE,
    });
    client.close();
    return true;
  } catch {
    return false;
  }
}

export async function globalSetup(): Promise<void> {
  if (await canLogIn()) {
    console.log(`tests use the MariaDB on ${BACKEND_HOST}:${BACKEND_PORT}`);
    return;
  }
  throwaway = await startEphemeralServer();
  process.env['NICECACHE_TEST_HOST'] = throwaway.host;
  process.env['NICECACHE_TEST_PORT'] = String(throwaway.port);
  process.env['NICECACHE_TEST_USER'] = throwaway.user;
  process.env['NICECACHE_TEST_PASSWORD'] = throwaway.password;
  process.env['NICECACHE_TEST_DATABASE'] = throwaway.database;
  console.log(
    `no MariaDB answered on ${BACKEND_HOST}:${BACKEND_PORT}; tests use a throwaway one on port ${throwaway.port}`,
  );
}

export async function globalTeardown(): Promise<void> {
  if (throwaway !== null) {
    await throwaway.stop();
    return;
  }
  // The database several files share (each makes it if it is not there) goes with the last of
  // them: nothing of the tests is left on a server they did not start.
  await runStatements(BACKEND_HOST, BACKEND_PORT, [`DROP DATABASE IF EXISTS ${WARM_DB}`]);
}
