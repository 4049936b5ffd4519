/**
 * Benchmark of `npm run judge-agreement` as a researcher runs it (not a test): the whole
 * process on 1,000 units × 3 annotators × 2 judges (a pairwise A / B / tie task, one judge
 * with some unparseable outputs), written to a temporary directory, timed over a few runs;
 * prints each run and the median. For comparison it also times the same command from the
 * sources through tsx (`npx tsx scripts/judge-agreement.ts`).
 *
 *   npm run bench:judge-agreement [-- --runs 5] [--units 1000] [--keep]
 *
 * Target (issue 12): the whole process under 2 s.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
const runs = Math.max(1, Number(opt("--runs", "5")));
const units = Math.max(10, Number(opt("--units", "1000")));
const keep = args.includes("--keep");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const dir = mkdtempSync(join(tmpdir(), "concord-bench-judge-"));
const labelsFile = join(dir, "labels.csv");
const verdictsFile = join(dir, "verdicts.csv");
{
  const random = seededRandom(12);
  const LABELS = ["A", "B", "tie"];
  const pick = () => LABELS[Math.floor(random() * 3)];
  const labels = ["unit,ann_1,ann_2,ann_3"];
  const verdicts = ["unit,judge,verdict"];
  for (let u = 1; u <= units; u++) {
    const truth = pick();
    const ann = [0, 1, 2].map(() => (random() < 0.75 ? truth : pick()));
    labels.push(`u${u},${ann.join(",")}`);
    verdicts.push(`u${u},judge-steady,${random() < 0.7 ? truth : pick()}`);
    const r = random();
    verdicts.push(`u${u},judge-wobbly,${r < 0.05 ? "" : r < 0.08 ? "Unsure" : r < 0.65 ? truth : pick()}`);
  }
  writeFileSync(labelsFile, labels.join("\n") + "\n");
  writeFileSync(verdictsFile, verdicts.join("\n") + "\n");
}
const commandArgs = ["--labels", labelsFile, "--annotators", "ann_1,ann_2,ann_3", "--verdicts", verdictsFile, "--format", "json"];

function time(cmd: string, a: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, a, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${a.slice(0, 4).join(" ")} … exited ${r.status}: ${(r.stderr ?? "").split("\n")[0]}`);
  return s;
}
try {
  console.log(
    `load average at start: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}`,
  );
  console.log(`${units} units × 3 annotators × 2 judges (files in ${dir})`);
  // Compile the bundle once (npm run judge-agreement does it whenever a source changed) so no timed run pays for it.
  time(npm, ["run", "-s", "judge-agreement", "--", "--help"]);
  const viaNpm: number[] = [];
  const viaTsx: number[] = [];
  for (let i = 0; i < runs; i++) {
    viaNpm.push(time(npm, ["run", "-s", "judge-agreement", "--", ...commandArgs]));
    viaTsx.push(time(process.execPath, ["node_modules/tsx/dist/cli.mjs", "scripts/judge-agreement.ts", ...commandArgs]));
  }
  const f = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
  console.log(
    `npm run judge-agreement -- … --format json (cached bundle): ${f(viaNpm)} s; median ${median(viaNpm).toFixed(2)} s (target < 2 s)`,
  );
  console.log(`npx tsx scripts/judge-agreement.ts … --format json (sources): ${f(viaTsx)} s; median ${median(viaTsx).toFixed(2)} s`);
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
