/**
 * Shared steps of the protocol integration tests: import a file through its
 * real preset, add a target and judges served by the local fake endpoint, run
 * to the end, and small independent helpers (written here, not taken from the
 * app) that the tests use to compute the expected numbers.
 */
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { schema, type Db } from "../../db/client";
import { runImport } from "../../app/formats/import.server";
import { runResultsAll } from "../../app/runs/results.server";
import { Worker } from "../../app/runs/runner.server";

export const FIXTURES = path.resolve(__dirname, "../fixtures/runs");
export const SHARED = path.resolve(__dirname, "../../../shared/data");
export const hasShared = (rel: string) => fs.existsSync(path.join(SHARED, rel));

export async function importThrough(dbFile: string, projectSlug: string, preset: string, file: string) {
  const s = await runImport({ databaseFile: dbFile, projectSlug, preset, file });
  expect(s.errors).toEqual([]);
  expect(s.committed || s.unchanged).toBe(true);
  return s.dataset!.id!;
}

/** A target ("target") and judges ("judge", "judge2") on the fake server; no retries, so a scripted error is a failed job. */
export function addProviders(db: Db, projectId: number, baseUrl: string, extra: Record<string, unknown> = {}) {
  const settings = { timeoutMs: 10_000, maxRetries: 0, backoffBaseMs: 1, backoffMaxMs: 2, ...extra };
  for (const [name, model] of [
    ["target", "target-model"],
    ["judge", "judge-model"],
    ["judge2", "judge-model-2"],
  ])
    db.insert(schema.providers)
      .values({ projectId, name, kind: "openai-compatible", baseUrl, apiKey: "sk-test", model, settings, concurrency: 8 })
      .run();
}

export async function runToEnd(db: Db, runId: number) {
  await new Worker(db, { concurrency: 8, pollMs: 10, untilIdle: true, runId, leaseMs: 30_000 }).start().done;
  return db.select().from(schema.runs).where(eq(schema.runs.id, runId)).get()!;
}

export function projectIdOf(db: Db, slug: string) {
  return db.select().from(schema.projects).where(eq(schema.projects.slug, slug)).get()!.id;
}

/** A deterministic, content-derived number the fake judges use (and the tests recompute). */
export function codeSum(s: string): number {
  let n = 0;
  for (const ch of s) n += ch.codePointAt(0)!;
  return n;
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export type ChatMsg = { role: string; content: string };
export const messagesOf = (body: Record<string, unknown>) => (body.messages ?? []) as ChatMsg[];

/**
 * The fake judge of the guided RefineBench runs: given the judge prompt's last message, checklist item q is
 * satisfied by the turn-t answer ("Answer vt") when (code-point sum of q) mod 3 < t; one "Qn: Yes|No" line per item.
 */
export function guidedJudgeReply(last: string): string {
  const section = last.split("### Checklist (Evaluation Items)\n")[1].split("\n\n### Output Format")[0];
  const turn = Number(/### Model’s Answer:\nAnswer v(\d+)/.exec(last)![1]);
  return section
    .split("\n")
    .map((l) => /^(Q\d+): (.*)$/.exec(l)!)
    .map((m) => `${m[1]}: ${codeSum(m[2]) % 3 < turn ? "Yes" : "No"}`)
    .join("\n");
}

/**
 * A RefineBench file in the released layout (refinebench_samples.json's keys: records grouped by
 * field), with `items` arithmetic problems of three checklist items each.
 */
export function writeRefineBench(file: string, items: number): void {
  const rec = (i: number) => ({
    index: `p-${i}`,
    field: "Math",
    subject: "Arithmetic",
    question: `What is ${i} + ${i * 7}? Show the sum.`,
    reference_answer: [String(i * 8)],
    materials: [],
    comment: [],
    checklist: [`Does the response add ${i} and ${i * 7}?`, `Does the response give ${i * 8}?`, `Is the sum for problem ${i} shown?`],
    institution: "Concord tests",
    year: "2026",
    month: "12",
    exam_type: "Exact Match",
    problem_set: "Set P",
    sub_problem: "",
  });
  fs.writeFileSync(file, JSON.stringify({ Math: Array.from({ length: items }, (_, i) => rec(i + 1)) }));
}

/**
 * What a run's results pages show, per judge, and its jobs, responses and verdicts as
 * (response, item, value) — ids left out, so runs stored by different workers or copied between
 * databases compare equal when their content is.
 */
export async function runFigures(db: Db, runId: number) {
  const run = db.select().from(schema.runs).where(eq(schema.runs.id, runId)).get()!;
  const verdicts = db.$client
    .prepare(
      `SELECT r.source_key AS response, c.text AS item, v.value, v.parse_status AS parse FROM verdicts v
       JOIN responses r ON r.id = v.response_id LEFT JOIN checklist_items c ON c.id = v.checklist_item_id
       WHERE v.run_id = ? ORDER BY r.source_key, c.text`,
    )
    .all(runId);
  const responses = db.$client.prepare(`SELECT source_key, turn, text FROM responses WHERE run_id = ? ORDER BY source_key`).all(runId);
  const jobs = db.$client.prepare(`SELECT key, status, attempts > 0 AS tried FROM jobs WHERE run_id = ? ORDER BY key`).all(runId);
  return { status: run.status, results: await runResultsAll(db, run), verdicts, responses, jobs };
}
