/** The sample-size planner: units needed for a target 95% CI half-width of kappa or an accuracy. */
import { Z95 } from "./intervals";

export interface PlanRow {
  target: string;
  current: number;
  n: number;
  halfWidth: number;
  delta: number;
  needed: number;
  more: number;
  basis: string;
}

/** Units needed so that the 95% CI half-width of kappa is at most δ, scaling its SE as 1/√n. */
export function planKappa(label: string, value: number, se: number, n: number, delta: number): PlanRow {
  const needed = Math.ceil(n * ((Z95 * se) / delta) ** 2);
  return {
    target: label,
    current: value,
    n,
    halfWidth: Z95 * se,
    delta,
    needed,
    more: Math.max(0, needed - n),
    basis: "SE scales as 1/√n from the current estimate",
  };
}

/** Units needed so that the 95% CI half-width of an accuracy p is at most δ: 1.96²·p(1−p)/δ². */
export function planAccuracy(label: string, p: number, n: number, delta: number): PlanRow {
  const needed = Math.ceil((Z95 ** 2 * p * (1 - p)) / delta ** 2);
  const halfWidth = n > 0 ? Z95 * Math.sqrt((p * (1 - p)) / n) : NaN;
  return {
    target: label,
    current: p,
    n,
    halfWidth,
    delta,
    needed,
    more: Math.max(0, needed - n),
    basis: "binomial variance p(1−p) at the current accuracy",
  };
}
