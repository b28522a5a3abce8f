/**
 * What the proxy's worker allocates per query, and where: V8's sampling heap profiler in the
 * worker, counting objects the collector has already freed too (a miss's garbage is what costs),
 * while sysbench oltp_point_select runs through the proxy. Byte counts do not depend on how busy
 * the machine is, so this tells a change that saves a few hundred bytes a query from one that
 * does not, where CPU timings (hit-cost.sh) cannot.
 *
 *   node bench/allocations.ts HOST:PORT [seconds, default 10] [rows, default 1000000] [proxy options…]
 *
 * HOST:PORT is the server (a database nc_allocations is made and dropped on it). The proxy runs
 * in this process with the options given (e.g. `--query-cache-size 1G` for misses that fill,
 * `--query-cache-size 0` for a relay), one worker; the rows are read uniformly in the text
 * protocol (PS_MODE=auto for the binary one), so with a cache nearly every SELECT is a first read
 * that fills. Prints the bytes allocated per query and the functions that allocate most (by the
 * frame that allocated, and by the nearest frame of nicecache's own code).
 */
import { spawnSync } from 'node:child_process';
import { Session } from 'node:inspector';
import { connect, createServer } from 'node:net';
import { onServer } from './proxy-child.ts';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const [backend = '', secondsText = '10', rowsText = '1000000', ...proxyOptions] =
  process.argv.slice(2);
if (!/^[^:]+:\d+$/.test(backend)) {
  console.error('usage: node bench/allocations.ts HOST:PORT [seconds] [rows] [proxy options…]');
  process.exit(2);
}
const [host, portText] = backend.split(':') as [string, string];
const seconds = Number(secondsText);
const rows = Number(rowsText);
const db = 'nc_allocations';
const psMode = process.env['PS_MODE'] ?? 'disable';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function sysbench(port: number, command: string, extra: string[] = []): string {
  const result = spawnSync(
    'sysbench',
    [
      'oltp_point_select',
      '--db-driver=mysql',
      `--mysql-host=${command === 'run' ? '127.0.0.1' : host}`,
      `--mysql-port=${port}`,
      '--mysql-user=root',
      `--mysql-db=${db}`,
      '--tables=1',
      `--table-size=${rows}`,
      ...extra,
      command,
    ],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`sysbench ${command}: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** The inspector of the proxy's one worker, reached through this thread's own session. */
class WorkerInspector {
  readonly #session = new Session();
  #workerSession = '';
  #next = 1;
  readonly #pending = new Map<number, (result: unknown) => void>();

  async attach(): Promise<void> {
    this.#session.connect();
    const attached = new Promise<void>((resolve) => {
      this.#session.on('NodeWorker.attachedToWorker', (message) => {
        this.#workerSession ||= (message.params as { sessionId: string }).sessionId;
        resolve();
      });
    });
    this.#session.on('NodeWorker.receivedMessageFromWorker', (message) => {
      const reply = JSON.parse((message.params as { message: string }).message) as {
        id?: number;
        result?: unknown;
        error?: unknown;
      };
      if (reply.id === undefined) return;
      if (reply.error !== undefined) throw new Error(JSON.stringify(reply.error));
      this.#pending.get(reply.id)?.(reply.result);
      this.#pending.delete(reply.id);
    });
    this.#session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await attached;
    await accepting(port);
  }

  call<T>(method: string, params: object = {}): Promise<T> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve as (result: unknown) => void);
      this.#session.post('NodeWorker.sendMessageToWorker', {
        sessionId: this.#workerSession,
        message: JSON.stringify({ id, method, params }),
      });
    });
  }
}

/** Resolves once something accepts connections on 127.0.0.1:`port`. */
async function accepting(port: number): Promise<void> {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const label = (node: ProfileNode): string => {
  const frame = node.callFrame;
  const file = frame.url.replace(/^.*\/(src|node_modules)\//, '');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
};

await onServer(host, Number(portText), [`DROP DATABASE IF EXISTS ${db}`, `CREATE DATABASE ${db}`]);
sysbench(Number(portText), 'prepare');
const port = await freePort();
process.argv = [
  process.argv[0]!,
  'main.ts',
  'proxy',
  '--listen',
  `127.0.0.1:${port}`,
  '--backend',
  backend,
  '--workers',
  '1',
  ...proxyOptions,
];
const inspector = new WorkerInspector();
const attached = inspector.attach();
await import('../src/cli/main.ts');
await attached;
await accepting(port);
// Warm: the first connections' handshakes and the code's first compilations are not measured.
sysbench(port, 'run', ['--threads=8', `--db-ps-mode=${psMode}`, '--time=2', '--rand-type=uniform']);
await inspector.call('HeapProfiler.enable');
await inspector.call('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
const out = sysbench(port, 'run', [
  '--threads=8',
  `--db-ps-mode=${psMode}`,
  `--time=${seconds}`,
  '--rand-type=uniform',
]);
const { profile } = await inspector.call<{ profile: { head: ProfileNode } }>(
  'HeapProfiler.stopSampling',
);
const queries = Number(/queries:\s+(\d+)/.exec(out)?.[1] ?? NaN);

const byFrame = new Map<string, number>();
const byOwnCode = new Map<string, number>();
const byStack = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode, own: string, stack: readonly string[]): void => {
  const name = label(node);
  const ownHere = node.callFrame.url.includes('/src/') ? name : own;
  const stackHere = [name, ...stack.slice(0, 2)];
  if (node.selfSize > 0) {
    total += node.selfSize;
    byFrame.set(name, (byFrame.get(name) ?? 0) + node.selfSize);
    byOwnCode.set(ownHere, (byOwnCode.get(ownHere) ?? 0) + node.selfSize);
    const path = stackHere.join(' < ');
    byStack.set(path, (byStack.get(path) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, ownHere, stackHere);
};
walk(profile.head, '(outside nicecache)', []);

const top = (map: Map<string, number>): string =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([name, bytes]) => `${(bytes / queries).toFixed(0).padStart(7)}  ${name}`)
    .join('\n');
console.log(`${queries} queries, ${(total / queries).toFixed(0)} bytes allocated per query`);
console.log(`\nbytes/query by the allocating frame:\n${top(byFrame)}`);
console.log(`\nbytes/query by the nearest frame of nicecache's code:\n${top(byOwnCode)}`);
console.log(`\nbytes/query by the allocating frame and its two callers:\n${top(byStack)}`);

await onServer(host, Number(portText), [`DROP DATABASE IF EXISTS ${db}`]);
process.exit(0);
