/**
 * `npm run label-plan` (issue 38) on a team's own judge file: `unit,pi,selected` for every unit, seeded and
 * reproducible, the π summing to the budget and exactly that many selected; the stratified plan is proportional
 * without burn-in and Neyman with it; auto says why it chose; the labels file feeds the burn-in; bad input is one
 * line naming the file, row and column.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/db";

const ROOT = path.resolve(__dirname, "../..");
const dir = tempDir("concord-plan-");
const run = (...argv: string[]) => {
  const r = spawnSync(process.execPath, ["scripts/label-plan-cli.mjs", ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const parse = (csv: string) => Papa.parse<Record<string, string>>(csv.trim(), { header: true }).data;

// 300 verdicts in two domains; the judge's stated confidence is low on every 7th.
const judge = write(
  "judge.csv",
  [
    "id,verdict,confidence,domain",
    ...Array.from({ length: 300 }, (_, i) => `q${i},${i % 3 ? "Yes" : "No"},${i % 7 === 0 ? 0.55 : 0.95},${i < 200 ? "law" : "med"}`),
  ].join("\n"),
);
const common = ["--judge", judge, "--unit", "id", "--score", "verdict", "--values", "Yes=1,No=0"];

describe("npm run label-plan", () => {
  it("uniform: every unit with π = B/N, exactly B selected, the same for the same seed", () => {
    const a = run(...common, "--budget", "30", "--sampler", "uniform", "--seed", "7");
    expect(a.code, a.err).toBe(0);
    const rows = parse(a.out);
    expect(rows).toHaveLength(300);
    expect(Object.keys(rows[0])).toEqual(["unit", "pi", "selected"]);
    expect(rows.every((r) => Number(r.pi) === 0.1)).toBe(true);
    expect(rows.filter((r) => r.selected === "1")).toHaveLength(30);
    expect(a.err).toMatch(/30 of 300 units selected \(exactly the budget/);
    expect(run(...common, "--budget", "30", "--sampler", "uniform", "--seed", "7").out).toBe(a.out);
    expect(run(...common, "--budget", "30", "--sampler", "uniform", "--seed", "8").out).not.toBe(a.out);
  });

  it("active by the confidence column: π sum to the budget, the unsure units likelier, exactly B selected", () => {
    const r = run(...common, "--budget", "30", "--sampler", "active", "--uncertainty", "confidence", "--seed", "1");
    expect(r.code, r.err).toBe(0);
    const rows = parse(r.out);
    expect(rows.reduce((t, x) => t + Number(x.pi), 0)).toBeCloseTo(30, 9);
    expect(rows.filter((x) => x.selected === "1")).toHaveLength(30);
    // A larger score is more uncertain (the column is taken as given): 0.95 > 0.55, so q1 gets the larger π.
    expect(Number(rows[1].pi)).toBeGreaterThan(Number(rows[0].pi));
  });

  it("stratified: proportional without burn-in, Neyman with it (more labels where the judge erred)", () => {
    const prop = run(...common, "--budget", "30", "--sampler", "stratified", "--stratum", "domain", "--seed", "1");
    expect(prop.code, prop.err).toBe(0);
    expect(prop.err).toMatch(/proportional allocation \(Neyman needs 2 burn-in labels in every stratum\)/);
    const p = parse(prop.out);
    expect(p.slice(0, 200).filter((x) => x.selected === "1")).toHaveLength(20);
    // Burn-in: law's judge wrong on 6 of 10, med's right on 10 of 10.
    const labels = write(
      "burn.csv",
      [
        "id,human",
        ...Array.from({ length: 10 }, (_, k) => `q${k * 3 + 1},${k < 6 ? "No" : "Yes"}`),
        ...Array.from({ length: 10 }, (_, k) => `q${200 + k * 3 + 2},Yes`),
      ].join("\n"),
    );
    const ney = run(
      ...common,
      "--budget",
      "30",
      "--sampler",
      "stratified",
      "--stratum",
      "domain",
      "--labels",
      labels,
      "--label",
      "human",
      "--seed",
      "1",
    );
    expect(ney.code, ney.err).toBe(0);
    expect(ney.err).toMatch(/Neyman allocation/);
    expect(
      parse(ney.out)
        .slice(0, 200)
        .filter((x) => x.selected === "1").length,
    ).toBeGreaterThan(20);
  });

  it("auto without labels falls back to uniform and says so; JSON output carries the plan", () => {
    const r = run(...common, "--budget", "10", "--sampler", "auto", "--seed", "1", "--format", "json");
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ sampler: "uniform", budget: 10, selected: 10, exact: true });
    expect(out.notes[0]).toMatch(/no burn-in labels/);
    expect(out.units).toHaveLength(300);
  });

  it("bad input: one line, exit 2", () => {
    const cases: [string[], RegExp][] = [
      [[...common, "--budget", "301", "--sampler", "uniform", "--seed", "1"], /budget 301 is larger than the 300 units/],
      [[...common, "--budget", "10", "--sampler", "uniform"], /--seed must be a whole number/],
      [[...common, "--budget", "10", "--sampler", "random", "--seed", "1"], /--sampler must be one of/],
      [[...common, "--budget", "10", "--sampler", "active", "--seed", "1"], /unit 0 has no uncertainty score/],
      [
        [...common, "--budget", "10", "--sampler", "active", "--uncertainty", "verdict", "--seed", "1"],
        /judge file judge\.csv: row 2, verdict: the uncertainty score must be a number/,
      ],
      [["--judge", judge, "--budget", "10", "--sampler", "uniform", "--seed", "1"], /judge file judge\.csv: no "unit" column/],
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
