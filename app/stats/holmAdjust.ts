/**
 * Holm's step-down adjustment of p-values for multiple comparisons: the
 * adjusted p-values control the family-wise error rate at any level α
 * (reject H_i when its adjusted p ≤ α), uniformly more powerful than
 * Bonferroni, and valid under any dependence between the tests.
 *
 * Definition: with the m present p-values sorted ascending p_(1) ≤ … ≤ p_(m),
 *   p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j)),
 * returned in the input order. Missing values (NaN) stay NaN and do not count
 * in m, as R's `p.adjust(p, method = "holm")` does with NA.
 *
 * Reference: S. Holm (1979) A simple sequentially rejective multiple test
 * procedure. Scand. J. Statist. 6(2), 65-70; R `stats::p.adjust`.
 *
 * Preconditions: every value is NaN or a number in [0, 1].
 *
 * @throws {Error} "holmAdjust: ..." for a value outside [0, 1]
 * @example
 * holmAdjust([0.01, 0.04, 0.03, 0.005]); // => [0.03, 0.06, 0.06, 0.02]
 */
export function holmAdjust(p: ArrayLike<number>): number[] {
  const out = new Array<number>(p.length).fill(NaN);
  const present: number[] = [];
  for (let i = 0; i < p.length; i++) {
    const v = p[i];
    if (typeof v !== "number") throw new Error(`holmAdjust: p[${i}] is not a number (${String(v)})`);
    if (Number.isNaN(v)) continue;
    if (!(v >= 0 && v <= 1)) throw new Error(`holmAdjust: p[${i}] = ${v} is not a probability in [0, 1]`);
    present.push(i);
  }
  // Stable sort: equal p-values keep their input order (their adjusted values are equal anyway).
  present.sort((a, b) => p[a] - p[b] || a - b);
  const m = present.length;
  let running = 0;
  for (let j = 0; j < m; j++) {
    running = Math.max(running, Math.min(1, (m - j) * p[present[j]]));
    out[present[j]] = running;
  }
  return out;
}
