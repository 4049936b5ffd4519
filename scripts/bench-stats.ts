/**
 * Benchmark of the agreement statistics (not a test): median wall time of
 * several runs and heap growth for each workload.
 *
 *   npm run bench:stats
 *
 * Workloads (targets from issue 3): Cohen's kappa and quadratic-weighted kappa
 * on 1,000,000 label pairs (< 50 ms); Krippendorff's alpha, nominal and
 * interval, on 100,000 units × 3 raters with 5% missing (< 200 ms); a
 * 1,000-resample bootstrap of kappa on 10,000 pairs (< 1 s). Rows at a tenth of
 * the size show that time and memory grow linearly with the input.
 * "heap growth" is the largest increase of V8 heapUsed + ArrayBuffer memory
 * (typed arrays) over a clean (garbage-collected) baseline, seen right after a
 * run: the working memory a call needs beyond its input.
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { bootstrapCI, cohenKappa, cohenKappaFromTable, encodeLabels, krippendorffAlpha, seededRandom } from "../app/stats/index.js";

v8.setFlagsFromString("--expose_gc");
const gc = vm.runInNewContext("gc") as () => void;

interface Row {
  statistic: string;
  size: string;
  medianMs: number;
  runs: number;
  targetMs: number | null;
  heapMB: number;
}

function bench(statistic: string, size: string, runs: number, targetMs: number | null, fn: () => unknown): Row {
  fn(); // warm-up (JIT)
  const times: number[] = [];
  let heap = 0;
  for (let i = 0; i < runs; i++) {
    gc();
    const before = process.memoryUsage();
    const base = before.heapUsed + before.arrayBuffers;
    const t0 = performance.now();
    const result = fn();
    const t1 = performance.now();
    const after = process.memoryUsage();
    heap = Math.max(heap, after.heapUsed + after.arrayBuffers - base);
    if (result === undefined) throw new Error("benchmark returned nothing");
    times.push(t1 - t0);
  }
  times.sort((a, b) => a - b);
  const mid = Math.floor(times.length / 2);
  const medianMs = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  return { statistic, size, medianMs, runs, targetMs, heapMB: heap / 1024 / 1024 };
}

const random = seededRandom(2024);
const LABELS = ["Yes", "No", "Partial", "Unsure", "N/A"];

function labelPairs(n: number): { a: string[]; b: string[] } {
  const a = new Array<string>(n);
  const b = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const x = Math.floor(random() * 5);
    a[i] = LABELS[x];
    b[i] = LABELS[random() < 0.7 ? x : Math.floor(random() * 5)];
  }
  return { a, b };
}

function reliabilityData(units: number, numeric: boolean): (number | string | null)[][] {
  const out = new Array(units);
  for (let u = 0; u < units; u++) {
    const truth = 1 + Math.floor(random() * 5);
    const row: (number | string | null)[] = [];
    for (let g = 0; g < 3; g++) {
      if (random() < 0.05) row.push(null);
      else {
        const v = random() < 0.75 ? truth : 1 + Math.floor(random() * 5);
        row.push(numeric ? v + Math.round(random() * 100) / 100 : LABELS[v - 1]);
      }
    }
    out[u] = row;
  }
  return out;
}

const rows: Row[] = [];

const big = labelPairs(1_000_000);
const small = labelPairs(100_000);
rows.push(bench("Cohen's kappa (unweighted)", "1,000,000 pairs", 9, 50, () => cohenKappa(big.a, big.b)));
rows.push(
  bench("Cohen's kappa (quadratic weights)", "1,000,000 pairs", 9, 50, () =>
    cohenKappa(big.a, big.b, { weights: "quadratic", categories: LABELS }),
  ),
);
rows.push(bench("Cohen's kappa (unweighted)", "100,000 pairs", 9, null, () => cohenKappa(small.a, small.b)));

const nominal = reliabilityData(100_000, false);
const interval = reliabilityData(100_000, true);
const nominalSmall = reliabilityData(10_000, false);
const intervalSmall = reliabilityData(10_000, true);
rows.push(
  bench("Krippendorff's alpha (nominal)", "100,000 units × 3 raters", 7, 200, () => krippendorffAlpha(nominal, { level: "nominal" })),
);
rows.push(
  bench("Krippendorff's alpha (interval)", "100,000 units × 3 raters", 7, 200, () => krippendorffAlpha(interval, { level: "interval" })),
);
rows.push(
  bench("Krippendorff's alpha (nominal)", "10,000 units × 3 raters", 7, null, () => krippendorffAlpha(nominalSmall, { level: "nominal" })),
);
rows.push(
  bench("Krippendorff's alpha (interval)", "10,000 units × 3 raters", 7, null, () =>
    krippendorffAlpha(intervalSmall, { level: "interval" }),
  ),
);

// Bootstrap: encode once, then each resample counts contingency cells through an Int32Array of indices.
const boot = labelPairs(10_000);
const { codes, categories } = encodeLabels("bench", [boot.a, boot.b]);
const q = categories.length;
const counts = new Float64Array(q * q);
const pairIds = Array.from({ length: boot.a.length }, (_, i) => i);
const fastKappa = (_s: number[], idx: Int32Array) => {
  counts.fill(0);
  const ca = codes[0];
  const cb = codes[1];
  for (let k = 0; k < idx.length; k++) counts[ca[idx[k]] * q + cb[idx[k]]]++;
  return cohenKappaFromTable({ counts, q }).kappa;
};
rows.push(
  bench("bootstrap CI of kappa, 1,000 resamples", "10,000 pairs", 5, 1000, () =>
    bootstrapCI({ data: pairIds, statistic: fastKappa, resamples: 1000, seed: 1 }),
  ),
);
rows.push(
  bench("bootstrap CI of kappa, 1,000 resamples (generic: cohenKappa per resample)", "10,000 pairs", 5, null, () =>
    bootstrapCI({
      data: pairIds,
      statistic: (s) =>
        cohenKappa(
          s.map((i) => boot.a[i]),
          s.map((i) => boot.b[i]),
        ).kappa,
      resamples: 1000,
      seed: 1,
    }),
  ),
);

const header = ["statistic", "input size", "median ms", "runs", "target", "pass/fail", "heap growth"];
const table = rows.map((r) => [
  r.statistic,
  r.size,
  r.medianMs.toFixed(1),
  String(r.runs),
  r.targetMs === null ? "—" : `< ${r.targetMs} ms`,
  r.targetMs === null ? "—" : r.medianMs < r.targetMs ? "pass" : "FAIL",
  `${r.heapMB.toFixed(1)} MB`,
]);
const widths = header.map((h, c) => Math.max(h.length, ...table.map((t) => t[c].length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
console.log(`Node ${process.version}, ${process.platform}/${process.arch}`);
console.log(line(header));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const t of table) console.log(line(t));
if (rows.some((r) => r.targetMs !== null && r.medianMs >= r.targetMs)) process.exitCode = 1;
