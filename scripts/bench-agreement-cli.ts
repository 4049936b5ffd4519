/**
 * Benchmark of the agreement command line as a researcher runs it (not a test):
 * the whole `npm run agreement -- --format json` process on two-rater,
 * three-category CSVs of 10,000, 100,000 and 1,000,000 rows, against
 * `python3 -c "pandas.read_csv + sklearn.metrics.cohen_kappa_score"` on the same
 * file in the same run (interleaved, so both see the same machine load).
 *
 *   npm run bench:agreement-cli [-- --runs 3] [--sizes 10000,100000,1000000] [--keep]
 *
 * Targets (issue 15): at 1,000,000 rows the command, every statistic and interval
 * included, takes less than half the time of pandas + scikit-learn, with a peak RSS
 * under 400 MB; at 100,000 rows under 1 s. The 1,000,000-row file is also run with
 * `--ci bootstrap` (every interval by the bootstrap) and at the ordinal level
 * (weighted kappa, ordinal alpha, correlations: more bootstraps).
 *
 * Peak RSS and CPU seconds come from GNU time (/usr/bin/time -f "%M %U %S": the largest
 * resident set of the process tree, its user + system time); without it, only wall times
 * are reported. CPU seconds do not grow with the machine's load, wall seconds do: on a
 * shared machine compare both. The start-up alone (`--help`) is timed through npm, npm
 * alone, npm running `node -e 0` from an empty project (the floor of any npm script), node
 * on the bundle, a bare `node -e 0` and tsx on the sources, which shows where a small
 * file's time goes. The last lines are the README's table, in Markdown. The Python side runs when a
 * python3 with pandas and scikit-learn is found ($PYTHON, python3 on the PATH, or
 * /usr/bin/python3); the report says so when none is.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../app/stats/seededRandom.js";
import { median } from "./bench-median";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const runs = Number(opt("--runs", "3"));
const sizes = opt("--sizes", "10000,100000,1000000").split(",").map(Number);
const keep = args.includes("--keep");
const TIME = "/usr/bin/time";
const hasTime = existsSync(TIME);

/** A CSV of `n` units: id, rater a, rater b; categories x/y/z (or scores 1-5), b agreeing with a 70% of the time. */
function writeCsv(path: string, n: number, scores: boolean): void {
  const random = seededRandom(n + (scores ? 7 : 0));
  const cats = scores ? ["1", "2", "3", "4", "5"] : ["x", "y", "z"];
  const parts: string[] = ["id,a,b\n"];
  let chunk = "";
  for (let i = 0; i < n; i++) {
    const a = cats[Math.floor(random() * cats.length)];
    const b = random() < 0.7 ? a : cats[Math.floor(random() * cats.length)];
    chunk += `u${i},${a},${b}\n`;
    if (chunk.length > 1 << 20) {
      parts.push(chunk);
      chunk = "";
    }
  }
  parts.push(chunk);
  writeFileSync(path, parts.join(""));
}

interface Measure {
  seconds: number;
  /** CPU seconds (user + system) of the process tree: what the command costs whatever the machine load. */
  cpu: number | null;
  rssMB: number | null;
  ok: boolean;
  error?: string;
}

/** Runs a command, timed by GNU time when present (wall seconds, CPU seconds and peak RSS of the process tree). */
function measure(cmd: string, cmdArgs: string[]): Measure {
  if (hasTime) {
    const r = spawnSync(TIME, ["-f", "__TIME__ %e %M %U %S", cmd, ...cmdArgs], { cwd: root, encoding: "utf8", maxBuffer: 1 << 26 });
    const m = /__TIME__ ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(r.stderr ?? "");
    if (!m) return { seconds: NaN, cpu: null, rssMB: null, ok: false, error: (r.stderr ?? "").slice(-300) };
    return {
      seconds: Number(m[1]),
      cpu: Number(m[3]) + Number(m[4]),
      rssMB: Number(m[2]) / 1024,
      ok: r.status === 0,
      error: r.status === 0 ? undefined : (r.stderr ?? "").slice(-300),
    };
  }
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, cmdArgs, { cwd: root, encoding: "utf8", maxBuffer: 1 << 26 });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { seconds, cpu: null, rssMB: null, ok: r.status === 0, error: r.status === 0 ? undefined : (r.stderr ?? "").slice(-300) };
}

