/**
 * Loads Concord's original demo content (seeds/demo-*.json) into a database:
 * accounts, a project, two datasets, responses from three invented models over
 * three turns, verdicts from two judges, and labels from three annotators; then
 * the runs part (below): a sample of the benchmark, small FB-Bench and
 * Self-Correction sets (seeds/demo-protocols.json), the recorded providers and
 * one recorded RefineBench run.
 *
 * The judges' verdicts and the annotators' labels are simulated from the
 * hand-written truth in the JSON with a seeded generator, each with its own
 * error profile, so agreement reports have something real to find: a strict
 * judge, a lenient judge that sometimes returns unparseable output, and
 * annotators of different care. Same seed, same database.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import { createTask } from "../app/annotation/tasks.server";
import { dalOf } from "../app/dal.server";
import { hashPassword } from "../app/auth/password.server";
import type { Db } from "../db/client";
import { repoPath } from "../db/repo-path";
import * as schema from "../db/schema";
import { DEMO_ACCOUNTS, DEMO_PROJECT, DEMO_RUN_DATASET, DEMO_RUN_NAME } from "./demo-names";

// The demo files, from the sources or from a command's cached bundle (scripts/cli.mjs).
const SEEDS_DIR = path.dirname(repoPath("seeds/demo-benchmark.json", import.meta.url));

export { DEMO_ACCOUNTS, DEMO_PROJECT, DEMO_RUN_DATASET, DEMO_RUN_NAME } from "./demo-names";

const Dataset = z.object({
  name: z.string(),
  version: z.number().int(),
  source: z.string(),
  licenseNote: z.string(),
});

/** The fields every demo item has, in both files. */
const DemoItem = {
  sourceId: z.string(),
  domain: z.string(),
  subject: z.string(),
  taskType: z.string(),
  language: z.string(),
  query: z.string(),
  passage: z.string().nullable().optional(),
  reference: z.string(),
};

const BenchFile = z.object({
  dataset: Dataset,
  models: z.array(z.string()).length(3),
  items: z.array(
    z.object({
      ...DemoItem,
      checklist: z.array(z.object({ text: z.string(), appropriate: z.boolean() })).min(1),
      responses: z.array(z.object({ model: z.string(), turn: z.number().int(), text: z.string(), satisfies: z.array(z.boolean()) })),
    }),
  ),
});

const WritingFile = z.object({
  dataset: Dataset,
  models: z.array(z.string()),
  items: z.array(
    z.object({
      ...DemoItem,
      responses: z.array(
        z.object({ model: z.string(), turn: z.number().int(), text: z.string(), quality: z.number().int().min(1).max(5) }),
      ),
    }),
  ),
});

/**
 * seeds/demo-protocols.json: the demo sets for the FB-Bench and Self-Correction
 * protocols, in the field names of FB-Bench's released file and of the
 * Self-Correction items-jsonl format (the same fields the import presets read).
 */
const ProtocolsFile = z.object({
  licenseNote: z.string(),
  feedback: z.object({
    dataset: Dataset,
    items: z
      .array(
        z.object({
          bench_type: z.enum(["Error Correction", "Response Maintenance"]),
          task_type: z.string(),
          sub_task_type: z.string(),
          user_query: z.string(),
          origin_first_response: z.string(),
          feedback: z.string(),
          error_type: z.array(z.string()).nullable(),
          feedback_type: z.array(z.string()),
          checklist: z.array(z.union([z.string(), z.tuple([z.string(), z.number()])])).min(1),
          reference_second_response: z.string(),
        }),
      )
      .min(1),
  }),
  selfCorrection: z.object({
    dataset: Dataset,
    items: z
      .array(z.object({ id: z.string(), question: z.string(), answer: z.string(), dataset: z.string(), injected_error: z.string() }))
      .min(1),
  }),
});

export type BenchFile = z.infer<typeof BenchFile>;
export type WritingFile = z.infer<typeof WritingFile>;
export type ProtocolsFile = z.infer<typeof ProtocolsFile>;

