/**
 * What needs a maintainer's attention in a dataset version:
 * - checklist items the appropriateness task judged invalid (final label "No",
 *   by the task's adjudications where present, else the majority);
 * - near-duplicate items within one checklist (ROUGE-L F ≥ threshold, RefineBench D.3);
 * - items the back-check judge answered "No" on the reference answer.
 * Plus the candidates of reference optimisation: best-of-N units where the
 * annotators preferred a model output over the hidden reference.
 */
import { and, asc, desc, eq, inArray, isNull } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { readConfig } from "~/annotation/config";
import { currentAnnotations } from "~/annotation/tasks.server";
import { checklistAppropriateness, computeFinal } from "~/reports/agreement";
import { findTask, loadTaskData } from "~/reports/load.server";
import { kindsWhere, taskKind } from "~/task-kinds/registry";
import type { TaskKind } from "~/task-kinds/types";
import type * as schema from "../../db/schema";
import { nearDuplicates } from "./nearDuplicates";

type TaskRow = typeof schema.tasks.$inferSelect;
/** A kind whose label picks one of the compared responses, the reference possibly hidden among them. */
const picksAmongReference = (k: TaskKind) => k.coding.pick !== undefined && k.settings.includes("includeReference");

export const DEFAULT_DUPLICATE_THRESHOLD = 0.7;

export type Flag =
  | { kind: "inappropriate"; checklistItemId: number; itemId: number; taskId: number; yesVotes: number; noVotes: number }
  | { kind: "duplicate"; checklistItemId: number; itemId: number; otherId: number; f: number }
  | { kind: "back-check"; checklistItemId: number; itemId: number; answer: string; judge: string; eventId: number };

export async function activeChecklists(datasetId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { checklistItems: c, items } = d.t;
  return d.q
    .select({
      id: c.id,
      itemId: c.itemId,
      text: c.text,
      weight: c.weight,
      position: c.position,
      version: c.version,
    })
    .from(c)
    .innerJoin(items, eq(items.id, c.itemId))
    .where(and(eq(items.datasetId, datasetId), isNull(c.retiredAt)))
    .orderBy(asc(c.itemId), asc(c.position));
}

export async function inappropriateFlags(projectId: number, datasetId: number, db: DalLike = getDal()): Promise<Flag[]> {
  const d = dalOf(db);
  const tt = d.t.tasks;
  const tasks = await d.q
    .select({ id: tt.id })
    .from(tt)
    // The kinds whose reports judge checklist items (checklist appropriateness).
    .where(
      and(
        eq(tt.datasetId, datasetId),
        inArray(tt.kind, kindsWhere((k) => k.reportExtras?.includes("checklist") === true) as TaskRow["kind"][]),
      ),
    );
  const out: Flag[] = [];
  for (const t of tasks) {
    const task = await findTask(projectId, t.id, d);
    if (!task) continue;
    const data = await loadTaskData(task, {}, d);
    const hasAdjudications = Object.keys(readConfig(task.config).adjudications ?? {}).length > 0;
    const report = checklistAppropriateness(data, computeFinal(data, hasAdjudications ? "adjudication" : "majority"));
    for (const r of report.inappropriate) {
      out.push({
        kind: "inappropriate",
        checklistItemId: r.checklistItemId,
        itemId: r.itemId,
        taskId: t.id,
        yesVotes: r.yesVotes,
        noVotes: r.noVotes,
      });
    }
  }
  return out;
}

export function duplicateFlags(
  checklists: { id: number; itemId: number; text: string }[],
  threshold = DEFAULT_DUPLICATE_THRESHOLD,
): Flag[] {
  const byItem = new Map<number, { id: number; text: string }[]>();
  for (const c of checklists) (byItem.get(c.itemId) ?? byItem.set(c.itemId, []).get(c.itemId)!).push(c);
  const out: Flag[] = [];
  for (const [itemId, list] of byItem) {
    for (const p of nearDuplicates(list, threshold)) {
      out.push({ kind: "duplicate", checklistItemId: p.b, itemId, otherId: p.a, f: p.f });
    }
  }
  return out;
}

/** Back-check results are curation events (entity "checklist-item", action "back-check"); the latest per item counts. */
export type BackCheckResult = {
  judge: string;
  referenceVersion: number | null;
  answers: Record<string, "Yes" | "No" | "unparsed">;
  rawOutput: string;
};

export async function backCheckFlags(datasetId: number, activeIds: Set<number>, db: DalLike = getDal()): Promise<Flag[]> {
  const d = dalOf(db);
  const ev = d.t.curationEvents;
  const events = await d.q
    .select({ id: ev.id, itemId: ev.itemId, after: ev.after })
    .from(ev)
    .where(and(eq(ev.datasetId, datasetId), eq(ev.action, "back-check")))
    .orderBy(desc(ev.id));
  const seen = new Set<number>();
  const out: Flag[] = [];
  for (const e of events) {
    if (e.itemId == null || seen.has(e.itemId)) continue;
    seen.add(e.itemId);
    const r = e.after as BackCheckResult;
    for (const [id, answer] of Object.entries(r.answers ?? {})) {
      if (answer !== "Yes" && activeIds.has(Number(id))) {
        out.push({ kind: "back-check", checklistItemId: Number(id), itemId: e.itemId, answer, judge: r.judge, eventId: e.id });
      }
    }
  }
  return out;
}

