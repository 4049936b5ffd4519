import { normalCDF } from "./normalCDF";
import { studentTQuantile } from "./studentTQuantile";

/**
 * The confidence level at which a small-sample bootstrap reads its limits so that a
 * 95% interval is not too narrow: Hesterberg's (2015) expanded percentile
 * interval takes the bootstrap quantiles at α′/2 = Φ(−√(n/(n − 1)) · t_{α/2, n−1}),
 * correcting the two reasons a bootstrap interval is too narrow in small samples —
 * the plug-in variance divides by n, not n − 1, and the SE is estimated (t, not z
 * quantiles). Here the same levels enter the BCa formula (its z_{α/2} becomes
 * Φ⁻¹(α′/2)). n = 50 gives 0.9576; n = 30 gives 0.9625; the level tends to `level` as n grows.
 *
 * Reference: T. C. Hesterberg (2015) "What teachers should know about the bootstrap:
 * resampling in the undergraduate statistics curriculum", The American Statistician
 * 69(4), 371-386 (the expanded percentile interval; R package resample, ExpandProbs).
 *
 * Preconditions: n ≥ 2 resampling units; 0 < level < 1.
 *
 * @throws {Error} "expandedLevel: ..." for n < 2 or a level outside (0, 1)
 * @example
 * expandedLevel(50); // => 0.9576411775772… (scipy: 2·Φ(√(50/49)·t.ppf(0.975, 49)) − 1 = 0.9576411775772449)
 */
export function expandedLevel(n: number, level = 0.95): number {
  if (!(n >= 2) || !Number.isInteger(n)) throw new Error(`expandedLevel: n must be an integer of at least 2, got ${String(n)}`);
  if (!(level > 0 && level < 1)) throw new Error(`expandedLevel: level must be in (0, 1), got ${String(level)}`);
  const t = studentTQuantile(1 - (1 - level) / 2, n - 1);
  // At n = 2 the expansion reaches 1 in floating point (and 0.9999999 at n = 3): capped at
  // MAX_EXPANDED_LEVEL, whose limits 2,000 resamples can still read (the 1st and 2,000th
  // ordered draws); with so few units the small-sample note is shown anyway.
  return Math.min(2 * normalCDF(Math.sqrt(n / (n - 1)) * t) - 1, Math.max(level, MAX_EXPANDED_LEVEL));
}

/** The highest level {@link expandedLevel} returns (bootstrap limits at the 0.05% and 99.95% quantiles). */
export const MAX_EXPANDED_LEVEL = 0.999;
