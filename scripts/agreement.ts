/**
 * Agreement statistics for a CSV of ratings (one row per unit, one column per rater).
 *
 *   npm run agreement -- --input FILE.csv --raters COL_A,COL_B[,COL_C...]
 *                        [--level nominal|ordinal|interval|ratio] [--format json|table]
 *                        [--seed N] [--resamples N]
 *
 * Prints every statistic that applies; one that does not apply is null (JSON) or
 * "n/a" (table). Empty cells are missing values. CIs: analytic for Cohen's kappa
 * (Fleiss-Cohen-Everitt SE) and Pearson (Fisher z); a seeded percentile bootstrap
 * over units for the rest. Bad input: one line on stderr, exit code 2.
 */
import { readFileSync } from "node:fs";
import Papa from "papaparse";
import {
  bootstrapCI,
  cohenKappa,
  fleissKappa,
  gwetAC1,
  kendallTauB,
  krippendorffAlpha,
  pabak,
  pearson,
  percentAgreement,
  spearman,
  type Interval,
  type MeasurementLevel,
  type Rating,
} from "../app/stats/index.js";

class InputError extends Error {}

const USAGE =
  "usage: npm run agreement -- --input FILE.csv --raters COL_A,COL_B[,COL_C...] [--level nominal|ordinal|interval|ratio] [--format json|table] [--seed N] [--resamples N]";

interface Options {
  input: string;
  raters: string[];
  level: MeasurementLevel;
  format: "json" | "table";
  seed: number;
  resamples: number;
}

function parseArgs(argv: string[]): Options | "help" {
  const opts: Partial<Options> = { level: "nominal", format: "table", seed: 1, resamples: 1000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") return "help";
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const takeValue = (): string => {
      if (eq >= 0) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new InputError(`option ${name} needs a value`);
      return v;
    };
    switch (name) {
      case "--input":
        opts.input = takeValue();
        break;
      case "--raters":
        opts.raters = takeValue().split(",").map((s) => s.trim()).filter((s) => s.length > 0);
        break;
      case "--level": {
        const v = takeValue();
        if (v !== "nominal" && v !== "ordinal" && v !== "interval" && v !== "ratio") throw new InputError(`--level must be nominal, ordinal, interval or ratio (got "${v}")`);
        opts.level = v;
        break;
      }
      case "--format": {
        const v = takeValue();
        if (v !== "json" && v !== "table") throw new InputError(`--format must be json or table (got "${v}")`);
        opts.format = v;
        break;
      }
      case "--seed": {
        const v = Number(takeValue());
        if (!Number.isFinite(v)) throw new InputError("--seed must be a number");
        opts.seed = v;
        break;
      }
      case "--resamples": {
        const v = Number(takeValue());
        if (!Number.isInteger(v) || v < 1) throw new InputError("--resamples must be a positive integer");
        opts.resamples = v;
        break;
      }
      default:
        throw new InputError(`unknown option "${arg}"`);
    }
  }
  if (!opts.input) throw new InputError("missing --input FILE.csv");
  if (!opts.raters || opts.raters.length < 2) throw new InputError("--raters needs at least two column names, separated by commas");
  const dup = opts.raters.find((r, i) => opts.raters!.indexOf(r) !== i);
  if (dup !== undefined) throw new InputError(`column "${dup}" is listed twice in --raters`);
  return opts as Options;
}

