import { moverSum } from "./moverSum";
import { rectifierCI } from "./rectifierCI";
import { normalQuantile } from "./normalQuantile";
import type { Interval } from "./types";

/**
 * What the corrected-score estimators (classicalMean, ppiEstimate, stratifiedPpi, activePpi) share: the input, a
 * population of N units each with the judge's score and, for the labelled ones, the human value; the result; and
 * the one interval they all use.
 *
 * The target is the finite-population mean θ = (1/N) Σ_i Y_i over the N units of the benchmark (every model
 * answer the judge scored), the number a paper prints; the judge's scores of all N units are known.
 */

/** One unit of the population. */
export interface CorrectedUnit {
  /** The judge's score f_i (Yes = 1, No = 0, or a number on the scale's range). */
  f: number;
  /** The human value Y_i when the unit is labelled; null or undefined when it is not. */
  y?: number | null;
  /**
   * The unit's inclusion probability π_i: the probability that the labelling plan chose it. Absent: the plan is
   * taken as simple random sampling (within the unit's stratum when there are strata), π = n_h/N_h.
   */
  pi?: number;
  /** The unit's stratum (a model, a turn, a domain); absent: one stratum. */
  stratum?: string;
}

export interface CorrectedOptions {
  /** The range of the scores and values (default [0, 1]); a C3EBench score is [1, 10]. */
  range?: Interval;
  /** Confidence level (default 0.95). */
  level?: number;
}

export type EstimatorName = "classical" | "ppi" | "ppi++" | "stratified" | "active";

export interface CorrectedResult {
  estimator: EstimatorName;
  /** The corrected estimate of θ. */
  estimate: number;
  /**
   * The interval (see correctedInterval): never of zero width unless `exact` (every unit labelled). Null when
   * nothing is labelled (then `notes` says so).
   */
  ci: Interval | null;
  /** The normal-theory (Wald) standard error, as the estimator's paper gives it; null when it cannot be estimated. */
  se: number | null;
  /** The λ used (the one of the whole population; stratified: the strata's in `lambdas`); null for classical. */
  lambda: number | null;
  lambdas?: Record<string, number>;
  nLabeled: number;
  nTotal: number;
  /** The judge's mean over all units (the uncorrected score). */
  judgeMean: number;
  /** Every unit labelled: the value is known, not estimated. */
  exact: boolean;
  notes: string[];
}

/** The checked input: values on the unit scale [0, 1], strata, and each labelled unit's π. */
export interface Prepared {
  lo: number;
  width: number;
  N: number;
  /** Units on the unit scale: u = (v − lo)/width. */
  units: { f: number; y: number | null; pi: number; stratum: string }[];
  strata: Map<string, { N: number; n: number }>;
  level: number;
  /** The plan's π were given (else SRS within strata). */
  givenPi: boolean;
}

export function prepare(fn: string, units: readonly CorrectedUnit[], options: CorrectedOptions = {}): Prepared {
  if (!Array.isArray(units)) throw new Error(`${fn}: units must be an array`);
  const [lo, hi] = options.range ?? [0, 1];
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo)) throw new Error(`${fn}: range must be two finite numbers, low < high`);
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  if (units.length === 0) throw new Error(`${fn}: the population is empty`);
  const width = hi - lo;
  const strata = new Map<string, { N: number; n: number }>();
  let withPi = 0;
  const out = units.map((u, i) => {
    if (typeof u?.f !== "number" || !Number.isFinite(u.f)) throw new Error(`${fn}: unit ${i}'s judge score is not a finite number`);
    if (u.f < lo || u.f > hi) throw new Error(`${fn}: unit ${i}'s judge score ${u.f} is outside the range [${lo}, ${hi}]`);
    const labelled = u.y !== null && u.y !== undefined;
    if (labelled && (typeof u.y !== "number" || !Number.isFinite(u.y) || u.y < lo || u.y > hi))
      throw new Error(`${fn}: unit ${i}'s human value is not a number in [${lo}, ${hi}]`);
    if (u.pi !== undefined) {
      if (!(typeof u.pi === "number" && u.pi > 0 && u.pi <= 1))
        throw new Error(`${fn}: unit ${i}'s inclusion probability must be in (0, 1]`);
      withPi++;
    }
    const stratum = u.stratum ?? "";
    const s = strata.get(stratum) ?? { N: 0, n: 0 };
    s.N++;
    if (labelled) s.n++;
    strata.set(stratum, s);
    return { f: (u.f - lo) / width, y: labelled ? ((u.y as number) - lo) / width : null, pi: u.pi ?? NaN, stratum };
  });
  if (withPi !== 0 && withPi !== units.length) throw new Error(`${fn}: give every unit an inclusion probability, or none`);
  for (const u of out) if (withPi === 0) u.pi = strata.get(u.stratum)!.n / strata.get(u.stratum)!.N;
  return { lo, width, N: units.length, units: out, strata, level, givenPi: withPi > 0 };
}

