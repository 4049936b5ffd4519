import type { ReactNode } from "react";

/**
 * A confidence interval as the tables show it: "[lo, hi]", or a few words when
 * there is no interval worth showing — bounds that are not numbers (one value:
 * no standard error) or a zero-width interval, which would read as certainty it
 * is not; `zeroWidth` says why the width is zero where the caller knows.
 */
export function intervalText(ci: readonly [number, number] | null | undefined, digits: number, tooFew: string, zeroWidth = tooFew): string {
  if (!ci || !Number.isFinite(ci[0]) || !Number.isFinite(ci[1])) return tooFew;
  const lo = ci[0].toFixed(digits);
  const hi = ci[1].toFixed(digits);
  if (lo === hi) return zeroWidth;
  return `[${lo}, ${hi}]`;
}

/** The words under a table that name how its intervals are made. */
export function IntervalMethod({ children }: { children: ReactNode }) {
  return (
    <p className="small muted" data-testid="ci-method">
      {children}
    </p>
  );
}
