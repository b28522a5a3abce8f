/**
 * Protocol fuzzing, a CI-sized slice (test/support/protocol-fuzz.ts has the oracle): generated
 * and mutated packets in every phase, cut at random offsets, against the real proxy (2 workers,
 * cache on) while bystanders on both workers read and write. One run with a fixed seed, one with
 * a seed of its own printed with any failure, so a failure can be replayed
 * (`node bench/protocol-fuzz.ts PACKETS SEED`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatReport, runProtocolFuzz } from '../support/protocol-fuzz.ts';

const FIXED_SEED = 20261201;
/** Packets per run: about 30 s each on a two-core machine. */
const PACKETS = 2_500;

for (const [name, seed] of [
  ['a fixed seed', FIXED_SEED],
  ['a random seed', (Math.random() * 2 ** 31) | 0],
] as const) {
  test(`protocol fuzzing with ${name}: no crash, no error for others, no hang`, async () => {
    const report = await runProtocolFuzz({ seed, packets: PACKETS });
    const text = formatReport(report);
    console.log(text);
    assert.deepEqual(
      report.failures.map((failure) => `${failure.kind}: ${failure.detail}`),
      [],
      `seed ${seed}:\n${text}`,
    );
    assert.ok(report.packets >= PACKETS, 'every packet was tried');
    assert.ok(report.outcomes.answered > 0 && report.outcomes.closed > 0);
  });
}
