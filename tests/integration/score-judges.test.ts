/**
 * Issue 41: score judges meta-evaluated on their own scale, through the real import presets, the
 * report engine (the judges page's figures), its CSV, `npm run export` and `npm run judge-agreement`.
 *
 * The data (tests/fixtures/judge/stories.ts): 8 prompts × 4 systems, two workers' 1–5 Relevance per
 * story, three judges — averaged scores with 0 and −1, a 1–10 judge, and a judge with many ties.
 * Every expected figure is computed in this file from those rows (the definitions written out
 * below), never read from the code under test.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { runScript } from "../support/cli";
import { setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { judgeReportFor } from "../../app/reports/report.server";
import { seededRandom } from "../../app/stats/seededRandom";
import { loader as csvLoader } from "../../app/routes/p.$slug.reports.$taskId.csv";
import { IMPORT_MAPPINGS, JUDGES, PROMPTS, STORIES, W1, W2, writeStoryFiles } from "../fixtures/judge/stories";

const ROOT = path.resolve(__dirname, "../..");
/** `npm run judge-agreement` as it runs (scripts/judge-agreement-cli.mjs, the cached esbuild bundle). */
function judgeCli(argv: string[]) {
  const r = spawnSync(process.execPath, ["scripts/judge-agreement-cli.mjs", ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const { file: dbFile, db } = useTempDatabase();
const dir = tempDir();
const files = writeStoryFiles(dir);

async function importStories(slug: string) {
  const steps = [
    { preset: "items-csv", file: files.items, mapping: IMPORT_MAPPINGS.items },
    { preset: "responses", file: files.stories, mapping: IMPORT_MAPPINGS.stories },
    { preset: "labels-long", file: files.ratings, mapping: IMPORT_MAPPINGS.ratings, level: "interval" as const },
    { preset: "verdicts", file: files.verdicts, mapping: IMPORT_MAPPINGS.verdicts },
  ];
  const out = [];
  for (const s of steps) {
    const r = await runImport({ databaseFile: dbFile, projectSlug: slug, ...s });
    expect(r.errors, s.preset).toEqual([]);
    out.push(r);
  }
  const c = db().$client;
  const projectId = (c.prepare("select id from projects where slug = ?").get(slug) as { id: number }).id;
  const taskId = (c.prepare("select id from tasks where project_id = ? and kind = 'imported-labels'").get(projectId) as { id: number }).id;
  return { projectId, taskId, verdicts: out[3] };
}

/** Out of the humans' 1–5 scale, per judge, counted here from the fixture. */
const outOfScale = (j: string) => JUDGES[j].filter((x) => x < 1 || x > 5).length;

describe("item 1: numeric judge scores on an interval task are kept", () => {
  let projectId = 0;
  let taskId = 0;
  let summary: Awaited<ReturnType<typeof importStories>>["verdicts"];
  beforeAll(async () => {
    ({ projectId, taskId, verdicts: summary } = await importStories("stories"));
  });

  it("fractional, zero and negative scores are stored as scores, none unparsed; the out-of-scale ones counted per judge in a warning", () => {
    expect(W1).toHaveLength(STORIES.length);
    expect(W2).toHaveLength(STORIES.length);
    expect(summary.verdicts).toBe(3 * STORIES.length);
    const c = db().$client;
    const rows = c
      .prepare(
        "select j.name as judge, v.score, v.parse_status as status from verdicts v join judges j on j.id = v.judge_id where j.project_id = ? order by v.id",
      )
      .all(projectId) as { judge: string; score: number | null; status: string }[];
    for (const j of Object.keys(JUDGES)) {
      const mine = rows.filter((r) => r.judge === j);
      expect(mine.map((r) => r.status)).toEqual(STORIES.map(() => "ok"));
      expect(mine.map((r) => r.score)).toEqual(JUDGES[j]);
    }
    // avg-judge: 0, −1, 0 (three); ten-judge: its scores above 5 (20); tie-judge: none.
    expect([outOfScale("avg-judge"), outOfScale("ten-judge"), outOfScale("tie-judge")]).toEqual([3, 20, 0]);
    const messages = summary.warnings.map((w) => w.message);
    expect(messages).toContain(
      'judge "avg-judge": 3 scores outside the human scale 1–5 (the first, 0, at row 8); kept as scores, in every figure',
    );
    expect(messages).toContain(
      `judge "ten-judge": 20 scores outside the human scale 1–5 (the first, 7, at row ${2 + STORIES.length}); kept as scores, in every figure`,
    );
    expect(messages.filter((m) => m.includes("tie-judge"))).toEqual([]);
  });

  it("the judges page's n is every scored story for every judge (none dropped)", async () => {
    const report = (await judgeReportFor(projectId, taskId, { rule: "mean", delta: 0.05 }))!;
    const rows = report.tables.judges.rows;
    for (const j of Object.keys(JUDGES)) {
      const row = rows.find((r) => r.judge === j)!;
      expect([row.judge, row.n, row.unparsed]).toEqual([j, STORIES.length, 0]);
    }
  });

  it("unit-verdicts on a labels-wide interval task: every score kept, n = every scored unit, the same warning", async () => {
    const labels = await runImport({
      databaseFile: dbFile,
      projectSlug: "stories-wide",
      preset: "labels-wide",
      file: files.labelsWide,
      annotators: ["w1", "w2"],
      mapping: { unit: "Story ID" },
      level: "interval",
    });
    expect(labels.errors).toEqual([]);
    const v = await runImport({
      databaseFile: dbFile,
      projectSlug: "stories-wide",
      preset: "unit-verdicts",
      file: files.verdictsLong,
      mapping: { unit: "Story ID", verdict: "Relevance" },
    });
    expect(v.errors).toEqual([]);
    expect(v.verdicts).toBe(3 * STORIES.length);
    expect(v.warnings.map((w) => w.message)).toContain(
      'judge "avg-judge": 3 scores outside the human scale 1–5 (the first, 0, at row 8); kept as scores, in every figure',
    );
    const c = db().$client;
    const pid = (c.prepare("select id from projects where slug = 'stories-wide'").get() as { id: number }).id;
    const tid = (c.prepare("select id from tasks where project_id = ?").get(pid) as { id: number }).id;
    const report = (await judgeReportFor(pid, tid, { rule: "mean", delta: 0.05 }))!;
    for (const j of Object.keys(JUDGES))
      expect(report.tables.judges.rows.find((r) => r.judge === j)).toMatchObject({ n: STORIES.length, unparsed: 0 });
  });
});

// ─── Independent computations: the definitions written out ───────────────────────────────

const HUMAN = STORIES.map((_, i) => (W1[i] + W2[i]) / 2);
const sign = (x: number) => (x > 0 ? 1 : x < 0 ? -1 : 0);
/** Pairs within a prompt: [sign of the human difference, sign of the judge difference]. */
function signPairs(judge: number[], prompts: readonly string[] = PROMPTS) {
  const out: [number, number][] = [];
  for (const p of prompts) {
    const idx = STORIES.map((s, i) => (s.prompt === p ? i : -1)).filter((i) => i >= 0);
    for (let a = 0; a < idx.length; a++)
      for (let b = a + 1; b < idx.length; b++) out.push([sign(HUMAN[idx[a]] - HUMAN[idx[b]]), sign(judge[idx[a]] - judge[idx[b]])]);
  }
  return out;
}
/** The three consistencies and their pair counts. */
function consistency(pairs: [number, number][]) {
  const exclTies = pairs.filter(([h, g]) => h !== 0 && g !== 0);
  const humanDiffer = pairs.filter(([h]) => h !== 0);
  const share = (ps: [number, number][]) => (ps.length ? ps.filter(([h, g]) => h === g).length / ps.length : NaN);
  return {
    tiesCounted: share(pairs),
    tiesExcluded: share(exclTies),
    humanDiffering: share(humanDiffer),
    pairs: pairs.length,
    pairsTiesExcluded: exclTies.length,
    pairsHumanDiffering: humanDiffer.length,
  };
}
function pearsonR(x: number[], y: number[]) {
  const mx = x.reduce((s, v) => s + v, 0) / x.length;
  const my = y.reduce((s, v) => s + v, 0) / y.length;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  x.forEach((v, i) => {
    sxy += (v - mx) * (y[i] - my);
    sxx += (v - mx) ** 2;
    syy += (y[i] - my) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}
/** Percentile limit by Hyndman & Fan type 6: the (B+1)p-th order statistic, interpolated. */
function type6(sorted: number[], p: number) {
  const h = Math.min(Math.max((sorted.length + 1) * p, 1), sorted.length);
  const lo = Math.floor(h);
  return sorted[lo - 1] + (h - lo) * (sorted[Math.min(lo, sorted.length - 1)] - sorted[lo - 1]);
}
/**
 * The cluster bootstrap by hand: B resamples, each 8 prompts drawn with replacement (prompt
 * ⌊U·8⌋, U from seededRandom(seed), prompts in order of first appearance); each statistic
 * recomputed over all pairs (and stories) of the drawn prompts; 2.5% and 97.5% type-6 limits.
 */
function bootstrapByHand(judge: number[], seed: number, B = 1000) {
  const random = seededRandom(seed);
  const stats: Record<"tiesCounted" | "tiesExcluded" | "humanDiffering" | "pearson", number[]> = {
    tiesCounted: [],
    tiesExcluded: [],
    humanDiffering: [],
    pearson: [],
  };
  for (let b = 0; b < B; b++) {
    const drawn = PROMPTS.map(() => PROMPTS[Math.floor(random() * PROMPTS.length)]);
    const c = consistency(drawn.flatMap((p) => signPairs(judge, [p])));
    const rows = drawn.flatMap((p) => STORIES.map((s, i) => (s.prompt === p ? i : -1)).filter((i) => i >= 0));
    const r = pearsonR(
      rows.map((i) => judge[i]),
      rows.map((i) => HUMAN[i]),
    );
    for (const [k, v] of [
      ["tiesCounted", c.tiesCounted],
      ["tiesExcluded", c.tiesExcluded],
      ["humanDiffering", c.humanDiffering],
      ["pearson", r],
    ] as const)
      if (Number.isFinite(v)) stats[k].push(v);
  }
  const ci = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return [type6(s, 0.025), type6(s, 0.975)];
  };
  return {
    tiesCounted: ci(stats.tiesCounted),
    tiesExcluded: ci(stats.tiesExcluded),
    humanDiffering: ci(stats.humanDiffering),
    pearson: ci(stats.pearson),
  };
}

type ScoreRow = {
  judge: string;
  n: number;
  outOfScale: number;
  pearson: number;
  pearsonCI: [number, number];
  consistencyTiesCounted: number;
  consistencyTiesCountedCI: [number, number] | null;
  consistencyTiesExcluded: number;
  consistencyTiesExcludedCI: [number, number] | null;
  consistencyHumanDiffering: number;
  consistencyHumanDifferingCI: [number, number] | null;
  pairs: number;
  pairsTiesExcluded: number;
  pairsHumanDiffering: number;
  intervalNotes: Record<string, string>;
};

describe("items 2 and 3: three consistencies, their pair counts and cluster-bootstrap intervals, alike everywhere", () => {
  const CLI = [
    "--labels",
    files.labelsWide,
    "--annotators",
    "w1,w2",
    "--verdicts",
    files.verdictsLong,
    "--map",
    "unit=Story ID",
    "--verdicts-map",
    "verdict=Relevance",
    "--level",
    "interval",
    "--group",
    "Prompt ID",
  ];
  let projectId = 0;
  let taskId = 0;
  let seed = 0;
  let cookie = "";
  beforeAll(async () => {
    ({ projectId, taskId } = await importStories("stories-pairs"));
    seed = (db().$client.prepare("select seed from tasks where id = ?").get(taskId) as { seed: number }).seed;
    const u = await makeUser();
    await setMembership(projectId, u.id, "researcher");
    cookie = await signInCookie(u.email, u.password);
  });

  it("npm run judge-agreement --level interval --group: the definitions' figures and pair counts, the by-hand bootstrap's intervals", () => {
    const r = judgeCli([...CLI, "--seed", "7", "--format", "json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { judges: ScoreRow[]; groups: number; units: number; scale: number[]; reference: string };
    expect([out.units, out.groups, out.scale, out.reference]).toEqual([32, 8, [1, 5], "mean"]);
    for (const j of Object.keys(JUDGES)) {
      const row = out.judges.find((x) => x.judge === j)!;
      const want = consistency(signPairs(JUDGES[j]));
      // 8 prompts × C(4, 2) = 48 pairs.
      expect([row.n, row.outOfScale, row.pairs, row.pairsTiesExcluded, row.pairsHumanDiffering]).toEqual([
        32,
        outOfScale(j),
        48,
        want.pairsTiesExcluded,
        want.pairsHumanDiffering,
      ]);
      expect(row.consistencyTiesCounted).toBeCloseTo(want.tiesCounted, 14);
      expect(row.consistencyTiesExcluded).toBeCloseTo(want.tiesExcluded, 14);
      expect(row.consistencyHumanDiffering).toBeCloseTo(want.humanDiffering, 14);
      expect(row.pearson).toBeCloseTo(pearsonR(JUDGES[j], HUMAN), 12);
      const boot = bootstrapByHand(JUDGES[j], 7);
      expect(row.pearsonCI[0]).toBeCloseTo(boot.pearson[0], 12);
      expect(row.pearsonCI[1]).toBeCloseTo(boot.pearson[1], 12);
      for (const [key, k] of [
        ["consistencyTiesCountedCI", "tiesCounted"],
        ["consistencyTiesExcludedCI", "tiesExcluded"],
        ["consistencyHumanDifferingCI", "humanDiffering"],
      ] as const) {
        const [lo, hi] = boot[k];
        if (hi - lo < 1e-12) {
          // Every resample gives the same share (a judge that never contradicts the humans): no interval, and a note.
          expect(row[key]).toBeNull();
          expect(row.intervalNotes[key]).toMatch(/^not estimable: /);
        } else {
          expect(row[key]![0]).toBeCloseTo(lo, 12);
          expect(row[key]![1]).toBeCloseTo(hi, 12);
        }
      }
    }
    // The three definitions differ on this data (the tie judge most).
    const tie = consistency(signPairs(JUDGES["tie-judge"]));
    expect(new Set([tie.tiesCounted, tie.tiesExcluded, tie.humanDiffering]).size).toBe(3);
    // The table names the figures as the page does.
    const t = judgeCli(CLI);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(
      /Consistency \(ties counted\) \[95% CI\] +Pairs +Consistency \(ties excluded\) \[95% CI\] +Pairs \(ties excluded\) +Consistency \(humans differ\) \[95% CI\] +Pairs \(humans differ\)/,
    );
  });

  it("the judges page, its CSV and npm run export give the command's figures (same seed, the prompts as groups)", async () => {
    const cli = JSON.parse(judgeCli([...CLI, "--seed", String(seed), "--format", "json"]).stdout) as { judges: ScoreRow[] };
    const report = (await judgeReportFor(projectId, taskId, { rule: "mean", delta: 0.05 }))!;
    const rows = report.tables.judges.rows;
    for (const j of cli.judges) {
      const p = rows.find((r) => r.judge === j.judge)!;
      expect([p.n, p.outOfScale, p.pairs, p.pairsTiesExcluded, p.pairsHumanDiffering]).toEqual([
        j.n,
        j.outOfScale,
        j.pairs,
        j.pairsTiesExcluded,
        j.pairsHumanDiffering,
      ]);
      expect(p.pearson as number).toBeCloseTo(j.pearson, 12);
      expect(p.consistencyTiesCounted).toBe(j.consistencyTiesCounted);
      expect(p.consistencyHumanDiffering).toBe(j.consistencyHumanDiffering);
      expect(p.consistencyHumanDifferingCi).toEqual(j.consistencyHumanDifferingCI);
      expect((p.pearsonCi as number[])[0]).toBeCloseTo(j.pearsonCI[0], 12);
    }
    const res = await run(
      csvLoader,
      args(get(`/p/stories-pairs/reports/${taskId}/csv?table=judges&rule=mean`, cookie), { slug: "stories-pairs", taskId: String(taskId) }),
    );
    expect(res.status).toBe(200);
    const csv = Papa.parse<Record<string, string>>(await res.text(), { header: true, skipEmptyLines: true }).data;
    const avg = cli.judges.find((j) => j.judge === "avg-judge")!;
    const row = csv.find((r) => r.Judge === "avg-judge")!;
    expect(Number(row["Consistency (humans differ)"])).toBe(avg.consistencyHumanDiffering);
    expect(Number(row["Consistency (humans differ) 95% CI low"])).toBe(avg.consistencyHumanDifferingCI![0]);
    expect(Number(row["Pairs (humans differ)"])).toBe(avg.pairsHumanDiffering);
    expect(Number(row["Consistency (ties excluded)"])).toBe(avg.consistencyTiesExcluded);
    expect(Number(row["Pairs (ties excluded)"])).toBe(avg.pairsTiesExcluded);
    expect(Number(row["Out of scale"])).toBe(3);

    const ex = await runScript("export", ["--project", "stories-pairs", "--what", "judge-agreement"], { DATABASE_URL: dbFile });
    expect(ex.err).toBe("");
    expect(ex.code).toBe(0);
    const exported = Papa.parse<Record<string, string>>(ex.out, { header: true, skipEmptyLines: true }).data;
    const e = exported.find((r) => r.judge === "avg-judge")!;
    expect(e).toMatchObject({ score_reference: "mean", score_n: "32", out_of_scale: "3", pairs: "48" });
    expect(Number(e.consistency_ties_counted)).toBe(avg.consistencyTiesCounted);
    expect(Number(e.consistency_human_differing_ci_high)).toBe(avg.consistencyHumanDifferingCI![1]);
    expect(Number(e.pairs_ties_excluded)).toBe(avg.pairsTiesExcluded);
  });
});

describe("item 5: the planner, alike on the judges page and in npm run judge-agreement --delta", () => {
  it("the same figures, n needed and n for 80% assurance, for δ = 0.1", async () => {
    const { projectId, taskId } = await importStories("stories-plan");
    const seed = (db().$client.prepare("select seed from tasks where id = ?").get(taskId) as { seed: number }).seed;
    const page = (await judgeReportFor(projectId, taskId, { rule: "mean", delta: 0.1 }))!.tables.planner;
    expect(page.note).toMatch(/about ±δ on average.*with probability 0\.8/);
    const r = judgeCli([
      ...["--labels", files.labelsWide, "--annotators", "w1,w2", "--verdicts", files.verdictsLong],
      ...["--map", "unit=Story ID", "--verdicts-map", "verdict=Relevance", "--level", "interval", "--group", "Prompt ID"],
      ...["--delta", "0.1", "--seed", String(seed), "--format", "json"],
    ]);
    expect(r.code).toBe(0);
    const cli = JSON.parse(r.stdout).planner as Record<string, unknown>[];
    const key = (x: Record<string, unknown>) => [x.target, x.n, x.needed, x.neededAssured, x.basis];
    // The page lists judges by rank (Pearson), the command by name: the same rows.
    const byTarget = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    expect(page.rows.map(key).sort(byTarget)).toEqual(cli.map(key).sort(byTarget));
    // Pearson and the three consistencies per judge (the ones with an interval); assurance asks for more.
    expect(cli.map((x) => x.target)).toContain("avg-judge consistency (humans differ)");
    for (const x of cli) expect(x.neededAssured as number).toBeGreaterThanOrEqual(x.needed as number);
  });
});

describe("item 4: imports mark variants", () => {
  it("a variant_of column, or --variant-of JUDGE=BASE for judges the file does not mark, lands in the judge's settings", async () => {
    const marked = writeStoryFiles(tempDir(), Object.keys(JUDGES), { "tie-judge": "avg-judge" });
    for (const s of [
      { preset: "items-csv", file: marked.items, mapping: IMPORT_MAPPINGS.items },
      { preset: "responses", file: marked.stories, mapping: IMPORT_MAPPINGS.stories },
      { preset: "labels-long", file: marked.ratings, mapping: IMPORT_MAPPINGS.ratings, level: "interval" as const },
    ])
      expect((await runImport({ databaseFile: dbFile, projectSlug: "variants", ...s })).errors).toEqual([]);
    const r = await runScript(
      "import",
      [
        "--preset",
        "verdicts",
        "--project",
        "variants",
        "--variant-of",
        "ten-judge=avg-judge",
        ...Object.entries(IMPORT_MAPPINGS.verdicts).flatMap(([k, v]) => ["--map", `${k}=${v}`]),
        marked.verdicts,
      ],
      { DATABASE_URL: dbFile },
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const c = db().$client;
    const settings = Object.fromEntries(
      (
        c.prepare("select j.name, j.settings from judges j join projects p on p.id = j.project_id where p.slug = 'variants'").all() as {
          name: string;
          settings: string;
        }[]
      ).map((j) => [j.name, JSON.parse(j.settings)]),
    );
    expect(settings).toEqual({ "avg-judge": {}, "ten-judge": { variantOf: "avg-judge" }, "tie-judge": { variantOf: "avg-judge" } });
    const pid = (c.prepare("select id from projects where slug = 'variants'").get() as { id: number }).id;
    const tid = (c.prepare("select id from tasks where project_id = ?").get(pid) as { id: number }).id;
    const ablation = (await judgeReportFor(pid, tid, { rule: "mean", delta: 0.05 }))!.tables.ablation.rows;
    expect(ablation.map((a) => [a.base, a.judge])).toEqual([
      ["avg-judge", "avg-judge"],
      ["avg-judge", "ten-judge"],
      ["avg-judge", "tie-judge"],
    ]);
  });

  it("two bases for one judge in a file are refused with both rows", async () => {
    const f = path.join(tempDir(), "two-bases.csv");
    fs.writeFileSync(f, "Prompt ID,Story ID,judge,Relevance,variant_of\np1,p1-gpt2,x-judge,3,avg-judge\np1,p1-bart,x-judge,4,ten-judge\n");
    const r = await runImport({
      databaseFile: dbFile,
      projectSlug: "variants",
      preset: "verdicts",
      file: f,
      mapping: IMPORT_MAPPINGS.verdicts,
    });
    expect(r.errors.map((e) => `row ${e.row}, ${e.field}: ${e.message}`)).toEqual([
      'row 3, variant_of: judge "x-judge" is a variant of "avg-judge" at row 2, of "ten-judge" here',
    ]);
    expect(r.committed).toBe(false);
  });
});
