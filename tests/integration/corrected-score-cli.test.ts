/**
 * `npm run corrected-score` (issue 38) as a team runs it on its own files: a judge file with every unit's judge
 * verdict (labels mapped by --values), a labels file of a sample (one value column, or three annotators reduced
 * by strict majority with splits left out and counted), CSV and JSONL. Its JSON equals the PPI++ / stratified /
 * classical formulas written out here; auto picks the estimator the files call for; bad input is one line naming
 * the file, row and column, exit 2.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/db";

const ROOT = path.resolve(__dirname, "../..");
const dir = tempDir("concord-corrected-");

function run(...argv: string[]) {
  const r = spawnSync(process.execPath, ["scripts/corrected-score-cli.mjs", ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

// 300 answers judged A (= the response is right) or B; humans labelled 30 of them, the first 30 of each stratum of 150.
const N = 300;
const verdict = (i: number) => (i % 7 === 0 || i % 11 === 0 ? "B" : "A");
const truth = (i: number) => (i % 7 === 0 || i % 5 === 0 ? "B" : "A");
const labelled = Array.from({ length: N }, (_, i) => i).filter((i) => i % 10 === 3);
const judgeCsv = write(
  "judge.csv",
  ["answer_id,verdict,domain", ...Array.from({ length: N }, (_, i) => `a${i},${verdict(i)},${i < 150 ? "law" : "chem"}`)].join("\n"),
);
const labelsCsv = write("labels.csv", ["answer_id,human", ...labelled.map((i) => `a${i},${truth(i)}`)].join("\n"));

const mean = (s: readonly number[]) => s.reduce((a, b) => a + b, 0) / s.length;
const sampleVar = (s: readonly number[]) => {
  const m = mean(s);
  return s.reduce((a, x) => a + (x - m) ** 2, 0) / (s.length - 1);
};
const num = (v: string): number => (v === "A" ? 1 : 0);

/** ppi_py's PPI++ written out (ppi_mean_pointestimate / ppi_mean_ci, lam=None, lam_optim_mode="overall"). */
function ppiPlusPlus(units: number[]) {
  const lab = units.filter((i) => labelled.includes(i));
  const unl = units.filter((i) => !labelled.includes(i));
  const y = lab.map((i) => num(truth(i)));
  const f = lab.map((i) => num(verdict(i)));
  const u = unl.map((i) => num(verdict(i)));
  const n = y.length;
  const M = u.length;
  const cov = y.reduce((t, yi, k) => t + (yi - mean(y)) * (f[k] - mean(f)), 0) / n;
  const lam = Math.min(1, Math.max(0, cov / ((1 + n / M) * sampleVar([...f, ...u]))));
  const d = y.map((yi, k) => yi - lam * f[k]);
  const vd = d.reduce((t, x) => t + (x - mean(d)) ** 2, 0) / n;
  const vu = u.reduce((t, x) => t + (x - mean(u)) ** 2, 0) / M;
  return { lam, est: lam * mean(u) + mean(d), se: Math.sqrt((lam * lam * vu) / M + vd / n) };
}
const all = Array.from({ length: N }, (_, i) => i);

