/**
 * A run's results and its calibration read the same on SQLite and on PostgreSQL (issue 17).
 *
 * On SQLite, through the real import presets and the local fake OpenAI-compatible endpoint: a guided RefineBench
 * run (two target models, two judges) with a calibration task whose units two annotators label through
 * saveAnnotation (they disagree on some units: splits), and a C3EBench run with a writing-quality calibration task
 * scored 1–10. The database is then copied to a throw-away PostgreSQL database with copyDatabase (db/copy.ts), and
 * every reader of the run's results page and run page — runResultsAll, runResults, calibratedScores,
 * calibrationReport (both split rules; the C3EBench report is c3eReport), conversationList, conversation — gives
 * deep-equal answers on the SQLite original and on PostgreSQL, and so does the results page's loader
 * (p.$slug.runs.$runId.results, on getDal(), signed in as a researcher; its settings list in label order, since
 * PostgreSQL's jsonb does not keep an object's keys as written).
 *
 * The headline figures are also checked against numbers computed here, independently of the app: the first
 * judge's pooled Yes rate per model (from the fake judge's rule applied to each stored response and checklist item,
 * and from the verdict rows), each judge's parse counts, and C3EBench's raw mean score (from the verdict rows).
 */
import path from "node:path";
import fs from "node:fs";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, openDatabase, schema, type Db } from "../../db/client";
import { copyDatabase } from "../../db/copy";
import { openPgDatabase, type PgDb } from "../../db/client-pg";
import { closeDal, dalOf, initDal, pgDal, type Dal, type DalLike } from "../../app/dal.server";
import { hashPassword } from "../../app/auth/password.server";
import * as resultsPage from "../../app/routes/p.$slug.runs.$runId.results";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { calibratedScores, calibrationReport, createCalibrationTask } from "../../app/runs/calibration.server";
import { createRun } from "../../app/runs/runner.server";
import { conversation, conversationList, runResults, runResultsAll } from "../../app/runs/results.server";
import { tempDir } from "../support/db";
import { args, get, run, signInCookie } from "../support/http";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { addProviders, codeSum, importThrough, mean, messagesOf, projectIdOf, runToEnd, writeRefineBench } from "./runs-protocol-support";

const SLUG = "rrd";
const LEAD = { email: "lead@rrd.test", password: "correct horse battery" };
const ITEMS = 8;
const dir = tempDir("concord-run-results-");
const file = path.join(dir, "runs.db");
let fake: FakeLlm;

/** Whether a reply is target-model-b's (its answers carry "(b)"). */
const isB = (answer: string) => answer.includes("(b)");
/** The fake first judge: checklist item `q` is satisfied by a turn-t answer when (code-point sum of q, +1 for model b) mod 3 < t. */
const judgeSays = (q: string, turn: number, b: boolean) => ((codeSum(q) + (b ? 1 : 0)) % 3 < turn ? "Yes" : "No");
/** The second judge is stricter: mod 4. */
const judge2Says = (q: string, turn: number, b: boolean) => ((codeSum(q) + (b ? 1 : 0)) % 4 < turn ? "Yes" : "No");
/** C3EBench's fake judge: 2 + (code-point sum of the candidate) mod 8. */
const c3eScore = (text: string) => 2 + (codeSum(text) % 8);

function script(req: { body: Record<string, unknown> }) {
  const model = String(req.body.model);
  const msgs = messagesOf(req.body);
  const last = msgs[msgs.length - 1]?.content ?? "";
  if (model === "target-model" || model === "target-model-b") {
    // A RefineBench turn (its problems say "Show the sum."), else a C3EBench writing.
    if (!msgs.some((m) => m.content.includes("Show the sum."))) return `Writing for: ${last.slice(0, 60)}`;
    const turn = msgs.filter((m) => m.role === "user").length;
    return `Answer v${turn}${model === "target-model-b" ? " (b)" : ""}`;
  }
  if (last.includes("[Candidate Answer]")) {
    const candidate = last.split("[Candidate Answer]\n")[1] ?? "";
    return JSON.stringify({ score: c3eScore(candidate), analysis: { note: "fake" }, verdict: "ok" });
  }
  const section = last.split("### Checklist (Evaluation Items)\n")[1].split("\n\n### Output Format")[0];
  const answer = /### Model’s Answer:\n(Answer v(\d+)[^\n]*)/.exec(last)!;
  const turn = Number(answer[2]);
  const says = model === "judge-model-2" ? judge2Says : judgeSays;
  return section
    .split("\n")
    .map((l) => /^(Q\d+): (.*)$/.exec(l)!)
    .map((m) => `${m[1]}: ${says(m[2], turn, isB(answer[1]))}`)
    .join("\n");
}

