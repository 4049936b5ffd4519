import { normalCDF } from "~/stats";

/** Two-sided p-value of a standard normal test statistic: 2·Φ(−|z|) (Φ from app/stats/normalCDF). */
export function normalTwoSidedP(z: number): number {
  if (Number.isNaN(z)) return NaN;
  return Math.min(1, 2 * normalCDF(-Math.abs(z)));
}
