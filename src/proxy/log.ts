/**
 * A minimal leveled logger to stderr: one line per event, prefixed with the level. Debug lines
 * appear only with NICECACHE_DEBUG=1, so the hot path pays one boolean test.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const debugEnabled = process.env['NICECACHE_DEBUG'] === '1';

export function createLogger(prefix = ''): Logger {
  const write = (level: string, message: string): void => {
    process.stderr.write(`${level} ${prefix}${message}\n`);
  };
  return {
    debug: (message) => {
      if (debugEnabled) write('debug', message);
    },
    info: (message) => write('info ', message),
    warn: (message) => write('warn ', message),
    error: (message) => write('error', message),
  };
}