/**
 * The interval of every corrected estimator: the one of the design-weighted difference estimator
 *
 *   θ̂_λ = Σ_i a·λ_h f_i + Σ_{i labelled} a·(Y_i − λ_h f_i)/π_i,   a = 1/N,
 *
 * (Särndal, Swensson & Wretman 1992, §6.3, the generalised difference estimator; prediction-powered inference,
 * Angelopoulos et al. 2023, §2, is its λ = 1 case with simple random sampling; λ = 0 is the classical
 * Horvitz–Thompson mean). In each stratum θ̂_λ is the mix λ·θ̂_1 + (1 − λ)·θ̂_0 of the two binary-error estimates
 * on the same labelled units: θ̂_1 = Σ a·f + Σ a·(Y − f)/π (PPI's rectifier) and θ̂_0 = Σ a·Y/π (the labels alone).
 *
 * 1. Each of the two gets rectifierCI's interval: Wilson score intervals for the signed shares of its correction
 *    at their effective sample sizes, joined by MOVER; a stratum with fewer than 2 labelled units adds its whole
 *    range. It keeps its coverage with 10 labelled units and never has zero width from a sample that agreed with
 *    the judge everywhere (the Wald interval ± z·SE has both faults: see rectifierCI).
 * 2. The mix gets the MOVER interval of a weighted sum of two correlated estimates (Zou & Donner 2008, §2.2,
 *    with their correlation): L = θ̂ − √(λ²d₁² + (1 − λ)²d₀² + 2r·λ(1 − λ)d₁d₀), d the distances to the lower
 *    limits (the upper alike), r the design correlation of the two estimates' terms a·(Y − f)/π and a·Y/π over the
 *    labelled units (Σ(1 − π)(x − x̄)(w − w̄) over the square root of the variances; r = 1, the widest, when a
 *    variance is 0). Why not rectifierCI on Y − λf directly: for 0 < λ < 1 that correction takes four values, and
 *    rectifierCI's cap of the effective size at n (a [0, 1] share varies at most as a 0/1 one) made PPI++'s interval
 *    wider than both PPI's and the labels' alone (measured: 0.23 against 0.17 at n = 80 in the skewed design).
 * 3. Strata add up by MOVER for independent parts (Newcombe 2011).
 *
 * The judge's part Σ a·λf is known exactly (the target is the finite population's mean). An estimator whose point
 * differs from θ̂_λ by a known amount (PPI as ppi_py computes it takes the judge's mean over the unlabelled units
 * only) moves this interval by that amount, so that it stays around its estimate. Returned on the unit scale.
 */
export function correctedInterval(
  p: Prepared,
  lambdaOf: (stratum: string) => number,
): { estimate: number; ci: Interval | null; exact: boolean; bounded: number } {
  const a = 1 / p.N;
  type Part = {
    judge: number;
    b1: [number, number];
    b0: [number, number];
    c1: { z: number; pi: number }[];
    c0: { z: number; pi: number }[];
  };
  const strata = new Map<string, Part>();
  let n = 0;
  for (const u of p.units) {
    const s = strata.get(u.stratum) ?? { judge: 0, b1: [0, 0], b0: [0, 0], c1: [], c0: [] };
    s.judge += a * u.f;
    // The corrections a·(Y − f) and a·Y with Y at either end of [0, 1].
    s.b1[0] -= a * u.f;
    s.b1[1] += a * (1 - u.f);
    s.b0[1] += a;
    strata.set(u.stratum, s);
    if (u.y === null) continue;
    s.c1.push({ z: (a * (u.y - u.f)) / u.pi, pi: u.pi });
    s.c0.push({ z: (a * u.y) / u.pi, pi: u.pi });
    n++;
  }
  if (n === 0) return { estimate: NaN, ci: null, exact: false, bounded: strata.size };
  const z = normalQuantile(1 - (1 - p.level) / 2);
  const parts: { estimate: number; ci: Interval }[] = [];
  let exact = true;
  let bounded = 0;
  for (const [h, s] of strata) {
    const lam = lambdaOf(h);
    const r1 = rectifierCI([{ bounds: s.b1, clusters: s.c1 }], { z });
    const r0 = rectifierCI([{ bounds: s.b0, clusters: s.c0 }], { z });
    exact &&= r1.exact && r0.exact;
    bounded += lam > 0 ? r1.bounded : r0.bounded;
    const e1 = s.judge + r1.estimate;
    const e0 = r0.estimate;
    const estimate = lam * e1 + (1 - lam) * e0;
    const r = designCorrelation(s.c1, s.c0);
    const pair = (d1: number, d0: number) =>
      Math.sqrt(Math.max(0, (lam * d1) ** 2 + ((1 - lam) * d0) ** 2 + 2 * r * lam * (1 - lam) * d1 * d0));
    const lo = estimate - pair(r1.estimate - r1.ci[0], r0.estimate - r0.ci[0]);
    const hi = estimate + pair(r1.ci[1] - r1.estimate, r0.ci[1] - r0.estimate);
    parts.push({ estimate, ci: [lo, hi] });
  }
  const sum = moverSum(parts);
  return { estimate: sum.estimate, ci: sum.ci, exact, bounded };
}

