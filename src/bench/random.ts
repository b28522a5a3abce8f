/**
 * Random numbers drawn the way sysbench 1.0.20 draws them (`sysbench.rand.*`, implemented in its
 * src/sb_rand.c), so our workloads hit the same rows with the same skew as sysbench's oltp
 * scripts. The sequences are not sysbench's (its threads are seeded from libc's random()), but
 * every distribution follows sysbench's arithmetic step by step, truncations included.
 *
 * sysbench 1.0.20 has no zipfian distribution: it arrived in sysbench 1.1, which also dropped
 * 'special' and made 'uniform' the default. Ours follows 1.1's algorithm and default exponent.
 */

export const DISTRIBUTIONS = ['special', 'uniform', 'gaussian', 'pareto', 'zipfian'] as const;
export type Distribution = (typeof DISTRIBUTIONS)[number];

/** sysbench's --rand-* options, under the same names without the prefix. */
export interface RandomOptions {
  /** --rand-type: what `default()` draws from. */
  type: Distribution;
  /** --rand-spec-iter: uniforms summed per value by gaussian and by special's bell part. */
  specIter: number;
  /** --rand-spec-pct: width of special's hot region, in percent of the range. */
  specPct: number;
  /** --rand-spec-res: percentage of special's values that land in the hot region. */
  specRes: number;
  /** --rand-pareto-h: pareto's shape; 0.2 gives the 80/20 rule. */
  paretoH: number;
  /** --rand-zipfian-exp: zipfian's exponent (theta). */
  zipfianExp: number;
  /** --rand-seed: 0 seeds from the clock, as sysbench does. */
  seed: number;
}

/** sysbench 1.0.20's defaults (`sysbench --help`), plus sysbench 1.1's for zipfian. */
export const DEFAULT_RANDOM_OPTIONS: RandomOptions = Object.freeze({
  type: 'special',
  specIter: 12,
  specPct: 1,
  specRes: 75,
  paretoH: 0.2,
  zipfianExp: 0.8,
  seed: 0,
});

/** For seed 0, one clock reading per process, as sysbench has; streams still keep threads apart. */
const CLOCK_SEED = Date.now();

const TWO_POW_20 = 2 ** 20;
const TWO_POW_32 = 2 ** 32;
const TWO_POW_MINUS_52 = 2 ** -52;
const CHAR_0 = 0x30;
const CHAR_A = 0x61;
const CHAR_HASH = 0x23;
const CHAR_AT = 0x40;

// Indices into DISTRIBUTIONS, so default() dispatches on a small integer rather than a string.
const KIND_SPECIAL = 0;
const KIND_UNIFORM = 1;
const KIND_GAUSSIAN = 2;
const KIND_PARETO = 3;

export class SysbenchRandom {
  /** The seed actually used: options.seed, or the clock reading when that was 0. */
  readonly seed: number;
  readonly #kind: number;

  // xoroshiro128+ state, the generator sysbench uses per thread: two 64-bit words as 32-bit
  // halves (high, low, high, low) in an Int32Array, which V8 reads and writes unboxed.
  readonly #state = new Int32Array(4);

  // Constants sysbench precomputes once in sb_rand_init().
  readonly #iter: number;
  readonly #iterMult: number;
  readonly #pctMult: number;
  readonly #pct2Mult: number;
  readonly #resMult: number;
  readonly #paretoPower: number;
  readonly #zipfExp: number;
  readonly #zipfS: number;
  readonly #zipfHIntegralX1: number;

  // zipfian's only per-range constant, which sysbench recomputes on every call; the oltp
  // scripts always ask for the same range, so one remembered range is enough.
  #zipfN = -1;
  #zipfHIntegralN = 0;

  #stringScratch = Buffer.allocUnsafe(256);

