/**
 * npm run bench:coverage — coverage and median width of the confidence intervals, by
 * simulation (issue 36, item 8): the agreement statistics in designs A–D
 * (scripts/coverage/agreement.ts: every statistic × interval method, and the default
 * the command line and the report pages give), then the corrected run scores
 * (scripts/coverage/run-scores.ts, when present).
 *
 * Options:
 *   --replicates N   replicates per design (default 1000; the Monte Carlo SD of a
 *                    coverage near 0.95 is then 0.007)
 *   --seed S         seed of the simulation (default 1)
 *   --only agreement|run-scores
 *   --designs ABCD   which agreement designs (default all four)
 *   --methods LIST   agreement methods, comma-separated, of: large-sample, wald-t, fisher-z,
 *                    percentile, bca, bca-expanded, boot-t, default (default: all but boot-t,
 *                    which computes an SE in every resample and triples the run time)
 *   --scan [N,N,...] instead of the method table, the default interval's coverage by
 *                    units (default sizes 10 … 400) — where it falls short of 0.93
 * Prints markdown tables; a default interval below 0.93 is marked ✗ (bold in the scan).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { agreementCoverage, coverageScan, coverageTable, METHODS, type CoverageMethod, TARGET } from "./coverage/agreement";

const argv = process.argv.slice(2);
const flag = (name: string) => argv.indexOf(`--${name}`);
const value = (name: string): string | undefined => {
  const i = flag(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
function positive(name: string, dflt: number): number {
  const v = value(name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
}

const replicates = positive("replicates", 1000);
const seed = positive("seed", 1);
const only = value("only");
if (only !== undefined && only !== "agreement" && only !== "run-scores") throw new Error(`--only: agreement or run-scores, not ${only}`);
const designs = value("designs")?.toUpperCase().split("");
const methods = value("methods")?.split(",") as CoverageMethod[] | undefined;
for (const m of methods ?? []) if (!METHODS.includes(m)) throw new Error(`--methods: unknown method ${m} (${METHODS.join(", ")})`);
const scanAt = flag("scan");

async function main() {
  const t0 = performance.now();
  if (only !== "run-scores") {
    if (scanAt >= 0) {
      const list = argv[scanAt + 1]?.startsWith("--") === false ? argv[scanAt + 1] : undefined;
      const sizes = list?.split(",").map(Number);
      if (sizes?.some((n) => !Number.isInteger(n) || n < 2)) throw new Error(`--scan: sizes must be integers of at least 2, got ${list}`);
      coverageScan({ replicates, seed, designs, sizes, onTable: (t) => console.log(t) });
    } else {
      const rows = agreementCoverage({
        replicates,
        seed,
        designs,
        methods: methods ?? METHODS.filter((m) => m !== "boot-t"),
        onDesign: (rs) => console.log(coverageTable(rs)),
      });
      const short = rows.filter((r) => r.method === "default" && r.covered / r.replicates < TARGET);
      console.log(
        short.length === 0
          ? `Every default agreement interval covers at least ${TARGET} (${replicates} replicates, seed ${seed}).`
          : `Default intervals below ${TARGET}: ${short.map((r) => `${r.design} ${r.statistic} ${(r.covered / r.replicates).toFixed(3)}`).join(", ")}`,
      );
    }
    console.log(`(agreement: ${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  if (only !== "agreement") {
    const file = path.join(import.meta.dirname, "coverage", "run-scores.ts");
    if (!existsSync(file)) {
      if (only === "run-scores") throw new Error("scripts/coverage/run-scores.ts is not there yet");
      return;
    }
    const mod = (await import(pathToFileURL(file).href)) as {
      runScoreCoverage: (opts: { replicates: number; seed: number }) => Promise<string>;
    };
    const t1 = performance.now();
    console.log(await mod.runScoreCoverage({ replicates, seed }));
    console.log(`(run scores: ${((performance.now() - t1) / 1000).toFixed(0)} s)`);
  }
}

main().catch((e) => {
  console.error(`bench:coverage: ${(e as Error).message}`);
  process.exitCode = 1;
});
