/**
 * Loads Concord's original demo content (seeds/demo-*.json) into a database:
 * accounts, a project, two datasets, responses from three invented models over
 * three turns, verdicts from two judges, and labels from three annotators.
 *
 * The judges' verdicts and the annotators' labels are simulated from the
 * hand-written truth in the JSON with a seeded generator, each with its own
 * error profile, so agreement reports have something real to find: a strict
 * judge, a lenient judge that sometimes returns unparseable output, and
 * annotators of different care. Same seed, same database.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { hashPassword } from "../app/auth/password.server";
import type { Db } from "../db/client";
import * as schema from "../db/schema";

const SEEDS_DIR = path.dirname(fileURLToPath(import.meta.url));

export const DEMO_PROJECT = { slug: "demo", name: "Concord Demo", description: "Original demo benchmark and labels written for Concord." };

export const DEMO_ACCOUNTS = [
  { email: "admin@concord.test", name: "Avery Admin", password: "demo-admin-2026", isSiteAdmin: true, role: "admin" },
  { email: "rhea@concord.test", name: "Rhea Researcher", password: "demo-research-2026", isSiteAdmin: false, role: "researcher" },
  { email: "ana@concord.test", name: "Ana Annotator", password: "demo-annotate-ana", isSiteAdmin: false, role: "annotator" },
  { email: "ben@concord.test", name: "Ben Annotator", password: "demo-annotate-ben", isSiteAdmin: false, role: "annotator" },
  { email: "chen@concord.test", name: "Chen Annotator", password: "demo-annotate-chen", isSiteAdmin: false, role: "annotator" },
] as const;

const Dataset = z.object({
  name: z.string(),
  version: z.number().int(),
  source: z.string(),
  licenseNote: z.string(),
});

const BenchFile = z.object({
  dataset: Dataset,
  models: z.array(z.string()).length(3),
  items: z.array(
    z.object({
      sourceId: z.string(),
      domain: z.string(),
      subject: z.string(),
      taskType: z.string(),
      language: z.string(),
      query: z.string(),
      passage: z.string().nullable().optional(),
      reference: z.string(),
      checklist: z.array(z.object({ text: z.string(), appropriate: z.boolean() })).min(1),
      responses: z.array(
        z.object({ model: z.string(), turn: z.number().int(), text: z.string(), satisfies: z.array(z.boolean()) }),
      ),
    }),
  ),
});

const WritingFile = z.object({
  dataset: Dataset,
  models: z.array(z.string()),
  items: z.array(
    z.object({
      sourceId: z.string(),
      domain: z.string(),
      subject: z.string(),
      taskType: z.string(),
      language: z.string(),
      query: z.string(),
      passage: z.string().nullable().optional(),
      reference: z.string(),
      responses: z.array(
        z.object({ model: z.string(), turn: z.number().int(), text: z.string(), quality: z.number().int().min(1).max(5) }),
      ),
    }),
  ),
});

export type BenchFile = z.infer<typeof BenchFile>;
export type WritingFile = z.infer<typeof WritingFile>;

export function loadDemoFiles(dir = SEEDS_DIR): { bench: BenchFile; writing: WritingFile } {
  const read = (name: string) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
  const bench = BenchFile.parse(read("demo-benchmark.json"));
  for (const item of bench.items) {
    for (const r of item.responses) {
      if (r.satisfies.length !== item.checklist.length) {
        throw new Error(`seeds: ${item.sourceId} ${r.model} turn ${r.turn}: satisfies has ${r.satisfies.length} values for ${item.checklist.length} checklist items`);
      }
    }
  }
  return { bench, writing: WritingFile.parse(read("demo-writing.json")) };
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

function shuffle<T>(xs: T[], rand: () => number): T[] {
  const out = xs.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Judges of the demo: error rates when the truth is Yes (falseNo) and No (falseYes). */
