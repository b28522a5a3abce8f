/**
 * Runs the real `nicecache proxy` as a child process, the way users run it, and waits for its
 * startup line to learn the port.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BACKEND_HOST, BACKEND_PORT } from './env.ts';

const mainScript = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface ProxyProcess {
  host: string;
  port: number;
  child: ChildProcess;
  /** Everything the proxy wrote to stderr so far. */
  log(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ProxyProcessOptions {
  /** HOST:PORT; a free port of 127.0.0.1 by default. */
  listen?: string;
  backend?: string;
  workers?: number;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Give the proxy a standard input the test writes to (child.stdin). */
  stdin?: boolean;
}

export async function startProxyProcess(options: ProxyProcessOptions = {}): Promise<ProxyProcess> {
  const args = [
    mainScript,
    'proxy',
    '--listen',
    options.listen ?? '127.0.0.1:0',
    '--backend',
    options.backend ?? `${BACKEND_HOST}:${BACKEND_PORT}`,
    '--workers',
    String(options.workers ?? 2),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: [options.stdin === true ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`proxy did not start:\n${stderr}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on [^\s]+:(\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`proxy exited with ${code}:\n${stderr}`));
    });
  });
  child.stdout!.resume();
  return {
    host: '127.0.0.1',
    port,
    child,
    log: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `nicecache` with these arguments to its end, for starts that must fail. */
export function runNicecache(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [mainScript, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A start that should have failed but did not must not hang the test.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
