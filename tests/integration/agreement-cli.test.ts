/**
 * The agreement command line, spawned as `npx tsx scripts/agreement.ts ...` on the
 * small original fixtures in tests/fixtures/stats/.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = (name: string) => `tests/fixtures/stats/${name}`;

function run(args: string[]) {
  const r = spawnSync("npx", ["tsx", "scripts/agreement.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function runJson(args: string[]) {
  const r = run([...args, "--format", "json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const KEYS = ["n", "percentAgreement", "cohenKappa", "cohenKappaLinear", "cohenKappaQuadratic", "fleissKappa", "krippendorffAlpha", "gwetAC1", "pabak", "pearson", "spearman", "kendallTauB"];

describe("npm run agreement", () => {
  it("two raters, ordinal scores (UTF-8 BOM, CRLF, one empty cell): every statistic, with CIs", () => {
    const out = runJson(["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_b", "--level", "ordinal"]);
    for (const k of KEYS) expect(out).toHaveProperty(k);
    for (const k of KEYS.slice(1)) expect(out).toHaveProperty(`${k}CI`);
    expect(out.n).toBe(12);
    // The 11 complete pairs (w11 has an empty cell). References, an independent numpy implementation
    // of Cohen (1960/1968) kappa with the Fleiss-Cohen-Everitt (1969) SE on the 5×5 table, and scipy 1.17.1:
    //   kappa none 0.5416666666666666, CI (0.19402929929146018, 0.8893040340418731)
    //   kappa linear 0.7411764705882355, CI (0.5283307924365463, 0.9540221487399247)
    //   kappa quadratic 0.8823529411764712, CI (0.7703521441676344, 0.994353738185308)
    //   stats.pearsonr(a, b) -> 0.9082951062292475, CI (0.6776431228818289, 0.9762481161328067)
    //   stats.spearmanr(a, b) -> 0.9185946618526418; stats.kendalltau(a, b, variant='b') -> 0.8606629658238705
    expect(out.percentAgreement).toBeCloseTo(7 / 11, 12);
    expect(out.cohenKappa).toBeCloseTo(0.5416666666666666, 12);
    const ci = out.cohenKappaCI as number[];
    expect(ci[0]).toBeCloseTo(0.19402929929146018, 12);
    expect(ci[1]).toBeCloseTo(0.8893040340418731, 12);
    expect(out.cohenKappaLinear).toBeCloseTo(0.7411764705882355, 12);
    expect((out.cohenKappaLinearCI as number[])[0]).toBeCloseTo(0.5283307924365463, 12);
    expect(out.cohenKappaQuadratic).toBeCloseTo(0.8823529411764712, 12);
    expect((out.cohenKappaQuadraticCI as number[])[1]).toBeCloseTo(0.994353738185308, 12);
    expect(out.pearson).toBeCloseTo(0.9082951062292475, 12);
    expect((out.pearsonCI as number[])[0]).toBeCloseTo(0.6776431228818289, 12);
    expect((out.pearsonCI as number[])[1]).toBeCloseTo(0.9762481161328067, 12);
    expect(out.spearman).toBeCloseTo(0.9185946618526418, 12);
    expect(out.kendallTauB).toBeCloseTo(0.8606629658238705, 12);
    // Five categories in use -> PABAK does not apply.
    expect(out.pabak).toBeNull();
    expect(out.pabakCI).toBeNull();
    // Bootstrap CIs bracket their estimate.
    for (const k of ["percentAgreement", "fleissKappa", "krippendorffAlpha", "gwetAC1", "spearman", "kendallTauB"]) {
      const [lo, hi] = out[`${k}CI`] as number[];
      expect(lo, k).toBeLessThanOrEqual(out[k] as number);
      expect(hi, k).toBeGreaterThanOrEqual(out[k] as number);
    }
  });

  it("is reproducible: the same seed gives the same bootstrap CIs", () => {
    const args = ["--input", fixture("three_raters_labels.csv"), "--raters", "rater1,rater2,rater3", "--resamples", "300"];
    expect(runJson([...args, "--seed", "5"])).toEqual(runJson([...args, "--seed", "5"]));
  });

  it("three raters at nominal level: Cohen, PABAK and correlations are null; Fleiss/alpha/AC1 computed", () => {
    const out = runJson(["--input", fixture("three_raters_labels.csv"), "--raters", "rater1,rater2,rater3"]);
    expect(out.n).toBe(10);
    for (const k of ["cohenKappa", "cohenKappaLinear", "cohenKappaQuadratic", "pabak", "pearson", "spearman", "kendallTauB"]) {
      expect(out[k], k).toBeNull();
      expect(out[`${k}CI`], k).toBeNull();
    }
    // Hand computation (each unit's share of agreeing rater pairs, averaged over 10 units):
    // r1 1, r2 1/3, r3 1, r4 1, r5 1, r6 1/3, r7 1, r8 1, r9 1/3, r10 1 -> 8/10.
    expect(out.percentAgreement).toBeCloseTo(0.8, 12);
    expect(typeof out.fleissKappa).toBe("number");
    expect(typeof out.krippendorffAlpha).toBe("number");
    expect(typeof out.gwetAC1).toBe("number");
  });

  it("two categories with a dominant Yes: PABAK and AC1 stay high while kappa drops (kappa paradox)", () => {
    const out = runJson(["--input", fixture("binary_dominant.csv"), "--raters", "human,judge"]);
    // By hand: po = 18/20; both margins 18 Yes / 2 No -> pe = 0.82, kappa = 0.08/0.18;
    // PABAK = 2·0.9 - 1 = 0.8; AC1: pe = 2·0.9·0.1 = 0.18 -> (0.9 - 0.18)/0.82.
    expect(out.cohenKappa).toBeCloseTo(0.08 / 0.18, 12);
    expect(out.pabak).toBeCloseTo(0.8, 12);
    expect(out.gwetAC1).toBeCloseTo(0.72 / 0.82, 12);
    expect(out.pearson).toBeNull(); // nominal level
  });

  it("prints a human-readable table by default", () => {
    const r = run(["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_b", "--level", "interval"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Agreement of ann_a, ann_b \(level interval; n = 12 units\)/);
    expect(r.stdout).toMatch(/cohenKappa\s+0\.5417\s+\[0\.1940, 0\.8893\]/);
    expect(r.stdout).toMatch(/pabak\s+n\/a/);
  });

  it.each([
    [["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_c"], /^agreement: column "ann_c" not found in the header \(columns: item, ann_a, ann_b, notes\)$/],
    [["--input", fixture("empty.csv"), "--raters", "a,b"], /^agreement: input file .*empty\.csv is empty$/],
    [["--input", fixture("header_only.csv"), "--raters", "a,b"], /^agreement: input file .*header_only\.csv has a header but no data rows$/],
    [["--input", fixture("bad_number.csv"), "--raters", "a,b", "--level", "interval"], /^agreement: data row 3, column "b": "abc" is not a number \(level interval needs numbers\)$/],
    [["--input", fixture("bad_number.csv"), "--raters", "a,b", "--level", "ratio"], /^agreement: data row 3, column "b": "abc" is not a number/],
    [["--input", fixture("does_not_exist.csv"), "--raters", "a,b"], /^agreement: cannot read .*does_not_exist\.csv: ENOENT$/],
  ])("bad input %# exits 2 with a one-line message naming the column or row", (args, message) => {
    const r = run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it("a non-numeric value is fine at nominal level (bad_number.csv)", () => {
    const out = runJson(["--input", fixture("bad_number.csv"), "--raters", "a,b"]);
    expect(out.n).toBe(3);
    expect(out.pearson).toBeNull();
  });

  it("usage errors exit 2", () => {
    const r = run(["--raters", "a"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agreement: missing --input FILE\.csv/);
    expect(run(["--input", "x.csv", "--raters", "a,b", "--level", "cardinal"]).code).toBe(2);
  });
});
