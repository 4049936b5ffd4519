/**
 * Exact binomial and multinomial random variates from a uniform generator, in
 * O(1) expected time per binomial draw however large n is — what lets a
 * bootstrap of a million units resample their distinct rating patterns instead
 * of the units themselves.
 *
 * Binomial(n, p), with p ≤ 1/2 (p > 1/2 is drawn as n − Binomial(n, 1 − p)):
 * - n·p < 10: sequential inversion (Devroye 1986, §X.4.3), starting from
 *   P(0) = (1 − p)^n and the recurrence P(k + 1) = P(k) · (n − k)/(k + 1) · p/(1 − p);
 * - n·p ≥ 10: BTRD, the transformed rejection with decomposition of W. Hörmann
 *   (1993) "The generation of binomial random variates", J. Statist. Comput.
 *   Simul. 46, 101-110 (algorithm BTRD, steps 0-3.4, with its Stirling-series
 *   tail correction f_c).
 *
 * Multinomial(n; c_1/N, …, c_P/N) by conditional binomials (Devroye 1986,
 * §XI.1): x_i ~ Binomial(n − Σ_{j<i} x_j, c_i / Σ_{j≥i} c_j).
 *
 * Reference: L. Devroye (1986) Non-Uniform Random Variate Generation, Springer.
 */

/** log(k!) − [(k + ½) log(k + 1) − (k + 1) + ½ log(2π)] for k = 0..9 (Hörmann 1993, table of f_c). */
const FC = [
  0.08106146679532726, 0.04134069595540929, 0.02767792568499834, 0.02079067210376509, 0.01664469118982119, 0.01387612882307075,
  0.01189670994589177, 0.01041126526197209, 0.009255462182712733, 0.008330563433362871,
];

/** The Stirling-series correction f_c(k) of Hörmann (1993). */
export function stirlingTail(k: number): number {
  if (k < 10) return FC[k];
  const r = 1 / (k + 1);
  const r2 = r * r;
  return (1 / 12 - (1 / 360 - r2 / 1260) * r2) * r;
}

/**
 * One Binomial(n, p) variate.
 *
 * Preconditions: n a non-negative integer, 0 ≤ p ≤ 1, `random` uniform on [0, 1).
 *
 * @throws {Error} "binomialSample: ..." for a bad n or p
 * @example
 * binomialSample(1_000_000, 0.3, seededRandom(1)); // => a number near 300000
 */
export function binomialSample(n: number, p: number, random: () => number): number {
  if (!Number.isInteger(n) || n < 0) throw new Error(`binomialSample: n must be a non-negative integer, got ${String(n)}`);
  if (!(p >= 0 && p <= 1)) throw new Error(`binomialSample: p must be in [0, 1], got ${String(p)}`);
  if (n === 0 || p === 0) return 0;
  if (p === 1) return n;
  if (p > 0.5) return n - draw(n, 1 - p, random);
  return draw(n, p, random);
}

function draw(n: number, p: number, random: () => number): number {
  if (n * p < 10) return inversion(n, p, random);
  return btrd(n, p, random);
}

function inversion(n: number, p: number, random: () => number): number {
  const q = 1 - p;
  const s = p / q;
  const a = (n + 1) * s;
  const p0 = Math.exp(n * Math.log1p(-p));
  for (;;) {
    let r = p0;
    let u = random();
    let x = 0;
    while (u > r) {
      u -= r;
      x++;
      if (x > n) break;
      r *= a / x - s;
    }
    if (x <= n) return x;
    // Rounding left u above the whole mass: draw again (probability ~1e-16).
  }
}

