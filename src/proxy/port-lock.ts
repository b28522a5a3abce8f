/**
 * One nicecache per port. The workers of one instance share their port through SO_REUSEPORT,
 * which would just as well let a second instance join it: the kernel would then split clients
 * between two caches, and a write through one would leave the other stale. So before any worker
 * binds, the main thread
 *
 * 1. binds the port itself without SO_REUSEPORT: the kernel refuses while any socket listens on
 *    it (a running nicecache's workers, or any other program), and picks the port for port 0;
 * 2. while still holding it, listens on the abstract Unix socket `\0nicecache:port:PORT` for as
 *    long as it runs. A second instance that got past step 1 in the moment between steps fails
 *    here. The socket answers who holds it, so the refusal can name the running instance. An
 *    abstract socket has no file: it vanishes with the process however it ends, so a crash
 *    leaves no stale lock;
 * 3. releases the bound port, which its workers then bind with SO_REUSEPORT.
 *
 * The lock is keyed on the port alone: a wildcard address and a specific one overlap, so two
 * instances on one port are refused whatever addresses they name. Abstract sockets are Linux's;
 * elsewhere only step 1 guards.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Server } from 'node:net';

/** What a running instance says about itself to one that wants its port. */
export interface InstanceIdentity {
  pid: number;
  listen: string;
  backend: string;
  version: string;
  since: string;
}

export interface PortLock {
  port: number;
  release(): Promise<void>;
}

export class PortInUseError extends Error {}

const ASK_TIMEOUT_MS = 1000;

function lockPath(port: number): string {
  return `\0nicecache:port:${port}`;
}

function listen(server: Server, options: { host?: string; port?: number; path?: string }) {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function describe(identity: InstanceIdentity): string {
  return `nicecache ${identity.version} (pid ${identity.pid}, serving ${identity.listen} in front of ${identity.backend}, since ${identity.since})`;
}

/** Asks the instance holding the lock who it is; null when nobody answers. */
function askHolder(port: number): Promise<InstanceIdentity | null> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ path: lockPath(port) });
    const done = (identity: InstanceIdentity | null): void => {
      socket.destroy();
      resolve(identity);
    };
    socket.setTimeout(ASK_TIMEOUT_MS, () => done(null));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => {
      try {
        done(JSON.parse(text) as InstanceIdentity);
      } catch {
        done(null);
      }
    });
    socket.on('error', () => done(null));
  });
}

/**
 * Which process listens on a TCP port, from /proc: best effort, for the refusal's message
 * (another user's processes may not be readable).
 */
export function listenerOf(port: number): string | null {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; field 9 is the socket's inode.
      const local = fields[1];
      if (local === undefined || fields[3] !== '0A') continue;
      if (Number.parseInt(local.slice(local.indexOf(':') + 1), 16) === port) inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) {
        let name = '';
        try {
          name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        } catch {
          // The pid alone still helps.
        }
        return name === '' ? `pid ${pid}` : `pid ${pid} (${name})`;
      }
    }
  }
  return null;
}

/**
 * How long a refused start looks for who holds the port. Another nicecache starting at the same
 * moment holds it first with a plain bind (step 1), then with its lock, and between the two
 * neither may be seen for a moment: asked again shortly, it answers.
 */
const IDENTIFY_FOR_MS = 1000;
const IDENTIFY_EVERY_MS = 20;

async function refusal(host: string, port: number, cause: Error): Promise<PortInUseError> {
  const deadline = Date.now() + IDENTIFY_FOR_MS;
  for (;;) {
    const holder = process.platform === 'linux' ? await askHolder(port) : null;
    if (holder !== null) {
      return new PortInUseError(
        `port ${port} is already served by ${describe(holder)}; stop it first, or give this one another --listen port`,
      );
    }
    const owner = process.platform === 'linux' ? listenerOf(port) : null;
    if (owner !== null) {
      return new PortInUseError(
        `cannot listen on ${host}:${port}: the port is already in use by ${owner}`,
      );
    }
    if (process.platform !== 'linux' || Date.now() >= deadline) {
      return new PortInUseError(`cannot listen on ${host}:${port}: ${cause.message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, IDENTIFY_EVERY_MS));
  }
}

/**
 * Claims `port` on `host` for this process (0: a free one), or throws a PortInUseError that
 * names who holds it. `identity` is what a later instance is told.
 */
export async function acquirePortLock(
  host: string,
  port: number,
  identity: (port: number) => InstanceIdentity,
): Promise<PortLock> {
  const probe = createServer();
  try {
    await listen(probe, { host, port });
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    throw cause.code === 'EADDRINUSE' ? await refusal(host, port, cause) : cause;
  }
  const address = probe.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  if (process.platform !== 'linux') {
    await closeServer(probe);
    return { port: bound, release: async () => {} };
  }
  const answer = JSON.stringify(identity(bound));
  const lock = createServer((socket) => {
    socket.on('error', () => {});
    socket.end(answer);
  });
  try {
    await listen(lock, { path: lockPath(bound) });
  } catch (error) {
    await closeServer(probe);
    const cause = error as NodeJS.ErrnoException;
    throw cause.code === 'EADDRINUSE' ? await refusal(host, bound, cause) : cause;
  }
  // The lock must not keep a process alive that is otherwise done.
  lock.unref();
  await closeServer(probe);
  return { port: bound, release: () => closeServer(lock) };
}