function findPython(): string | null {
  const candidates = [process.env.PYTHON, "python3", "/usr/bin/python3"].filter((c): c is string => !!c);
  for (const c of candidates) {
    const r = spawnSync(c, ["-c", "import pandas, sklearn.metrics"], { encoding: "utf8" });
    if (r.status === 0) return c;
  }
  return null;
}

/** Median CPU seconds of runs, or "n/a" without GNU time. */
const cpuOf = (ms: Measure[]) => {
  const c = median(ms.map((m) => m.cpu ?? NaN));
  return Number.isFinite(c) ? `${c.toFixed(2)} CPU` : "CPU n/a";
};

const dir = mkdtempSync(join(tmpdir(), "concord-bench-agreement-"));
const python = findPython();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
console.log(
  `load average at start: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(", ")}`,
);
console.log(
  python
    ? `python: ${python} (pandas + scikit-learn found)`
    : "python: no python3 with pandas and scikit-learn found — the command is timed alone",
);
console.log(hasTime ? "peak RSS: GNU time (-f %M)" : "peak RSS: not measured (/usr/bin/time not found)");

// Compile the command's bundle once (npm run agreement does it when a source changed) so no run pays for it.
spawnSync(npm, ["run", "-s", "agreement", "--", "--help"], { cwd: root, encoding: "utf8" });

// Start-up alone (`--help`): the cached bundle through npm, the same through node, the sources through tsx,
// and a bare `node -e 0` (the floor any Node command pays). Wall seconds depend on the load; CPU seconds
// (user + system, of the process tree) say where the start-up goes whatever the load.
const startupRows: [string, Measure[]][] = [];
{
  const startup = (label: string, cmd: string, a: string[]) =>
    startupRows.push([label, Array.from({ length: Math.max(3, runs) }, () => measure(cmd, a))]);
  startup("npm run agreement", npm, ["run", "-s", "agreement", "--", "--help"]);
  startup("npm --version (npm alone)", npm, ["--version"]);
  // The floor of any npm script: npm running `node -e 0` from an empty project's package.json.
  const empty = join(dir, "empty-project");
  mkdirSync(empty);
  writeFileSync(join(empty, "package.json"), JSON.stringify({ name: "empty", version: "1.0.0", scripts: { x: "node -e 0" } }));
  startup("npm run of node -e 0 in an empty project (the floor of any npm script)", npm, ["run", "-s", "--prefix", empty, "x"]);
  startup("node scripts/agreement-cli.mjs (the bundle)", process.execPath, ["scripts/agreement-cli.mjs", "--help"]);
  startup("node -e 0 (bare Node)", process.execPath, ["-e", "0"]);
  startup("tsx scripts/agreement.ts (the sources)", process.execPath, ["node_modules/tsx/dist/cli.mjs", "scripts/agreement.ts", "--help"]);
  console.log(
    `start-up (--help), median wall s (CPU s): ${startupRows
      .map(([label, ms]) => `${label} ${median(ms.map((m) => m.seconds)).toFixed(2)} (${cpuOf(ms)})`)
      .join("; ")}`,
  );
}