/** The design correlation of two HT sums over the same labelled units (with-replacement form); 1 when a variance is 0. */
function designCorrelation(x: readonly { z: number; pi: number }[], w: readonly { z: number }[]): number {
  const n = x.length;
  if (n < 2) return 1;
  const mx = x.reduce((t, c) => t + c.z, 0) / n;
  const mw = w.reduce((t, c) => t + c.z, 0) / n;
  let vx = 0;
  let vw = 0;
  let c = 0;
  for (let i = 0; i < n; i++) {
    const f = 1 - x[i].pi;
    vx += f * (x[i].z - mx) ** 2;
    vw += f * (w[i].z - mw) ** 2;
    c += f * (x[i].z - mx) * (w[i].z - mw);
  }
  return vx > 0 && vw > 0 ? Math.max(-1, Math.min(1, c / Math.sqrt(vx * vw))) : 1;
}

/** What every estimator's result starts with: its name, the sample's size and the judge's uncorrected mean. */
export function resultBase(p: Prepared, estimator: EstimatorName) {
  const nLabeled = p.units.filter((u) => u.y !== null).length;
  return { estimator, nLabeled, nTotal: p.N, judgeMean: onScale(p, p.units.reduce((t, u) => t + u.f, 0) / p.N) };
}

/** The result when nothing is labelled: no estimate and no interval, and the reason. */
export function noLabels(base: ReturnType<typeof resultBase>): CorrectedResult {
  return {
    ...base,
    estimate: NaN,
    ci: null,
    se: null,
    lambda: null,
    exact: false,
    notes: ["no unit is labelled: a corrected score needs human labels"],
  };
}

/** Back from the unit scale to the scale of the data. */
export function onScale(p: Prepared, v: number): number {
  return p.lo + p.width * v;
}

/** Notes every estimator adds: strata whose whole range is in the interval, a census. */
export function commonNotes(p: Prepared, r: { exact: boolean; bounded: number }): string[] {
  const notes: string[] = [];
  if (r.exact) notes.push("every unit is labelled: the value is known exactly, not estimated");
  const few = [...p.strata.entries()].filter(([, s]) => s.n < 2);
  if (few.length)
    notes.push(
      `${few.length} stratum(s) with fewer than 2 labelled units (${few
        .slice(0, 5)
        .map(([k, s]) => `${k || "all"}: ${s.n}`)
        .join(", ")}${few.length > 5 ? ", …" : ""}): their whole range is inside the interval (a bound, not an estimate)`,
    );
  return notes;
}

/**
 * The Wald standard error of θ̂_HT on the unit scale, with d_i = Y_i − λ_h f_i over the labelled units:
 *   - π given (any plan, taken as Poisson sampling): V̂ = a² Σ_i (1 − π_i)·d_i²/π_i² (Särndal et al. 1992,
 *     eq. 3.4.4 with the Poisson design's π_ij = π_i π_j);
 *   - otherwise simple random sampling within strata: V̂ = Σ_h (N_h/N)² (1 − n_h/N_h) s²_h/n_h, s²_h the
 *     sample variance of d in stratum h (Cochran 1977, eq. 5.6).
 * Null when a stratum has fewer than 2 labelled units (and is not a census), or when V̂ = 0 (every labelled
 * unit's d equal: the data cannot estimate the spread).
 */
export function waldSE(p: Prepared, lambdaOf: (stratum: string) => number): number | null {
  const a = 1 / p.N;
  let v = 0;
  if (p.givenPi) {
    for (const u of p.units) {
      if (u.y === null) continue;
      const d = u.y - lambdaOf(u.stratum) * u.f;
      v += (a * a * (1 - u.pi) * d * d) / (u.pi * u.pi);
    }
  } else {
    const ds = new Map<string, number[]>();
    for (const u of p.units) if (u.y !== null) ds.set(u.stratum, [...(ds.get(u.stratum) ?? []), u.y - lambdaOf(u.stratum) * u.f]);
    for (const [h, s] of p.strata) {
      if (s.n === s.N) continue;
      if (s.n < 2) return null;
      const d = ds.get(h)!;
      const m = meanOf(d);
      const s2 = d.reduce((t, x) => t + (x - m) ** 2, 0) / (s.n - 1);
      v += (s.N / p.N) ** 2 * (1 - s.n / s.N) * (s2 / s.n);
    }
  }
  return v > 0 ? Math.sqrt(v) : null;
}

/** Mean of a list (NaN when empty). */
export function meanOf(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length ? s / xs.length : NaN;
}