/** Two instructions of each C3EBench task type, in RAVEL's released fields. */
function writeC3e(out: string) {
  const lines: Record<string, unknown>[] = [];
  ["a lighthouse keeper", "the first snow"].forEach((topic, k) => {
    lines.push({
      infer_id: `cloze_t${k}`,
      task_type: "cloze",
      sub_task: "narrative",
      instruction: `Fill the blank in this passage about ${topic}.`,
      input: { prefix: `It began with ${topic}. `, suffix: " And then the evening came." },
      reference: `Nobody had expected ${topic} to matter.`,
    });
    lines.push({
      infer_id: `condition_t${k}`,
      task_type: "condition",
      sub_task: "essay",
      instruction: `Expand the outline into an essay on ${topic}.`,
      input: { genre: "essay", brief: `On ${topic}`, condition: `1. memory 2. ${topic}`, audience: "general readers", word: "300" },
      reference: `An essay that remembers ${topic}.`,
    });
    lines.push({
      infer_id: `edit_t${k}`,
      task_type: "edit",
      sub_task: "story",
      instruction: `Revise the draft about ${topic} as the critique asks.`,
      input: { content: `The draft says ${topic} was nice.`, critique: "Show, do not tell." },
      reference: `The revised story lets ${topic} speak.`,
    });
    lines.push({
      infer_id: `end2end_t${k}`,
      task_type: "end2end",
      sub_task: "poem",
      instruction: `Write a short poem about ${topic}.`,
      input: { genre: "poem", brief: `A poem about ${topic}`, audience: "children", word: "80" },
      reference: `A poem in which ${topic} is seen anew.`,
    });
  });
  fs.writeFileSync(out, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

type Prepared = {
  projectId: number;
  rbRunId: number;
  c3eRunId: number;
  rbTaskId: number;
  c3eTaskId: number;
  judge1: number;
  judge2: number;
};
let prep: Prepared;

/** Both runs, completed, with their calibration tasks labelled, on the SQLite file. */
async function prepare(): Promise<Prepared> {
  const db0 = openDatabase(file);
  db0.insert(schema.projects).values({ slug: SLUG, name: "Run results on both dialects" }).run();
  db0.$client.close();
  writeRefineBench(path.join(dir, "refinebench.json"), ITEMS);
  writeC3e(path.join(dir, "c3e.jsonl"));
  const rbDataset = await importThrough(file, SLUG, "refinebench", path.join(dir, "refinebench.json"));
  const c3eDataset = await importThrough(file, SLUG, "c3ebench", path.join(dir, "c3e.jsonl"));
  const db = openDatabase(file);
  try {
    const projectId = projectIdOf(db, SLUG);
    addProviders(db, projectId, fake.baseUrl);
    db.insert(schema.providers)
      .values({
        projectId,
        name: "target-b",
        kind: "openai-compatible",
        baseUrl: fake.baseUrl,
        apiKey: "sk-test",
        model: "target-model-b",
        settings: { timeoutMs: 10_000, maxRetries: 0 },
        concurrency: 8,
      })
      .run();
    const rb = await createRun(db, projectId, {
      name: "guided, two judges",
      protocol: "refinebench",
      datasetId: rbDataset,
      models: [{ provider: "target" }, { provider: "target-b" }],
      judges: [{ provider: "judge" }, { provider: "judge2" }],
      settings: { setting: "guided", maxTurns: 3 },
    });
    expect((await runToEnd(db, rb.id)).status).toBe("completed");
    const c3e = await createRun(db, projectId, {
      name: "writing",
      protocol: "c3ebench",
      datasetId: c3eDataset,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
    });
    expect((await runToEnd(db, c3e.id)).status).toBe("completed");

    const people = ["Ann One", "Ann Two"].map(
      (name, i) =>
        db
          .insert(schema.users)
          .values({ email: `ann${i}@rrd.test`, name, passwordHash: "x" })
          .returning()
          .get().id,
    );
    for (const userId of people) db.insert(schema.memberships).values({ projectId, userId, role: "annotator" }).run();
    const lead = db
      .insert(schema.users)
      .values({ email: LEAD.email, name: "Lead", passwordHash: await hashPassword(LEAD.password) })
      .returning()
      .get().id;
    db.insert(schema.memberships).values({ projectId, userId: lead, role: "researcher" }).run();

    // RefineBench: 2 units per model × turn, both annotators on each; they disagree on every third unit (a split), and
    // both say No on every fifth.
    const rbTask = await createCalibrationTask(db, {
      runId: rb.id,
      projectId,
      plan: { kind: "stratified", perStratum: 2 },
      seed: 3,
      overlap: 2,
      pool: people,
    });
    const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, rbTask.taskId)).get()!;
    const units = db.select().from(schema.units).where(eq(schema.units.taskId, task.id)).all();
    expect(units.length).toBeGreaterThan(6);
    for (const u of units)
      for (const [k, userId] of people.entries()) {
        const answer = u.id % 3 === 0 ? (k === 0 ? "No" : "Yes") : u.id % 5 === 0 ? "No" : "Yes";
        const form = new URLSearchParams({ answer, clientToken: `rb-${u.id}-${userId}` });
        expect(await saveAnnotation({ task, userId, unitId: u.id, intent: "submit", form }, db)).toMatchObject({ ok: true });
      }

    // C3EBench: one instruction per task type, one annotator; the score of a writing 1 + (code-point sum mod 10).
    const c3eTask = await createCalibrationTask(db, {
      runId: c3e.id,
      projectId,
      plan: { kind: "stratified", perStratum: 1 },
      seed: 4,
      overlap: 1,
      pool: [people[0]],
      minLabelsPerModel: 1,
    });
    const texts = new Map(
      db
        .select()
        .from(schema.responses)
        .where(eq(schema.responses.runId, c3e.id))
        .all()
        .map((r) => [r.id, r.text]),
    );
    const c3eUnits = db.select().from(schema.units).where(eq(schema.units.taskId, c3eTask.taskId)).all();
    expect(c3eUnits).toHaveLength(4);
    for (const u of c3eUnits) {
      const a = db
        .select()
        .from(schema.assignments)
        .where(and(eq(schema.assignments.unitId, u.id), eq(schema.assignments.annotatorId, people[0])))
        .get()!;
      const scores = Object.fromEntries((u.responseIds ?? []).map((r) => [String(r), 1 + (codeSum(texts.get(Number(r))!) % 10)]));
      db.insert(schema.annotations).values({ assignmentId: a.id, revision: 1, label: { scores }, status: "submitted" }).run();
      db.update(schema.assignments).set({ status: "submitted" }).where(eq(schema.assignments.id, a.id)).run();
    }
    const cfg = rb.config as unknown as { judges: { judgeId: number }[] };
    return {
      projectId,
      rbRunId: rb.id,
      c3eRunId: c3e.id,
      rbTaskId: rbTask.taskId,
      c3eTaskId: c3eTask.taskId,
      judge1: cfg.judges[0].judgeId,
      judge2: cfg.judges[1].judgeId,
    };
  } finally {
    db.$client.close();
  }
}