interface Row {
  rows: number;
  variant: string;
  ours: Measure[];
  py: Measure[];
}
const results: Row[] = [];
try {
  for (const n of sizes) {
    const file = join(dir, `ratings-${n}.csv`);
    writeCsv(file, n, false);
    const variants: [string, string, string[]][] = [["nominal, default intervals", file, []]];
    if (n >= 1_000_000) {
      const scoreFile = join(dir, `scores-${n}.csv`);
      writeCsv(scoreFile, n, true);
      variants.push(
        ["nominal, --ci bootstrap", file, ["--ci", "bootstrap"]],
        ["ordinal 1-5, default intervals", scoreFile, ["--level", "ordinal"]],
      );
    }
    for (const [variant, f, extra] of variants) {
      const row: Row = { rows: n, variant, ours: [], py: [] };
      for (let i = 0; i < runs; i++) {
        row.ours.push(measure(npm, ["run", "-s", "agreement", "--", "--input", f, "--raters", "a,b", "--format", "json", ...extra]));
        if (python)
          row.py.push(
            measure(python, [
              "-c",
              `import pandas, sklearn.metrics; df=pandas.read_csv(${JSON.stringify(f)}); print(sklearn.metrics.cohen_kappa_score(df.a, df.b))`,
            ]),
          );
      }
      const bad = [...row.ours, ...row.py].find((m) => !m.ok);
      if (bad) console.log(`  a run failed: ${bad.error}`);
      results.push(row);
      const mb = (f2: string) => (statSync(f2).size / 1e6).toFixed(1);
      const o = median(row.ours.map((m) => m.seconds));
      const p = median(row.py.map((m) => m.seconds));
      const rss = Math.max(...row.ours.map((m) => m.rssMB ?? NaN));
      console.log(
        `${n.toLocaleString("en-US")} rows (${mb(f)} MB), ${variant}: npm run agreement ${o.toFixed(2)} s (${cpuOf(row.ours)})` +
          (Number.isFinite(rss) ? `, peak RSS ${rss.toFixed(0)} MB` : "") +
          (python
            ? `; pandas + cohen_kappa_score ${p.toFixed(2)} s (${cpuOf(row.py)}, peak RSS ${Math.max(...row.py.map((m) => m.rssMB ?? NaN)).toFixed(0)} MB); ratio ${(o / p).toFixed(2)}`
            : "") +
          ` [runs: ${row.ours.map((m) => m.seconds.toFixed(2)).join(", ")}${python ? ` vs ${row.py.map((m) => m.seconds.toFixed(2)).join(", ")}` : ""}]`,
      );
    }
  }
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`files kept in ${dir}`);
}

console.log(
  `load average at end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(", ")}`,
);
console.log("\ntargets:");
for (const r of results) {
  const o = median(r.ours.map((m) => m.seconds));
  const rss = Math.max(...r.ours.map((m) => m.rssMB ?? NaN));
  if (r.rows === 100_000) {
    // Under load the wall time grows with the other processes; the CPU time says what the command itself costs.
    const startCpu = median((startupRows.find(([label]) => label === "npm run agreement")?.[1] ?? []).map((m) => m.cpu ?? NaN));
    const cpu = Number.isFinite(startCpu) ? ` (${cpuOf(r.ours)}, of it ${startCpu.toFixed(2)} s the start-up alone)` : "";
    console.log(`  100,000 rows under 1 s: ${o.toFixed(2)} s${cpu} — ${o < 1 ? "met" : "NOT met"}`);
  }
  if (r.rows >= 1_000_000) {
    const p = median(r.py.map((m) => m.seconds));
    const speed = python
      ? `${(o / p).toFixed(2)} × pandas + scikit-learn (target < 0.5) — ${o < 0.5 * p ? "met" : "NOT met"}`
      : "no Python to compare with";
    const mem = Number.isFinite(rss)
      ? `peak RSS ${rss.toFixed(0)} MB (target < 400) — ${rss < 400 ? "met" : "NOT met"}`
      : "peak RSS not measured";
    console.log(`  ${r.rows.toLocaleString("en-US")} rows, ${r.variant}: ${speed}; ${mem}`);
  }
}

// The README's table (median wall seconds of the runs, CPU seconds in parentheses).
const cpuRatio = (r: Row) => {
  const o = median(r.ours.map((m) => m.cpu ?? NaN));
  const p = median(r.py.map((m) => m.cpu ?? NaN));
  return Number.isFinite(o / p) ? ` (${(o / p).toFixed(2)}×)` : "";
};
console.log(
  "\n| rows | data, intervals | `npm run agreement` s (CPU s) | pandas + scikit-learn s (CPU s) | ratio (CPU ratio) | peak RSS |",
);
console.log("| ---: | --- | ---: | ---: | ---: | ---: |");
for (const r of results) {
  const o = median(r.ours.map((m) => m.seconds));
  const p = median(r.py.map((m) => m.seconds));
  const c = (ms: Measure[]) => {
    const v = median(ms.map((m) => m.cpu ?? NaN));
    return Number.isFinite(v) ? ` (${v.toFixed(2)})` : "";
  };
  const rss = Math.max(...r.ours.map((m) => m.rssMB ?? NaN));
  console.log(
    `| ${r.rows.toLocaleString("en-US")} | ${r.variant} | ${o.toFixed(2)}${c(r.ours)} | ${python ? `${p.toFixed(2)}${c(r.py)}` : "n/a"} | ${python ? `${(o / p).toFixed(2)}×${cpuRatio(r)}` : "n/a"} | ${Number.isFinite(rss) ? `${rss.toFixed(0)} MB` : "n/a"} |`,
  );
}
