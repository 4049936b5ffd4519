import type { Label, Rating } from "./types";

/** Result of {@link encodeLabels}. */
export interface EncodedLabels {
  /** One array of integer codes per input column; -1 marks a missing value. */
  codes: Int32Array[];
  /** The category for each code (codes index into this array). */
  categories: Label[];
}

/**
 * Encode one or more columns of labels to integer codes over a shared,
 * ordered category list. This is the step that lets every agreement statistic
 * run on typed arrays and contingency counts instead of objects.
 *
 * Definition: code(v) = index of v in `categories`; missing (`null`/`undefined`)
 * becomes -1. When `categories` is not given it is the sorted set of values
 * present: numbers ascending numerically, then booleans (false, true), then
 * strings in code-unit order. The values 1 and "1" are different categories.
 *
 * Reference: the factor-level encoding of R (`factor()`), which irr and irrCAC use.
 *
 * Preconditions: every value is a string, finite number, boolean, null or
 * undefined; with `categories`, every present value is in the list.
 *
 * @param fn name of the calling function, used to start error messages
 * @param columns the columns to encode together
 * @param categories optional ordered list of all possible categories
 * @throws {Error} "<fn>: ..." for NaN/Infinity, unsupported types, duplicate
 *   categories, or a value not in `categories`
 * @example
 * encodeLabels("demo", [["b", "a", null], ["a", "a", "b"]]);
 * // => { codes: [Int32Array [1, 0, -1], Int32Array [0, 0, 1]], categories: ["a", "b"] }
 */
export function encodeLabels(
  fn: string,
  columns: readonly ArrayLike<Rating>[],
  categories?: readonly Label[],
): EncodedLabels {
  const index = new Map<Label, number>();
  let cats: Label[];
  if (categories !== undefined) {
    cats = [];
    for (const c of categories) {
      checkLabel(fn, c, "categories");
      if (c === null || c === undefined) throw new Error(`${fn}: categories must not contain null or undefined`);
      if (index.has(c)) throw new Error(`${fn}: duplicate category ${JSON.stringify(c)}`);
      index.set(c, cats.length);
      cats.push(c);
    }
  } else {
    const seen = new Set<Label>();
    for (let k = 0; k < columns.length; k++) {
      const col = columns[k];
      let last: unknown = undefined;
      for (let i = 0; i < col.length; i++) {
        const v = col[i];
        if (v === last) continue;
        if (v === null || v === undefined) continue;
        checkLabel(fn, v, `column ${k}, index ${i}`);
        seen.add(v);
        last = v;
      }
    }
    cats = sortLabels([...seen]);
    cats.forEach((c, i) => index.set(c, i));
  }
  const codes = columns.map((col, k) => {
    const out = new Int32Array(col.length);
    let lastValue: unknown = undefined;
    let lastCode = -1;
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (v === null || v === undefined) {
        out[i] = -1;
        continue;
      }
      if (v === lastValue) {
        out[i] = lastCode;
        continue;
      }
      const code = index.get(v);
      if (code === undefined) {
        checkLabel(fn, v, `column ${k}, index ${i}`);
        throw new Error(`${fn}: value ${JSON.stringify(v)} at column ${k}, index ${i} is not one of the given categories`);
      }
      out[i] = code;
      lastValue = v;
      lastCode = code;
    }
    return out;
  });
  return { codes, categories: cats };
}

function checkLabel(fn: string, v: unknown, where: string): void {
  const t = typeof v;
  if (t === "number") {
    if (!Number.isFinite(v as number)) throw new Error(`${fn}: non-finite value ${String(v)} at ${where}`);
    return;
  }
  if (t === "string" || t === "boolean") return;
  throw new Error(`${fn}: unsupported value ${String(v)} (${t}) at ${where}; use a string, finite number, boolean or null`);
}

function typeRank(v: Label): number {
  return typeof v === "number" ? 0 : typeof v === "boolean" ? 1 : 2;
}

function sortLabels(values: Label[]): Label[] {
  return values.sort((x, y) => {
    const rx = typeRank(x);
    const ry = typeRank(y);
    if (rx !== ry) return rx - ry;
    if (rx === 0) return (x as number) - (y as number);
    if (rx === 1) return Number(x) - Number(y);
    return (x as string) < (y as string) ? -1 : (x as string) > (y as string) ? 1 : 0;
  });
}
