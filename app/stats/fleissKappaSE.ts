import { clippedInterval, linearizedSE, type AgreementSEResult } from "./linearizedSE";
import { unitAgreementTerms } from "./unitAgreementTerms";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

/**
 * Fleiss' kappa with Gwet's analytic standard error and a 95% CI, for any
 * number of raters with missing ratings — irrCAC `fleiss.kappa.raw`.
 *
 * Definition (Gwet 2014, ch. 5; irrCAC), with r_ik raters putting unit i in
 * category k, r_i = Σ_k r_ik, n units with r_i ≥ 1, n₂ of them with r_i ≥ 2,
 * agreement weights w (identity unless `weights`), r*_ik = Σ_l w_kl r_il:
 *   pa_i = Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1))  (0 when r_i < 2),
 *   pa = Σ pa_i / n₂,  π_k = (1/n) Σ_i r_ik / r_i,  pe = Σ_kl w_kl π_k π_l,
 *   κ = (pa − pe)/(1 − pe);
 *   κ_i = (n/n₂)(pa_i − pe·[r_i ≥ 2])/(1 − pe),
 *   pe_i = Σ_k r_ik π̄_k / r_i with π̄_k = Σ_l (w_kl + w_lk)/2 · π_l,
 *   κ*_i = κ_i − 2(1 − κ)(pe_i − pe)/(1 − pe),
 *   Var(κ) = Σ_i (κ*_i − κ)² / (n (n − 1))   (see {@link linearizedSE}).
 * The κ*_i average exactly to κ. With `cluster` (one key per row, e.g. the
 * item id) the variance is cluster-robust. CI: κ ± z·SE (z = 1.96), clipped
 * to [−1, 1]; irrCAC uses a t quantile with n − 1 df, which differs only for
 * very small n.
 *
 * References: J. L. Fleiss (1971) Psychol. Bull. 76(5), 378-382;
 * K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed., ch. 5;
 * K. L. Gwet, irrCAC 1.0 (R package) `fleiss.kappa.raw` (se of
 * cac.raw4raters: 0.15302).
 *
 * Preconditions: as for {@link fleissKappa}; `cluster`, when given, has one
 * key per row. value/se NaN when undefined (pe = 1, no unit with two ratings, n < 2).
 *
 * @throws {Error} "fleissKappaSE: ..." for ragged rows, invalid values, unknown weights or a bad cluster array
 * @example
 * fleissKappaSE([["a", "a", "a"], ["b", "b", "a"], ["b", "b", "b"]]).se; // => 0.464939512194866
 */
export function fleissKappaSE(
  data: ReliabilityInput,
  options: {
    categories?: readonly Label[];
    weights?: WeightScheme;
    cluster?: ArrayLike<string | number>;
    unitWeights?: ArrayLike<number>;
    z?: number;
  } = {},
): AgreementSEResult {
  const { counts, ratingsPerUnit, units, q, w, paI, piSum: pi, n, n2, sumPa, z } = unitAgreementTerms("fleissKappaSE", data, options);
  const nan = (pa: number, pe: number): AgreementSEResult => ({ value: NaN, se: NaN, ci: [NaN, NaN], n, clusters: n, pa, pe });
  if (n === 0) return nan(NaN, NaN);
  for (let k = 0; k < q; k++) pi[k] /= n;
  let pe = 0;
  for (let k = 0; k < q; k++) for (let l = 0; l < q; l++) pe += w[k * q + l] * pi[k] * pi[l];
  const pa = n2 === 0 ? NaN : sumPa / n2;
  if (n2 === 0 || 1 - pe <= 1e-15) return nan(pa, pe);
  const kappa = (pa - pe) / (1 - pe);
  const piBar = new Float64Array(q);
  for (let k = 0; k < q; k++) for (let l = 0; l < q; l++) piBar[k] += ((w[k * q + l] + w[l * q + k]) / 2) * pi[l];
  // Pass 2: linearised values κ*_i.
  const uw = options.unitWeights;
  const x = new Float64Array(uw ? units : n);
  const wx = uw ? new Float64Array(units) : undefined;
  const keys: (string | number)[] | undefined = options.cluster ? new Array(n) : undefined;
  let i = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r === 0) continue;
    const base = u * q;
    let peI = 0;
    for (let k = 0; k < q; k++) peI += counts[base + k] * piBar[k];
    peI /= r;
    const kI = ((n / n2) * (paI[u] - (r >= 2 ? pe : 0))) / (1 - pe);
    x[i] = kI - (2 * (1 - kappa) * (peI - pe)) / (1 - pe);
    if (keys) keys[i] = options.cluster![u];
    if (wx) wx[i] = uw![u];
    i++;
  }
  const se = wx ? linearizedSE(x.subarray(0, i), kappa, { weights: wx.subarray(0, i) }) : linearizedSE(x, kappa, { cluster: keys });
  const clusters = keys ? new Set(keys).size : n;
  return { value: kappa, se, ci: clippedInterval(kappa, se, z), n, clusters, pa, pe };
}