  /**
   * `stream` tells apart generators sharing a seed (one per worker), as sysbench gives each
   * thread its own state.
   */
  constructor(options: RandomOptions, stream = 0) {
    validate(options);
    if (!Number.isSafeInteger(stream) || stream < 0) {
      throw new RangeError(`stream must be a non-negative integer, got ${stream}`);
    }
    this.#kind = DISTRIBUTIONS.indexOf(options.type);
    this.seed = options.seed === 0 ? CLOCK_SEED : options.seed;
    this.#seedState(this.seed, stream);

    this.#iter = options.specIter;
    this.#iterMult = 1 / options.specIter;
    this.#pctMult = options.specPct / 100;
    this.#pct2Mult = options.specPct / 200;
    // Infinite for specRes = 100, as in sysbench; special() then never takes the bell branch.
    this.#resMult = 100 / (100 - options.specRes);
    this.#paretoPower = Math.log(options.paretoH) / Math.log(1 - options.paretoH);
    this.#zipfExp = options.zipfianExp;
    this.#zipfS =
      2 -
      hIntegralInverse(
        hIntegral(2.5, options.zipfianExp) - h(2, options.zipfianExp),
        options.zipfianExp,
      );
    this.#zipfHIntegralX1 = hIntegral(1.5, options.zipfianExp) - 1;
  }

  /**
   * sysbench.rand.default(a, b) (sb_rand_default): an integer in [a, b] from the distribution
   * --rand-type chose. a and b are integers with 0 <= a <= b < 2^32, as sysbench's uint32_t.
   */
  default(a: number, b: number): number {
    switch (this.#kind) {
      case KIND_SPECIAL:
        return this.special(a, b);
      case KIND_UNIFORM:
        return this.uniform(a, b);
      case KIND_GAUSSIAN:
        return this.gaussian(a, b);
      case KIND_PARETO:
        return this.pareto(a, b);
      default: // zipfian, the last of DISTRIBUTIONS
        return this.zipfian(a, b);
    }
  }

