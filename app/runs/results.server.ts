/** A run's stored responses and verdicts, turned into the protocol's tables. */
import { and, asc, eq, inArray } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { c3eScores, taskTypeOf } from "./protocols/c3ebench";
import { fbBenchScores, fbScore, type FbScenario } from "./protocols/fbbench";
import { knownItemIds, refineBenchMetrics, RefineBenchConfig, type RbObservation } from "./protocols/refinebench";
import { selfCorrectionMetrics, type Condition } from "./protocols/selfcorrection";
import type { StoredRunConfig } from "./runner.server";

export function runRow(db: Db, projectId: number, runId: number) {
  return db.select().from(schema.runs).where(and(eq(schema.runs.id, runId), eq(schema.runs.projectId, projectId))).get();
}

function load(db: Db, runId: number) {
  const responses = db.select().from(schema.responses).where(eq(schema.responses.runId, runId)).orderBy(asc(schema.responses.id)).all();
  const verdicts = db.select().from(schema.verdicts).where(eq(schema.verdicts.runId, runId)).all();
  return { responses, verdicts };
}

export type RunResults =
  | { protocol: "refinebench"; judge: string; setting: string; maxTurns: number; metrics: ReturnType<typeof refineBenchMetrics>; parse: ParseCounts }
  | { protocol: "self-correction"; judge: string; metrics: ReturnType<typeof selfCorrectionMetrics>; parse: ParseCounts }
  | { protocol: "fb-bench"; judge: string; rule: "any" | "all"; metrics: ReturnType<typeof fbBenchScores>; parse: ParseCounts }
  | { protocol: "c3ebench"; judge: string; metrics: ReturnType<typeof c3eScores>; parse: ParseCounts }
  | { protocol: string; judge: string; metrics: null; parse: ParseCounts };

type ParseCounts = { ok: number; partial: number; failed: number };

/** Tables for the run, scored by one judge (default: the run's first). */
export function runResults(db: Db, run: typeof schema.runs.$inferSelect, judgeId?: number): RunResults {
  const cfg = run.config as unknown as StoredRunConfig;
  const judge = cfg.judges.find((j) => j.judgeId === judgeId) ?? cfg.judges[0];
  const { responses, verdicts: all } = load(db, run.id);
  const verdicts = all.filter((v) => v.judgeId === judge.judgeId);
  const parse: ParseCounts = { ok: 0, partial: 0, failed: 0 };
  for (const v of verdicts) parse[v.parseStatus]++;
  const byResponse = new Map<number, typeof verdicts>();
  for (const v of verdicts) byResponse.set(v.responseId, [...(byResponse.get(v.responseId) ?? []), v]);

  if (run.protocol === "refinebench") {
    const settings = RefineBenchConfig.parse(cfg.settings);
    const obs: RbObservation[] = responses.map((r) => ({
      model: r.model,
      itemId: r.itemId,
      turn: r.turn,
      terminated: Boolean((r.metadata as Record<string, unknown>).terminated),
      verdicts: (byResponse.get(r.id) ?? []).map((v) => ({ checklistItemId: v.checklistItemId!, value: v.value as "Yes" | "No" | null })),
    }));
    let knownIds: Map<number, Set<number>> | undefined;
    if (settings.setting === "partially-guided") {
      knownIds = new Map();
      const itemIds = [...new Set(responses.map((r) => r.itemId))];
      const cl = itemIds.length ? db.select().from(schema.checklistItems).where(inArray(schema.checklistItems.itemId, itemIds)).all() : [];
      for (const id of itemIds) knownIds.set(id, new Set(knownItemIds(cl.filter((c) => c.itemId === id && c.retiredAt == null).sort((a, b) => a.position - b.position || a.id - b.id), settings.knownRatio, settings.seed, id)));
    }
    return { protocol: "refinebench", judge: judge.name, setting: settings.setting, maxTurns: settings.maxTurns, metrics: refineBenchMetrics(obs, { maxTurns: settings.maxTurns, knownIds }), parse };
  }
  if (run.protocol === "self-correction") {
    const obs = responses.map((r) => {
      const md = r.metadata as Record<string, unknown>;
      const v = byResponse.get(r.id)?.[0];
      return { model: r.model, dataset: String(md.dataset ?? ""), condition: md.condition as Condition, correct: v?.value == null ? null : v.value === "Yes", reply: r.text };
    });
    return { protocol: "self-correction", judge: judge.name, metrics: selfCorrectionMetrics(obs), parse };
  }
  if (run.protocol === "fb-bench") {
    const rule = (cfg.settings.maintenanceRule as "any" | "all") ?? "any";
    const itemIds = [...new Set(responses.map((r) => r.itemId))];
    const items = itemIds.length ? db.select().from(schema.items).where(inArray(schema.items.id, itemIds)).all() : [];
    const cl = itemIds.length ? db.select().from(schema.checklistItems).where(inArray(schema.checklistItems.itemId, itemIds)).all() : [];
    const weight = new Map(cl.map((c) => [c.id, c.weight]));
    const obs = responses.map((r) => {
      const md = (items.find((i) => i.id === r.itemId)?.metadata ?? {}) as Record<string, unknown>;
      const vs = byResponse.get(r.id) ?? [];
      const scenario = (String(md.scenario ?? "error_correction") === "response_maintenance" ? "response_maintenance" : "error_correction") as FbScenario;
      const str = (k: string) => (md[k] == null ? null : String(md[k]));
      return {
        model: r.model,
        scenario,
        task: str("task"),
        feedbackType: str("feedbackType") ?? str("feedback_type"),
        deficiencyType: str("deficiencyType") ?? str("deficiency_type"),
        score: vs.length ? fbScore(scenario, vs.map((v) => ({ weight: weight.get(v.checklistItemId!) ?? null, met: v.value == null ? null : v.value === "Yes" })), rule) : null,
      };
    });
    return { protocol: "fb-bench", judge: judge.name, rule, metrics: fbBenchScores(obs, rule), parse };
  }
  if (run.protocol === "c3ebench") {
    const obs = responses.map((r) => ({ model: r.model, taskType: taskTypeOf(String((r.metadata as Record<string, unknown>).taskType ?? "")), score: byResponse.get(r.id)?.[0]?.score ?? null }));
    return { protocol: "c3ebench", judge: judge.name, metrics: c3eScores(obs), parse };
  }
  return { protocol: run.protocol, judge: judge.name, metrics: null, parse };
}

