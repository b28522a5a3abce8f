/**
 * SysbenchRandom against what sysbench 1.0's algorithms imply: each distribution is checked
 * against the exact distribution its arithmetic produces (Kolmogorov–Smirnov, chi-square), then
 * against the real sysbench binary with a two-sample KS test. Seeds are fixed, so every run
 * draws the same values and the statistical verdicts cannot flicker.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  DEFAULT_RANDOM_OPTIONS,
  DISTRIBUTIONS,
  SysbenchRandom,
  type Distribution,
  type RandomOptions,
} from '../../src/bench/random.ts';

const DRAWS = 200_000;
const LOW = 1;
const HIGH = 10_000;
const SIGNIFICANCE = 0.001;

function options(overrides: Partial<RandomOptions> = {}): RandomOptions {
  return { ...DEFAULT_RANDOM_OPTIONS, seed: 20_240_601, ...overrides };
}

/** Occurrences of each value in [low, high], indexed by value - low; fails on any outlier. */
function histogram(draw: () => number, count: number, low: number, high: number): Float64Array {
  const counts = new Float64Array(high - low + 1);
  for (let i = 0; i < count; i++) {
    const value = draw();
    if (!Number.isInteger(value) || value < low || value > high) {
      assert.fail(`draw ${i} gave ${value}, outside [${low}, ${high}]`);
    }
    counts[value - low]!++;
  }
  return counts;
}

// ---- Statistics -------------------------------------------------------------------------------