export async function allFlags(projectId: number, datasetId: number, threshold = DEFAULT_DUPLICATE_THRESHOLD, db: DalLike = getDal()) {
  const d = dalOf(db);
  const checklists = await activeChecklists(datasetId, d);
  const active = new Set(checklists.map((c) => c.id));
  const flags = [
    ...(await inappropriateFlags(projectId, datasetId, d)).filter((f) => active.has(f.checklistItemId)),
    ...duplicateFlags(checklists, threshold),
    ...(await backCheckFlags(datasetId, active, d)),
  ];
  return { checklists, flags };
}

export type PromotionCandidate = {
  taskId: number;
  unitId: number;
  itemId: number;
  responseId: number;
  /** "majority" of the submitted picks, or "adjudication" when a researcher recorded the final pick. */
  rule: "majority" | "adjudication";
  /** Votes for this response, for the reference, for other responses, and ties. */
  votes: { response: number; reference: number; others: number; ties: number };
  annotationIds: number[];
  promoted: boolean;
};

/**
 * Best-of-N units with the reference hidden among the responses where the
 * annotators' majority (strictly more than any other choice, the reference
 * included) picked one model response.
 */
export async function promotionCandidates(datasetId: number, db: DalLike = getDal()): Promise<PromotionCandidate[]> {
  const d = dalOf(db);
  const { tasks: tt, units: ut, annotations: at, references: rt } = d.t;
  const tasks = (
    await d.q
      .select({ id: tt.id, kind: tt.kind, config: tt.config })
      .from(tt)
      // The kinds that pick one of the compared responses, the reference possibly among them (best-of-N).
      .where(and(eq(tt.datasetId, datasetId), inArray(tt.kind, kindsWhere(picksAmongReference) as TaskRow["kind"][])))
  ).filter((t) => readConfig(t.config).includeReference === true);
  const out: PromotionCandidate[] = [];
  for (const t of tasks) {
    const units = new Map(
      (await d.q.select({ id: ut.id, itemId: ut.itemId, responseIds: ut.responseIds }).from(ut).where(eq(ut.taskId, t.id)))
        .filter((u) => u.responseIds?.includes("reference"))
        .map((u) => [u.id, u]),
    );
    const adjudications = readConfig(t.config).adjudications ?? {};
    const byUnit = new Map<number, { best: unknown; assignmentId: number }[]>();
    for (const a of await currentAnnotations(t.id, d)) {
      if (a.status !== "submitted" || !units.has(a.unitId)) continue;
      const best = taskKind(t.kind).coding.pick!(a.label);
      (byUnit.get(a.unitId) ?? byUnit.set(a.unitId, []).get(a.unitId)!).push({ best, assignmentId: a.assignmentId });
    }
    for (const [unitId, votes] of byUnit) {
      const tally = new Map<string, number>();
      for (const v of votes) tally.set(String(v.best), (tally.get(String(v.best)) ?? 0) + 1);
      const ranked = [...tally].sort((a, b) => b[1] - a[1]);
      const adjudicatedLabel = adjudications[String(unitId)]?.label;
      const adjudicated = adjudicatedLabel === undefined ? undefined : taskKind(t.kind).coding.pick!(adjudicatedLabel);
      // The task's rule: an adjudicated pick wins; otherwise a strict majority.
      const top: [string, number] | undefined =
        adjudicated !== undefined ? [String(adjudicated), tally.get(String(adjudicated)) ?? 0] : ranked[0];
      if (!top || top[0] === "reference" || top[0] === "tie" || top[0] === "undefined") continue;
      if (adjudicated === undefined && ranked[1] && ranked[1][1] === top[1]) continue;
      const responseId = Number(top[0]);
      if (!Number.isInteger(responseId)) continue;
      const unit = units.get(unitId)!;
      out.push({
        taskId: t.id,
        unitId,
        itemId: unit.itemId,
        responseId,
        rule: adjudicated !== undefined ? "adjudication" : "majority",
        votes: {
          response: top[1],
          reference: tally.get("reference") ?? 0,
          ties: tally.get("tie") ?? 0,
          others: votes.length - top[1] - (tally.get("reference") ?? 0) - (tally.get("tie") ?? 0),
        },
        annotationIds: [],
        promoted: false,
      });
      const assignmentIds = votes.filter((v) => String(v.best) === top[0]).map((v) => v.assignmentId);
      out[out.length - 1].annotationIds = (
        await d.q
          .select({ id: at.id, assignmentId: at.assignmentId, revision: at.revision })
          .from(at)
          .where(inArray(at.assignmentId, assignmentIds))
          .orderBy(desc(at.revision))
      )
        .filter((row, i, all) => all.findIndex((r) => r.assignmentId === row.assignmentId) === i)
        .map((r) => r.id)
        .sort((a, b) => a - b);
    }
  }
  if (out.length > 0) {
    const promoted = new Set(
      (
        await d.q
          .select({ responseId: rt.promotedFromResponseId })
          .from(rt)
          .where(inArray(rt.itemId, [...new Set(out.map((c) => c.itemId))]))
      ).map((r) => r.responseId),
    );
    for (const c of out) c.promoted = promoted.has(c.responseId);
  }
  return out;
}
