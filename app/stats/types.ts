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

/** A numeric observation, possibly missing. */
export type NumericRating = number | null | undefined;

/** A closed interval `[low, high]`. */
export type Interval = [number, number];

/** Agreement weights for ordered categories ("none" = identity / unweighted). */
export type WeightScheme = "none" | "linear" | "quadratic";
