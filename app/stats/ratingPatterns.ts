import { krippendorffAlphaFromCoincidences } from "./krippendorffAlphaFromCoincidences";
import type { MeasurementLevel } from "./krippendorffAlpha";
import { unitCategoryCounts } from "./unitCategoryCounts";
import type { Label, ReliabilityData, UnitCategoryCounts } from "./types";

/**
 * Reliability data reduced to its distinct rating patterns: each pattern is one
 * row of codes (one per rater, −1 for a missing rating) and the number of units
 * that show it. Every agreement coefficient of the units is a function of these
 * counts, so a bootstrap can resample the counts (see countsBootstrapCI) instead
 * of the units: with r raters and q categories there are at most (q + 1)^r patterns.
 */
export interface RatingPatterns {
  raters: number;
  /** Number of categories of the scale (declared, or in use) — fixed for every resample. */
  q: number;
  categories: Label[];
  /** Row-major patterns × raters codes into `categories`; −1 = missing. */
  codes: Int32Array;
  /** Units showing each pattern. */
  counts: Float64Array;
}

/**
 * The distinct rating patterns of units × raters data (units nobody rated are
 * left out), and each kept unit's pattern in the units' order.
 *
 * Categories: `categories` when given (the declared scale), else the values in
 * use sorted as encodeLabels sorts them.
 *
 * @throws {Error} "ratingPatterns: ..." for ragged rows, invalid values or a value outside `categories`
 * @example
 * ratingPatterns([["a", "a"], ["a", "b"], ["a", "a"]]).patterns.counts; // => Float64Array [2, 1]
 */
export function ratingPatterns(
  rows: ReliabilityData,
  categories?: readonly Label[],
): { patterns: RatingPatterns; patternOfUnit: Int32Array } {
  const counted = unitCategoryCounts("ratingPatterns", rows, categories);
  // Codes per rater, in the counted categories' order.
  const code = new Map<Label, number>(counted.categories.map((c, k) => [c, k]));
  const raters = counted.raters;
  const keyOf = new Map<string, number>();
  const codes: number[] = [];
  const counts: number[] = [];
  const patternOfUnit: number[] = [];
  const row = new Int32Array(raters);
  for (let u = 0; u < rows.length; u++) {
    if (counted.ratingsPerUnit[u] === 0) continue;
    for (let g = 0; g < raters; g++) {
      const v = rows[u][g];
      row[g] = v == null ? -1 : code.get(v)!;
    }
    const key = row.join(",");
    let p = keyOf.get(key);
    if (p === undefined) {
      p = counts.length;
      keyOf.set(key, p);
      counts.push(0);
      for (let g = 0; g < raters; g++) codes.push(row[g]);
    }
    counts[p]++;
    patternOfUnit.push(p);
  }
  return {
    patterns: { raters, q: counted.q, categories: counted.categories, codes: Int32Array.from(codes), counts: Float64Array.from(counts) },
    patternOfUnit: Int32Array.from(patternOfUnit),
  };
}

/** The agreement coefficients of a {@link RatingPatterns}, as functions of the units per pattern. */
export interface PatternStatistics {
  /** The patterns counted by unit and category (one "unit" per pattern): pass `counts` as unitWeights to the analytic SEs. */
  unitCounts: UnitCategoryCounts;
  /** Units per pattern with at least two ratings / with at least one (as weights change). */
  pairable(w: ArrayLike<number>): number;
  percentAgreement(w: ArrayLike<number>): number;
  fleissKappa(w: ArrayLike<number>): number;
  /** Gwet's AC1 with q fixed to the patterns' scale. */
  gwetAC1(w: ArrayLike<number>): number;
  krippendorffAlpha(w: ArrayLike<number>, level: MeasurementLevel): number;
  /**
   * Rater `a` against rater `b` on the units both rated: the q × q table (rows: a).
   * Written into `out` when given.
   */
  pairTable(w: ArrayLike<number>, a?: number, b?: number, out?: Float64Array): Float64Array;
}

/**
 * Weighted forms of percentAgreement, fleissKappa, gwetAC1 and krippendorffAlpha
 * over distinct rating patterns: with w_p units showing pattern p, each is the
 * coefficient of the data set holding w_p copies of every pattern (the same
 * definitions: Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., eq. 2.6
 * and ch. 4; Fleiss 1971; Krippendorff 2011 via the coincidence matrix).
 *
 * @example
 * const { patterns } = ratingPatterns([["a", "a"], ["a", "b"], ["a", "a"]]);
 * patternStatistics(patterns).percentAgreement(patterns.counts); // => 0.6666666666666666
 */
