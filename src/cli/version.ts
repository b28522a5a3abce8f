/** The version users see (`nicecache --version`, the lock other instances read): package.json's. */
import { readFileSync } from 'node:fs';

export const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
