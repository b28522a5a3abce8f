/**
 * The server's version as the number versioned executable comments are compared with:
 * 10.11.19 is 101119, as in `/*!101119 ... *\/`.
 */

/** MariaDB prefixes its version with this in the handshake, for old replication clients. */
const REPLICATION_PREFIX = '5.5.5-';

/** From a handshake version string ("10.11.19-MariaDB-0+deb12u1"); null when unreadable. */
export function serverVersionNumber(version: string): number | null {
  const text = version.startsWith(REPLICATION_PREFIX)
    ? version.slice(REPLICATION_PREFIX.length)
    : version;
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (match === null) return null;
  const [, major, minor, patch] = match;
  return Number(major) * 10_000 + Number(minor) * 100 + Number(patch);
}
