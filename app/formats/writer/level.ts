import { inferLevel, type LabelLevel, type LabelValue } from "../labels";
import type { LevelInfo } from "./types";

/** Why `inferLevel` gives what it gives on these values (the words of the import summary). */
export function describeLevel(values: LabelValue[], given: LabelLevel | undefined, scale?: LabelValue[]): LevelInfo {
  if (given) return { level: given, source: "given", reason: "given with --level" };
  if (scale) {
    // A declared scale says more than the labels in use: its categories decide.
    const level = inferLevel(scale);
    const reason =
      level === "nominal"
        ? "inferred from the declared scale (--categories): not every category is a number, so the categories have no order"
        : level === "ordinal"
          ? `inferred from the declared scale (--categories): ${scale.length} whole numbers, read as a rating scale; import with --level nominal if they are category codes`
          : `inferred from the declared scale (--categories): numbers, and not at most 10 whole numbers (${scale.length} categories)`;
    return { level, source: "inferred", reason };
  }
  const level = inferLevel(values);
  const distinct = new Set(values).size;
  const reason =
    distinct === 0
      ? "inferred: there are no labels, so nothing says they are numbers"
      : level === "nominal"
        ? `inferred: not every label is a number (${distinct} distinct label${distinct === 1 ? "" : "s"}), so the labels are categories without an order`
        : level === "ordinal"
          ? `inferred: every label is a whole number and there are at most 10 distinct values (${distinct}), read as a rating scale; import with --level nominal if they are category codes`
          : `inferred: every label is a number, and they are not at most 10 whole numbers (${distinct} distinct values)`;
  return { level, source: "inferred", reason };
}
