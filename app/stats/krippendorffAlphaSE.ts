import { clippedInterval, linearizedSE, type AgreementSEResult } from "./linearizedSE";
import { unitAgreementTerms } from "./unitAgreementTerms";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

/**
 * Krippendorff's alpha with Gwet's analytic standard error and a 95% CI, for
 * any number of raters with missing ratings — irrCAC `krippen.alpha.raw`.
 * Identity weights give nominal alpha; quadratic weights give interval alpha
 * for equally spaced numeric categories (e.g. 1-5 scores).
 *
 * Definition (Gwet 2014, ch. 5; irrCAC 2021), over the n units with r_i ≥ 2
 * ratings, r̄ = mean r_i, ε = 1/Σ r_i, r_ik, w, r*_ik as in {@link fleissKappaSE}:
 *   pa' = (1/n) Σ_i Σ_k r_ik (r*_ik − 1) / (r̄ (r_i − 1)),   pa = (1 − ε) pa' + ε,
 *   π_k = (1/n) Σ_i r_ik / r̄,   pe = Σ_kl w_kl π_k π_l,
 *   α = (pa − pe)/(1 − pe),   α' = (pa' − pe)/(1 − pe);
 *   pa_i = Σ_k r_ik (r*_ik − 1)/(r̄ (r_i − 1)) − pa (r_i − r̄)/r̄,
 *   pe_i = Σ_k r_ik π̄_k / r̄ − pe (r_i − r̄)/r̄,  π̄_k = Σ_l (w_kl + w_lk)/2 · π_l,
 *   α*_i = (pa_i − pe)/(1 − pe) − 2(1 − α')(pe_i − pe)/(1 − pe),
 *   Var(α) = Σ_i (α*_i − α')² / (n (n − 1))   (see {@link linearizedSE}).
 * The centring term of pa_i uses pa, as the irrCAC release whose README prints
 * se = 0.14557 for cac.raw4raters (and the Python port irrCAC 0.4); the
 * August-2021 R source uses pa' there instead (0.14548) — a difference of
 * order ε. `cluster` (one key per row) makes the variance cluster-robust. CI: α ± z·SE
 * (z = 1.96) clipped to [−1, 1] (irrCAC: t quantile).
 *
 * References: K. Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability";
 * K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.; irrCAC
 * `krippen.alpha.raw` (alpha 0.74342, se 0.14557 for cac.raw4raters).
 *
 * Preconditions: as for {@link krippendorffAlpha}. NaN when fewer than two
 * pairable units or pe = 1.
 *
 * @throws {Error} "krippendorffAlphaSE: ..." for ragged rows, invalid values, unknown weights or a bad cluster array
 * @example
 * krippendorffAlphaSE([["a", "a", "a"], ["b", "b", "a"], ["b", "b", "b"]]).value; // => 0.6 (= krippendorffAlpha)
 */
export function krippendorffAlphaSE(
  data: ReliabilityInput,
  options: {
    categories?: readonly Label[];
    weights?: WeightScheme;
    cluster?: ArrayLike<string | number>;
    unitWeights?: ArrayLike<number>;
    z?: number;
  } = {},
): AgreementSEResult {
  const { counts, ratingsPerUnit, units, q, w, z } = unitAgreementTerms("krippendorffAlphaSE", data, options);
  const uw = options.unitWeights;
  let n = 0;
  let total = 0;
  let rows = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r < 2) continue;
    rows++;
    if (uw === undefined) {
      n++;
      total += r;
    } else {
      n += uw[u];
      total += uw[u] * r;
    }
  }
  const nan = (pa: number, pe: number): AgreementSEResult => ({ value: NaN, se: NaN, ci: [NaN, NaN], n, clusters: n, pa, pe });
  if (n === 0 || q < 2) return nan(NaN, NaN);
  const rBar = total / n;
  const eps = 1 / total;
  const sq = new Float64Array(units);
  const pi = new Float64Array(q);
  let paPrime = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r < 2) continue;
    const base = u * q;
    let s = 0;
    for (let k = 0; k < q; k++) {
      const c = counts[base + k];
      if (c === 0) continue;
      pi[k] += uw === undefined ? c : uw[u] * c;
      let star = 0;
      for (let l = 0; l < q; l++) star += w[k * q + l] * counts[base + l];
      s += c * (star - 1);
    }
    sq[u] = s / (rBar * (r - 1));
    paPrime += uw === undefined ? sq[u] : uw[u] * sq[u];
  }
  paPrime /= n;
  const pa = (1 - eps) * paPrime + eps;
  for (let k = 0; k < q; k++) pi[k] /= n * rBar;
  let pe = 0;
  for (let k = 0; k < q; k++) for (let l = 0; l < q; l++) pe += w[k * q + l] * pi[k] * pi[l];
  if (1 - pe <= 1e-15) return nan(pa, pe);
  const alpha = (pa - pe) / (1 - pe);
  const alphaPrime = (paPrime - pe) / (1 - pe);
  const piBar = new Float64Array(q);
  for (let k = 0; k < q; k++) for (let l = 0; l < q; l++) piBar[k] += ((w[k * q + l] + w[l * q + k]) / 2) * pi[l];
  const x = new Float64Array(rows);
  const wx = uw ? new Float64Array(rows) : undefined;
  const keys: (string | number)[] | undefined = options.cluster ? new Array(n) : undefined;
  let i = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r < 2) continue;
    const base = u * q;
    const paI = sq[u] - (pa * (r - rBar)) / rBar;
    let peI = 0;
    for (let k = 0; k < q; k++) peI += counts[base + k] * piBar[k];
    peI = peI / rBar - (pe * (r - rBar)) / rBar;
    x[i] = (paI - pe) / (1 - pe) - (2 * (1 - alphaPrime) * (peI - pe)) / (1 - pe);
    if (keys) keys[i] = options.cluster![u];
    if (wx) wx[i] = uw![u];
    i++;
  }
  const se = wx ? linearizedSE(x, alphaPrime, { weights: wx }) : linearizedSE(x, alphaPrime, { cluster: keys });
  return { value: alpha, se, ci: clippedInterval(alpha, se, z), n, clusters: keys ? new Set(keys).size : n, pa, pe };
}
