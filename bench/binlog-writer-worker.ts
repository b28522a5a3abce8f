/**
 * The write load of bench/binlog-follower.ts, on a thread of its own so that the main thread's
 * CPU time is the follower's alone: single-row UPDATEs of one table, pipelined on several
 * connections, `count` of them (or until told to stop when count is 0). Posts 'done'.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MysqlConnection } from '../src/upstream/mysql-connection.ts';

interface WriterData {
  port: number;
  table: string;
  count: number;
  connections: number;
  pipeline: number;
}

const { port, table, count, connections, pipeline } = workerData as WriterData;
let stopped = false;
parentPort!.on('message', () => (stopped = true));

const open = await Promise.all(
  Array.from({ length: connections }, () =>
    MysqlConnection.connect({
      host: '127.0.0.1',
      port,
      user: 'root',
      password: '',
      database: null,
    }),
  ),
);
let sent = 0;
const more = (): boolean => (count === 0 ? !stopped : sent < count);
await Promise.all(
  open.map(async (connection) => {
    const inFlight = new Set<Promise<unknown>>();
    while (more()) {
      const id = (sent++ % 1000) + 1;
      const done = connection
        .query(`UPDATE ${table} SET v = v + 1 WHERE id = ${id}`)
        .then((result) => {
          if (result.error) throw new Error(result.error.message);
        });
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
      if (inFlight.size >= pipeline) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  }),
);
for (const connection of open) connection.close();
parentPort!.postMessage({ sent });