export function loadDemoFiles(dir = SEEDS_DIR): { bench: BenchFile; writing: WritingFile; protocols: ProtocolsFile } {
  const read = (name: string) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
  const bench = BenchFile.parse(read("demo-benchmark.json"));
  for (const item of bench.items) {
    for (const r of item.responses) {
      if (r.satisfies.length !== item.checklist.length) {
        throw new Error(
          `seeds: ${item.sourceId} ${r.model} turn ${r.turn}: satisfies has ${r.satisfies.length} values for ${item.checklist.length} checklist items`,
        );
      }
    }
  }
  return { bench, writing: WritingFile.parse(read("demo-writing.json")), protocols: ProtocolsFile.parse(read("demo-protocols.json")) };
}

/** mulberry32: a small, well-known seeded generator; good enough for demo noise. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Judges of the demo: error rates when the truth is Yes (falseNo) and No (falseYes). */
const DEMO_JUDGES = [
  {
    name: "judge-strict",
    provider: "replay",
    model: "Sentinel-34B (recorded)",
    falseNo: 0.1,
    falseYes: 0.04,
    parseFail: 0,
    scoreNoise: 1.0,
  },
  {
    name: "judge-lenient",
    provider: "replay",
    model: "Lumen-8B (recorded)",
    falseNo: 0.03,
    falseYes: 0.2,
    parseFail: 0.015,
    scoreNoise: 1.8,
  },
] as const;

/** Annotator error rates (chance of flipping the true label; score noise). */
const ANNOTATOR_CARE = [0.03, 0.06, 0.1];

export type SeedSummary = {
  users: number;
  items: number;
  checklistItems: number;
  responses: number;
  verdicts: number;
  tasks: number;
  annotations: number;
};

/** True if the database already has any user (so the demo is not loaded twice). */
export function hasUsers(db: Db): boolean {
  return db.select({ id: schema.users.id }).from(schema.users).limit(1).get() !== undefined;
}

