import { isUnitCategoryCounts, unitCategoryCounts } from "./unitCategoryCounts";
import type { Label, ReliabilityData, ReliabilityInput, UnitCategoryCounts } from "./types";

/** Levels of measurement (Krippendorff's difference functions). */
export type MeasurementLevel = "nominal" | "ordinal" | "interval" | "ratio";

/** Result of {@link krippendorffAlpha}. */
export interface KrippendorffAlphaResult {
  /** α = 1 - Do/De; NaN when undefined (fewer than 2 pairable values, or De = 0: no variation). */
  alpha: number;
  /** Observed disagreement Do. */
  observedDisagreement: number;
  /** Expected disagreement De. */
  expectedDisagreement: number;
  /** Pairable values n.. (ratings in units with at least two ratings). */
  pairableValues: number;
  /** Units with at least two ratings. */
  pairableUnits: number;
  level: MeasurementLevel;
}

/**
 * Krippendorff's alpha for any number of raters, missing values allowed, at the
 * nominal, ordinal, interval or ratio level of measurement.
 *
 * Definition (Krippendorff 2011): only units with m_u ≥ 2 ratings are
 * pairable; the coincidence matrix is o_ck = Σ_u (number of ordered pairs of
 * ratings (c, k) in u) / (m_u - 1); n_c = Σ_k o_ck; n = Σ_c n_c;
 *   Do = (1/n) Σ_c Σ_k o_ck δ²_ck,   De = (1/(n(n-1))) Σ_c Σ_k n_c n_k δ²_ck,
 *   α = 1 - Do/De,
 * with δ²_ck = [c ≠ k] (nominal); (Σ_{g=c..k} n_g - (n_c + n_k)/2)² (ordinal,
 * over ranked values); (c - k)² (interval); ((c - k)/(c + k))² (ratio).
 * Computation: from the unit × category counts; nominal uses only the coincidence diagonal, O(N); interval uses
 * the pairable-values identity Σ_{i≠j}(x_i - x_j)² = 2(mΣx² - (Σx)²) per unit
 * and over all pairable values, O(N); ordinal and ratio cost O(N + V²) where V
 * is the number of distinct values.
 *
 * Reference: K. Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability",
 * Annenberg School for Communication, Departmental Papers 43 (worked example:
 * nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797).
 *
 * Preconditions: `data` is units × raters (rows of equal length), missing =
 * null/undefined — or the same rows already counted by unit and category
 * (`unitCategoryCounts`), whose categories are then the values. Interval and ratio need finite numbers (ratio: ≥ 0).
 * Ordinal orders numbers numerically and strings by `categories` (default:
 * code-unit order). NaN when undefined.
 *
 * @throws {Error} "krippendorffAlpha: ..." for ragged rows, an unknown level,
 *   non-numeric values at interval/ratio level, negative ratio values, or NaN/Infinity
 * @example
 * krippendorffAlpha([[1, 1], [2, 2], [3, 2]], { level: "interval" }).alpha; // => 0.7058823529411764
 */