const DEMO_JUDGES = [
  { name: "judge-strict", provider: "replay", model: "Sentinel-34B (recorded)", falseNo: 0.1, falseYes: 0.04, parseFail: 0, scoreNoise: 1.0 },
  { name: "judge-lenient", provider: "replay", model: "Lumen-8B (recorded)", falseNo: 0.03, falseYes: 0.2, parseFail: 0.015, scoreNoise: 1.8 },
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

export async function seedDemo(db: Db, opts: { seed?: number; dir?: string } = {}): Promise<SeedSummary> {
  const rand = seededRandom(opts.seed ?? 20261130);
  const { bench, writing } = loadDemoFiles(opts.dir);
  const hashes = await Promise.all(DEMO_ACCOUNTS.map((a) => hashPassword(a.password)));
  const summary: SeedSummary = { users: 0, items: 0, checklistItems: 0, responses: 0, verdicts: 0, tasks: 0, annotations: 0 };

  db.transaction((tx) => {
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

    // ── Checklist benchmark ──
    const benchSet = tx
      .insert(schema.datasets)
      .values({ projectId: project.id, ...bench.dataset })
      .returning({ id: schema.datasets.id })
      .get();
    type Truth = { itemId: number; checklistIds: number[]; appropriate: boolean[]; responses: { id: number; satisfies: boolean[] }[] };
    const truths: Truth[] = [];
    for (const it of bench.items) {
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: benchSet.id,
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
      summary.items++;
      const checklistIds = it.checklist.map(
        (c, position) =>
          tx
            .insert(schema.checklistItems)
            .values({ itemId: item.id, text: c.text, position })
            .returning({ id: schema.checklistItems.id })
            .get().id,
      );
      summary.checklistItems += checklistIds.length;
      tx.insert(schema.references).values({ itemId: item.id, text: it.reference, provenance: "seed" }).run();
      const responses = it.responses.map((r) => {
        const id = tx
          .insert(schema.responses)
          .values({
            itemId: item.id,
            model: r.model,
            turn: r.turn,
            text: r.text,
            origin: "seed",
            sourceKey: `${r.model}/turn-${r.turn}`,
          })
          .returning({ id: schema.responses.id })
          .get().id;
        summary.responses++;
        DEMO_JUDGES.forEach((j, ji) => {
          r.satisfies.forEach((truth, ci) => {
            const failed = rand() < j.parseFail;
            const flip = rand() < (truth ? j.falseNo : j.falseYes);
            const value = failed ? null : (truth !== flip ? "Yes" : "No");
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
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: writingSet.id,
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
      summary.items++;
      tx.insert(schema.references).values({ itemId: item.id, text: it.reference, provenance: "seed" }).run();
      const responses = it.responses.map((r) => {
        const id = tx
          .insert(schema.responses)
          .values({ itemId: item.id, model: r.model, turn: r.turn, text: r.text, origin: "seed", sourceKey: `${r.model}/turn-${r.turn}` })
          .returning({ id: schema.responses.id })
          .get().id;
        summary.responses++;
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

    // ── Annotation tasks with labels from three annotators ──
    const now = Math.floor(Date.now() / 1000);
    const label = (
      unitId: number,
      annotatorIndex: number,
      value: unknown,
      extra: { shownOrder?: (number | "reference")[]; penaltyReasons?: Record<string, string[]>; submitted: boolean },
    ) => {
      const assignment = tx
        .insert(schema.assignments)
        .values({
          unitId,
          annotatorId: annotatorIds[annotatorIndex],
          status: extra.submitted ? "submitted" : "pending",
          shownOrder: extra.shownOrder ?? null,
          startedAt: extra.submitted ? now - 3600 : null,
          submittedAt: extra.submitted ? now - 3000 : null,
        })
        .returning({ id: schema.assignments.id })
        .get();
      if (!extra.submitted) return;
      tx.insert(schema.annotations)
        .values({
          assignmentId: assignment.id,
          revision: 1,
          label: value,
          penaltyReasons: extra.penaltyReasons ?? null,
          shownOrder: extra.shownOrder ?? null,
          status: "submitted",
          durationMs: Math.round(4000 + rand() * 40000),
        })
        .run();
      summary.annotations++;
    };
    const noisyYesNo = (truth: boolean, annotator: number) => ((rand() < ANNOTATOR_CARE[annotator]) !== truth ? "Yes" : "No");

    // 1. Checklist appropriateness: every checklist item, all three annotators (k = 3).
    const appropriateness = tx
      .insert(schema.tasks)
      .values({
        projectId: project.id,
        datasetId: benchSet.id,
        kind: "checklist-appropriateness",
        name: "Are these checklist items valid criteria?",
        guidelines:
          "For each checklist item, answer **Yes** if it is a valid criterion for grading answers to this question, **No** otherwise. Use the comment box to say why an item is not valid.",
        overlap: 3,
        seed: 7,
        config: { showReference: true },
        createdBy: researcherId,
      })
      .returning({ id: schema.tasks.id })
      .get();
    summary.tasks++;
    let position = 0;
    for (const t of truths) {
      t.checklistIds.forEach((cid, ci) => {
        const unit = tx
          .insert(schema.units)
          .values({ taskId: appropriateness.id, itemId: t.itemId, checklistItemId: cid, position: position++ })
          .returning({ id: schema.units.id })
          .get();
        for (let a = 0; a < 3; a++) label(unit.id, a, noisyYesNo(t.appropriate[ci], a), { submitted: true });
      });
    }

    // 2. Response satisfaction: for each problem, two responses drawn at random,
    //    every checklist item of each; k = 2 of the three annotators, rotating.
    const satisfaction = tx
      .insert(schema.tasks)
      .values({
        projectId: project.id,
        datasetId: benchSet.id,
        kind: "response-satisfaction",
        name: "Does the response satisfy the checklist item?",
        guidelines: "Read the problem, the response and one checklist item. Answer **Yes** only if the response clearly satisfies the item.",
        overlap: 2,
        seed: 11,
        config: { plan: "all-items-of-sampled-responses", responsesPerItem: 2 },
        createdBy: researcherId,
      })
      .returning({ id: schema.tasks.id })
      .get();
    summary.tasks++;
    position = 0;
    for (const t of truths) {
      for (const r of shuffle(t.responses, rand).slice(0, 2)) {
        t.checklistIds.forEach((cid, ci) => {
          const unit = tx
            .insert(schema.units)
            .values({ taskId: satisfaction.id, itemId: t.itemId, checklistItemId: cid, responseId: r.id, position })
            .returning({ id: schema.units.id })
            .get();
          const first = position % 3;
          const pair = [first, (first + 1) % 3];
          // The last few units are still waiting for their second label.
          pair.forEach((a, k) => label(unit.id, a, noisyYesNo(r.satisfies[ci], a), { submitted: k === 0 || position % 11 !== 0 }));
          position++;
        });
      }
    }

    // 3. Writing quality: every instruction with its responses goes to one annotator; k = 2.
    const writingTask = tx
      .insert(schema.tasks)
      .values({
        projectId: project.id,
        datasetId: writingSet.id,
        kind: "writing-quality",
        name: "Score each writing from 1 to 5",
        guidelines:
          "The reference is a **4**. Give 5 to a writing better than the reference, 3 to one that passes but is weaker, and 1–2 with a penalty reason. A safety problem is always 1.",
        overlap: 2,
        seed: 13,
        config: { penaltyReasons: ["consistency", "accuracy", "fluency", "safety"] },
        createdBy: researcherId,
      })
      .returning({ id: schema.tasks.id })
      .get();
    summary.tasks++;
    writingUnits.forEach((w, i) => {
      const ids = w.responses.map((r) => r.id);
      const unit = tx
        .insert(schema.units)
        .values({ taskId: writingTask.id, itemId: w.itemId, responseIds: ids, position: i })
        .returning({ id: schema.units.id })
        .get();
      for (const a of [i % 3, (i + 1) % 3]) {
        const scores: Record<string, number> = {};
        const penalties: Record<string, string[]> = {};
        for (const r of w.responses) {
          const jitter = rand() < ANNOTATOR_CARE[a] * 3 ? (rand() < 0.5 ? -1 : 1) : 0;
          const s = Math.max(1, Math.min(5, r.quality + jitter));
          scores[String(r.id)] = s;
          if (s < 3) penalties[String(r.id)] = [s === 1 ? "accuracy" : "consistency"];
        }
        label(unit.id, a, { scores }, { shownOrder: shuffle(ids, rand), penaltyReasons: penalties, submitted: true });
      }
    });
  });
  return summary;
}
