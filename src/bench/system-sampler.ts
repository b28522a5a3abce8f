/**
 * CPU shares and context switches of the whole machine from /proc/stat — the columns of vmstat
 * the seed experiment used to show the query cache's lock (us, sy, id, wa, cs).
 */
import { readFileSync } from 'node:fs';
import type { SystemSample } from './sweep-result.ts';

interface ProcStat {
  user: number;
  system: number;
  idle: number;
  iowait: number;
  total: number;
  contextSwitches: number;
  at: number;
}

function readProcStat(): ProcStat {
  const text = readFileSync('/proc/stat', 'utf8');
  const cpu = /^cpu\s+(.*)$/m.exec(text)![1]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal guest guest_nice
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] =
    cpu;
  return {
    user: user + nice,
    system: system + irq + softirq,
    idle,
    iowait,
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    contextSwitches: Number(/^ctxt\s+(\d+)/m.exec(text)![1]),
    at: performance.now(),
  };
}

/** Starts measuring; the returned function ends the measurement and gives the shares. */
export function startSystemSample(): () => SystemSample {
  const start = readProcStat();
  return () => {
    const end = readProcStat();
    const total = Math.max(1, end.total - start.total);
    const share = (field: 'user' | 'system' | 'idle' | 'iowait'): number =>
      (100 * (end[field] - start[field])) / total;
    return {
      user: share('user'),
      system: share('system'),
      idle: share('idle'),
      iowait: share('iowait'),
      contextSwitchesPerSecond:
        ((end.contextSwitches - start.contextSwitches) * 1000) / Math.max(1, end.at - start.at),
    };
  };
}

/** CPU time (user + system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th there.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * (1_000_000 / CLOCK_TICKS_PER_SECOND);
}

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;