  /** sysbench.rand.uniform (sb_rand_uniform): every integer in [a, b] equally likely. */
  uniform(a: number, b: number): number {
    // sysbench truncates a + u * n as a whole; adding a after the floor is the same except in
    // a rounding case 2^-52 rare, where it keeps the result inside [a, b] while sysbench's can
    // land on b + 1.
    return a + Math.floor(this.#nextDouble() * (b - a + 1));
  }

  /**
   * sysbench.rand.gaussian (sb_rand_gaussian): the mean of --rand-spec-iter uniforms over
   * [a, b + 1), truncated. Not a true normal: an Irwin–Hall bell with mean (a + b) / 2 and
   * standard deviation (b - a + 1) / sqrt(12 * iter), which never leaves the range.
   */
  gaussian(a: number, b: number): number {
    const width = b - a + 1;
    let sum = 0;
    for (let i = 0; i < this.#iter; i++) sum += this.#nextDouble() * width;
    return a + Math.floor(sum * this.#iterMult);
  }

  /**
   * sysbench.rand.special (sb_rand_special), sysbench 1.0's default. --rand-spec-res percent of
   * values are uniform over a hot region --rand-spec-pct percent wide in the middle of the
   * range; the rest follow the same bell as gaussian() over [a, b) — b itself only ever comes
   * from the hot region.
   *
   * The uniform that picks the branch is reused as the position in the hot region, so only its
   * top res% is used: with the defaults on [1, 10000] the hot values run from 4975 to 5051,
   * where the nominal region is 4950..5051 (it starts a quarter of the way in), and the end
   * values 4975 and 5051 get only part of a full share.
   */
  special(a: number, b: number): number {
    const span = b - a;
    const rnd = this.#nextDouble();
    if (rnd * (span * this.#resMult) < span) {
      let sum = 0;
      for (let i = 0; i < this.#iter; i++) sum += this.#nextDouble();
      return a + Math.floor(sum * span * this.#iterMult);
    }
    const hotWidth = span * this.#pctMult;
    const position = rnd * (hotWidth + 1) + (span / 2 - span * this.#pct2Mult);
    return a + Math.floor(position);
  }

  /**
   * sysbench.rand.pareto (sb_rand_pareto): a + n * u^(log h / log(1 - h)), truncated, so
   * P(value < a + k) = (k / n)^(log(1 - h) / log h); the low end of the range is hot, and with
   * h = 0.2 the first 20% of it gets 80% of the values.
   */
  pareto(a: number, b: number): number {
    return a + Math.floor((b - a + 1) * Math.pow(this.#nextDouble(), this.#paretoPower));
  }

  /**
   * sysbench 1.1's sysbench.rand.zipfian (sb_rand_zipfian): P(a + k - 1) proportional to
   * 1 / k^exp for k = 1..n, so a is the hottest value. Drawn by rejection-inversion (Hörmann
   * and Derflinger, 1996, as Apache Commons Math and sysbench 1.1 do), not by YCSB's
   * zeta-table method: it needs no O(n) precomputation and is exact for any exponent >= 0.
   */
  zipfian(a: number, b: number): number {
    const n = b - a + 1;
    if (n !== this.#zipfN) {
      this.#zipfHIntegralN = hIntegral(n + 0.5, this.#zipfExp);
      this.#zipfN = n;
    }
    const exp = this.#zipfExp;
    const hIntegralN = this.#zipfHIntegralN;
    const hIntegralX1 = this.#zipfHIntegralX1;
    for (;;) {
      const u = hIntegralN + this.#nextDouble() * (hIntegralX1 - hIntegralN);
      const x = hIntegralInverse(u, exp);
      let k = Math.floor(x + 0.5);
      // Numerical error can push the rounded inverse just outside [1, n].
      if (k < 1) k = 1;
      else if (k > n) k = n;
      // The first test is a cheap sufficient condition for the second, which accepts k with
      // probability h(k) / (H(k + 1/2) - H(k - 1/2)); together they make P(k) ∝ 1 / k^exp.
      if (k - x <= this.#zipfS || u >= hIntegral(k + 0.5, exp) - h(k, exp)) return a + k - 1;
    }
  }

  /**
   * sysbench.rand.string (sb_rand_str): each '#' becomes a random digit, each '@' a random
   * lowercase letter; every other character is kept.
   */
  string(template: string): string {
    const length = template.length;
    let scratch = this.#stringScratch;
    if (scratch.length < length) {
      scratch = Buffer.allocUnsafe(Math.max(length, scratch.length * 2));
      this.#stringScratch = scratch;
    }
    for (let i = 0; i < length; i++) {
      const code = template.charCodeAt(i);
      if (code === CHAR_HASH) scratch[i] = CHAR_0 + Math.floor(this.#nextDouble() * 10);
      else if (code === CHAR_AT) scratch[i] = CHAR_A + Math.floor(this.#nextDouble() * 26);
      else if (code <= 0xff) scratch[i] = code;
      else return this.#wideString(template);
    }
    return scratch.toString('latin1', 0, length);
  }

  /** string() for templates beyond Latin-1, which the byte scratch buffer cannot hold. */
  #wideString(template: string): string {
    let out = '';
    for (const char of template) {
      if (char === '#') out += String.fromCharCode(CHAR_0 + Math.floor(this.#nextDouble() * 10));
      else if (char === '@')
        out += String.fromCharCode(CHAR_A + Math.floor(this.#nextDouble() * 26));
      else out += char;
    }
    return out;
  }

  /** sysbench.rand.uniform_uint64 (sb_rand_uniform_uint64): the generator's raw 64-bit output. */
  uniformUint64(): bigint {
    const state = this.#state;
    const sum = (BigInt(state[0]! >>> 0) << 32n) + BigInt(state[1]! >>> 0);
    const result = BigInt.asUintN(
      64,
      sum + (BigInt(state[2]! >>> 0) << 32n) + BigInt(state[3]! >>> 0),
    );
    this.#advance();
    return result;
  }

  /** sysbench.rand.uniform_double (sb_rand_uniform_double): a double in [0, 1). */
  uniformDouble(): number {
    return this.#nextDouble();
  }

  /** The top 52 bits of the next output, s0 + s1, as a fraction, as sysbench builds doubles. */
  #nextDouble(): number {
    const state = this.#state;
    const s0Hi = state[0]!;
    const s0Lo = state[1]!;
    const sumLo = (s0Lo >>> 0) + (state[3]! >>> 0);
    const sumHi = (s0Hi + state[2]! + (sumLo >= TWO_POW_32 ? 1 : 0)) >>> 0;
    this.#advance();
    return (sumHi * TWO_POW_20 + (sumLo >>> 12)) * TWO_POW_MINUS_52;
  }

  /**
   * One xoroshiro128+ state transition with the original (2016) rotation constants 55, 14 and
   * 36, the version sysbench bundles.
   */
  #advance(): void {
    const state = this.#state;
    const s0Hi = state[0]!;
    const s0Lo = state[1]!;
    const xHi = state[2]! ^ s0Hi;
    const xLo = state[3]! ^ s0Lo;
    // s0 = rotl(s0, 55) ^ x ^ (x << 14); rotating left by 55 is rotating right by 9.
    state[0] = ((s0Hi >>> 9) | (s0Lo << 23)) ^ xHi ^ ((xHi << 14) | (xLo >>> 18));
    state[1] = ((s0Lo >>> 9) | (s0Hi << 23)) ^ xLo ^ (xLo << 14);
    // s1 = rotl(x, 36): swap the halves, then rotate left by 4.
    state[2] = (xLo << 4) | (xHi >>> 28);
    state[3] = (xHi << 4) | (xLo >>> 28);
  }

  /**
   * sysbench fills each thread's state from libc's random(), seeded once per process; we fill
   * it from SplitMix64 (the seeder xoroshiro's authors recommend), each stream taking its own
   * pair of outputs from a counter that starts at a scramble of the seed.
   */
  #seedState(seed: number, stream: number): void {
    const mask = (1n << 64n) - 1n;
    let counter = splitMix64(BigInt.asUintN(64, BigInt(seed))) + 2n * BigInt(stream) * GOLDEN;
    counter &= mask;
    const s0 = splitMix64(counter);
    const s1 = splitMix64((counter + GOLDEN) & mask);
    // An all-zero state would only ever yield zeros.
    const nonZeroS0 = s0 === 0n && s1 === 0n ? GOLDEN : s0;
    const state = this.#state;
    state[0] = Number(BigInt.asIntN(32, nonZeroS0 >> 32n));
    state[1] = Number(BigInt.asIntN(32, nonZeroS0));
    state[2] = Number(BigInt.asIntN(32, s1 >> 32n));
    state[3] = Number(BigInt.asIntN(32, s1));
  }
}

/** SplitMix64's increment, 2^64 divided by the golden ratio. */
const GOLDEN = 0x9e3779b97f4a7c15n;

/** SplitMix64's output for one counter value (Steele, Lea and Flood, 2014). */
function splitMix64(counter: bigint): bigint {
  let z = BigInt.asUintN(64, counter + GOLDEN);
  z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
}

/** Rejects options sysbench would reject, or on which its arithmetic breaks down. */
function validate(options: RandomOptions): void {
  if (!DISTRIBUTIONS.includes(options.type)) {
    throw new RangeError(`Invalid random numbers distribution: ${String(options.type)}`);
  }
  if (!Number.isInteger(options.specIter) || options.specIter < 1) {
    throw new RangeError(`specIter must be a positive integer, got ${options.specIter}`);
  }
  for (const [name, value] of [
    ['specPct', options.specPct],
    ['specRes', options.specRes],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 100) {
      throw new RangeError(`${name} must be an integer percentage, got ${value}`);
    }
  }
  if (!(options.paretoH > 0 && options.paretoH < 1)) {
    throw new RangeError(`paretoH must be strictly between 0 and 1, got ${options.paretoH}`);
  }
  if (!(options.zipfianExp >= 0 && Number.isFinite(options.zipfianExp))) {
    throw new RangeError(`zipfianExp must be >= 0, got ${options.zipfianExp}`);
  }
  if (!Number.isSafeInteger(options.seed)) {
    throw new RangeError(`seed must be an integer, got ${options.seed}`);
  }
}

// The helpers of rejection-inversion, as sysbench 1.1 defines them. H is the integral of the
// hat function h(x) = x^-exp, written so it stays finite and continuous at exp = 1.

/** H(x) = (x^(1 - exp) - 1) / (1 - exp), or log(x) when exp = 1. */
function hIntegral(x: number, exp: number): number {
  const logX = Math.log(x);
  return expm1OverX((1 - exp) * logX) * logX;
}

/** h(x) = x^-exp. */
function h(x: number, exp: number): number {
  return Math.exp(-exp * Math.log(x));
}

/** The inverse of H. */
function hIntegralInverse(x: number, exp: number): number {
  // Rounding can push t just below -1, where log1p is undefined.
  const t = Math.max(x * (1 - exp), -1);
  return Math.exp(log1pOverX(t) * x);
}

/** log(1 + x) / x, by its Taylor series near 0 where the quotient loses precision. */
function log1pOverX(x: number): number {
  if (Math.abs(x) > 1e-8) return Math.log1p(x) / x;
  return 1 - x * (0.5 - x * (1 / 3 - 0.25 * x));
}

/** (e^x - 1) / x, by its Taylor series near 0 where the quotient loses precision. */
function expm1OverX(x: number): number {
  if (Math.abs(x) > 1e-8) return Math.expm1(x) / x;
  return 1 + x * 0.5 * (1 + (x / 3) * (1 + 0.25 * x));
}
