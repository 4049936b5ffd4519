/**
 * The agreement command line, spawned as `npm run agreement` runs it (node on the
 * cached esbuild bundle, scripts/agreement-cli.mjs; one test checks that the sources
 * through tsx print the same) on the small original fixtures in tests/fixtures/stats/
 * and on small original CSVs written by the tests.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  bootstrapCI,
  cohenKappa,
  cohenKappaClusteredSE,
  fleissKappa,
  gwetAC1,
  krippendorffAlpha,
  seededRandom,
  type Rating,
  wilsonCI,
} from "~/stats";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = (name: string) => `tests/fixtures/stats/${name}`;

/** Runs the command as `npm run agreement` does (node on the cached esbuild bundle of scripts/agreement.ts). */
function run(args: string[]) {
  const r = spawnSync("node", ["scripts/agreement-cli.mjs", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** The same command from its TypeScript sources through tsx. */
function runTsx(args: string[]) {
  const r = spawnSync("npx", ["tsx", "scripts/agreement.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function runJson(args: string[]) {
  const r = run([...args, "--format", "json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const KEYS = [
  "n",
  "percentAgreement",
  "cohenKappa",
  "cohenKappaLinear",
  "cohenKappaQuadratic",
  "fleissKappa",
  "krippendorffAlpha",
  "gwetAC1",
  "pabak",
  "pearson",
  "spearman",
  "kendallTauB",
];

describe("npm run agreement", () => {
  it("two raters, ordinal scores (UTF-8 BOM, CRLF, one empty cell): every statistic, with CIs", () => {
    // --ci analytic: the large-sample intervals, which the references below compute (with 11 pairs the default,
    // --ci auto, is the expanded BCa bootstrap: tested in "--ci auto" below).
    const out = runJson(["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_b", "--level", "ordinal", "--ci", "analytic"]);
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
    const r = run(["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_b", "--level", "interval", "--ci", "analytic"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Agreement of ann_a, ann_b \(level interval; n = 12 units\)/);
    expect(r.stdout).toMatch(/cohenKappa\s+0\.5417\s+\[0\.1940, 0\.8893\]/);
    expect(r.stdout).toMatch(/pabak\s+n\/a/);
  });

  it.each([
    [
      ["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_c"],
      /^agreement: column "ann_c" not found in the header \(columns: item, ann_a, ann_b, notes\)$/,
    ],
    [["--input", fixture("empty.csv"), "--raters", "a,b"], /^agreement: input file .*empty\.csv is empty$/],
    [
      ["--input", fixture("header_only.csv"), "--raters", "a,b"],
      /^agreement: input file .*header_only\.csv has a header but no data rows$/,
    ],
    [
      ["--input", fixture("bad_number.csv"), "--raters", "a,b", "--level", "interval"],
      /^agreement: data row 3, column "b": "abc" is not a number \(level interval needs numbers\)$/,
    ],
    [
      ["--input", fixture("bad_number.csv"), "--raters", "a,b", "--level", "ratio"],
      /^agreement: data row 3, column "b": "abc" is not a number/,
    ],
    [["--input", fixture("does_not_exist.csv"), "--raters", "a,b"], /^agreement: cannot read .*does_not_exist\.csv: ENOENT$/],
  ])("bad input %# exits 2 with a one-line message naming the column or row", (args, message) => {
    const r = run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it("a non-numeric value is read as a category at nominal level, with a warning naming its row and column (bad_number.csv)", () => {
    const r = run(["--input", fixture("bad_number.csv"), "--raters", "a,b", "--format", "json"]);
    expect(r.code).toBe(0);
    const warning =
      'data row 3, column "b": "abc" is not a number, among numbers (1.5, 2, 3, 3.5, 4); read as a category of its own (1 cell)';
    expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(`agreement: warning: ${warning}`)]);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out.n).toBe(3);
    expect(out.pearson).toBeNull();
    expect(out.warnings).toEqual([expect.stringContaining(warning)]);
  });

  it("usage errors exit 2", () => {
    const r = run(["--raters", "a"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agreement: missing --input FILE\.csv/);
    expect(run(["--input", "x.csv", "--raters", "a,b", "--level", "cardinal"]).code).toBe(2);
  });
});

// ─── Intervals, options and warnings (issue 15) ─────────────────────────────

const dir = mkdtempSync(join(tmpdir(), "concord-agreement-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
function csv(text: string): string {
  const path = join(dir, `f${fileNo++}.csv`);
  writeFileSync(path, text);
  return path;
}
/** An original CSV of `n` units × raters from a seeded generator: each rater copies a unit's true label with probability `agree`. */
function generated(n: number, raters: number, cats: string[], agree: number, seed: number): { path: string; rows: Rating[][] } {
  const random = seededRandom(seed);
  const rows: Rating[][] = [];
  const lines = [["unit", ...Array.from({ length: raters }, (_, g) => `r${g + 1}`)].join(",")];
  for (let u = 0; u < n; u++) {
    const truth = cats[Math.floor(random() * cats.length)];
    const row = Array.from({ length: raters }, () => (random() < agree ? truth : cats[Math.floor(random() * cats.length)]));
    rows.push(row);
    lines.push([`u${u}`, ...row].join(","));
  }
  return { path: csv(lines.join("\n") + "\n"), rows };
}

describe("npm run agreement: intervals, options and warnings", () => {
  it("--ci bootstrap on small data: the same interval as the row bootstrap of app/stats with the same seed", () => {
    const { path, rows } = generated(60, 3, ["a", "b", "c"], 0.6, 3);
    const out = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "bootstrap", "--resamples", "400", "--seed", "9"]);
    // The rows as the old command bootstrapped them: units resampled with replacement, statistic recomputed.
    const ref = (stat: (rows: Rating[][]) => number) => bootstrapCI({ data: rows, statistic: stat, seed: 9, resamples: 400 }).ci;
    for (const [key, stat] of [
      ["fleissKappa", (r: Rating[][]) => fleissKappa(r).kappa],
      ["gwetAC1", (r: Rating[][]) => gwetAC1(r).value],
      ["krippendorffAlpha", (r: Rating[][]) => krippendorffAlpha(r, { level: "nominal" }).alpha],
    ] as const) {
      const ci = out[`${key}CI`] as number[];
      const expected = ref(stat);
      expect(ci[0], key).toBeCloseTo(expected[0], 12);
      expect(ci[1], key).toBeCloseTo(expected[1], 12);
      expect((out.ciMethod as Record<string, string>)[key]).toMatch(/^percentile bootstrap over units \(400 resamples, seed 9/);
    }
  });

  it("three raters: pooled-pairs kappa with a cluster-robust SE (analytic) or a unit bootstrap, both treating a unit's pairs as one cluster", () => {
    const { path, rows } = generated(80, 3, ["a", "b", "c"], 0.6, 6);
    // The pooled pairs by hand: every two ratings of a unit, raters in column order, keyed by the unit.
    const pairsOf = (units: Rating[][]) => {
      const a: string[] = [];
      const b: string[] = [];
      const unit: number[] = [];
      units.forEach((r, u) => {
        for (let g = 0; g < 3; g++)
          for (let h = g + 1; h < 3; h++) {
            a.push(r[g] as string);
            b.push(r[h] as string);
            unit.push(u);
          }
      });
      return { a, b, unit };
    };
    const { a, b, unit } = pairsOf(rows);
    const ref = cohenKappa(a, b, { categories: ["a", "b", "c"] });
    const code = (x: string) => ["a", "b", "c"].indexOf(x);
    const clustered = cohenKappaClusteredSE(a.map(code), b.map(code), unit, 3);
    const out = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "analytic"]);
    expect(out.pooledKappa).toBeCloseTo(ref.kappa, 12);
    expect((out.pooledKappaCI as number[])[0]).toBeCloseTo(clustered.ci[0], 12);
    expect((out.pooledKappaCI as number[])[1]).toBeCloseTo(clustered.ci[1], 12);
    expect(out.used).toMatchObject({ pooledKappa: { units: 80, pairs: 240 } });
    const boot = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "bootstrap", "--resamples", "300"]);
    const rowBoot = bootstrapCI({
      data: rows,
      statistic: (s) => {
        const p = pairsOf(s);
        return cohenKappa(p.a, p.b, { categories: ["a", "b", "c"] }).kappa;
      },
      seed: 1,
      resamples: 300,
    }).ci;
    expect((boot.pooledKappaCI as number[])[0]).toBeCloseTo(rowBoot[0], 12);
    expect((boot.pooledKappaCI as number[])[1]).toBeCloseTo(rowBoot[1], 12);
  });

  it("--ci analytic: SE-based intervals, percent agreement of 3 raters by Gwet's SE; --ci none: no intervals", () => {
    const { path } = generated(120, 3, ["a", "b", "c"], 0.6, 4);
    const out = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "analytic"]);
    const methods = out.ciMethod as Record<string, string>;
    expect(methods.percentAgreement).toMatch(/^analytic SE of the mean per-unit agreement \(Gwet 2014\)/);
    expect(methods.fleissKappa).toMatch(/^analytic SE/);
    expect(methods.gwetAC1).toMatch(/^analytic SE.*q = 3 categories fixed/);
    expect(out.used).toMatchObject({ fleissKappa: { units: 120 }, percentAgreement: { units: 120 } });
    const none = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "none"]);
    for (const k of ["percentAgreement", "fleissKappa", "krippendorffAlpha", "gwetAC1"]) {
      expect(none[`${k}CI`], k).toBeNull();
      expect(none[k], k).toBeCloseTo(out[k] as number, 12);
    }
  });

  it("missing tokens: NA, N/A and empty cells are missing by default and counted; null and - are read as categories with a warning", () => {
    const path = csv("id,a,b\n1,yes,yes\n2,NA,no\n3,no,N/A\n4,,yes\n5,null,yes\n6,-,no\n7,yes,yes\n8,no,no\n");
    const out = runJson(["--input", path, "--raters", "a,b"]);
    expect(out.n).toBe(8);
    expect(out.missing).toEqual({ "(empty)": 1, NA: 1, "N/A": 1 });
    expect(out.categories).toEqual(["-", "no", "null", "yes"]);
    const notes = (out.notes as string[]).join("\n");
    expect(notes).toMatch(/3 cells read as missing \(empty: 1, "NA": 1, "N\/A": 1\)/);
    expect(notes).toMatch(/"null" was read as a category \(1 cells\)/);
    expect(notes).toMatch(/"-" was read as a category \(1 cells\)/);
    // With null and - declared missing too, two categories remain.
    const out2 = runJson(["--input", path, "--raters", "a,b", "--missing", "NA,N/A,null,-"]);
    expect(out2.categories).toEqual(["no", "yes"]);
    expect(out2.missing).toEqual({ "(empty)": 1, NA: 1, "N/A": 1, null: 1, "-": 1 });
    // Units with both ratings: 1 (yes,yes), 7 (yes,yes), 8 (no,no) → perfect agreement on 3 pairs.
    expect(out2.used).toMatchObject({ cohenKappa: { units: 3 } });
    expect(out2.percentAgreement).toBe(1);
  });

  it("--categories declares the scale: AC1 keeps q = 4 with an unused category; a value outside it is an error naming row and column", () => {
    const { path, rows } = generated(50, 2, ["a", "b", "c"], 0.7, 5);
    const out = runJson(["--input", path, "--raters", "r1,r2", "--categories", "a,b,c,d"]);
    expect(out.gwetAC1).toBeCloseTo(gwetAC1(rows, { categories: ["a", "b", "c", "d"] }).value, 12);
    expect(out.gwetAC1).not.toBeCloseTo(gwetAC1(rows).value, 6);
    expect((out.ciMethod as Record<string, string>).gwetAC1).toMatch(/q = 4 categories fixed \(--categories\)/);
    const r = run(["--input", path, "--raters", "r1,r2", "--categories", "a,b"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^agreement: data row \d+, column "r\d": "c" is not one of --categories \(a, b\)$/);
  });

  it("warnings: n < 60, a rater who gave one value to every unit, two identical raters", () => {
    const path = csv(
      "id,a,b,c\n" + Array.from({ length: 12 }, (_, i) => `${i},yes,${i % 3 ? "yes" : "no"},${i % 3 ? "yes" : "no"}`).join("\n"),
    );
    const out = runJson(["--input", path, "--raters", "a,b,c"]);
    const notes = (out.notes as string[]).join("\n");
    // Below ROUGH_INTERVAL_UNITS (60; 30 before issue 36, item 8, whose coverage scan set it).
    expect(notes).toMatch(/12 units have two or more ratings \(of n = 12 units\): fewer than 60/);
    expect(notes).toMatch(/rater "a" gave the same value \(yes\) to all 12 units they rated/);
    expect(notes).toMatch(/raters "b" and "c" gave identical ratings on all 12 units both rated/);
  });

  it("n < 60 counts the units with two or more ratings: 40 rows, 25 rated only once", () => {
    // 15 units rated by both raters, 25 by one of them: n = 40 units with a rating, 15 with two.
    const lines = Array.from({ length: 40 }, (_, i) =>
      i < 15 ? `${i},${i % 3 ? "x" : "y"},${i % 4 ? "x" : "y"}` : i % 2 ? `${i},x,` : `${i},,y`,
    );
    const out = runJson(["--input", csv("id,a,b\n" + lines.join("\n")), "--raters", "a,b"]);
    expect(out.n).toBe(40);
    const notes = (out.notes as string[]).join("\n");
    expect(notes).toMatch(/15 units have two or more ratings \(of n = 40 units\): fewer than 60, so every interval is rough/);
    // No note doubles its parentheses.
    for (const note of out.notes as string[]) expect(note, note).not.toMatch(/\([^()]*\(/);
  });

  it("--ci bootstrap on 10,000 rows draws patterns (multinomial), not 10,000 units per resample", () => {
    // Unit draws cost N per resample: above 100,000 units × resamples the command draws the pattern counts.
    const lines = Array.from({ length: 10_000 }, (_, i) => `${i},${"xyz"[i % 3]},${"xyz"[i % 5 ? i % 3 : Math.floor(i / 3) % 3]}`);
    const out = runJson(["--input", csv("id,a,b\n" + lines.join("\n")), "--raters", "a,b", "--ci", "bootstrap"]);
    expect((out.ciMethod as Record<string, string>).fleissKappa).toMatch(/multinomial over distinct rating patterns/);
    const small = generated(60, 3, ["a", "b", "c"], 0.6, 3);
    const few = runJson(["--input", small.path, "--raters", "r1,r2,r3", "--ci", "bootstrap", "--resamples", "400"]);
    expect((few.ciMethod as Record<string, string>).fleissKappa).not.toMatch(/multinomial/);
  });

  it("a perfect pair's note reads once, without nested parentheses", () => {
    const path = csv("id,a,b\n" + Array.from({ length: 20 }, (_, i) => `${i},${i % 2 ? "x" : "y"},${i % 2 ? "x" : "y"}`).join("\n"));
    const notes = runJson(["--input", path, "--raters", "a,b"]).notes as string[];
    expect(notes).toContain(
      "cohenKappa: interval not estimable: the asymptotic SE is 0 (the two raters agree perfectly, or a margin is degenerate)",
    );
    for (const note of notes) expect(note, note).not.toMatch(/\([^()]*\(/);
  });

  it("perfect agreement at n = 20: kappa's interval is not estimable (not [1, 1]); percent agreement gets a Wilson interval", () => {
    const path = csv("id,a,b\n" + Array.from({ length: 20 }, (_, i) => `${i},${i % 2 ? "x" : "y"},${i % 2 ? "x" : "y"}`).join("\n"));
    const out = runJson(["--input", path, "--raters", "a,b"]);
    expect(out.cohenKappa).toBe(1);
    expect(out.cohenKappaCI).toBeNull();
    expect((out.ciMethod as Record<string, string>).cohenKappa).toMatch(/^not estimable: the asymptotic SE is 0/);
    // Wilson 20/20 (Newcombe 1998 method 3): [0.8389, 1].
    const pa = out.percentAgreementCI as number[];
    expect(pa[0]).toBeCloseTo(0.83887, 4);
    expect(pa[1]).toBe(1);
    // PABAK = 2·po − 1 from the same Wilson interval.
    expect((out.pabakCI as number[])[0]).toBeCloseTo(2 * 0.83887 - 1, 4);
  });

  it("an analytic interval that crosses 1 is clipped to [−1, 1] and says so", () => {
    // 25 units, one disagreement: kappa = 0.92, FCE SE ≈ 0.077 → upper bound 1.07 before clipping.
    const lines = Array.from({ length: 25 }, (_, i) => `${i},${i < 12 ? "x" : "y"},${i < 12 || i === 24 ? "x" : "y"}`);
    const out = runJson(["--input", csv("id,a,b\n" + lines.join("\n")), "--raters", "a,b", "--ci", "analytic"]);
    const ci = out.cohenKappaCI as number[];
    expect(ci[1]).toBe(1);
    expect((out.ciMethod as Record<string, string>).cohenKappa).toMatch(/clipped to \[-1, 1\]$/);
    expect((out.notes as string[]).some((s) => /^cohenKappa: the interval .*clipped to \[-1, 1\]/.test(s))).toBe(true);
  });

  it("reads quoted fields (commas, doubled quotes, newlines inside quotes) and blank lines as papaparse does", () => {
    const path = csv('"id","a; first","b"\r\n"1","say ""yes""",x\r\n\r\n2,"multi\nline",y\r\n3,"say ""yes""",x\r\n4,"multi\nline",x');
    const out = runJson(["--input", path, "--raters", "a; first,b"]);
    expect(out.n).toBe(4);
    // Rater "a; first" gave the two quoted values, rater b gave x and y.
    expect(out.categories).toEqual(["multi\nline", 'say "yes"', "x", "y"]);
  });

  it("continuous ratings: hundreds of distinct values work (bootstraps that need a values² table say why they are skipped); thousands are refused with advice", () => {
    const random = seededRandom(8);
    const rows = Array.from({ length: 500 }, (_, i) => {
      const x = Math.round(random() * 1000) / 100;
      return `${i},${x},${Math.round((x + random() - 0.5) * 100) / 100}`;
    });
    const out = runJson(["--input", csv("id,a,b\n" + rows.join("\n")), "--raters", "a,b", "--level", "interval"]);
    expect(out.pearson as number).toBeGreaterThan(0.9);
    expect(out.pearsonCI).not.toBeNull();
    expect((out.ciMethod as Record<string, string>).spearman).toMatch(
      /^not estimable: the bootstrap is not run for more than 300 distinct values/,
    );
    const many = Array.from({ length: 2500 }, (_, i) => `${i},${i / 7},${i / 7 + 1}`);
    const r = run(["--input", csv("id,a,b\n" + many.join("\n")), "--raters", "a,b", "--level", "interval"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^agreement: the ratings have 2525 distinct values in 2500 distinct rating patterns: too many to count as categories .*round the ratings/,
    );
  });

  it("npm run agreement (the cached esbuild bundle) prints exactly what tsx prints from the sources", () => {
    for (const args of [
      ["--input", fixture("two_raters_scores.csv"), "--raters", "ann_a,ann_b", "--level", "ordinal", "--format", "json"],
      ["--input", fixture("three_raters_labels.csv"), "--raters", "rater1,rater2,rater3", "--ci", "bootstrap"],
      ["--input", fixture("bad_number.csv"), "--raters", "a,b", "--level", "interval"],
    ]) {
      const viaTsx = runTsx(args);
      const viaNpm = run(args);
      expect(viaNpm).toEqual(viaTsx);
    }
  });
});

describe("npm run agreement: a rater who gave one category to every unit", () => {
  // The auditor's sample (issue 15): 38 units, rater a always "x", rater b drawn from x/y/z. With a
  // constant, p_e = Σ_k p_a,k p_b,k = p_b,x = p_o, so kappa is 0 by construction (by hand; scikit-learn
  // 1.2.1 cohen_kappa_score(a, b) = 0.0, with weights="quadratic" also 0.0) and so is every resample's.
  // Before: CI [−2.65e-9, 2.65e-9] (rounding left an SE of 1.35e-9), printed as [-0.0000, 0.0000].
  const B = "zxyxyyyzyxxyxyyzxzyyzxzxyxxxzzxyzxyzxz";
  const c1 = () => csv("id,a,b\n" + [...B].map((b, i) => `${i},x,${b}`).join("\n"));
  const REASON =
    /^not estimable: rater "a" gave one category to every unit, so kappa's chance agreement equals its observed agreement \(p_e = p_o\) and kappa is 0 by construction/;

  it("kappa is 0 and its interval is not estimable with the reason (analytic and bootstrap), not [−0, 0]", () => {
    for (const ci of ["analytic", "bootstrap"]) {
      const out = runJson(["--input", c1(), "--raters", "a,b", "--ci", ci]);
      expect(out.cohenKappa, ci).toBe(0);
      expect(out.cohenKappaCI, ci).toBeNull();
      expect((out.ciMethod as Record<string, string>).cohenKappa, ci).toMatch(REASON);
      expect((out.notes as string[]).some((s) => /^cohenKappa: interval not estimable: rater "a" gave one category/.test(s))).toBe(true);
      // AC1 is not degenerate: (pa − pe)/(1 − pe), pe = Σ π_k(1 − π_k)/(q − 1) with π = (44, 13, 19)/76,
      // pa = 14/38 (by hand, numpy): 0.16807297605473198, with an interval.
      expect(out.gwetAC1 as number).toBeCloseTo(0.16807297605473198, 12);
      expect(out.gwetAC1CI).not.toBeNull();
    }
    const table = run(["--input", c1(), "--raters", "a,b"]).stdout;
    expect(table).not.toMatch(/-0\.0000/);
    expect(table).toMatch(/^cohenKappa +0\.0000 +38 +not estimable: rater "a" gave one category/m);
  });

  it("weighted kappa too; PABAK keeps its interval; Pearson, Spearman and Kendall are undefined with the reason", () => {
    // Yes/No, rater a always "yes" (the auditor's const2.csv, 40 units): PABAK = 2·19/40 − 1 = −0.05 is not
    // degenerate (2·Wilson(19, 40) − 1). Ordinal numeric: rater a always 3, b on 1–5.
    const yn = "yynnyynnyynnnyyynyyyynynnnnnnynyyynynnnn";
    const path = csv("id,a,b\n" + [...yn].map((v, i) => `${i},yes,${v === "y" ? "yes" : "no"}`).join("\n"));
    const out = runJson(["--input", path, "--raters", "a,b"]);
    expect(out.cohenKappa).toBe(0);
    expect(out.cohenKappaCI).toBeNull();
    expect(out.pabak as number).toBeCloseTo(2 * (yn.split("").filter((v) => v === "y").length / 40) - 1, 12);
    const w = wilsonCI(19, 40);
    expect((out.pabakCI as number[])[0]).toBeCloseTo(2 * w[0] - 1, 12);
    const scores = "31452 51324 22514 41353 12544 35211 43525 13254".replace(/ /g, "");
    const num = csv("id,a,b\n" + [...scores].map((v, i) => `${i},3,${v}`).join("\n"));
    for (const ci of ["analytic", "bootstrap"]) {
      const o = runJson(["--input", num, "--raters", "a,b", "--level", "interval", "--ci", ci]);
      const methods = o.ciMethod as Record<string, string>;
      for (const k of ["cohenKappa", "cohenKappaLinear", "cohenKappaQuadratic"]) {
        expect(o[k], `${k} ${ci}`).toBe(0);
        expect(o[`${k}CI`], `${k} ${ci}`).toBeNull();
        expect(methods[k], `${k} ${ci}`).toMatch(REASON);
      }
      for (const k of ["pearson", "spearman", "kendallTauB"]) {
        expect(o[k], k).toBeNull();
        expect(methods[k], k).toBe(
          'not estimable: rater "a" gave one value to every unit: a correlation with a constant is undefined (zero variance)',
        );
      }
      expect(o.krippendorffAlphaCI, ci).not.toBeNull();
    }
  });

  it("three raters, one constant: the pooled-pairs kappa is not degenerate and keeps its interval", () => {
    const rows = Array.from({ length: 40 }, (_, i) => `${i},yes,${i % 2 ? "yes" : "no"},${i % 4 < 2 ? "yes" : "no"}`);
    const out = runJson(["--input", csv("id,a,b,c\n" + rows.join("\n")), "--raters", "a,b,c"]);
    expect(out.pooledKappaCI).not.toBeNull();
  });
});

// ─── Bootstraps against independent computations (issue 15) ────────────────

/**
 * The test's own percentile bootstrap over units, written from the definitions and sharing
 * nothing with app/stats but the seeded generator (which fixes the draws): each resample draws
 * N unit indices ⌊u·N⌋ with replacement (Efron & Tibshirani 1993, ch. 6), the statistic is
 * recomputed on the drawn units, undefined resamples are left out, and the limits are the
 * (B + 1)·α/2-th and (B + 1)·(1 − α/2)-th order statistics, interpolated (Davison & Hinkley 1997,
 * §5.2; numpy.percentile(method="weibull")).
 */
function independentBootstrap<T>(units: T[], stat: (sample: T[]) => number, seed: number, B: number) {
  const random = seededRandom(seed);
  const N = units.length;
  const values: number[] = [];
  for (let b = 0; b < B; b++) {
    const sample: T[] = [];
    for (let i = 0; i < N; i++) sample.push(units[Math.floor(random() * N)]);
    const v = stat(sample);
    if (Number.isFinite(v)) values.push(v);
  }
  values.sort((x, y) => x - y);
  const weibull = (p: number) => {
    const h = Math.min(values.length, Math.max(1, (values.length + 1) * p));
    const lo = Math.floor(h);
    return values[lo - 1] + (h - lo) * (values[Math.min(lo, values.length - 1)] - values[lo - 1]);
  };
  return { ci: [weibull(0.025), weibull(0.975)], defined: values.length };
}

/**
 * Gwet's AC1 from rows of ratings (null = missing), from its definition (Gwet 2008, eqs. 17–18;
 * Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., §4.2): p_a is the mean over units with
 * two or more ratings of Σ_k r_ik(r_ik − 1) / (r_i(r_i − 1)); π_k the mean over rated units of
 * r_ik / r_i; p_e = Σ_k π_k(1 − π_k) / (q − 1) with q the number of categories of `scale`.
 */
function ac1ByDefinition(rows: (string | null)[][], scale: string[]): number {
  const q = scale.length;
  const pi = new Array<number>(q).fill(0);
  let pa = 0;
  let n1 = 0;
  let n2 = 0;
  for (const row of rows) {
    const rated = row.filter((v): v is string => v !== null);
    if (rated.length === 0) continue;
    n1++;
    const r = rated.length;
    const c = scale.map((k) => rated.filter((v) => v === k).length);
    c.forEach((ck, k) => (pi[k] += ck / r));
    if (r >= 2) {
      n2++;
      pa += c.reduce((s, ck) => s + ck * (ck - 1), 0) / (r * (r - 1));
    }
  }
  pa /= n2;
  const pe = pi.reduce((s, p) => s + (p / n1) * (1 - p / n1), 0) / (q - 1);
  return (pa - pe) / (1 - pe);
}

/** Pearson's r of the pairs with both values, from its definition (sample covariance over the product of the SDs). */
function pearsonByDefinition(pairs: [number | null, number | null][]): number {
  const both = pairs.filter((p): p is [number, number] => p[0] !== null && p[1] !== null);
  const n = both.length;
  const mx = both.reduce((s, p) => s + p[0], 0) / n;
  const my = both.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of both) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

describe("npm run agreement: bootstraps against independent computations", () => {
  it("Gwet's AC1 bootstrap keeps q fixed by the declared scale when resamples miss a category (--categories)", () => {
    // 40 units, two raters on a declared 1–5 scale: 4 is used by one unit only and 5 by nobody, so
    // about e^−1 ≈ 37% of the resamples miss category 4 and every one misses 5. With 40 units ×
    // 1,000 resamples the command draws units one by one (as the test's bootstrap does, same seed).
    const scale = ["1", "2", "3", "4", "5"];
    const random = seededRandom(21);
    const rows: (string | null)[][] = [];
    for (let u = 0; u < 40; u++) {
      if (u === 17) {
        rows.push(["4", "4"]);
        continue;
      }
      const t = ["1", "2", "3"][Math.floor(random() * 3)];
      const other = () => ["1", "2", "3"][Math.floor(random() * 3)];
      rows.push([random() < 0.75 ? t : other(), random() < 0.75 ? t : other()]);
    }
    rows[5][1] = null; // one unit rated once: kept in n and in the draws, adds no pair
    const path = csv("id,a,b\n" + rows.map((r, u) => `u${u},${r[0] ?? ""},${r[1] ?? ""}`).join("\n") + "\n");
    const args = ["--input", path, "--raters", "a,b", "--categories", scale.join(","), "--ci", "bootstrap", "--seed", "13"];
    const out = runJson([...args, "--resamples", "1000"]);
    expect(out.n).toBe(40);
    expect(out.gwetAC1).toBeCloseTo(ac1ByDefinition(rows, scale), 12);
    const fixed = independentBootstrap(rows, (s) => ac1ByDefinition(s, scale), 13, 1000);
    const ci = out.gwetAC1CI as number[];
    expect(ci[0]).toBeCloseTo(fixed.ci[0], 12);
    expect(ci[1]).toBeCloseTo(fixed.ci[1], 12);
    expect((out.ciMethod as Record<string, string>).gwetAC1).toMatch(
      /^percentile bootstrap over units \(1000 resamples, seed 13, q = 5 categories fixed \(--categories\)\)$/,
    );
    // The test is sharp: many resamples miss category 4, and recomputing q from the categories each
    // resample uses (3 or 4 instead of 5) moves the interval well beyond rounding.
    let missing4 = 0;
    const r2 = seededRandom(13);
    for (let b = 0; b < 1000; b++) {
      let has4 = false;
      for (let i = 0; i < 40; i++) if (Math.floor(r2() * 40) === 17) has4 = true;
      if (!has4) missing4++;
    }
    expect(missing4).toBeGreaterThan(250);
    const inUse = independentBootstrap(
      rows,
      (s) =>
        ac1ByDefinition(
          s,
          scale.filter((k) => s.some((r) => r.includes(k))),
        ),
      13,
      1000,
    );
    expect(Math.abs(inUse.ci[0] - ci[0]) + Math.abs(inUse.ci[1] - ci[1])).toBeGreaterThan(0.02);
    // Without --categories, q is the 4 categories of the file (5 is never used), also fixed in every resample.
    const undeclared = runJson(["--input", path, "--raters", "a,b", "--ci", "bootstrap", "--seed", "13", "--resamples", "1000"]);
    const four = independentBootstrap(rows, (s) => ac1ByDefinition(s, scale.slice(0, 4)), 13, 1000);
    expect((undeclared.gwetAC1CI as number[])[0]).toBeCloseTo(four.ci[0], 12);
    expect((undeclared.gwetAC1CI as number[])[1]).toBeCloseTo(four.ci[1], 12);
    expect((undeclared.ciMethod as Record<string, string>).gwetAC1).toMatch(/q = 4 categories fixed \(the categories in the file\)/);
  });

  it("Pearson's r with --ci bootstrap (units resampled) beside Fisher's z (--ci analytic), each against its own computation", () => {
    // Skewed 1–5 Likert scores (most 4s and 5s), 60 units, two with one score missing.
    const random = seededRandom(31);
    const skew = () => {
      const u = random();
      return u < 0.05 ? 1 : u < 0.1 ? 2 : u < 0.22 ? 3 : u < 0.55 ? 4 : 5;
    };
    const rows: [number | null, number | null][] = [];
    for (let u = 0; u < 60; u++) {
      const a = skew();
      const b = random() < 0.6 ? a : skew();
      rows.push([a, b]);
    }
    rows[3][0] = null;
    rows[44][1] = null;
    const path = csv("id,a,b\n" + rows.map((r, u) => `u${u},${r[0] ?? ""},${r[1] ?? ""}`).join("\n") + "\n");
    const base = ["--input", path, "--raters", "a,b", "--level", "interval", "--seed", "4"];
    const r = pearsonByDefinition(rows);
    // Fisher's z (Fisher 1921): tanh(atanh(r) ± 1.96 / √(n − 3)) over the n = 58 complete pairs.
    const analytic = runJson(base);
    expect(analytic.pearson).toBeCloseTo(r, 12);
    const z = Math.atanh(r);
    const half = 1.959963984540054 / Math.sqrt(58 - 3);
    expect((analytic.pearsonCI as number[])[0]).toBeCloseTo(Math.tanh(z - half), 12);
    expect((analytic.pearsonCI as number[])[1]).toBeCloseTo(Math.tanh(z + half), 12);
    expect((analytic.ciMethod as Record<string, string>).pearson).toBe("Fisher z interval");
    expect(analytic.used).toMatchObject({ pearson: { units: 58 } });
    // The bootstrap resamples the 60 rated units (units × resamples = 60,000: drawn one by one, as the test draws them).
    const boot = runJson([...base, "--ci", "bootstrap", "--resamples", "1000"]);
    expect(boot.pearson).toBeCloseTo(r, 12);
    const expected = independentBootstrap(rows, pearsonByDefinition, 4, 1000);
    const ci = boot.pearsonCI as number[];
    expect(ci[0]).toBeCloseTo(expected.ci[0], 12);
    expect(ci[1]).toBeCloseTo(expected.ci[1], 12);
    expect((boot.ciMethod as Record<string, string>).pearson).toMatch(/^percentile bootstrap over units \(1000 resamples, seed 4\)$/);
    // On skewed scores the two intervals differ (the bootstrap is not a re-labelled Fisher interval).
    const fisher = analytic.pearsonCI as number[];
    expect(Math.abs(ci[0] - fisher[0]) + Math.abs(ci[1] - fisher[1])).toBeGreaterThan(0.01);
  });
});

describe("npm run agreement: percent agreement of three or more raters", () => {
  it("Gwet's SE of the mean per-unit agreement (--ci analytic) and the unit bootstrap (--ci bootstrap), each against its own computation", () => {
    // 50 units × 3 raters, a few with a rating missing and one rated once (it counts in n, not in the agreement).
    const random = seededRandom(12);
    const cats = ["a", "b", "c"];
    const rows: (string | null)[][] = [];
    for (let u = 0; u < 50; u++) {
      const t = cats[Math.floor(random() * 3)];
      rows.push([0, 1, 2].map(() => (random() < 0.6 ? t : cats[Math.floor(random() * 3)])));
    }
    rows[4][2] = null;
    rows[19][0] = null;
    rows[33][1] = null;
    rows[40] = ["b", null, null];
    const path = csv("id,r1,r2,r3\n" + rows.map((r, u) => `u${u},${r.map((v) => v ?? "").join(",")}`).join("\n") + "\n");
    // Per unit with two or more ratings, the share of agreeing ordered rater pairs Σ_k r_k(r_k − 1) / (r(r − 1))
    // (Gwet 2014, eq. 2.6); percent agreement is their mean.
    const shares = (units: (string | null)[][]) =>
      units.flatMap((row) => {
        const rated = row.filter((v) => v !== null);
        const r = rated.length;
        if (r < 2) return [];
        return [
          cats.reduce((s, k) => s + rated.filter((v) => v === k).length * (rated.filter((v) => v === k).length - 1), 0) / (r * (r - 1)),
        ];
      });
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const x = shares(rows);
    expect(x).toHaveLength(49);
    const pa = mean(x);
    // Gwet (2014, §5.3): the SE of pa is the SE of a mean of the per-unit shares, sd / √n.
    const se = Math.sqrt(x.reduce((s, v) => s + (v - pa) ** 2, 0) / (x.length * (x.length - 1)));
    const out = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "analytic"]);
    expect(out.n).toBe(50);
    expect(out.used).toMatchObject({ percentAgreement: { units: 49 } });
    expect(out.percentAgreement).toBeCloseTo(pa, 12);
    const ci = out.percentAgreementCI as number[];
    expect(ci[0]).toBeCloseTo(pa - 1.959963984540054 * se, 12);
    expect(ci[1]).toBeCloseTo(pa + 1.959963984540054 * se, 12);
    // The Wilson interval over the shares (the method before issue 15) treats each share as a 0/1 outcome:
    // its variance p(1 − p) exceeds the shares' variance, so it was wider (1.28× on these data).
    const wilson = wilsonCI(pa * x.length, x.length);
    expect((wilson[1] - wilson[0]) / (ci[1] - ci[0])).toBeGreaterThan(1.2);
    // --ci bootstrap: the 50 rated units resampled (50 × 1,000 draws: one by one, as the test draws them).
    const boot = runJson(["--input", path, "--raters", "r1,r2,r3", "--ci", "bootstrap", "--seed", "6", "--resamples", "1000"]);
    const expected = independentBootstrap(rows, (s) => mean(shares(s)), 6, 1000);
    expect((boot.percentAgreementCI as number[])[0]).toBeCloseTo(expected.ci[0], 12);
    expect((boot.percentAgreementCI as number[])[1]).toBeCloseTo(expected.ci[1], 12);
    expect((boot.ciMethod as Record<string, string>).percentAgreement).toMatch(
      /^percentile bootstrap over units \(1000 resamples, seed 6\)$/,
    );
  });
});