export function patternStatistics(p: RatingPatterns): PatternStatistics {
  const { raters, q, codes } = p;
  const P = p.counts.length;
  const cat = new Int32Array(P * q);
  const r = new Int32Array(P);
  for (let i = 0; i < P; i++) {
    for (let g = 0; g < raters; g++) {
      const k = codes[i * raters + g];
      if (k >= 0) {
        cat[i * q + k]++;
        r[i]++;
      }
    }
  }
  const unitCounts: UnitCategoryCounts = { counts: cat, ratingsPerUnit: r, units: P, raters, q, categories: p.categories };
  // Per pattern: its share of agreeing rater pairs (r ≥ 2), and its category shares c_k / r.
  const pa = new Float64Array(P);
  for (let i = 0; i < P; i++) {
    if (r[i] < 2) continue;
    let s = 0;
    for (let k = 0; k < q; k++) {
      const c = cat[i * q + k];
      s += c * (c - 1);
    }
    pa[i] = s / (r[i] * (r[i] - 1));
  }
  // Sparse coincidence matrix of each pattern (Krippendorff 2011): o_ck = Σ n_c (n_k − [c = k]) / (m − 1)
  // is 1/(m − 1) for every ordered pair of two different raters who said c and k.
  const start = new Int32Array(P + 1);
  const cells: number[] = [];
  const vals: number[] = [];
  const local = new Map<number, number>();
  for (let i = 0; i < P; i++) {
    const m = r[i];
    if (m >= 2) {
      local.clear();
      for (let g = 0; g < raters; g++) {
        const x = codes[i * raters + g];
        if (x < 0) continue;
        for (let h = 0; h < raters; h++) {
          const y = codes[i * raters + h];
          if (h === g || y < 0) continue;
          const cell = x * q + y;
          local.set(cell, (local.get(cell) ?? 0) + 1);
        }
      }
      for (const [cell, pairs] of local) {
        cells.push(cell);
        vals.push(pairs / (m - 1));
      }
    }
    start[i + 1] = cells.length;
  }
  const cellIdx = Int32Array.from(cells);
  const cellVal = Float64Array.from(vals);
  const o = new Float64Array(q * q);
  const pi = new Float64Array(q);

  const observed = (w: ArrayLike<number>): { pa: number; n1: number; n2: number } => {
    let sum = 0;
    let n1 = 0;
    let n2 = 0;
    pi.fill(0);
    for (let i = 0; i < P; i++) {
      const wi = w[i];
      if (wi === 0 || r[i] === 0) continue;
      n1 += wi;
      for (let k = 0; k < q; k++) {
        const c = cat[i * q + k];
        if (c !== 0) pi[k] += (wi * c) / r[i];
      }
      if (r[i] >= 2) {
        sum += wi * pa[i];
        n2 += wi;
      }
    }
    for (let k = 0; k < q; k++) pi[k] /= n1;
    return { pa: n2 === 0 ? NaN : sum / n2, n1, n2 };
  };

  return {
    unitCounts,
    pairable(w) {
      let n2 = 0;
      for (let i = 0; i < P; i++) if (r[i] >= 2) n2 += w[i];
      return n2;
    },
    percentAgreement(w) {
      return observed(w).pa;
    },
    fleissKappa(w) {
      const { pa: po, n1, n2 } = observed(w);
      if (n1 === 0 || n2 === 0) return NaN;
      let pe = 0;
      for (let k = 0; k < q; k++) pe += pi[k] * pi[k];
      return 1 - pe <= 1e-15 ? NaN : (po - pe) / (1 - pe);
    },
    gwetAC1(w) {
      const { pa: po, n1, n2 } = observed(w);
      if (q < 2 || n1 === 0 || n2 === 0) return NaN;
      let s = 0;
      for (let k = 0; k < q; k++) s += pi[k] * (1 - pi[k]);
      const pe = s / (q - 1);
      return 1 - pe <= 1e-15 ? NaN : (po - pe) / (1 - pe);
    },
    krippendorffAlpha(w, level) {
      o.fill(0);
      for (let i = 0; i < P; i++) {
        const wi = w[i];
        if (wi === 0) continue;
        for (let t = start[i]; t < start[i + 1]; t++) o[cellIdx[t]] += wi * cellVal[t];
      }
      return krippendorffAlphaFromCoincidences(o, p.categories, level);
    },
    pairTable(w, a = 0, b = 1, out) {
      const t = out ?? new Float64Array(q * q);
      t.fill(0);
      for (let i = 0; i < P; i++) {
        const x = codes[i * raters + a];
        const y = codes[i * raters + b];
        if (x >= 0 && y >= 0 && w[i] !== 0) t[x * q + y] += w[i];
      }
      return t;
    },
  };
}
