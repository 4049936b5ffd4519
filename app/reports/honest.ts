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
  if (hi - lo <= 1e-12 * Math.max(1, Math.abs(value ?? 0))) return { ci: null, note: `not estimable: ${zeroReason}` };
  if (lo >= range[0] && hi <= range[1]) return { ci: [lo, hi], note: null };
  return { ci: [Math.max(range[0], lo), Math.min(range[1], hi)], note: `clipped to [${range[0]}, ${range[1]}]` };
}
