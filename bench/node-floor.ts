/**
 * Runs the Node floor server (src/bench/node-floor.ts) until SIGTERM or SIGINT.
 *
 *   node bench/node-floor.ts [port, default 0 = a free one]
 *
 * Prints `node floor listening on 127.0.0.1:PORT` once it accepts connections.
 */
import { startNodeFloor } from '../src/bench/node-floor.ts';

const server = await startNodeFloor('127.0.0.1', Number(process.argv[2] ?? 0));
const address = server.address();
if (address === null || typeof address === 'string') throw new Error('no TCP address');
console.log(`node floor listening on 127.0.0.1:${address.port}`);
const stop = (): void => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