/** log Γ(x) for x > 0, by the Lanczos approximation (g = 7, nine terms). */
function logGamma(x: number): number {
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const shifted = x - 1;
  let sum = coefficients[0]!;
  for (let i = 1; i < coefficients.length; i++) sum += coefficients[i]! / (shifted + i);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The regularised upper incomplete gamma function Q(s, x). */
function upperGammaQ(s: number, x: number): number {
  if (x <= 0) return 1;
  const logPrefix = s * Math.log(x) - x - logGamma(s);
  if (x < s + 1) {
    // The lower function's power series converges quickly here.
    let term = 1 / s;
    let sum = term;
    for (let n = 1; n < 10_000 && Math.abs(term) > Math.abs(sum) * 1e-15; n++) {
      term *= x / (s + n);
      sum += term;
    }
    return 1 - sum * Math.exp(logPrefix);
  }
  // Otherwise the continued fraction for Q, by the modified Lentz method.
  const tiny = 1e-300;
  let b = x + 1 - s;
  let c = 1 / tiny;
  let d = 1 / b;
  let fraction = d;
  for (let i = 1; i < 10_000; i++) {
    const a = -i * (i - s);
    b += 2;
    d = a * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + a / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    fraction *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return Math.exp(logPrefix) * fraction;
}

/** The p-value of a chi-square test of observed counts against expected ones. */
function chiSquarePValue(observed: ArrayLike<number>, expected: ArrayLike<number>): number {
  assert.equal(observed.length, expected.length);
  let statistic = 0;
  for (let i = 0; i < observed.length; i++) {
    const difference = observed[i]! - expected[i]!;
    statistic += (difference * difference) / expected[i]!;
  }
  return upperGammaQ((observed.length - 1) / 2, statistic / 2);
}

/**
 * P(D > observed) under Kolmogorov's limiting distribution, with Stephens' small-sample
 * correction. For discrete distributions the true p-value is larger, so this errs on the side
 * of rejecting, never of accepting.
 */
function kolmogorovPValue(distance: number, effectiveSize: number): number {
  const root = Math.sqrt(effectiveSize);
  const lambda = (root + 0.12 + 0.11 / root) * distance;
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += k % 2 === 1 ? term : -term;
    if (term < 1e-16) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

/** One-sample KS: counts per value against cdf(i) = P(value <= low + i). */
function ksAgainstCdf(counts: Float64Array, cdf: (offset: number) => number): number {
  let total = 0;
  for (const count of counts) total += count;
  let cumulative = 0;
  let distance = 0;
  for (let i = 0; i < counts.length; i++) {
    cumulative += counts[i]!;
    distance = Math.max(distance, Math.abs(cumulative / total - cdf(i)));
  }
  return kolmogorovPValue(distance, total);
}

/** Two-sample KS between two histograms over the same values. */
function ksTwoSample(first: Float64Array, second: Float64Array): number {
  let firstTotal = 0;
  let secondTotal = 0;
  for (const count of first) firstTotal += count;
  for (const count of second) secondTotal += count;
  let firstCumulative = 0;
  let secondCumulative = 0;
  let distance = 0;
  for (let i = 0; i < first.length; i++) {
    firstCumulative += first[i]!;
    secondCumulative += second[i]!;
    distance = Math.max(
      distance,
      Math.abs(firstCumulative / firstTotal - secondCumulative / secondTotal),
    );
  }
  return kolmogorovPValue(distance, (firstTotal * secondTotal) / (firstTotal + secondTotal));
}

/** CDF of the Irwin–Hall distribution: the sum of n independent uniforms on [0, 1). */
function irwinHallCdf(n: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= n) return 1;
  // The alternating sum cancels badly in the upper half; the distribution is symmetric.
  if (x > n / 2) return 1 - irwinHallCdf(n, n - x);
  let sum = 0;
  let binomial = 1;
  let factorial = 1;
  for (let k = 1; k <= n; k++) factorial *= k;
  for (let k = 0; k <= Math.floor(x); k++) {
    sum += (k % 2 === 0 ? 1 : -1) * binomial * (x - k) ** n;
    binomial = (binomial * (n - k)) / (k + 1);
  }
  return sum / factorial;
}

function moments(counts: Float64Array, low: number): { mean: number; sd: number; skew: number } {
  let total = 0;
  let sum = 0;
  for (let i = 0; i < counts.length; i++) {
    total += counts[i]!;
    sum += counts[i]! * (low + i);
  }
  const mean = sum / total;
  let second = 0;
  let third = 0;
  for (let i = 0; i < counts.length; i++) {
    const deviation = low + i - mean;
    second += counts[i]! * deviation * deviation;
    third += counts[i]! * deviation * deviation * deviation;
  }
  const sd = Math.sqrt(second / total);
  return { mean, sd, skew: third / total / sd ** 3 };
}

// ---- The exact distributions sysbench's arithmetic implies -----------------------------------

/** P(gaussian(a, b) <= a + k): a + floor(n * S / iter) with S Irwin–Hall and n = b - a + 1. */
function gaussianCdf(low: number, high: number, iter: number): (k: number) => number {
  const width = high - low + 1;
  return (k) => irwinHallCdf(iter, ((k + 1) * iter) / width);
}

/**
 * P(special(a, b) <= a + k). With probability (100 - res)% the value is a + floor(t * S / iter),
 * t = b - a; otherwise the branch-picking uniform rnd, known to be >= (100 - res)%, places it at
 * a + floor(rnd * (d + 1) + t/2 - t * pct/200) with d = t * pct/100.
 */
function specialCdf(low: number, high: number, o: RandomOptions): (k: number) => number {
  const span = high - low;
  const bellShare = (100 - o.specRes) / 100;
  const hotWidth = span * (o.specPct / 100);
  const hotOffset = span / 2 - span * (o.specPct / 200);
  return (k) => {
    const bell = irwinHallCdf(o.specIter, ((k + 1) * o.specIter) / span);
    const rndBound = Math.min(1, (k + 1 - hotOffset) / (hotWidth + 1));
    return bellShare * bell + Math.max(0, rndBound - bellShare);
  };
}

/** P(pareto(a, b) <= a + k) = ((k + 1) / n)^(1 / power), power = log h / log(1 - h). */
function paretoCdf(low: number, high: number, h: number): (k: number) => number {
  const width = high - low + 1;
  const power = Math.log(h) / Math.log(1 - h);
  return (k) => Math.min(1, ((k + 1) / width) ** (1 / power));
}

/** The Zipf probabilities of ranks 1..n: k^-exp, normalised. */
function zipfProbabilities(n: number, exp: number): Float64Array {
  const probabilities = new Float64Array(n);
  let total = 0;
  for (let k = 1; k <= n; k++) {
    probabilities[k - 1] = k ** -exp;
    total += probabilities[k - 1]!;
  }
  for (let i = 0; i < n; i++) probabilities[i]! /= total;
  return probabilities;
}

/** Chi-square of the `top` first ranks one by one and all the others as one bin. */
function topRanksPValue(counts: Float64Array, probabilities: Float64Array, top: number): number {
  let total = 0;
  for (const count of counts) total += count;
  const observed: number[] = [];
  const expected: number[] = [];
  let tailObserved = total;
  let tailExpected = total;
  for (let k = 0; k < top; k++) {
    observed.push(counts[k]!);
    expected.push(probabilities[k]! * total);
    tailObserved -= counts[k]!;
    tailExpected -= probabilities[k]! * total;
  }
  observed.push(tailObserved);
  expected.push(tailExpected);
  return chiSquarePValue(observed, expected);
}

// ---- Tests ------------------------------------------------------------------------------------

describe('the generator', () => {
  const MASK = (1n << 64n) - 1n;
  const GOLDEN = 0x9e3779b97f4a7c15n;
  const rotl = (x: bigint, k: bigint): bigint => ((x << k) | (x >> (64n - k))) & MASK;
  const splitMix = (counter: bigint): bigint => {
    let z = (counter + GOLDEN) & MASK;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  };

  test('is xoroshiro128+ (55, 14, 36), seeded per stream from SplitMix64', () => {
    for (const [seed, stream] of [
      [1, 0],
      [20_240_601, 3],
      [-7, 12],
    ] as const) {
      const counter =
        (splitMix(BigInt.asUintN(64, BigInt(seed))) + 2n * BigInt(stream) * GOLDEN) & MASK;
      let s0 = splitMix(counter);
      let s1 = splitMix((counter + GOLDEN) & MASK);
      const random = new SysbenchRandom(options({ seed }), stream);
      for (let i = 0; i < 5_000; i++) {
        const expected = (s0 + s1) & MASK;
        const x = s1 ^ s0;
        s0 = rotl(s0, 55n) ^ x ^ ((x << 14n) & MASK);
        s1 = rotl(x, 36n);
        if (i % 2 === 0) assert.equal(random.uniformUint64(), expected, `output ${i}`);
        else
          assert.equal(random.uniformDouble(), Number(expected >> 12n) * 2 ** -52, `output ${i}`);
      }
    }
  });

  test('the same seed and stream repeat the sequence; another stream or seed does not', () => {
    const sequence = (seed: number, stream: number): number[] => {
      const random = new SysbenchRandom(options({ seed, type: 'special' }), stream);
      return Array.from({ length: 1_000 }, () => random.default(1, 1_000_000));
    };
    assert.deepEqual(sequence(42, 0), sequence(42, 0));
    assert.deepEqual(sequence(42, 5), sequence(42, 5));
    assert.notDeepEqual(sequence(42, 0), sequence(42, 1));
    assert.notDeepEqual(sequence(42, 0), sequence(43, 0));
  });

  test('seed 0 reads the clock once per process; streams still differ', () => {
    const first = new SysbenchRandom(options({ seed: 0 }), 0);
    const second = new SysbenchRandom(options({ seed: 0 }), 1);
    assert.notEqual(first.seed, 0);
    assert.equal(first.seed, second.seed);
    assert.notEqual(first.uniformUint64(), second.uniformUint64());
  });

  test('default() draws from the configured distribution, value for value', () => {
    for (const type of DISTRIBUTIONS) {
      const viaDefault = new SysbenchRandom(options({ type }));
      const direct = new SysbenchRandom(options({ type }));
      for (let i = 0; i < 2_000; i++) {
        assert.equal(viaDefault.default(LOW, HIGH), direct[type](LOW, HIGH), `${type} draw ${i}`);
      }
    }
  });

  test('a one-value range always gives that value, and wide ranges stay in range', () => {
    const methods: Distribution[] = [...DISTRIBUTIONS];
    const random = new SysbenchRandom(options());
    for (const type of methods) {
      for (let i = 0; i < 100; i++) assert.equal(random[type](7, 7), 7, type);
      for (let i = 0; i < 10_000; i++) {
        const value = random[type](0, 2 ** 32 - 1);
        assert.ok(Number.isInteger(value) && value >= 0 && value < 2 ** 32, `${type}: ${value}`);
      }
    }
  });

  test('rejects options sysbench rejects or cannot compute with', () => {
    const invalid: Partial<RandomOptions>[] = [
      { type: 'lognormal' as Distribution },
      { specIter: 0 },
      { specPct: 101 },
      { specRes: -1 },
      { paretoH: 0 },
      { paretoH: 1 },
      { zipfianExp: -0.1 },
      { seed: 1.5 },
    ];
    for (const overrides of invalid) {
      assert.throws(
        () => new SysbenchRandom(options(overrides)),
        RangeError,
        JSON.stringify(overrides),
      );
    }
    assert.throws(() => new SysbenchRandom(options(), -1), RangeError);
  });
});

describe('distributions over [1, 10000], 200k draws each', () => {
  test('uniform: flat across 50 bins', () => {
    const random = new SysbenchRandom(options({ type: 'uniform' }));
    const counts = histogram(() => random.uniform(LOW, HIGH), DRAWS, LOW, HIGH);
    const bins = new Float64Array(50);
    for (let i = 0; i < counts.length; i++)
      bins[Math.floor((i * 50) / counts.length)]! += counts[i]!;
    const p = chiSquarePValue(bins, new Float64Array(50).fill(DRAWS / 50));
    assert.ok(p > SIGNIFICANCE, `chi-square p = ${p}`);
    assert.ok(counts[0]! > 0 && counts[counts.length - 1]! > 0, 'both ends are reachable');
  });

  test('gaussian: the Irwin–Hall bell of 12 uniforms, centred and symmetric', () => {
    const o = options({ type: 'gaussian' });
    const random = new SysbenchRandom(o);
    const counts = histogram(() => random.gaussian(LOW, HIGH), DRAWS, LOW, HIGH);
    const { mean, sd, skew } = moments(counts, LOW);
    // The mean of 12 uniforms over a width of n has sd n / sqrt(12 * 12) = n / 12.
    const expectedSd = (HIGH - LOW + 1) / Math.sqrt(12 * o.specIter);
    assert.ok(
      Math.abs(mean - (LOW + HIGH) / 2) < 4 * (expectedSd / Math.sqrt(DRAWS)),
      `mean ${mean}`,
    );
    assert.ok(Math.abs(sd / expectedSd - 1) < 0.01, `sd ${sd}, expected ${expectedSd}`);
    assert.ok(Math.abs(skew) < 0.03, `skewness ${skew}`);
    const p = ksAgainstCdf(counts, gaussianCdf(LOW, HIGH, o.specIter));
    assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
  });

  test('gaussian with --rand-spec-iter=3 follows the wider bell', () => {
    const o = options({ type: 'gaussian', specIter: 3 });
    const random = new SysbenchRandom(o);
    const counts = histogram(() => random.gaussian(LOW, HIGH), DRAWS, LOW, HIGH);
    const p = ksAgainstCdf(counts, gaussianCdf(LOW, HIGH, 3));
    assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
  });

  test('special: 75% in a hot 1% near the middle, the rest a bell around it', () => {
    const o = options({ type: 'special' });
    const random = new SysbenchRandom(o);
    const counts = histogram(() => random.special(LOW, HIGH), DRAWS, LOW, HIGH);

    // rnd * 100.99 + 4949.505 for rnd in [0.25, 1) covers [4974.75, 5050.495), plus a = 1.
    const hotFirst = 4975;
    const hotLast = 5051;
    // The bell puts about 24 draws on each middle value, a full hot value gets about 1980 and
    // the partial 4975 about 490, so 200 separates them with room to spare.
    const background = 200;
    const hotValues: number[] = [];
    for (let i = 0; i < counts.length; i++) if (counts[i]! > background) hotValues.push(LOW + i);
    assert.deepEqual(
      hotValues,
      Array.from({ length: hotLast - hotFirst + 1 }, (_, i) => hotFirst + i),
    );

    const cdf = specialCdf(LOW, HIGH, o);
    const expectedHotShare = cdf(hotLast - LOW) - cdf(hotFirst - 1 - LOW);
    let hot = 0;
    let restSum = 0;
    let restCount = 0;
    for (let i = 0; i < counts.length; i++) {
      const value = LOW + i;
      if (value >= hotFirst && value <= hotLast) hot += counts[i]!;
      else {
        restSum += counts[i]! * value;
        restCount += counts[i]!;
      }
    }
    assert.ok(expectedHotShare > 0.75 && expectedHotShare < 0.77, `${expectedHotShare}`);
    assert.ok(Math.abs(hot / DRAWS - expectedHotShare) < 0.005, `hot share ${hot / DRAWS}`);
    // The bell spans [a, b), so its mean is a + (b - a) / 2 - 1/2.
    const restMean = restSum / restCount;
    assert.ok(Math.abs(restMean - (LOW + (HIGH - LOW) / 2 - 0.5)) < 20, `rest mean ${restMean}`);
    const p = ksAgainstCdf(counts, cdf);
    assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
    assert.equal(counts[counts.length - 1], 0, 'b comes only from the hot region');
  });

  test('special with other pct, res and iter follows the same formula', () => {
    const o = options({ type: 'special', specPct: 10, specRes: 50, specIter: 4 });
    const random = new SysbenchRandom(o);
    const counts = histogram(() => random.special(LOW, HIGH), DRAWS, LOW, HIGH);
    const p = ksAgainstCdf(counts, specialCdf(LOW, HIGH, o));
    assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
  });

  test('special with res = 100 and res = 0: only hot values, only the bell', () => {
    const allHot = new SysbenchRandom(options({ specRes: 100 }));
    const hotCounts = histogram(() => allHot.special(LOW, HIGH), 20_000, LOW, HIGH);
    for (let i = 0; i < hotCounts.length; i++) {
      if (hotCounts[i]! > 0) assert.ok(LOW + i >= 4950 && LOW + i <= 5051, `${LOW + i}`);
    }
    const o = options({ specRes: 0 });
    const allBell = new SysbenchRandom(o);
    const bellCounts = histogram(() => allBell.special(LOW, HIGH), 50_000, LOW, HIGH);
    const p = ksAgainstCdf(bellCounts, specialCdf(LOW, HIGH, o));
    assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
  });

  test('pareto: the low end is hot, along the formula’s CDF', () => {
    for (const paretoH of [0.2, 0.35]) {
      const random = new SysbenchRandom(options({ type: 'pareto', paretoH }));
      const counts = histogram(() => random.pareto(LOW, HIGH), DRAWS, LOW, HIGH);
      const cdf = paretoCdf(LOW, HIGH, paretoH);
      if (paretoH === 0.2) {
        let lowFifth = 0;
        for (let i = 0; i < 2_000; i++) lowFifth += counts[i]!;
        assert.ok(
          Math.abs(lowFifth / DRAWS - 0.8) < 0.005,
          `the first 20% got ${lowFifth / DRAWS}`,
        );
        assert.ok(Math.abs(cdf(1_999) - 0.8) < 1e-12);
      }
      const p = ksAgainstCdf(counts, cdf);
      assert.ok(p > SIGNIFICANCE, `h = ${paretoH}: KS p = ${p}`);
    }
  });

  test('zipfian: rank k (value a + k - 1) drawn in proportion to 1 / k^0.8', () => {
    const o = options({ type: 'zipfian' });
    const random = new SysbenchRandom(o);
    const counts = histogram(() => random.zipfian(LOW, HIGH), DRAWS, LOW, HIGH);
    const probabilities = zipfProbabilities(HIGH - LOW + 1, o.zipfianExp);
    const p = topRanksPValue(counts, probabilities, 20);
    assert.ok(p > SIGNIFICANCE, `chi-square p = ${p}`);
    assert.ok(
      counts.every((count) => count <= counts[0]!),
      'a is the hottest value',
    );
    const cumulative = new Float64Array(probabilities.length);
    let sum = 0;
    for (let i = 0; i < probabilities.length; i++) {
      sum += probabilities[i]!;
      cumulative[i] = sum;
    }
    const ksP = ksAgainstCdf(counts, (k) => cumulative[k]!);
    assert.ok(ksP > SIGNIFICANCE, `KS p = ${ksP}`);
  });

  test('zipfian: exact over every rank for exponents 0, 1 and 1.5', () => {
    const n = 100;
    for (const zipfianExp of [0, 1, 1.5]) {
      const random = new SysbenchRandom(options({ type: 'zipfian', zipfianExp }));
      const counts = histogram(() => random.zipfian(11, 10 + n), 100_000, 11, 10 + n);
      const probabilities = zipfProbabilities(n, zipfianExp);
      const expected = Array.from(probabilities, (p) => p * 100_000);
      const p = chiSquarePValue(counts, expected);
      assert.ok(p > SIGNIFICANCE, `exponent ${zipfianExp}: chi-square p = ${p}`);
      // Few bins catch a small error on the hottest ranks that a hundred bins would dilute.
      const topP = topRanksPValue(counts, probabilities, 5);
      assert.ok(topP > SIGNIFICANCE, `exponent ${zipfianExp}: top ranks chi-square p = ${topP}`);
    }
  });

  test('string(): # becomes a digit, @ a lowercase letter, the rest stays', () => {
    const random = new SysbenchRandom(options());
    const template = '###-@@@ x#@';
    const digits = new Float64Array(10);
    const letters = new Float64Array(26);
    for (let i = 0; i < 20_000; i++) {
      const value = random.string(template);
      assert.equal(value.length, template.length);
      for (let j = 0; j < template.length; j++) {
        const code = value.charCodeAt(j);
        if (template[j] === '#') digits[code - 0x30]!++;
        else if (template[j] === '@') letters[code - 0x61]!++;
        else assert.equal(value[j], template[j]);
      }
    }
    assert.equal(
      digits.reduce((a, b) => a + b),
      80_000,
      'every # gave a digit',
    );
    assert.equal(
      letters.reduce((a, b) => a + b),
      80_000,
      'every @ gave a letter',
    );
    assert.ok(chiSquarePValue(digits, new Float64Array(10).fill(8_000)) > SIGNIFICANCE);
    assert.ok(chiSquarePValue(letters, new Float64Array(26).fill(80_000 / 26)) > SIGNIFICANCE);

    assert.match(random.string('é€#@😀'), /^é€[0-9][a-z]😀$/u);
    const long = '#'.repeat(1_000);
    assert.match(random.string(long), /^[0-9]{1000}$/);
  });
});

describe('against the real sysbench 1.0 binary', () => {
  const EVENTS = 50_000;
  const RANGE_HIGH = 1_000;
  let directory = '';
  let script = '';

  before(() => {
    directory = mkdtempSync(join(tmpdir(), 'sysbench-rand-'));
    script = join(directory, 'draw.lua');
    writeFileSync(
      script,
      `function event()\n  print(sysbench.rand.default(1, ${RANGE_HIGH}))\nend\n`,
    );
  });
  after(() => rmSync(directory, { recursive: true, force: true }));

  function sysbenchDraws(sysbenchArgs: string[]): Float64Array {
    const run = spawnSync(
      'sysbench',
      [...sysbenchArgs, `--events=${EVENTS}`, '--time=0', '--rand-seed=4242', script, 'run'],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.error) {
      assert.fail(
        `cannot run sysbench (${run.error.message}); install sysbench 1.0, e.g. apt-get install sysbench`,
      );
    }
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^sysbench 1\.0\./, 'these comparisons are with sysbench 1.0');
    const counts = new Float64Array(RANGE_HIGH);
    let drawn = 0;
    for (const line of run.stdout.split('\n')) {
      if (!/^\d+$/.test(line)) continue;
      const value = Number(line);
      assert.ok(value >= 1 && value <= RANGE_HIGH, `sysbench gave ${value}`);
      counts[value - 1]!++;
      drawn++;
    }
    assert.equal(drawn, EVENTS);
    return counts;
  }

  const cases: { name: string; args: string[]; overrides: Partial<RandomOptions> }[] = [
    { name: 'uniform', args: ['--rand-type=uniform'], overrides: { type: 'uniform' } },
    { name: 'gaussian', args: ['--rand-type=gaussian'], overrides: { type: 'gaussian' } },
    { name: 'special (the default)', args: [], overrides: { type: 'special' } },
    { name: 'pareto', args: ['--rand-type=pareto'], overrides: { type: 'pareto' } },
    {
      name: 'special, pct 10, res 50, iter 4',
      args: [
        '--rand-type=special',
        '--rand-spec-pct=10',
        '--rand-spec-res=50',
        '--rand-spec-iter=4',
      ],
      overrides: { type: 'special', specPct: 10, specRes: 50, specIter: 4 },
    },
    {
      name: 'gaussian, iter 3',
      args: ['--rand-type=gaussian', '--rand-spec-iter=3'],
      overrides: { type: 'gaussian', specIter: 3 },
    },
    {
      name: 'pareto, h 0.35',
      args: ['--rand-type=pareto', '--rand-pareto-h=0.35'],
      overrides: { type: 'pareto', paretoH: 0.35 },
    },
  ];

  for (const { name, args, overrides } of cases) {
    test(`${name}: same distribution (two-sample KS)`, () => {
      const theirs = sysbenchDraws(args);
      const random = new SysbenchRandom(options(overrides));
      const ours = histogram(() => random.default(1, RANGE_HIGH), EVENTS, 1, RANGE_HIGH);
      const p = ksTwoSample(theirs, ours);
      assert.ok(p > SIGNIFICANCE, `KS p = ${p}`);
    });
  }

  // sysbench 1.0.20 has no zipfian ("Invalid random numbers distribution"): it came with 1.1,
  // so ours is checked above against the Zipf law alone.
});