/** `run: false` loads everything but leaves the recorded run out (the recording script uses it to read the demo's items before the recording exists). */
export async function seedDemo(db: Db, opts: { seed?: number; dir?: string; run?: boolean } = {}): Promise<SeedSummary> {
  const rand = seededRandom(opts.seed ?? 20261130);
  const { bench, writing } = loadDemoFiles(opts.dir);
  const hashes = await Promise.all(DEMO_ACCOUNTS.map((a) => hashPassword(a.password)));
  const summary: SeedSummary = { users: 0, items: 0, checklistItems: 0, responses: 0, verdicts: 0, tasks: 0, annotations: 0 };

  let ids!: {
    projectId: number;
    researcherId: number;
    annotatorIds: number[];
    benchSetId: number;
    writingSetId: number;
    truths: { itemId: number; checklistIds: number[]; appropriate: boolean[]; responses: { id: number; satisfies: boolean[] }[] }[];
    writingUnits: { itemId: number; responses: { id: number; quality: number }[] }[];
  };
  // A data-access-layer transaction (issue 17): createTask's own reads and
  // transaction join it, so they see the content written above them.
  await dalOf(db).tx(async (tx) => {
    const userIds = DEMO_ACCOUNTS.map(
      (a, i) =>
        tx
          .insert(schema.users)
          .values({ email: a.email, name: a.name, passwordHash: hashes[i], isSiteAdmin: a.isSiteAdmin })
          .returning({ id: schema.users.id })
          .get().id,
    );
    summary.users = userIds.length;
    const project = tx.insert(schema.projects).values(DEMO_PROJECT).returning({ id: schema.projects.id }).get();
    DEMO_ACCOUNTS.forEach((a, i) =>
      tx.insert(schema.memberships).values({ projectId: project.id, userId: userIds[i], role: a.role }).run(),
    );
    const researcherId = userIds[1];
    const annotatorIds = userIds.slice(2);

    const judgeIds = DEMO_JUDGES.map(
      (j) =>
        tx
          .insert(schema.judges)
          .values({
            projectId: project.id,
            name: j.name,
            provider: j.provider,
            model: j.model,
            promptVersion: "demo-1",
            settings: { temperature: 0, note: "Recorded demo verdicts, simulated from hand-written truth." },
          })
          .returning({ id: schema.judges.id })
          .get().id,
    );

    /** An item with its reference answer. */
    const insertItem = (datasetId: number, it: BenchFile["items"][number] | WritingFile["items"][number]) => {
      const item = tx
        .insert(schema.items)
        .values({
          datasetId,
          sourceId: it.sourceId,
          query: it.query,
          passage: it.passage ?? null,
          domain: it.domain,
          subject: it.subject,
          taskType: it.taskType,
          language: it.language,
        })
        .returning({ id: schema.items.id })
        .get();
      tx.insert(schema.references).values({ itemId: item.id, text: it.reference, provenance: "seed" }).run();
      summary.items++;
      return item;
    };
    const insertResponse = (itemId: number, r: { model: string; turn: number; text: string }) => {
      summary.responses++;
      return tx
        .insert(schema.responses)
        .values({ itemId, model: r.model, turn: r.turn, text: r.text, origin: "seed", sourceKey: `${r.model}/turn-${r.turn}` })
        .returning({ id: schema.responses.id })
        .get().id;
    };

    // ── Checklist benchmark ──
    const benchSet = tx
      .insert(schema.datasets)
      .values({ projectId: project.id, ...bench.dataset })
      .returning({ id: schema.datasets.id })
      .get();
    type Truth = { itemId: number; checklistIds: number[]; appropriate: boolean[]; responses: { id: number; satisfies: boolean[] }[] };
    const truths: Truth[] = [];
    for (const it of bench.items) {
      const item = insertItem(benchSet.id, it);
      const checklistIds = it.checklist.map(
        (c, position) =>
          tx
            .insert(schema.checklistItems)
            .values({ itemId: item.id, text: c.text, position })
            .returning({ id: schema.checklistItems.id })
            .get().id,
      );
      summary.checklistItems += checklistIds.length;
      const responses = it.responses.map((r) => {
        const id = insertResponse(item.id, r);
        DEMO_JUDGES.forEach((j, ji) => {
          r.satisfies.forEach((truth, ci) => {
            const failed = rand() < j.parseFail;
            const flip = rand() < (truth ? j.falseNo : j.falseYes);
            const value = failed ? null : truth !== flip ? "Yes" : "No";
            tx.insert(schema.verdicts)
              .values({
                judgeId: judgeIds[ji],
                responseId: id,
                checklistItemId: checklistIds[ci],
                value,
                rawOutput: failed ? `${it.checklist[ci].text.slice(0, 40)}… Probably yes, although` : `${it.checklist[ci].text}: ${value}`,
                parseStatus: failed ? "failed" : "ok",
              })
              .run();
            summary.verdicts++;
          });
        });
        return { id, satisfies: r.satisfies };
      });
      truths.push({ itemId: item.id, checklistIds, appropriate: it.checklist.map((c) => c.appropriate), responses });
    }

    // ── Writing set ──
    const writingSet = tx
      .insert(schema.datasets)
      .values({ projectId: project.id, ...writing.dataset })
      .returning({ id: schema.datasets.id })
      .get();
    const writingUnits: { itemId: number; responses: { id: number; quality: number }[] }[] = [];
    for (const it of writing.items) {
      const item = insertItem(writingSet.id, it);
      const responses = it.responses.map((r) => {
        const id = insertResponse(item.id, r);
        DEMO_JUDGES.forEach((j, ji) => {
          // A 1–10 writing judge: roughly 2 × the human 1–5 quality, with judge-specific noise.
          const score = Math.max(1, Math.min(10, Math.round(2 * r.quality + (rand() - 0.5) * 2 * j.scoreNoise)));
          tx.insert(schema.verdicts)
            .values({
              judgeId: judgeIds[ji],
              responseId: id,
              checklistItemId: null,
              value: String(score),
              score,
              rawOutput: JSON.stringify({ analysis: "Recorded demo verdict.", score }),
              parseStatus: "ok",
            })
            .run();
          summary.verdicts++;
        });
        return { id, quality: r.quality };
      });
      writingUnits.push({ itemId: item.id, responses });
    }

    ids = { projectId: project.id, researcherId, annotatorIds, benchSetId: benchSet.id, writingSetId: writingSet.id, truths, writingUnits };
    // The tasks and their labels in the same transaction (the annotation module's own
    // transactions join it): the demo content is all there or not at all.
    await seedDemoTasks(tx, ids, rand, summary);
  });
  // The recorded run goes through the durable job queue: if this step is cut short,
  // `npm run worker` finishes it.
  if (opts.run === false) seedDemoRunData(db, { dir: opts.dir });
  else await seedDemoRun(db, { dir: opts.dir });
  return summary;
}

