/**
 * The Unix socket of --socket: its file may be left behind by a proxy that did not end cleanly
 * (the server's own socket has the same problem). A socket file nobody accepts on is removed so
 * the path can be bound again; one that accepts belongs to a running process, and anything that
 * is not a socket is never touched.
 */
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';

export type SocketPathState = 'free' | 'removed-stale' | 'in-use' | 'not-a-socket';

/** Makes `path` free to bind when it can be, and says what was there. */
export async function freeSocketPath(path: string): Promise<SocketPathState> {
  let stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'free';
    throw error;
  }
  if (!stats.isSocket()) return 'not-a-socket';
  if (await accepts(path)) return 'in-use';
  try {
    await unlink(path);
  } catch (error) {
    // Another start removed it first: free all the same.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return 'removed-stale';
}

/** Whether something accepts connections on the socket at `path`. */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
