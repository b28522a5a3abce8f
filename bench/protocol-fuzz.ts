/**
 * The protocol fuzzer's long run: the oracle of test/integration/protocol-fuzz.test.ts
 * (test/support/protocol-fuzz.ts) for as many packets as asked, with 16 MB+ commands now and
 * then, recording failures and going on rather than stopping at the first.
 *
 *   node bench/protocol-fuzz.ts [packets, default 1000000] [seed, default random] [lanes, default 6]
 *                               [exchange timeout ms, default 5000]
 *
 * Uses the MariaDB the tests use (NICECACHE_TEST_HOST/_PORT/_USER/_PASSWORD, default
 * 127.0.0.1:3306 as root). Prints progress every 10 s and the report at the end; exits 1 if
 * anything failed.
 */
import { formatReport, runProtocolFuzz } from '../test/support/protocol-fuzz.ts';

const packets = Number(process.argv[2] ?? 1_000_000);
const seed = Number(process.argv[3] ?? (Math.random() * 2 ** 31) | 0);
const lanes = Number(process.argv[4] ?? 6);
const exchangeTimeoutMs = Number(process.argv[5] ?? 5000);

let lastProgress = 0;
const report = await runProtocolFuzz({
  seed,
  packets,
  lanes,
  exchangeTimeoutMs,
  longPackets: true,
  stopOnFailure: false,
  progress: (now) => {
    if (now.elapsedMs - lastProgress < 10_000) return;
    lastProgress = now.elapsedMs;
    const rate = Math.round(now.packets / (now.elapsedMs / 1000));
    console.log(
      `${(now.elapsedMs / 1000).toFixed(0)} s: ${now.packets} packets (${rate}/s), ${now.cases} cases, ${now.failures.length} failures`,
    );
  },
});
console.log(formatReport(report));
process.exitCode = report.failures.length === 0 ? 0 : 1;
