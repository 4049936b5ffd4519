/**
 * The corrected-score interval computed by hand for the calibration tests, written out from its definition
 * (app/stats/rectifierCI.ts's JSDoc) without the app's statistics code: Wilson's score interval (Wilson 1927) for
 * each direction's share of the judge's errors at n* = p(1 − p)/V (at most n/(1 − mean π)), their MOVER
 * difference (Zou & Donner 2008, eqs. 7-8) kept within the stratum's bounds, strata summed by MOVER, a stratum with
 * fewer than 2 labelled clusters adding its whole range, a census (π = 1) adding nothing.
 */
export type HandStratum = {
  /** [Σ a·(lo − f), Σ a·(hi − f)] over the stratum's population terms. */
  bounds: [number, number];
  /** Labelled clusters: z = Σ a·(y − f)/π over the cluster's labelled units; π its inclusion probability. */
  clusters: { z: number; pi: number }[];
};

const Z = 1.96;

function wilson(p: number, n: number): [number, number] {
  const z2 = Z * Z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, Math.min(p, centre - half)), Math.min(1, Math.max(p, centre + half))];
}

/** The interval of the correction Σ z (add the judge's raw value, then clip to the metric's range). */
export function rectifierByHand(strata: HandStratum[]): { estimate: number; ci: [number, number] } {
  let estimate = 0;
  let sqBelow = 0;
  let sqAbove = 0;
  let linBelow = 0;
  let linAbove = 0;
  for (const { bounds, clusters } of strata) {
    const est = clusters.reduce((s, c) => s + c.z, 0);
    estimate += est;
    const n = clusters.length;
    const meanPi = n ? clusters.reduce((s, c) => s + c.pi, 0) / n : 0;
    if (n && meanPi >= 1) continue;
    if (n < 2) {
      linBelow += Math.max(0, est - bounds[0]);
      linAbove += Math.max(0, bounds[1] - est);
      continue;
    }
    const S = bounds[1] - bounds[0];
    const xp = clusters.map((c) => Math.max(c.z, 0) / S);
    const xm = clusters.map((c) => Math.max(-c.z, 0) / S);
    const pp = xp.reduce((s, x) => s + x, 0);
    const pm = xm.reduce((s, x) => s + x, 0);
    const var_ = (xs: number[], ys: number[]) =>
      (n / (n - 1)) * clusters.reduce((s, c, i) => s + (1 - c.pi) * (xs[i] - sum(xs) / n) * (ys[i] - sum(ys) / n), 0);
    const vp = var_(xp, xp);
    const vm = var_(xm, xm);
    const r = vp > 0 && vm > 0 ? var_(xp, xm) / Math.sqrt(vp * vm) : 0;
    const nMax = n / (1 - meanPi);
    const share = (p: number, v: number, room: number): [number, number] =>
      room <= 0 ? [0, p] : wilson(Math.min(p, 1), p > 0 && p < 1 && v > 0 ? Math.min((p * (1 - p)) / v, nMax) : nMax);
    const [lp, up] = share(pp, vp, bounds[1]);
    const [lm, um] = share(pm, vm, -bounds[0]);
    const lo = pp - pm - Math.sqrt((pp - lp) ** 2 + (um - pm) ** 2 - 2 * r * (pp - lp) * (um - pm));
    const hi = pp - pm + Math.sqrt((up - pp) ** 2 + (pm - lm) ** 2 - 2 * r * (up - pp) * (pm - lm));
    sqBelow += (est - Math.min(est, Math.max(bounds[0], S * lo))) ** 2;
    sqAbove += (Math.max(est, Math.min(bounds[1], S * hi)) - est) ** 2;
  }
  return { estimate, ci: [estimate - Math.sqrt(sqBelow) - linBelow, estimate + Math.sqrt(sqAbove) + linAbove] };
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