function btrd(n: number, p: number, random: () => number): number {
  // Step 0: set-up.
  const m = Math.floor((n + 1) * p);
  const r = p / (1 - p);
  const nr = (n + 1) * r;
  const npq = n * p * (1 - p);
  const sq = Math.sqrt(npq);
  const b = 1.15 + 2.53 * sq;
  const a = -0.0873 + 0.0248 * b + 0.01 * p;
  const c = n * p + 0.5;
  const alpha = (2.83 + 5.1 / b) * sq;
  const vr = 0.92 - 4.2 / b;
  const urvr = 0.86 * vr;
  for (;;) {
    // Step 1: the triangle in the centre, accepted at once.
    let v = random();
    let u: number;
    if (v <= urvr) {
      u = v / vr - 0.43;
      return Math.floor(((2 * a) / (0.5 - Math.abs(u)) + b) * u + c);
    }
    // Step 2: u, v for the rest of the hat.
    if (v >= vr) {
      u = random() - 0.5;
    } else {
      u = v / vr - 0.93;
      u = Math.sign(u) * 0.5 - u;
      v = random() * vr;
    }
    // Step 3.0
    const us = 0.5 - Math.abs(u);
    const k = Math.floor(((2 * a) / us + b) * u + c);
    if (k < 0 || k > n) continue;
    v = (v * alpha) / (a / (us * us) + b);
    const km = Math.abs(k - m);
    if (km <= 15) {
      // Step 3.1: recursive evaluation of f(k) = P(k)/P(m).
      let f = 1;
      if (m < k) {
        for (let i = m + 1; i <= k; i++) f *= nr / i - r;
      } else if (m > k) {
        for (let i = k + 1; i <= m; i++) v *= nr / i - r;
      }
      if (v <= f) return k;
      continue;
    }
    // Step 3.2: squeeze on log v.
    v = Math.log(v);
    const rho = (km / npq) * (((km / 3 + 0.625) * km + 1 / 6) / npq + 0.5);
    const t = (-km * km) / (2 * npq);
    if (v < t - rho) return k;
    if (v > t + rho) continue;
    // Steps 3.3-3.4: the exact test with Stirling's formula.
    const nm = n - m + 1;
    const h = (m + 0.5) * Math.log((m + 1) / (r * nm)) + stirlingTail(m) + stirlingTail(n - m);
    const nk = n - k + 1;
    if (v <= h + (n + 1) * Math.log(nm / nk) + (k + 0.5) * Math.log((nk * r) / (k + 1)) - stirlingTail(k) - stirlingTail(n - k)) return k;
  }
}

/**
 * A Multinomial(n; counts / Σ counts) draw into `out` (same length as counts).
 *
 * Preconditions: counts finite and non-negative with a positive sum; n a
 * non-negative integer.
 *
 * @throws {Error} "multinomialSample: ..." for bad counts or n
 * @example
 * multinomialSample(10, [5, 5], seededRandom(1), new Float64Array(2)); // => e.g. Float64Array [4, 6]
 */
export function multinomialSample(n: number, counts: ArrayLike<number>, random: () => number, out: Float64Array): Float64Array {
  const P = counts.length;
  if (out.length !== P) throw new Error("multinomialSample: out must have one entry per count");
  let total = 0;
  for (let i = 0; i < P; i++) {
    const c = counts[i];
    if (!(c >= 0) || !Number.isFinite(c))
      throw new Error(`multinomialSample: counts must be finite and non-negative (entry ${i} is ${String(c)})`);
    total += c;
  }
  if (!(total > 0)) throw new Error("multinomialSample: the counts sum to 0");
  if (!Number.isInteger(n) || n < 0) throw new Error(`multinomialSample: n must be a non-negative integer, got ${String(n)}`);
  let left = n;
  let rest = total;
  for (let i = 0; i < P; i++) {
    const c = counts[i];
    if (left === 0 || c === 0) {
      out[i] = 0;
      continue;
    }
    if (i === P - 1 || c >= rest) {
      out[i] = left;
      left = 0;
      rest -= c;
      continue;
    }
    const x = binomialSample(left, c / rest, random);
    out[i] = x;
    left -= x;
    rest -= c;
  }
  return out;
}
