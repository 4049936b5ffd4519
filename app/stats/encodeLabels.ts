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
export function encodeLabels(fn: string, columns: readonly ArrayLike<Rating>[], categories?: readonly Label[]): EncodedLabels {
  // One pass over the data. Codes are first assigned in order of first
  // appearance (or of `categories`), looked up by a linear scan while there are
  // few categories (faster than hashing for the usual 2-10 labels) and by a Map
  // beyond that; then, without `categories`, renumbered into sorted order.
  const known: Label[] = [];
  const index = new Map<Label, number>();
  const fixed = categories !== undefined;
  if (fixed) {
    for (const c of categories) {
      if (c === null || c === undefined) throw new Error(`${fn}: categories must not contain null or undefined`);
      checkLabel(fn, c, "categories");
      if (index.has(c)) throw new Error(`${fn}: duplicate category ${JSON.stringify(c)}`);
      index.set(c, known.length);
      known.push(c);
    }
  }
  const SCAN = 16;
  const codes = columns.map((col, k) => {
    const out = new Int32Array(col.length);
    let lastValue: unknown = undefined;
    let lastCode = -1;
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (v === lastValue) {
        out[i] = lastCode;
        continue;
      }
      if (v === null || v === undefined) {
        out[i] = -1;
        continue;
      }
      let code = -1;
      const m = known.length;
      if (m <= SCAN) {
        for (let c = 0; c < m; c++) {
          if (known[c] === v) {
            code = c;
            break;
          }
        }
      } else code = index.get(v) ?? -1;
      if (code < 0) {
        checkLabel(fn, v, `column ${k}, index ${i}`);
        if (fixed) throw new Error(`${fn}: value ${JSON.stringify(v)} at column ${k}, index ${i} is not one of the given categories`);
        code = known.length;
        known.push(v);
        index.set(v, code);
      }
      out[i] = code;
      lastValue = v;
      lastCode = code;
    }
    return out;
  });
  if (fixed) return { codes, categories: known };
  const sorted = sortLabels(known.slice());
  const remap = new Int32Array(known.length);
  sorted.forEach((c, i) => (remap[index.get(c)!] = i));
  let identity = true;
  for (let c = 0; c < remap.length; c++) if (remap[c] !== c) identity = false;
  if (!identity) {
    for (const out of codes) {
      for (let i = 0; i < out.length; i++) {
        const c = out[i];
        if (c >= 0) out[i] = remap[c];
      }
    }
  }
  return { codes, categories: sorted };
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