/** What the results page and the run page read for both runs, through the data-access layer `d`. */
async function readAll(d: DalLike) {
  const dal = dalOf(d);
  const runOf = async (id: number) => (await dal.q.select().from(dal.t.runs).where(eq(dal.t.runs.id, id)))[0];
  const rb = await runOf(prep.rbRunId);
  const c3e = await runOf(prep.c3eRunId);
  const list = await conversationList(dal, rb.id);
  return {
    rbResults: await runResultsAll(dal, rb),
    rbJudge2: await runResults(dal, rb, prep.judge2),
    c3eResults: await runResultsAll(dal, c3e),
    scores: await calibratedScores(dal, rb.id, prep.rbTaskId),
    report: await calibrationReport(dal, rb.id, prep.rbTaskId),
    reportAdjudicate: await calibrationReport(dal, rb.id, prep.rbTaskId, { splits: "adjudicate" }),
    c3eReport: await calibrationReport(dal, c3e.id, prep.c3eTaskId),
    c3eScores: await calibratedScores(dal, c3e.id, prep.c3eTaskId),
    list,
    c3eList: await conversationList(dal, c3e.id),
    detail: await conversation(dal, rb.id, list[list.length - 1].itemId, list[list.length - 1].model),
  };
}

/** The results page's loader (both runs, the last conversation of the RefineBench run open), on the process's database. */
async function resultsPages() {
  const cookie = await signInCookie(LEAD.email, LEAD.password);
  const out: unknown[] = [];
  for (const runId of [prep.rbRunId, prep.c3eRunId]) {
    const q = runId === prep.rbRunId ? `?item=${sqlite.list.at(-1)!.itemId}&model=${encodeURIComponent(sqlite.list.at(-1)!.model)}` : "";
    const res = await run(
      resultsPage.loader,
      args(get(`/p/${SLUG}/runs/${runId}/results${q}`, cookie), { slug: SLUG, runId: String(runId) }),
    );
    expect(res.status).toBe(200);
    out.push(await res.json());
  }
  return out as Record<string, unknown>[];
}

