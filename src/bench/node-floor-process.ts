/**
 * The Node floor server (node-floor.ts) as its own process, so its CPU time per query can be read
 * from /proc like the proxy's and the server's, and it never shares an event loop with the driver.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface FloorProcess {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('../../bench/node-floor.ts', import.meta.url));

export async function startFloorProcess(): Promise<FloorProcess> {
  const child = spawn(process.execPath, ['--disable-sigusr1', script, '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on \S+:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`the Node floor exited with ${code}: ${output}`)),
    );
  });
  return {
    pid: child.pid!,
    port,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