describe("npm run corrected-score", () => {
  it("PPI++ on two CSV files equals ppi_py's formulas; the interval holds the estimate and has width", () => {
    const r = run(
      "--judge",
      judgeCsv,
      "--labels",
      labelsCsv,
      "--unit",
      "answer_id",
      "--score",
      "verdict",
      "--label",
      "human",
      "--values",
      "A=1,B=0",
      "--format",
      "json",
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    const want = ppiPlusPlus(all);
    expect(out.estimator).toBe("ppi++");
    expect(out.lambda).toBeCloseTo(want.lam, 12);
    expect(out.estimate).toBeCloseTo(want.est, 12);
    expect(out.se).toBeCloseTo(want.se, 12);
    expect([out.n_labeled, out.n_total]).toEqual([30, 300]);
    expect(out.ci_low).toBeLessThan(out.estimate);
    expect(out.ci_high).toBeGreaterThan(out.estimate);
    expect(out.notes[0]).toBe("auto chose ppi++");
    expect(Object.keys(out)).toEqual(
      expect.arrayContaining(["estimator", "estimate", "ci_low", "ci_high", "se", "lambda", "n_labeled", "n_total", "notes"]),
    );
  });

  it("--stratum: auto is stratified PPI++, Σ (N_h/N)·θ̂_h with each domain's λ̂", () => {
    const r = run(
      "--judge",
      judgeCsv,
      "--labels",
      labelsCsv,
      "--unit",
      "answer_id",
      "--score",
      "verdict",
      "--label",
      "human",
      "--values",
      "A=1,B=0",
      "--stratum",
      "domain",
      "--format",
      "json",
    );
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out);
    const law = ppiPlusPlus(all.filter((i) => i < 150));
    const chem = ppiPlusPlus(all.filter((i) => i >= 150));
    expect(out.estimator).toBe("stratified");
    expect(out.lambdas.law).toBeCloseTo(law.lam, 12);
    expect(out.lambdas.chem).toBeCloseTo(chem.lam, 12);
    expect(out.estimate).toBeCloseTo(0.5 * law.est + 0.5 * chem.est, 12);
    expect(out.se).toBeCloseTo(Math.sqrt(0.25 * law.se ** 2 + 0.25 * chem.se ** 2), 12);
  });

  it("three annotators in JSONL: strict majority, splits left out and counted; classical is the majority labels' mean", () => {
    const lines = labelled.map((i, k) => {
      const t = truth(i);
      const other = t === "A" ? "B" : "A";
      // Every fifth unit: one annotator each way and one missing → a split (1 against 1 of 2).
      const rec = k % 5 === 0 ? { answer_id: `a${i}`, r1: t, r2: other, r3: null } : { answer_id: `a${i}`, r1: t, r2: t, r3: other };
      return JSON.stringify(rec);
    });
    const labelsJsonl = write("three.jsonl", lines.join("\n"));
    const r = run(
      "--judge",
      judgeCsv,
      "--labels",
      labelsJsonl,
      "--unit",
      "answer_id",
      "--score",
      "verdict",
      "--annotators",
      "r1,r2,r3",
      "--values",
      "A=1,B=0",
      "--estimator",
      "classical",
      "--format",
      "json",
    );
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out);
    const kept = labelled.filter((_, k) => k % 5 !== 0);
    const y = kept.map((i) => num(truth(i)));
    expect(out.n_labeled).toBe(24);
    expect(out.estimate).toBeCloseTo(mean(y), 14);
    expect(out.se).toBeCloseTo(Math.sqrt((1 - 24 / 300) * (sampleVar(y) / 24)), 14);
    expect(out.notes.join(" ")).toMatch(/6 labelled unit\(s\) left out: the annotators split/);
  });

  it("the table format names the estimator, λ, the interval, the judge-only score and the sample", () => {
    const r = run(
      "--judge",
      judgeCsv,
      "--labels",
      labelsCsv,
      "--unit",
      "answer_id",
      "--score",
      "verdict",
      "--label",
      "human",
      "--values",
      "A=1,B=0",
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^estimator {3}ppi\+\+ \(λ = 0\.\d{4}\)/);
    expect(r.out).toMatch(/95% interval \[0\.\d{4}, 0\.\d{4}\]/);
    expect(r.out).toMatch(/units {7}30 labelled of 300/);
  });

  it("bad input: one line naming the file, row and column, exit 2", () => {
    const cases: [string[], RegExp][] = [
      [
        [
          "--judge",
          judgeCsv,
          "--labels",
          write("maybe.csv", "answer_id,human\na3,A\na13,maybe\n"),
          "--unit",
          "answer_id",
          "--score",
          "verdict",
          "--label",
          "human",
          "--values",
          "A=1,B=0",
        ],
        /labels file maybe\.csv: row 3, human: "maybe" is not a number nor a label of --values/,
      ],
      [
        ["--judge", judgeCsv, "--labels", labelsCsv, "--unit", "answer_id", "--score", "verdict", "--label", "human"],
        /judge file judge\.csv: row 2, verdict: "B" is not a number; give --values/,
      ],
      [
        [
          "--judge",
          judgeCsv,
          "--labels",
          write("ghost.csv", "answer_id,human\na3,A\nzz9,B\n"),
          "--unit",
          "answer_id",
          "--score",
          "verdict",
          "--label",
          "human",
          "--values",
          "A=1,B=0",
        ],
        /labels file ghost\.csv: row 3, answer_id: unit "zz9" is not in the judge file/,
      ],
      [
        [
          "--judge",
          write("dup.csv", "answer_id,verdict\na1,A\na1,B\n"),
          "--labels",
          labelsCsv,
          "--unit",
          "answer_id",
          "--score",
          "verdict",
          "--values",
          "A=1,B=0",
        ],
        /judge file dup\.csv: row 3, answer_id: unit "a1" is listed twice \(first on row 2\)/,
      ],
      [["--judge", judgeCsv, "--labels", labelsCsv, "--score", "verdict"], /judge file judge\.csv: no "unit" column/],
      [
        ["--judge", judgeCsv, "--labels", labelsCsv, "--unit", "answer_id", "--score", "verdict", "--values", "A=1,B"],
        /--values takes LABEL=NUMBER/,
      ],
      [
        ["--judge", judgeCsv, "--labels", labelsCsv, "--estimator", "ptd2"],
        /--estimator must be one of auto, classical, ppi, ppi\+\+, stratified, active/,
      ],
      [
        [
          "--judge",
          judgeCsv,
          "--labels",
          labelsCsv,
          "--unit",
          "answer_id",
          "--score",
          "verdict",
          "--label",
          "human",
          "--values",
          "A=1,B=0",
          "--estimator",
          "active",
        ],
        /needs --pi/,
      ],
      [["--judge", path.join(dir, "nope.csv"), "--labels", labelsCsv], /judge file nope\.csv: no such file/],
    ];
    for (const [argv, message] of cases) {
      const r = run(...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.out).toBe("");
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(message);
    }
  });
});