/**
 * The demo's annotation tasks, made by the annotation module itself (sampling,
 * balanced seeded assignment, shuffled shown order), then labelled by the three
 * simulated annotators. Ana still has work waiting in every task, so a visitor
 * signing in as her can try the workspace.
 */
async function seedDemoTasks(
  db: Db,
  ids: {
    projectId: number;
    researcherId: number;
    annotatorIds: number[];
    benchSetId: number;
    writingSetId: number;
    truths: { itemId: number; checklistIds: number[]; appropriate: boolean[]; responses: { id: number; satisfies: boolean[] }[] }[];
    writingUnits: { itemId: number; responses: { id: number; quality: number }[] }[];
  },
  rand: () => number,
  summary: SeedSummary,
) {
  const pool = ids.annotatorIds;
  const make = async (input: Parameters<typeof createTask>[2]) => {
    const { taskId } = await createTask(ids.projectId, ids.researcherId, input, db);
    summary.tasks++;
    return taskId;
  };
  const appropriateness = await make({
    name: "Are these checklist items valid criteria?",
    datasetId: ids.benchSetId,
    kind: "checklist-appropriateness",
    overlap: 3,
    seed: 7,
    pool,
    showReference: true,
    guidelines:
      "For each checklist item, answer **Yes** if it is a valid criterion for grading answers to this question, **No** otherwise.\n\nUse the comment box to say why an item is not valid.",
  });
  const satisfaction = await make({
    name: "Does the response satisfy the checklist item?",
    datasetId: ids.benchSetId,
    kind: "response-satisfaction",
    plan: "all-items-of-sampled-responses",
    responsesPerItem: 2,
    overlap: 2,
    seed: 11,
    pool,
    guidelines: "Read the problem, the response and one checklist item. Answer **Yes** only if the response clearly satisfies the item.",
  });
  const writing = await make({
    name: "Score each writing from 1 to 5",
    datasetId: ids.writingSetId,
    kind: "writing-quality",
    overlap: 2,
    seed: 13,
    pool,
    guidelines:
      "The reference is a **4**. Give 5 to a writing better than the reference, 3 to one that passes but is weaker, and 1–2 with a penalty reason. A safety problem is always 1.",
  });
  const bestOf = await make({
    name: "Reference optimisation: which writing is best?",
    datasetId: ids.writingSetId,
    kind: "best-of-n",
    n: 3,
    includeReference: true,
    overlap: 2,
    seed: 17,
    pool,
    guidelines: "Read the instruction and every writing, then pick the **best** one. Judge only the text.",
  });

  const appropriate = new Map<number, boolean>();
  const satisfies = new Map<string, boolean>();
  for (const t of ids.truths) {
    t.checklistIds.forEach((cid, i) => appropriate.set(cid, t.appropriate[i]));
    for (const r of t.responses) t.checklistIds.forEach((cid, i) => satisfies.set(`${r.id}:${cid}`, r.satisfies[i]));
  }
  const quality = new Map<number, number>();
  for (const w of ids.writingUnits) for (const r of w.responses) quality.set(r.id, r.quality);
  const ana = pool[0];
  const noisyYesNo = (truth: boolean, annotator: number) => (rand() < ANNOTATOR_CARE[annotator] !== truth ? "Yes" : "No");
  const now = Math.floor(Date.now() / 1000);

  db.transaction((tx) => {
    for (const taskId of [appropriateness, satisfaction, writing, bestOf]) {
      const rows = tx
        .select({
          assignmentId: schema.assignments.id,
          annotatorId: schema.assignments.annotatorId,
          shownOrder: schema.assignments.shownOrder,
          position: schema.units.position,
          checklistItemId: schema.units.checklistItemId,
          responseId: schema.units.responseId,
          responseIds: schema.units.responseIds,
        })
        .from(schema.assignments)
        .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
        .where(eq(schema.units.taskId, taskId))
        .orderBy(asc(schema.units.position))
        .all();
      const units = new Set(rows.map((r) => r.position)).size;
      for (const r of rows) {
        const a = pool.indexOf(r.annotatorId);
        // Ana has the last fifth of every task still to do (all of the best-of-N task).
        if (r.annotatorId === ana && (taskId === bestOf || r.position >= units * 0.8)) continue;
        let label: unknown;
        let penaltyReasons: Record<string, string[]> | null = null;
        if (taskId === appropriateness) label = noisyYesNo(appropriate.get(r.checklistItemId!)!, a);
        else if (taskId === satisfaction) label = noisyYesNo(satisfies.get(`${r.responseId}:${r.checklistItemId}`)!, a);
        else if (taskId === writing) {
          const scores: Record<string, number> = {};
          penaltyReasons = {};
          for (const id of r.responseIds as number[]) {
            const jitter = rand() < ANNOTATOR_CARE[a] * 3 ? (rand() < 0.5 ? -1 : 1) : 0;
            const score = Math.max(1, Math.min(5, quality.get(id)! + jitter));
            scores[String(id)] = score;
            if (score < 3) penaltyReasons[String(id)] = [score === 1 ? "accuracy" : "consistency"];
          }
          label = { scores };
        } else {
          // The reference counts as a 4; a model writing wins only when it is better (a 5).
          const best = (r.responseIds as (number | "reference")[]).reduce((top, k) => {
            const q = k === "reference" ? 4 : quality.get(k)!;
            const topQ = top === "reference" ? 4 : quality.get(top)!;
            return q > topQ ? k : top;
          });
          label = { best };
        }
        tx.insert(schema.annotations)
          .values({
            assignmentId: r.assignmentId,
            revision: 1,
            label,
            penaltyReasons,
            shownOrder: r.shownOrder,
            status: "submitted",
            durationMs: Math.round(4000 + rand() * 40000),
          })
          .run();
        tx.update(schema.assignments)
          .set({ status: "submitted", startedAt: now - 3600, submittedAt: now - 3000 })
          .where(eq(schema.assignments.id, r.assignmentId))
          .run();
        summary.annotations++;
      }
    }
  });
}