/** Reads the CSV and returns the units × raters matrix (empty cells = null). */
function readRatings(opts: Options): { matrix: Rating[][]; numeric: boolean } {
  let text: string;
  try {
    text = readFileSync(opts.input, "utf8");
  } catch (e) {
    throw new InputError(`cannot read ${opts.input}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  text = text.replace(/^\uFEFF/, "");
  if (text.trim() === "") throw new InputError(`input file ${opts.input} is empty`);
  const parsed = Papa.parse<Record<string, string | undefined>>(text, {
    header: true,
    skipEmptyLines: "greedy",
    transformHeader: (h) => h.trim(),
  });
  const fatal = parsed.errors.find((e) => e.type !== "FieldMismatch");
  if (fatal) throw new InputError(`CSV parse error in data row ${(fatal.row ?? 0) + 1}: ${fatal.message}`);
  const header = parsed.meta.fields ?? [];
  for (const col of opts.raters) {
    if (!header.includes(col)) throw new InputError(`column "${col}" not found in the header (columns: ${header.join(", ")})`);
  }
  if (parsed.data.length === 0) throw new InputError(`input file ${opts.input} has a header but no data rows`);
  const cells: (string | null)[][] = parsed.data.map((row) =>
    opts.raters.map((col) => {
      const v = (row[col] ?? "").trim();
      return v === "" ? null : v;
    }),
  );
  const needsNumbers = opts.level === "interval" || opts.level === "ratio";
  let allNumeric = true;
  cells.forEach((row, i) =>
    row.forEach((v, g) => {
      if (v === null) return;
      const x = Number(v);
      if (!Number.isFinite(x)) {
        if (needsNumbers) throw new InputError(`data row ${i + 1}, column "${opts.raters[g]}": "${v}" is not a number (level ${opts.level} needs numbers)`);
        allNumeric = false;
      } else if (opts.level === "ratio" && x < 0) {
        throw new InputError(`data row ${i + 1}, column "${opts.raters[g]}": ${v} is negative (level ratio needs values ≥ 0)`);
      }
    }),
  );
  const matrix = cells.map((row) => row.map((v) => (v === null ? null : allNumeric ? Number(v) : v)));
  return { matrix, numeric: allNumeric };
}

type Stat = { value: number; ci: Interval | null; method: string } | null;

function compute(opts: Options, matrix: Rating[][], numeric: boolean) {
  const units = matrix.filter((row) => row.some((v) => v !== null));
  const two = opts.raters.length === 2;
  const ordered = opts.level !== "nominal";
  const a = units.map((r) => r[0]);
  const b = units.map((r) => (two ? r[1] : null));
  const categories = new Set(units.flat().filter((v) => v !== null));
  const bootMethod = `percentile bootstrap over units (${opts.resamples} resamples, seed ${opts.seed})`;
  const boot = (statistic: (rows: Rating[][]) => number): Interval => {
    const r = bootstrapCI({ data: units, statistic, resamples: opts.resamples, seed: opts.seed });
    return r.ci;
  };
  const withBoot = (value: number, statistic: (rows: Rating[][]) => number): Stat => ({
    value,
    ci: Number.isFinite(value) ? boot(statistic) : null,
    method: bootMethod,
  });
  const kappa = (weights: "none" | "linear" | "quadratic"): Stat => {
    const r = cohenKappa(a, b, { weights });
    return { value: r.kappa, ci: Number.isFinite(r.kappa) ? r.ci : null, method: "asymptotic SE (Fleiss, Cohen & Everitt 1969), kappa ± 1.96·SE" };
  };
  const col = (rows: Rating[][], g: number) => rows.map((r) => r[g] as number | null);
  const stats: Record<string, Stat> = {
    percentAgreement: withBoot(percentAgreement(units), (rows) => percentAgreement(rows)),
    cohenKappa: two ? kappa("none") : null,
    cohenKappaLinear: two && ordered ? kappa("linear") : null,
    cohenKappaQuadratic: two && ordered ? kappa("quadratic") : null,
    fleissKappa: withBoot(fleissKappa(units).kappa, (rows) => fleissKappa(rows).kappa),
    krippendorffAlpha: withBoot(krippendorffAlpha(units, { level: opts.level }).alpha, (rows) => krippendorffAlpha(rows, { level: opts.level }).alpha),
    gwetAC1: withBoot(gwetAC1(units).value, (rows) => gwetAC1(rows).value),
    pabak: two && categories.size <= 2 ? withBoot(pabak(a, b), (rows) => pabak(col(rows, 0), col(rows, 1))) : null,
    pearson: null,
    spearman: null,
    kendallTauB: null,
  };
  if (two && ordered && numeric) {
    const x = a as (number | null)[];
    const y = b as (number | null)[];
    const p = pearson(x, y);
    stats.pearson = { value: p.r, ci: Number.isFinite(p.ci[0]) ? p.ci : null, method: "Fisher z interval" };
    stats.spearman = withBoot(spearman(x, y).rho, (rows) => spearman(col(rows, 0), col(rows, 1)).rho);
    stats.kendallTauB = withBoot(kendallTauB(x, y).tau, (rows) => kendallTauB(col(rows, 0), col(rows, 1)).tau);
  }
  const notes: string[] = [];
  for (const [name, s] of Object.entries(stats)) {
    if (s && !Number.isFinite(s.value)) notes.push(`${name} is undefined for these data (e.g. only one category in use, or no unit with two ratings)`);
  }
  if (!two) notes.push("Cohen's kappa, PABAK and correlations need exactly two raters");
  else if (categories.size > 2) notes.push(`PABAK needs two categories; the data use ${categories.size}`);
  if (!ordered) notes.push("weighted kappa and correlations need --level ordinal, interval or ratio");
  else if (two && !numeric) notes.push("correlations need numeric ratings");
  return { n: units.length, stats, notes };
}

function toJson(opts: Options, n: number, stats: Record<string, Stat>, notes: string[]): string {
  const out: Record<string, unknown> = { n };
  const methods: Record<string, string> = {};
  const num = (v: number) => (Number.isFinite(v) ? v : null);
  for (const [name, s] of Object.entries(stats)) {
    out[name] = s ? num(s.value) : null;
    out[`${name}CI`] = s && s.ci ? [num(s.ci[0]), num(s.ci[1])] : null;
    if (s) methods[name] = s.method;
  }
  out.level = opts.level;
  out.raters = opts.raters;
  out.ciMethod = methods;
  out.notes = notes;
  return JSON.stringify(out, null, 2);
}

function toTable(opts: Options, n: number, stats: Record<string, Stat>, notes: string[]): string {
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(4) : "NaN");
  const rows: string[][] = [["statistic", "value", "95% CI", "CI method"]];
  for (const [name, s] of Object.entries(stats)) {
    if (!s) rows.push([name, "n/a", "", "does not apply"]);
    else rows.push([name, f(s.value), s.ci ? `[${f(s.ci[0])}, ${f(s.ci[1])}]` : "", s.ci ? s.method : ""]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const lines = [
    `Agreement of ${opts.raters.join(", ")} (level ${opts.level}; n = ${n} units)`,
    ...rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd()),
  ];
  if (notes.length) lines.push("", ...notes.map((s) => `note: ${s}`));
  return lines.join("\n");
}

function main(): number {
  let opts: Options | "help";
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`agreement: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (opts === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const { matrix, numeric } = readRatings(opts);
    const { n, stats, notes } = compute(opts, matrix, numeric);
    process.stdout.write(`${opts.format === "json" ? toJson(opts, n, stats, notes) : toTable(opts, n, stats, notes)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof InputError) {
      process.stderr.write(`agreement: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

process.exitCode = main();
