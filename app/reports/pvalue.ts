/**
 * Two-sided p-value of a standard normal test statistic. app/stats has the
 * normal quantile but not the CDF; this is the complementary error function of
 * W. J. Cody's rational Chebyshev approximation as given in Numerical Recipes
 * (3rd ed., §6.2.2, erfc via its Chebyshev fit; |error| < 1.2e-7).
 */
export function normalTwoSidedP(z: number): number {
  if (!Number.isFinite(z)) return Number.isNaN(z) ? NaN : 0;
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return Math.min(1, erfc);
}
