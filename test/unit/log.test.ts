/** The proxy's log: timestamps on every line, and no kind of warning can flood it. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LINES_PER_KIND, LOG_WINDOW_MS, createLogger } from '../../src/proxy/log.ts';
import type { LogFormat } from '../../src/proxy/log.ts';

function collecting(start = Date.UTC(2026, 0, 2, 3, 4, 5, 678), format: LogFormat = 'text') {
  const lines: string[] = [];
  let clock = start;
  const log = createLogger({
    worker: 1,
    format,
    write: (line) => lines.push(line),
    now: () => clock,
  });
  return { log, lines, advance: (ms: number) => (clock += ms) };
}

describe('log', () => {
  test('each line: UTC timestamp, level, prefix, message', () => {
    const { log, lines } = collecting();
    log.info('nicecache listening');
    log.warn('something odd: details');
    assert.deepEqual(lines, [
      '2026-01-02T03:04:05.678Z info  [worker 1] nicecache listening\n',
      '2026-01-02T03:04:05.678Z warn  [worker 1] something odd: details\n',
    ]);
  });

  test('--log-format json: one object per line, the message whole, the worker as a field', () => {
    const { log, lines } = collecting(undefined, 'json');
    log.info('nicecache listening');
    log.warn('odd: "quoted"\nand a newline');
    assert.deepEqual(
      lines.map((line) => {
        assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one line each');
        return JSON.parse(line) as unknown;
      }),
      [
        { time: '2026-01-02T03:04:05.678Z', level: 'info', worker: 1, msg: 'nicecache listening' },
        {
          time: '2026-01-02T03:04:05.678Z',
          level: 'warn',
          worker: 1,
          msg: 'odd: "quoted"\nand a newline',
        },
      ],
    );
  });

  test('a flood of one kind is cut to LINES_PER_KIND a window, then counted in one line', () => {
    const { log, lines, advance } = collecting();
    for (let i = 0; i < 1000; i++) log.warn(`session error, closing connection: packet ${i}`);
    log.warn('cannot read schema metadata: refused');
    log.error('worker 0 failed');
    assert.equal(lines.length, LINES_PER_KIND + 2, 'other kinds still get through');
    assert.match(lines.at(-2)!, /cannot read schema metadata/);
    assert.match(lines.at(-1)!, /error \[worker 1\] worker 0 failed/);
    advance(LOG_WINDOW_MS);
    log.warn('session error, closing connection: packet 1000');
    assert.match(
      lines.at(-2)!,
      new RegExp(
        `warn  \\[worker 1\\] ${1000 - LINES_PER_KIND} more "session error, closing connection" line\\(s\\) left out in the last 60 s`,
      ),
    );
    assert.match(lines.at(-1)!, /packet 1000/, 'a new window lets the kind through again');
  });

  test('info lines are never held back', () => {
    const { log, lines } = collecting();
    for (let i = 0; i < 50; i++) log.info(`line ${i}`);
    assert.equal(lines.length, 50);
  });
});