export function krippendorffAlpha(
  data: ReliabilityInput,
  options: { level?: MeasurementLevel; categories?: readonly Label[] } = {},
): KrippendorffAlphaResult {
  const fn = "krippendorffAlpha";
  const level = options.level ?? "nominal";
  if (level !== "nominal" && level !== "ordinal" && level !== "interval" && level !== "ratio") {
    throw new Error(`${fn}: unknown level "${String(level)}" (use nominal, ordinal, interval or ratio)`);
  }
  // Counted data (categories are the values): every level from the unit × category counts.
  if (isUnitCategoryCounts(data)) return fromCounts(fn, unitCategoryCounts(fn, data, options.categories), level);
  if (!Array.isArray(data)) throw new Error(`${fn}: data must be an array of rows (units × raters)`);
  const units = data.length;
  const raters = units > 0 ? (Array.isArray(data[0]) ? data[0].length : 0) : 0;
  for (let u = 0; u < units; u++) {
    const row = data[u];
    if (!Array.isArray(row)) throw new Error(`${fn}: row ${u} is not an array`);
    if (row.length !== raters) throw new Error(`${fn}: row ${u} has ${row.length} ratings but row 0 has ${raters}; use null for missing`);
  }
  const empty = (n: number, m: number): KrippendorffAlphaResult => ({
    alpha: NaN,
    observedDisagreement: NaN,
    expectedDisagreement: NaN,
    pairableValues: n,
    pairableUnits: m,
    level,
  });

  if (level === "interval") return interval(fn, data, units, raters, empty);

  // Category-coded path (nominal, ordinal, ratio).
  if (level === "ratio") {
    for (let u = 0; u < units; u++) {
      for (let g = 0; g < raters; g++) {
        const v = data[u][g];
        if (v === null || v === undefined) continue;
        if (typeof v !== "number") throw new Error(`${fn}: ratio level needs numbers; unit ${u}, rater ${g} is ${JSON.stringify(v)}`);
        if (!Number.isFinite(v)) throw new Error(`${fn}: non-finite value ${String(v)} at unit ${u}, rater ${g}`);
        if (v < 0) throw new Error(`${fn}: ratio level needs values ≥ 0; unit ${u}, rater ${g} is ${v}`);
      }
    }
  }
  return fromCounts(fn, unitCategoryCounts(fn, data, options.categories), level);
}

/**
 * Alpha at a category-coded level from the unit × category counts n_uc: per pairable
 * unit (m_u ≥ 2), o_cc gains n_uc(n_uc − 1)/(m_u − 1) and o_ck (c ≠ k) gains
 * n_uc·n_uk/(m_u − 1).
 */
function fromCounts(fn: string, counted: UnitCategoryCounts, level: MeasurementLevel): KrippendorffAlphaResult {
  const { counts, ratingsPerUnit, units, q: V, categories } = counted;
  const empty = (n: number, m: number): KrippendorffAlphaResult => ({
    alpha: NaN,
    observedDisagreement: NaN,
    expectedDisagreement: NaN,
    pairableValues: n,
    pairableUnits: m,
    level,
  });
  if (level === "ratio" || level === "interval") {
    for (const c of categories) {
      if (typeof c !== "number") throw new Error(`${fn}: ${level} level needs numbers; found ${JSON.stringify(c)}`);
      if (level === "ratio" && c < 0) throw new Error(`${fn}: ratio level needs values ≥ 0; found ${c}`);
    }
  }
  const nc = new Float64Array(V);
  let pairableUnits = 0;
  let n = 0;
  let diag = 0; // Σ_c o_cc (nominal)
  for (let u = 0; u < units; u++) {
    const m = ratingsPerUnit[u];
    if (m < 2) continue;
    pairableUnits++;
    n += m;
    let matches = 0; // agreeing unordered pairs in the unit: Σ_c n_uc (n_uc − 1) / 2
    for (let c = 0; c < V; c++) {
      const k = counts[u * V + c];
      nc[c] += k;
      matches += (k * (k - 1)) / 2;
    }
    diag += (2 * matches) / (m - 1);
  }
  if (n < 2) return empty(n, pairableUnits);

  if (level === "nominal") {
    let sumSq = 0;
    for (let c = 0; c < V; c++) sumSq += nc[c] * nc[c];
    const Do = (n - diag) / n;
    const De = (n * n - sumSq) / (n * (n - 1));
    return finish(Do, De, n, pairableUnits, level);
  }

  // Ordinal / interval / ratio: δ² over category codes.
  const d2 = deltaSquared(level, categories, nc);
  let observed = 0;
  for (let u = 0; u < units; u++) {
    const m = ratingsPerUnit[u];
    if (m < 2) continue;
    let d = 0;
    for (let c = 0; c < V; c++) {
      const a = counts[u * V + c];
      if (a === 0) continue;
      for (let k = c + 1; k < V; k++) {
        const b = counts[u * V + k];
        if (b !== 0) d += a * b * d2[c * V + k];
      }
    }
    observed += (2 * d) / (m - 1);
  }
  let expected = 0;
  for (let c = 0; c < V; c++) {
    if (nc[c] === 0) continue;
    for (let k = c + 1; k < V; k++) if (nc[k] !== 0) expected += 2 * nc[c] * nc[k] * d2[c * V + k];
  }
  return finish(observed / n, expected / (n * (n - 1)), n, pairableUnits, level);
}