// ─── The demo run (recorded outputs) ─────────────────────────────────────────
// Owned by the runs module. Kept apart from the content above: it adds a small
// sample dataset (copies of three Concord Demo Bench problems), the demo sets
// of the FB-Bench and Self-Correction protocols (seeds/demo-protocols.json),
// replay providers labelled "recorded", and one completed RefineBench run made
// by the real runner from seeds/recorded/demo-refinebench.json. The bench
// dataset's own counts and the two demo judges are unchanged (the run's judge
// reuses "judge-strict", which is already a recorded judge). The recording
// also serves every other protocol on the demo sets and curation's back-check
// and checklist drafting (seeds/recorded/demo-refinebench.ts).

export const DEMO_RECORDING = "demo-refinebench.json";
export const DEMO_RECORDED_MODELS = ["Quillon-8B", "Orrery-70B"] as const;
export const DEMO_RECORDED_JUDGE = "Sentinel-34B";
export const DEMO_SAMPLE_ITEMS = ["cdb-006", "cdb-010", "cdb-011"] as const;
export const recordedProviderName = (model: string) => `${model} (recorded)`;

/** FB-Bench's released fields stored as the `fb-bench` import preset stores them. */
const fbSourceId = (r: { user_query: string; origin_first_response: string; feedback: string }) =>
  "fb-" + createHash("sha256").update(`${r.user_query}\u0000${r.origin_first_response}\u0000${r.feedback}`).digest("hex").slice(0, 16);

