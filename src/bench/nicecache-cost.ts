/**
 * A nicecache step's cost against what the same run measured beside it: the Node floor and the
 * proxy's cost per hit (the probes at the same thread count), and the server's CPU per
 * transaction without the proxy (the fronted target's step at the same thread count).
 *
 * The proxy's CPU is one number per step, so it is split with one more equation: the hit probe
 * gives the cost of a hit, and what the step spent beyond its hits at that cost is the misses'.
 */
import type { NicecacheCost, ProbeResult, StepResult } from './sweep-result.ts';

/** A hit probe where fewer queries hit than this measured something else (e.g. a relay). */
export const MIN_PROBE_HIT_RATIO = 0.95;

export function nicecacheCost(
  step: StepResult,
  direct: { name: string; step: StepResult | null },
  floor: ProbeResult | null,
  hitProbe: ProbeResult | null,
): NicecacheCost {
  // Through nicecache, Qcache_hits is the proxy's own counter (the server's is not shown).
  const hits = Math.min(step.queries, step.queryCache?.hits ?? 0);
  const misses = step.queries - hits;
  const floorCpu = positive(floor?.cpuMicrosPerQuery ?? null);
  const perQuery = step.proxyCpuMicrosPerQuery;
  const perHit =
    hitProbe !== null && (hitProbe.hitRatio ?? 0) >= MIN_PROBE_HIT_RATIO
      ? hitProbe.cpuMicrosPerQuery
      : null;
  let perMiss: number | null = null;
  if (perQuery !== null && misses > 0) {
    if (hits === 0) perMiss = perQuery;
    else if (perHit !== null) {
      const left = perQuery * step.queries - perHit * hits;
      // Noise can charge the hits more than the step spent: then nothing can be said.
      perMiss = left > 0 ? left / misses : null;
    }
  }
  const directServerCpu = positive(direct.step?.serverCpuMicrosPerTransaction ?? null);
  return {
    direct: direct.name,
    hits,
    misses,
    floorCpuMicrosPerQuery: floorCpu,
    perQueryToFloor: ratio(perQuery, floorCpu),
    proxyCpuMicrosPerHit: perHit,
    perHitToFloor: ratio(perHit, floorCpu),
    proxyCpuMicrosPerMiss: perMiss,
    perMissToFloor: ratio(perMiss, floorCpu),
    serverCpuToDirect: ratio(step.serverCpuMicrosPerTransaction, directServerCpu),
  };
}

function positive(value: number | null): number | null {
  return value !== null && value > 0 ? value : null;
}

function ratio(value: number | null, base: number | null): number | null {
  return value === null || base === null ? null : value / base;
}
