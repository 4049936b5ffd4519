import { clippedInterval, linearizedSE, type AgreementSEResult } from "./linearizedSE";
import { unitAgreementTerms } from "./unitAgreementTerms";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

/**
 * Gwet's AC1 (identity weights) or AC2 (linear/quadratic weights) with its
 * analytic standard error and a 95% CI, for any number of raters with missing
 * ratings — irrCAC `gwet.ac1.raw`.
 *
 * Definition (Gwet 2008, eqs. 20-30; Gwet 2014, ch. 5; irrCAC), with r_ik,
 * r_i, n, n₂, w, pa_i and pa as in {@link fleissKappaSE}, q categories and
 * T_w = Σ_kl w_kl:
 *   π_k = (1/n) Σ_i r_ik / r_i,   pe = T_w/(q(q − 1)) · Σ_k π_k (1 − π_k),
 *   AC = (pa − pe)/(1 − pe);
 *   AC_i = (n/n₂)(pa_i − pe·[r_i ≥ 2])/(1 − pe),
 *   pe_i = T_w/(q(q − 1)) · Σ_k r_ik (1 − π_k) / r_i,
 *   AC*_i = AC_i − 2(1 − AC)(pe_i − pe)/(1 − pe),
 *   Var(AC) = Σ_i (AC*_i − AC)² / (n (n − 1))   (see {@link linearizedSE}).
 * `cluster` (one key per row) makes the variance cluster-robust. CI: AC ± z·SE
 * (z = 1.96) clipped to [−1, 1] (irrCAC: t quantile, n − 1 df).
 *
 * References: K. L. Gwet (2008) "Computing inter-rater reliability and its
 * variance in the presence of high agreement", Br. J. Math. Stat. Psychol. 61,
 * 29-48; K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.;
 * irrCAC 1.0 `gwet.ac1.raw` (se of cac.raw4raters: 0.14295).
 *
 * Preconditions: as for {@link gwetAC2}. NaN when q < 2, no unit has two
 * ratings or n < 2 (SE).
 *
 * @throws {Error} "gwetSE: ..." for ragged rows, invalid values, unknown weights or a bad cluster array
 * @example
 * gwetSE([["y", "y"], ["y", "y"], ["y", "n"], ["n", "n"]]).se; // => 0.5000608592328204
 */
export function gwetSE(
  data: ReliabilityInput,
  options: {
    categories?: readonly Label[];
    weights?: WeightScheme;
    cluster?: ArrayLike<string | number>;
    unitWeights?: ArrayLike<number>;
    z?: number;
  } = {},
): AgreementSEResult {
  const { counts, ratingsPerUnit, units, q, w, paI, piSum: pi, n, n2, sumPa, z } = unitAgreementTerms("gwetSE", data, options);
  const pa = n2 === 0 ? NaN : sumPa / n2;
  const nan = (pe: number): AgreementSEResult => ({ value: NaN, se: NaN, ci: [NaN, NaN], n, clusters: n, pa, pe });
  if (n === 0 || q < 2) return nan(NaN);
  let tw = 0;
  for (let k = 0; k < q * q; k++) tw += w[k];
  const c = tw / (q * (q - 1));
  let s = 0;
  for (let k = 0; k < q; k++) {
    pi[k] /= n;
    s += pi[k] * (1 - pi[k]);
  }
  const pe = c * s;
  if (n2 === 0 || 1 - pe <= 1e-15) return nan(pe);
  const ac = (pa - pe) / (1 - pe);
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
    for (let k = 0; k < q; k++) peI += counts[base + k] * (1 - pi[k]);
    peI = (c * peI) / r;
    const acI = ((n / n2) * (paI[u] - (r >= 2 ? pe : 0))) / (1 - pe);
    x[i] = acI - (2 * (1 - ac) * (peI - pe)) / (1 - pe);
    if (keys) keys[i] = options.cluster![u];
    if (wx) wx[i] = uw![u];
    i++;
  }
  const se = wx ? linearizedSE(x.subarray(0, i), ac, { weights: wx.subarray(0, i) }) : linearizedSE(x, ac, { cluster: keys });
  return { value: ac, se, ci: clippedInterval(ac, se, z), n, clusters: keys ? new Set(keys).size : n, pa, pe };
}