/** Every response of one conversation (item × model) with every verdict on it. */
export function conversation(db: Db, runId: number, itemId: number, model: string) {
  const item = db.select({ id: schema.items.id, sourceId: schema.items.sourceId, query: schema.items.query }).from(schema.items).where(eq(schema.items.id, itemId)).get();
  const responses = db
    .select()
    .from(schema.responses)
    .where(and(eq(schema.responses.runId, runId), eq(schema.responses.itemId, itemId), eq(schema.responses.model, model)))
    .orderBy(asc(schema.responses.turn), asc(schema.responses.id))
    .all();
  const ids = responses.map((r) => r.id);
  const verdicts = ids.length
    ? db
        .select({ v: schema.verdicts, judge: schema.judges.name, checklist: schema.checklistItems.text })
        .from(schema.verdicts)
        .innerJoin(schema.judges, eq(schema.judges.id, schema.verdicts.judgeId))
        .leftJoin(schema.checklistItems, eq(schema.checklistItems.id, schema.verdicts.checklistItemId))
        .where(inArray(schema.verdicts.responseId, ids))
        .all()
    : [];
  return {
    item,
    turns: responses.map((r) => ({
      id: r.id,
      turn: r.turn,
      text: r.text,
      metadata: r.metadata,
      verdicts: verdicts
        .filter((x) => x.v.responseId === r.id)
        .map((x) => ({ id: x.v.id, judge: x.judge, checklist: x.checklist, value: x.v.value, score: x.v.score, parseStatus: x.v.parseStatus, rawOutput: x.v.rawOutput })),
    })),
  };
}

/** Conversations of a run for the drill-down list (item × model). */
export function conversationList(db: Db, runId: number, limit = 200) {
  return db.$client
    .prepare(
      `SELECT r.item_id AS itemId, i.source_id AS sourceId, r.model, MAX(r.turn) AS turns,
              (SELECT COUNT(*) FROM verdicts v JOIN responses r2 ON r2.id = v.response_id WHERE r2.run_id = r.run_id AND r2.item_id = r.item_id AND r2.model = r.model AND v.parse_status = 'failed') AS failed
       FROM responses r JOIN items i ON i.id = r.item_id WHERE r.run_id = ? GROUP BY r.item_id, r.model ORDER BY r.item_id, r.model LIMIT ?`,
    )
    .all(runId, limit) as { itemId: number; sourceId: string; model: string; turns: number; failed: number }[];
}
