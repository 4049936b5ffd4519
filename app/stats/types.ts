/**
 * Shared input and output types for `app/stats/` (types only; no runtime code).
 *
 * A `Label` is one rating: a category name, a number, or a boolean. `null` and
 * `undefined` mean "missing" (the rater did not rate that unit). `NaN` and
 * `±Infinity` are never treated as missing: they are rejected with an error.
 */
export type Label = string | number | boolean;

/** One rating, possibly missing (`null` or `undefined`). */
export type Rating = Label | null | undefined;

/**
 * Reliability data: one row per unit (item), one column per rater.
 * Rows must all have the same length; missing ratings are `null`/`undefined`.
 */
export type ReliabilityData = readonly (readonly Rating[])[];

/**
 * Reliability data already counted by unit and category (the result of
 * `unitCategoryCounts`). The multi-rater coefficients accept it in place of
 * the rows, so a report that needs several of them counts the rows once.
 */
export interface UnitCategoryCounts {
  /** Row-major units×q counts: counts[u*q + k] = raters who put unit u in category k. */
  counts: Int32Array;
  /** Number of ratings of each unit (r_u). */
  ratingsPerUnit: Int32Array;
  /** Number of units (rows of the input, including units nobody rated). */
  units: number;
  /** Number of raters (columns). */
  raters: number;
  /** Number of categories q. */
  q: number;
  /** The categories, in code order. */
  categories: Label[];
}

/** Rows (units × raters), or the same rows counted by unit and category. */
export type ReliabilityInput = ReliabilityData | UnitCategoryCounts;

/** A numeric observation, possibly missing. */
export type NumericRating = number | null | undefined;

/** A closed interval `[low, high]`. */
export type Interval = [number, number];

/** Agreement weights for ordered categories ("none" = identity / unweighted). */
export type WeightScheme = "none" | "linear" | "quadratic";
