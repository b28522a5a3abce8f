/**
 * What the binlog benchmarks share: a throwaway MariaDB with a binary log and the
 * durability settings a benchmark wants (no fsync per commit), and the tables of counters
 * their write load updates.
 */
import { startEphemeralServer } from '../src/upstream/ephemeral-server.ts';
import type { EphemeralServer } from '../src/upstream/ephemeral-server.ts';

export const BENCH_DB = 'nc_binlog_bench';

/**
 * BINLOG_FORMAT (ROW when unset; STATEMENT or MIXED log statements as their texts, which the
 * follower classifies). BINLOG_ROW_METADATA (NO_LOG, MINIMAL or FULL; the server's default,
 * NO_LOG, when unset): with FULL the follower reads each row's key and invalidates by row.
 */
export function startLogBinServer(): Promise<EphemeralServer> {
  const rowMetadata = process.env['BINLOG_ROW_METADATA'];
  const format = process.env['BINLOG_FORMAT'] ?? 'ROW';
  return startEphemeralServer({
    serverOptions: {
      log_bin: 'binlog',
      server_id: 1,
      binlog_format: format,
      sync_binlog: 0,
      innodb_flush_log_at_trx_commit: 0,
      ...(rowMetadata === undefined ? {} : { binlog_row_metadata: rowMetadata }),
    },
  });
}

/** A table of BENCH_DB with 1000 counters at 0, the rows the write load updates. */
export function counterTable(table: string): string[] {
  return [
    `CREATE TABLE ${BENCH_DB}.${table} (id INT PRIMARY KEY, v INT) ENGINE=InnoDB`,
    `INSERT INTO ${BENCH_DB}.${table} WITH RECURSIVE n (id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < 1000) SELECT id, 0 FROM n`,
  ];
}