let sqlite: Awaited<ReturnType<typeof readAll>>;
let sqlitePages: Record<string, unknown>[];
let db: Db;

beforeAll(async () => {
  fake = await startFakeLlm(script);
  prep = await prepare();
  db = openDatabase(file);
  sqlite = await readAll(db);
}, 120_000);

afterAll(async () => {
  await closeDal();
  closeDb();
  db?.$client.close();
  await fake?.close();
});

describe("on SQLite: the figures computed here", () => {
  it("the first judge's pooled Yes rate per model, from the fake judge's rule and from the verdict rows; every judge's parse counts", () => {
    const responses = db.select().from(schema.responses).where(eq(schema.responses.runId, prep.rbRunId)).all();
    const checklist = db.select().from(schema.checklistItems).all();
    expect(sqlite.scores.map((s) => s.model)).toEqual(["target-model", "target-model-b"]);
    for (const s of sqlite.scores) {
      // Every stored response of the model, judged on every checklist item of its problem.
      const mine = responses.filter((r) => r.model === s.model);
      const said = mine.flatMap((r) =>
        checklist.filter((c) => c.itemId === r.itemId).map((c) => judgeSays(c.text, r.turn, s.model === "target-model-b")),
      );
      expect(s.raw.n).toBe(said.length);
      expect(s.raw.mean).toBeCloseTo((100 * said.filter((x) => x === "Yes").length) / said.length, 10);
      const rows = db.$client
        .prepare(
          `SELECT v.value FROM verdicts v JOIN responses r ON r.id = v.response_id
           WHERE v.run_id = ? AND v.judge_id = ? AND r.model = ? AND v.checklist_item_id IS NOT NULL`,
        )
        .all(prep.rbRunId, prep.judge1, s.model) as { value: string }[];
      expect(rows).toHaveLength(said.length);
      expect(s.raw.mean).toBeCloseTo(100 * mean(rows.map((r) => (r.value === "Yes" ? 1 : 0))), 10);
      expect(s.corrected).not.toBeNull();
    }
    // The two models differ, so the figure is not a constant.
    expect(sqlite.scores[0].raw.mean).not.toBeCloseTo(sqlite.scores[1].raw.mean, 3);
    for (const [i, judgeId] of [prep.judge1, prep.judge2].entries()) {
      const counts = db.$client
        .prepare(`SELECT parse_status AS s, COUNT(*) AS n FROM verdicts WHERE run_id = ? AND judge_id = ? GROUP BY parse_status`)
        .all(prep.rbRunId, judgeId) as { s: string; n: number }[];
      const want = { ok: 0, partial: 0, failed: 0, unparsed: 0, ...Object.fromEntries(counts.map((c) => [c.s, c.n])) };
      expect(sqlite.rbResults[i].parse).toEqual(want);
      expect(sqlite.rbResults[i].judgeId).toBe(judgeId);
    }
    expect(sqlite.rbJudge2).toEqual(sqlite.rbResults[1]);
    expect(sqlite.rbResults[0].metrics).not.toEqual(sqlite.rbResults[1].metrics);
  });

  it("the calibration report counts the splits, C3EBench's raw mean score is the verdicts' mean, the conversations list every item × model", () => {
    const r = sqlite.report!;
    expect(r.human.units).toBe(db.select().from(schema.units).where(eq(schema.units.taskId, prep.rbTaskId)).all().length);
    expect(r.human.splitDropped).toBeGreaterThan(0);
    expect(r.human.valued + r.human.splitDropped + r.human.unlabelled).toBe(r.human.units);
    expect(r.metrics.length).toBeGreaterThan(0);
    const scores = db.$client
      .prepare(`SELECT score FROM verdicts WHERE run_id = ? AND checklist_item_id IS NULL AND score IS NOT NULL`)
      .all(prep.c3eRunId) as { score: number }[];
    const overall = sqlite.c3eReport!.metrics.find((m) => m.metric === "Mean score (overall)")!;
    expect(overall.raw).toBeCloseTo(mean(scores.map((s) => s.score)), 10);
    expect(sqlite.c3eReport!.human).toMatchObject({ units: 4, valued: 4, unlabelled: 0 });
    expect(sqlite.c3eScores).toEqual([]);
    expect(sqlite.list).toHaveLength(ITEMS * 2);
    expect(sqlite.list.every((c) => c.turns >= 1 && c.turns <= 3 && c.failed === 0)).toBe(true);
    expect(sqlite.detail.turns.length).toBe(sqlite.list[sqlite.list.length - 1].turns);
    expect(sqlite.detail.turns[0].verdicts.length).toBeGreaterThan(0);
  });

  it("the results page's loader shows those figures, the calibration reports and the open conversation", async () => {
    process.env.DATABASE_URL = file;
    await initDal();
    sqlitePages = await resultsPages();
    const [rbPage, c3ePage] = sqlitePages as {
      judges: { results: unknown }[];
      calibration: { report: unknown }[];
      conversations: unknown;
      detail: unknown;
    }[];
    expect(rbPage.judges.map((j) => j.results)).toEqual(JSON.parse(JSON.stringify(sqlite.rbResults)));
    expect(rbPage.calibration.map((c) => c.report)).toEqual([JSON.parse(JSON.stringify(sqlite.report))]);
    expect(rbPage.conversations).toEqual(sqlite.list);
    expect(rbPage.detail).toEqual(JSON.parse(JSON.stringify(sqlite.detail)));
    expect(c3ePage.calibration.map((c) => c.report)).toEqual([JSON.parse(JSON.stringify(sqlite.c3eReport))]);
    expect(c3ePage.detail).toBeNull();
    await closeDal();
    closeDb();
  });
});

