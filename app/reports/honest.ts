/**
 * Honest intervals: an interval as a report shows it is inside its statistic's range
 * (clipped, with a note saying so) and never zero-width — a degenerate sample (perfect
 * agreement, one value everywhere, an SE of 0) gives "not estimable" with the reason
 * instead of [1, 1]. A Wald interval value ± 1.96·SE can leave the range on small samples
 * (e.g. kappa's upper bound 1.07 on 25 units); clipping keeps its coverage and says so
 * (Agresti & Coull 1998 on bounded Wald intervals; Fleiss, Levin & Paik 2003, §18.1).
 * Pure, with no other import, so the command lines load it alone.
 */

/** The default reason of a zero-width interval. */
export const ZERO_SE = "the standard error is 0 (e.g. perfect agreement or a single value in use)";

/**
 * Why kappa (plain or weighted) has no interval when one side used one category on every
 * unit: with rater A always on x, p_e = Σ_j w_xj p_.j = p_o, so kappa = 0 by construction in
 * the sample and in every resample (Cohen 1960; the FCE variance is 0 exactly). `who` names
 * the side ('rater "a"', "the judge", "the reference").
 */
export function constantRaterReason(who: string): string {
  return `${who} gave one category to every unit, so kappa's chance agreement equals its observed agreement (p_e = p_o) and kappa is 0 by construction, with no sampling variability to estimate`;
}

/**
 * Widths at or below this share of the statistic's range are zero-width. A variance computed as a
 * difference of O(1) terms keeps ~ε = 2.2e-16 of rounding where it is exactly 0, so its square root,
 * the SE, keeps ~√ε ≈ 1.5e-8 (an SE of 1.35e-9 for a constant rater, which an absolute 1e-12 did
 * not catch). A real interval of a statistic on [−1, 1] or [0, 1] is of order 1/√n wide: 1e-7 of
 * the range would need ~10¹⁴ units.
 */
export const ZERO_WIDTH = 1e-7;

/**
 * `ci` as a report shows it. Returns the interval (null when there is none or it is not
 * estimable) and a note: null when the interval is shown as computed; "clipped to [lo, hi]"
 * when it was clipped; "not estimable: REASON" when it has no finite or non-zero width.
 */
export function honestInterval(
  value: number | null,
  ci: readonly number[] | null | undefined,
  range: readonly [number, number] = [-1, 1],
  zeroReason = ZERO_SE,
): { ci: [number, number] | null; note: string | null } {
  if (!ci) return { ci: null, note: null };
  const [lo, hi] = ci;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return { ci: null, note: `not estimable: ${zeroReason}` };
  const span = Number.isFinite(range[1] - range[0]) ? range[1] - range[0] : 1;
  if (hi - lo <= ZERO_WIDTH * Math.max(span, Math.abs(value ?? 0))) return { ci: null, note: `not estimable: ${zeroReason}` };
  if (lo >= range[0] && hi <= range[1]) return { ci: [lo, hi], note: null };
  return { ci: [Math.max(range[0], lo), Math.min(range[1], hi)], note: `clipped to [${range[0]}, ${range[1]}]` };
}
