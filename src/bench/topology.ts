/**
 * Where the benchmark's processes run. `colocated` (the seed experiment's default) leaves them
 * to the scheduler on every core; `split` gives the database server its own CPUs and puts the
 * load generator, the proxy and the Node floor on the others — the deployment where the proxy
 * sits with the application, and the server's cores do only the server's work.
 *
 * Pinning uses the kernel's CPU affinity (`taskset -a -p`, every thread of a process). Threads a
 * process creates later inherit the affinity of the thread that creates them, so a process
 * pinned once stays pinned; the bench pins itself before it starts the driver threads, the proxy
 * and the floor, and pins each server it starts right after the launch.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export const TOPOLOGIES = ['colocated', 'split'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

/** The CPUs each side gets under `split`, as kernel CPU lists (`1`, `0-3`, `0,2`). */
export interface CpuPlan {
  server: string;
  clientAndProxy: string;
}

export class TopologyError extends Error {}

/** Parses a kernel CPU list (`0-2,5`) into its CPU numbers, ascending. */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  for (const part of text.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (match === null) throw new TopologyError(`not a CPU list: '${text}'`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first) throw new TopologyError(`not a CPU list: '${text}'`);
    for (let cpu = first; cpu <= last; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The shortest kernel CPU list for these CPUs: runs of three or more as ranges. */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let start = 0; start < sorted.length;) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end]! + 1) end++;
    const first = sorted[start]!;
    const last = sorted[end]!;
    if (end === start) parts.push(String(first));
    else if (end === start + 1) parts.push(`${first},${last}`);
    else parts.push(`${first}-${last}`);
    start = end + 1;
  }
  return parts.join(',');
}

/**
 * Splits the CPUs this process may use in two: the upper half (rounded down, at least one) for
 * the server, the rest for the client and the proxy. On two cores: server on 1, the rest on 0.
 */
export function planSplit(allowed: readonly number[]): CpuPlan {
  const cpus = [...new Set(allowed)].sort((a, b) => a - b);
  if (cpus.length < 2) {
    throw new TopologyError(
      `--topology split needs at least 2 CPUs to divide; this process may use ${cpus.length} (${formatCpuList(cpus)})`,
    );
  }
  const clientCount = Math.ceil(cpus.length / 2);
  return {
    clientAndProxy: formatCpuList(cpus.slice(0, clientCount)),
    server: formatCpuList(cpus.slice(clientCount)),
  };
}

/**
 * The CPUs the threads of a process may run on, from /proc/PID/task/TID/status (the union over
 * its threads, which agree once it is pinned); null when the process is gone.
 */
export function processCpus(pid: number): string | null {
  const lists = threadCpuLists(pid);
  if (lists === null) return null;
  const cpus = new Set<number>();
  for (const list of lists) for (const cpu of parseCpuList(list)) cpus.add(cpu);
  return formatCpuList([...cpus]);
}

/**
 * Each thread's CPU list (formatted), skipping threads that end while they are read (Node's and
 * the server's come and go); null when the process itself is gone.
 */
export function threadCpuLists(pid: number): string[] | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const lists: string[] = [];
  for (const task of tasks) {
    try {
      lists.push(formatCpuList(threadCpus(pid, Number(task))));
    } catch (error) {
      // ENOENT: gone before the open; ESRCH: gone between the open and the read.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ESRCH') throw error;
    }
  }
  return lists;
}

/** Cpus_allowed_list of one thread (for the process's main thread, TID = PID). */
export function threadCpus(pid: number, tid: number): number[] {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  const match = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  if (match === null) throw new TopologyError(`no Cpus_allowed_list for thread ${tid} of ${pid}`);
  return parseCpuList(match[1]!);
}

/**
 * Pins every thread of a process to `cpus`, and checks that each one is. A thread started while
 * `taskset` walks the list may inherit the old mask, so the walk is repeated until none is left.
 */
export function pinProcess(pid: number, cpus: string): void {
  const wanted = formatCpuList(parseCpuList(cpus));
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', wanted, String(pid)], { stdio: 'pipe' });
    } catch (error) {
      const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() ?? '';
      throw new TopologyError(
        `taskset could not pin process ${pid} to CPUs ${wanted}${detail === '' ? '' : `: ${detail}`} (is util-linux installed?)`,
      );
    }
    const now = processCpus(pid);
    if (now === wanted) return;
    if (attempt === 3) {
      throw new TopologyError(`process ${pid} runs on CPUs ${now} after pinning to ${wanted}`);
    }
  }
}

/** The CPUs this process may use now (its main thread's list). */
export function ownCpus(): number[] {
  return threadCpus(process.pid, process.pid);
}
