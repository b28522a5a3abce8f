/** Where the tests find their MariaDB; CI starts one on 127.0.0.1:3306 when none runs. */
export const BACKEND_HOST = process.env['NICECACHE_TEST_HOST'] ?? '127.0.0.1';
export const BACKEND_PORT = Number(process.env['NICECACHE_TEST_PORT'] ?? 3306);
export const BACKEND_USER = process.env['NICECACHE_TEST_USER'] ?? 'root';
export const BACKEND_PASSWORD = process.env['NICECACHE_TEST_PASSWORD'] ?? '';
export const BACKEND_DATABASE = process.env['NICECACHE_TEST_DATABASE'] ?? 'test';
