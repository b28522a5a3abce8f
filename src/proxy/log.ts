/**
 * A minimal leveled logger to stderr: one line per event, with a UTC timestamp and the level,
 * as text for people or (--log-format json) one JSON object per line for log collectors:
 * `{"time":"…","level":"info","worker":0,"msg":"…"}` (`worker` only on a worker's lines).
 * Debug lines appear only with NICECACHE_DEBUG=1, so the hot path pays one boolean test.
 *
 * Warnings and errors are rate-limited per kind (the text before the first ':'): a client that
 * sends malformed packets in a loop, or a port scanner, must not fill the disk. Past
 * LINES_PER_KIND lines of one kind in a window, lines of that kind are counted instead, and one
 * line at the end of the window says how many were left out. Other kinds are not affected.
 */
export type LogFormat = 'text' | 'json';

export interface Logger {
  /** How lines are written; workers are started with their parent's. */
  readonly format: LogFormat;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface LoggerOptions {
  /** Where lines go; stderr by default. Tests collect them. */
  write?: (line: string) => void;
  /** The clock, in ms; Date.now by default. */
  now?: () => number;
  format?: LogFormat;
  /** The worker whose lines these are (text: a `[worker N] ` prefix; json: a field). */
  worker?: number;
}

const debugEnabled = process.env['NICECACHE_DEBUG'] === '1';

export const LOG_WINDOW_MS = 60_000;
export const LINES_PER_KIND = 10;
/** Kinds counted per window; more (messages with no ':' and varying text) share one count. */
const MAX_KINDS = 64;
const OTHER_KINDS = '(other warnings)';

function kindOf(message: string): string {
  const colon = message.indexOf(':');
  return colon < 0 ? message : message.slice(0, colon);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const out = options.write ?? ((line: string) => void process.stderr.write(line));
  const now = options.now ?? Date.now;
  const format = options.format ?? 'text';
  const worker = options.worker;
  const prefix = worker === undefined ? '' : `[worker ${worker}] `;
  const write = (level: string, message: string, at = now()): void => {
    const time = new Date(at).toISOString();
    if (format === 'json') {
      const fields = { time, level: level.trimEnd(), ...(worker === undefined ? {} : { worker }) };
      out(`${JSON.stringify({ ...fields, msg: message })}\n`);
    } else out(`${time} ${level} ${prefix}${message}\n`);
  };

  let windowStart = now();
  /** Lines of each kind in this window, written or not. */
  const counts = new Map<string, number>();
  let suppressed = false;
  let flushTimer: ReturnType<typeof setTimeout> | null = null;

  const endWindow = (at: number): void => {
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
    if (suppressed) {
      for (const [kind, count] of counts) {
        if (count > LINES_PER_KIND) {
          write(
            'warn ',
            `${count - LINES_PER_KIND} more "${kind}" line(s) left out in the last ${LOG_WINDOW_MS / 1000} s`,
            at,
          );
        }
      }
    }
    counts.clear();
    suppressed = false;
    windowStart = at;
  };

  const limited = (level: string, message: string): void => {
    const at = now();
    if (at - windowStart >= LOG_WINDOW_MS) endWindow(at);
    let kind = kindOf(message);
    if (!counts.has(kind) && counts.size >= MAX_KINDS) kind = OTHER_KINDS;
    const count = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, count);
    if (count <= LINES_PER_KIND) {
      write(level, message, at);
      return;
    }
    if (!suppressed) {
      suppressed = true;
      // The count is reported even if nothing is logged after the flood.
      flushTimer = setTimeout(() => endWindow(now()), windowStart + LOG_WINDOW_MS - at);
      flushTimer.unref();
    }
  };

  return {
    format,
    debug: (message) => {
      if (debugEnabled) write('debug', message);
    },
    info: (message) => write('info ', message),
    warn: (message) => limited('warn ', message),
    error: (message) => limited('error', message),
  };
}