function finish(Do: number, De: number, n: number, pairableUnits: number, level: MeasurementLevel): KrippendorffAlphaResult {
  const alpha = De > 0 ? 1 - Do / De : NaN;
  return { alpha, observedDisagreement: Do, expectedDisagreement: De, pairableValues: n, pairableUnits, level };
}

function interval(
  fn: string,
  data: ReliabilityData,
  units: number,
  raters: number,
  empty: (n: number, m: number) => KrippendorffAlphaResult,
): KrippendorffAlphaResult {
  // Pass 1: validate and find the mean of pairable values (for numerical stability).
  let n = 0;
  let total = 0;
  let pairableUnits = 0;
  for (let u = 0; u < units; u++) {
    const row = data[u];
    let m = 0;
    let s = 0;
    for (let g = 0; g < raters; g++) {
      const v = row[g];
      if (v === null || v === undefined) continue;
      if (typeof v !== "number") throw new Error(`${fn}: interval level needs numbers; unit ${u}, rater ${g} is ${JSON.stringify(v)}`);
      if (!Number.isFinite(v)) throw new Error(`${fn}: non-finite value ${String(v)} at unit ${u}, rater ${g}`);
      m++;
      s += v;
    }
    if (m >= 2) {
      n += m;
      total += s;
      pairableUnits++;
    }
  }
  if (n < 2) return empty(n, pairableUnits);
  const mean = total / n;
  // Pass 2: within-unit and total sums of squares of centred values.
  let observed = 0;
  let s1 = 0;
  let s2 = 0;
  for (let u = 0; u < units; u++) {
    const row = data[u];
    let m = 0;
    let a = 0;
    let b = 0;
    for (let g = 0; g < raters; g++) {
      const v = row[g];
      if (v === null || v === undefined) continue;
      const x = (v as number) - mean;
      m++;
      a += x;
      b += x * x;
    }
    if (m < 2) continue;
    observed += (2 * (m * b - a * a)) / (m - 1);
    s1 += a;
    s2 += b;
  }
  const expected = 2 * (n * s2 - s1 * s1);
  return finish(observed / n, expected / (n * (n - 1)), n, pairableUnits, "interval");
}

/**
 * δ²_ck of every pair of categories c < k (row-major q × q, upper triangle) at a
 * level of measurement: [c ≠ k] (nominal); (Σ_{g=c..k} n_g − (n_c + n_k)/2)²
 * over the value totals n_g (ordinal); (c − k)² (interval); ((c − k)/(c + k))² (ratio).
 * Shared by {@link krippendorffAlpha} and krippendorffAlphaFromCoincidences.
 */
export function deltaSquared(level: MeasurementLevel, categories: readonly Label[], nc: ArrayLike<number>): Float64Array {
  const V = categories.length;
  let delta2: (c: number, k: number) => number;
  if (level === "nominal") delta2 = () => 1;
  else if (level === "ordinal") {
    const cum = new Float64Array(V + 1); // cum[i] = Σ_{g<i} n_g
    for (let c = 0; c < V; c++) cum[c + 1] = cum[c] + nc[c];
    delta2 = (c, k) => {
      const d = cum[k + 1] - cum[c] - (nc[c] + nc[k]) / 2;
      return d * d;
    };
  } else if (level === "interval") {
    const values = categories as number[];
    delta2 = (c, k) => (values[c] - values[k]) ** 2;
  } else {
    const values = categories as number[];
    delta2 = (c, k) => {
      const s = values[c] + values[k];
      if (s === 0) return 0;
      const d = (values[c] - values[k]) / s;
      return d * d;
    };
  }
  const d2 = new Float64Array(V * V);
  for (let c = 0; c < V; c++) for (let k = c + 1; k < V; k++) d2[c * V + k] = delta2(c, k);
  return d2;
}