/** The run part's datasets and providers (no run): the sample, the FB-Bench and Self-Correction sets. */
export function seedDemoRunData(
  db: Db,
  opts: { dir?: string } = {},
): { datasetId: number; feedbackSetId: number; selfCorrectionSetId: number } {
  const { bench, protocols } = loadDemoFiles(opts.dir);
  const project = db.select().from(schema.projects).where(eq(schema.projects.slug, DEMO_PROJECT.slug)).get();
  if (!project) throw new Error("seedDemoRun: load the demo project first");
  const note = "Recorded outputs: hand-written for Concord's demo, replayed without network.";
  return db.transaction((tx) => {
    const set = tx
      .insert(schema.datasets)
      .values({
        projectId: project.id,
        name: DEMO_RUN_DATASET,
        version: 1,
        source: "Three problems of Concord Demo Bench, for the recorded demo run",
        licenseNote: "CC0 1.0 — original demo content",
      })
      .returning({ id: schema.datasets.id })
      .get();
    for (const sourceId of DEMO_SAMPLE_ITEMS) {
      const it = bench.items.find((i) => i.sourceId === sourceId)!;
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: set.id,
          sourceId: it.sourceId,
          query: it.query,
          passage: it.passage ?? null,
          domain: it.domain,
          subject: it.subject,
          taskType: it.taskType,
          language: it.language,
        })
        .returning({ id: schema.items.id })
        .get();
      it.checklist.forEach((c, position) => tx.insert(schema.checklistItems).values({ itemId: item.id, text: c.text, position }).run());
      tx.insert(schema.references).values({ itemId: item.id, text: it.reference, provenance: "seed" }).run();
    }
    // FB-Bench (query, preset first response, feedback; weighted EC / plain RM checklists).
    const fb = tx
      .insert(schema.datasets)
      .values({ projectId: project.id, ...protocols.feedback.dataset })
      .returning({ id: schema.datasets.id })
      .get();
    for (const r of protocols.feedback.items) {
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: fb.id,
          sourceId: fbSourceId(r),
          query: r.user_query,
          domain: r.task_type,
          subject: r.sub_task_type,
          taskType: r.bench_type.toLowerCase().replace(/\s+/g, "_"),
          language: "en",
          metadata: {
            bench_type: r.bench_type,
            origin_first_response: r.origin_first_response,
            feedback: r.feedback,
            error_type: r.error_type,
            feedback_type: r.feedback_type,
          },
        })
        .returning({ id: schema.items.id })
        .get();
      tx.insert(schema.references).values({ itemId: item.id, text: r.reference_second_response, provenance: "seed" }).run();
      r.checklist.forEach((c, position) =>
        tx
          .insert(schema.checklistItems)
          .values({ itemId: item.id, text: typeof c === "string" ? c : c[0], weight: typeof c === "string" ? null : c[1], position })
          .run(),
      );
    }
    // Self-Correction Bench (golden answer as the reference; injected error and dataset in metadata, as items-jsonl stores them).
    const sc = tx
      .insert(schema.datasets)
      .values({ projectId: project.id, ...protocols.selfCorrection.dataset })
      .returning({ id: schema.datasets.id })
      .get();
    for (const r of protocols.selfCorrection.items) {
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: sc.id,
          sourceId: r.id,
          query: r.question,
          language: "en",
          metadata: { dataset: r.dataset, injected_error: r.injected_error },
        })
        .returning({ id: schema.items.id })
        .get();
      tx.insert(schema.references).values({ itemId: item.id, text: r.answer, provenance: "seed" }).run();
    }
    for (const model of [...DEMO_RECORDED_MODELS, DEMO_RECORDED_JUDGE])
      tx.insert(schema.providers)
        .values({
          projectId: project.id,
          name: recordedProviderName(model),
          kind: "replay",
          model,
          concurrency: 4,
          settings: { file: DEMO_RECORDING, note },
        })
        .run();
    return { datasetId: set.id, feedbackSetId: fb.id, selfCorrectionSetId: sc.id };
  });
}

export async function seedDemoRun(db: Db, opts: { dir?: string } = {}): Promise<{ runId: number; datasetId: number; providers: string[] }> {
  const { createRun, Worker } = await import("../app/runs/runner.server");
  const project = db.select().from(schema.projects).where(eq(schema.projects.slug, DEMO_PROJECT.slug)).get();
  if (!project) throw new Error("seedDemoRun: load the demo project first");
  const researcher = db
    .select({ id: schema.users.id })
    .from(schema.users)
    .where(eq(schema.users.email, DEMO_ACCOUNTS.find((a) => a.role === "researcher")!.email))
    .get();
  const { datasetId } = seedDemoRunData(db, opts);
  const run = await createRun(
    db,
    project.id,
    {
      name: DEMO_RUN_NAME,
      protocol: "refinebench",
      datasetId,
      models: DEMO_RECORDED_MODELS.map((m) => ({ provider: recordedProviderName(m) })),
      judges: [{ provider: recordedProviderName(DEMO_RECORDED_JUDGE), name: "judge-strict" }],
      settings: { setting: "self-refinement", maxTurns: 2 },
    },
    researcher?.id ?? null,
  );
  // One job at a time, so the same seed writes the same rows in the same order.
  await new Worker(db, { concurrency: 1, prefetch: 0, pollMs: 5, untilIdle: true, runId: run.id }).start().done;
  return { runId: run.id, datasetId, providers: [...DEMO_RECORDED_MODELS, DEMO_RECORDED_JUDGE].map(recordedProviderName) };
}
