/**
 * How a nicecache step's proxy CPU is split into hits and misses and set against the Node floor
 * and the server without the proxy, from the probes measured beside it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MIN_PROBE_HIT_RATIO, nicecacheCost } from '../../src/bench/nicecache-cost.ts';
import type { ProbeResult, StepResult } from '../../src/bench/sweep-result.ts';

function step(fields: Partial<StepResult>): StepResult {
  return {
    target: 'nicecache',
    threads: 8,
    seconds: 10,
    transactions: 1000,
    queries: 16_000,
    tps: 100,
    qps: 1600,
    latencyMs: { p50: 1, p95: 2, p99: 3, max: 4, avg: 1 },
    errors: 0,
    ignoredErrors: 0,
    reconnects: 0,
    driverCpu: 10,
    system: { user: 50, system: 20, idle: 30, iowait: 0, contextSwitchesPerSecond: 1000 },
    queryCache: null,
    proxyCpuMicrosPerQuery: null,
    serverCpuMicrosPerTransaction: null,
    nicecache: null,
    ...fields,
  };
}

function probe(kind: ProbeResult['kind'], cpu: number | null, hitRatio: number | null) {
  return {
    kind,
    target: kind === 'hits' ? 'nicecache' : null,
    threads: 8,
    seconds: 2,
    queries: 20_000,
    qps: 10_000,
    cpuMicrosPerQuery: cpu,
    hitRatio,
    errors: 0,
  };
}

const counters = (hits: number) => ({
  hits,
  inserts: 0,
  notCached: 0,
  lowmemPrunes: 0,
  selects: 0,
  hitRatio: null,
  lockWaits: null,
  lockWaitSeconds: null,
});

describe('nicecacheCost', () => {
  test('charges the hits at the probe’s cost and the rest to the misses', () => {
    // 12 000 hits at 20 µs = 240 ms; 4 000 misses share the other 400 ms: 100 µs each.
    const cost = nicecacheCost(
      step({
        queryCache: counters(12_000),
        proxyCpuMicrosPerQuery: 40,
        serverCpuMicrosPerTransaction: 250,
      }),
      { name: 'server', step: step({ target: 'server', serverCpuMicrosPerTransaction: 1000 }) },
      probe('node-floor', 16, null),
      probe('hits', 20, 0.999),
    );
    assert.deepEqual(cost, {
      direct: 'server',
      hits: 12_000,
      misses: 4000,
      floorCpuMicrosPerQuery: 16,
      perQueryToFloor: 2.5,
      proxyCpuMicrosPerHit: 20,
      perHitToFloor: 1.25,
      proxyCpuMicrosPerMiss: 100,
      perMissToFloor: 6.25,
      serverCpuToDirect: 0.25,
    });
  });

  test('a relay: no hits, every query a miss, no probe needed', () => {
    const cost = nicecacheCost(
      step({ queryCache: counters(0), proxyCpuMicrosPerQuery: 55 }),
      { name: 'server', step: null },
      probe('node-floor', 11, null),
      probe('hits', 55, 0),
    );
    assert.equal(cost.proxyCpuMicrosPerHit, null, 'a probe that did not hit measured no hit');
    assert.equal(cost.proxyCpuMicrosPerMiss, 55);
    assert.equal(cost.perMissToFloor, 5);
    assert.equal(cost.serverCpuToDirect, null, 'nothing to compare with');
  });

  test('says nothing it cannot know', () => {
    const hitsOnly = nicecacheCost(
      step({ queryCache: counters(16_000), proxyCpuMicrosPerQuery: 20 }),
      { name: 'server', step: null },
      null,
      probe('hits', 18, MIN_PROBE_HIT_RATIO),
    );
    assert.equal(hitsOnly.misses, 0);
    assert.equal(hitsOnly.proxyCpuMicrosPerMiss, null);
    assert.equal(hitsOnly.perHitToFloor, null, 'no floor measured');
    // Noise can make the hits cost more than the whole step did.
    const noisy = nicecacheCost(
      step({ queryCache: counters(15_000), proxyCpuMicrosPerQuery: 20 }),
      { name: 'server', step: null },
      probe('node-floor', 10, null),
      probe('hits', 30, 1),
    );
    assert.equal(noisy.proxyCpuMicrosPerMiss, null);
    const mostlyMisses = nicecacheCost(
      step({ queryCache: counters(8000), proxyCpuMicrosPerQuery: 50 }),
      { name: 'server', step: null },
      probe('node-floor', 10, null),
      probe('hits', 30, MIN_PROBE_HIT_RATIO - 0.01),
    );
    assert.equal(mostlyMisses.proxyCpuMicrosPerHit, null);
    assert.equal(mostlyMisses.proxyCpuMicrosPerMiss, null);
    assert.equal(mostlyMisses.perQueryToFloor, 5);
  });
});