describe.skipIf(Boolean(pgSkipReason()))("on PostgreSQL: the same database copied by copyDatabase", () => {
  let testPg: TestPg;
  let pgDb: PgDb;
  let d: Dal;
  beforeAll(async () => {
    testPg = await startTestPg();
    url = await testPg.createDatabase("run_results");
    const checks = await copyDatabase({ kind: "sqlite", file }, { kind: "postgres", url });
    expect(checks.every((c) => c.same)).toBe(true);
    pgDb = await openPgDatabase(url, { max: 4 });
    d = pgDal(pgDb);
  }, 120_000);
  let url = "";
  afterAll(async () => {
    await closeDal();
    await pgDb?.$client.end();
    testPg?.stop();
  });

  it("every reader gives what it gives on SQLite", async () => {
    expect(d.dialect).toBe("postgres");
    const got = await readAll(d);
    expect(got.rbResults).toEqual(sqlite.rbResults);
    expect(got.rbJudge2).toEqual(sqlite.rbJudge2);
    expect(got.c3eResults).toEqual(sqlite.c3eResults);
    expect(got.scores).toEqual(sqlite.scores);
    expect(got.report).toEqual(sqlite.report);
    expect(got.reportAdjudicate).toEqual(sqlite.reportAdjudicate);
    expect(got.c3eReport).toEqual(sqlite.c3eReport);
    expect(got.list).toEqual(sqlite.list);
    expect(got.c3eList).toEqual(sqlite.c3eList);
    expect(got.detail).toEqual(sqlite.detail);
    expect(got).toEqual(sqlite);
  });

  it("the results page's loader, on PostgreSQL, answers what it answers on SQLite", async () => {
    process.env.DATABASE_URL = url;
    await initDal();
    expect(await resultsPages()).toEqual(sqlitePages);
  });
});
