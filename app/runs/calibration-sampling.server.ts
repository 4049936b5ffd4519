/**
 * Which verdicts a calibration task labels: the candidate units (the run's
 * first judge's parsed Yes/No verdicts), the sampling plans and each drawn
 * unit's inclusion probability π under its plan, and the task's units and
 * assignments.
 *
 * Units are assigned at once by the annotation module's planner
 * (planAssignments), so the task is labelable as soon as it exists.
 */
import { eq, sql } from "drizzle-orm";
import type { schema } from "../../db/client";
import { dalOf, type Dal, type DalLike, type Q } from "../dal.server";
import { DomainError } from "../errors";
import { planAssignments } from "../annotation/assignment";
import { shownOrderFor } from "../annotation/random";
import { seededRandom } from "../stats";
import { PROTOCOLS } from "./protocols";
import { stratumOf } from "./protocols/calibration";
import type { StoredRunConfig } from "./runner.server";

export type SamplingPlan =
  /** RefineBench E.4: for each problem one checklist item, then one response, at random. */
  | { kind: "e4" }
  /** Up to `perStratum` (response, checklist item) pairs per model × turn (× condition), simple random sampling within the stratum. */
  | { kind: "stratified"; perStratum: number }
  /** Up to `perStratum` whole responses per model × turn (× condition), with every checklist item: needed for Pass_t and response maintenance. */
  | { kind: "responses"; perStratum: number }
  /** A simple random sample of `size` units from the whole run. */
  | { kind: "uniform"; size: number };

export type SplitRule = "exclude" | "adjudicate";

export type Candidate = {
  responseId: number;
  itemId: number;
  checklistItemId: number | null;
  model: string;
  turn: number;
  condition: string | null;
};
export type Drawn = Candidate & { pi: number };

/**
 * A calibration task cannot be made as asked (400). Its message starts with the setting it is
 * about ("pool: choose at least one annotator"), which is then also its `field`.
 */
export class CalibrationError extends DomainError {
  constructor(message: string, field?: string) {
    super(message, { field });
  }
}

/** What a human labels when calibrating this run's protocol (see Protocol.calibration). */
export function calibrationUnit(run: typeof schema.runs.$inferSelect) {
  return PROTOCOLS[run.protocol]?.calibration?.unit ?? "checklist-item";
}

export function primaryJudge(run: typeof schema.runs.$inferSelect): number {
  return (run.config as unknown as StoredRunConfig).judges[0].judgeId;
}

/** The first judge's parsed verdicts of the run, as candidate units. */
export async function candidates(db: DalLike, run: typeof schema.runs.$inferSelect): Promise<Candidate[]> {
  const d = dalOf(db);
  const checklist = sql.raw(calibrationUnit(run) === "response" ? "v.checklist_item_id IS NULL" : "v.checklist_item_id IS NOT NULL");
  type Row = { responseId: number; itemId: number; checklistItemId: number | null; model: string; turn: number; metadata: unknown };
  // r.id breaks ties: (item, checklist item) has one verdict per response of the judge, so the order is the run's content's.
  const rows = await d.rows<Row>(
    sql`SELECT v.response_id AS "responseId", r.item_id AS "itemId", v.checklist_item_id AS "checklistItemId", r.model, r.turn, r.metadata
        FROM verdicts v JOIN responses r ON r.id = v.response_id
        WHERE v.run_id = ${run.id} AND v.judge_id = ${primaryJudge(run)} AND ${checklist}
          AND v.parse_status NOT IN ('failed','unparsed') AND v.value IN ('Yes','No')
        ORDER BY r.item_id, v.checklist_item_id, r.id`,
  );
  return rows.map((r) => {
    const md = jsonObject(r.metadata);
    return {
      responseId: Number(r.responseId),
      itemId: Number(r.itemId),
      checklistItemId: r.checklistItemId == null ? null : Number(r.checklistItemId),
      model: r.model,
      turn: Number(r.turn),
      condition: typeof md.condition === "string" ? md.condition : null,
    };
  });
}

/** A JSON object column of a raw row: text on SQLite, already parsed (jsonb) on PostgreSQL. */
export function jsonObject(v: unknown): Record<string, unknown> {
  const x = typeof v === "string" ? (JSON.parse(v) as unknown) : v;
  return x && typeof x === "object" ? (x as Record<string, unknown>) : {};
}

/** Draws the units and gives each its inclusion probability under the plan. */
export function sampleUnits(all: Candidate[], plan: SamplingPlan, seed: number): Drawn[] {
  const rand = seededRandom(seed);
  const pickIndex = (n: number) => Math.floor(rand() * n);
  const srs = <T>(xs: T[], k: number): T[] => {
    const pool = [...xs];
    const out: T[] = [];
    for (let i = 0; i < k && pool.length; i++) out.push(pool.splice(pickIndex(pool.length), 1)[0]);
    return out;
  };
  const group = <K>(xs: Candidate[], key: (c: Candidate) => K) => {
    const m = new Map<K, Candidate[]>();
    for (const c of xs) m.set(key(c), [...(m.get(key(c)) ?? []), c]);
    return m;
  };
  if (plan.kind === "e4") {
    const out: Drawn[] = [];
    for (const [, cs] of [...group(all, (c) => c.itemId)].sort((a, b) => a[0] - b[0])) {
      const checklistIds = [...new Set(cs.map((c) => c.checklistItemId))].sort((a, b) => (a ?? 0) - (b ?? 0));
      const cid = checklistIds[pickIndex(checklistIds.length)];
      const options = cs.filter((c) => c.checklistItemId === cid).sort((a, b) => a.responseId - b.responseId);
      const chosen = options[pickIndex(options.length)];
      out.push({ ...chosen, pi: 1 / (checklistIds.length * options.length) });
    }
    return out;
  }
  if (plan.kind === "uniform") return srs(all, plan.size).map((c) => ({ ...c, pi: Math.min(1, plan.size / all.length) }));
  const out: Drawn[] = [];
  for (const [, cs] of [...group(all, stratumOf)].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (plan.kind === "stratified") {
      for (const c of srs(cs, plan.perStratum)) out.push({ ...c, pi: Math.min(1, plan.perStratum / cs.length) });
    } else {
      const responses = [...new Set(cs.map((c) => c.responseId))].sort((a, b) => a - b);
      const chosen = new Set(srs(responses, plan.perStratum));
      const pi = Math.min(1, plan.perStratum / responses.length);
      for (const c of cs) if (chosen.has(c.responseId)) out.push({ ...c, pi });
    }
  }
  return out;
}

/**
 * The fewest labelled clusters (units, or whole responses under the whole-responses plan) a stratum needs for
 * its interval to come from the data: with fewer, no spread can be estimated and the stratum's whole range
 * stands inside the interval of every metric it enters (rectifierCI).
 */
export const MIN_PER_STRATUM = 2;

/** A stratum key (stratumOf: model, turn, condition; C3EBench: the task type) as words. */
export function stratumLabel(stratum: string): string {
  const [model, turn, condition] = stratum.split("\u0000");
  if (turn === undefined) return stratum;
  return `${model}, turn ${turn}${condition ? `, ${condition}` : ""}`;
}

/**
 * Warnings for the strata where a plan draws fewer than MIN_PER_STRATUM clusters: `population` and `drawn`
 * give each stratum's number of clusters in the run and in the sample; `noun` names a cluster (singular, plural).
 */
export function thinStrataWarnings(population: Map<string, number>, drawn: Map<string, number>, noun: [string, string]): string[] {
  const thin = [...population.keys()]
    .sort()
    .map((s) => ({ s, k: drawn.get(s) ?? 0, of: population.get(s)! }))
    .filter((x) => x.k < MIN_PER_STRATUM && x.k < x.of);
  if (!thin.length) return [];
  const list = thin.map((x) => `${stratumLabel(x.s)}: ${x.k} of ${x.of}`).join("; ");
  return [
    `${thin.length} ${thin.length === 1 ? "stratum" : "strata"} with fewer than ${MIN_PER_STRATUM} ${noun[1]} drawn (${list}): ` +
      `an interval needs at least ${MIN_PER_STRATUM} labelled ${noun[1]} per stratum, so until then the whole range of ` +
      `${thin.length === 1 ? "that stratum" : "those strata"} stands inside the intervals of the metrics that include ${thin.length === 1 ? "it" : "them"}`,
  ];
}

/** Distinct clusters per stratum. */
export function clustersPerStratum(xs: Iterable<{ stratum: string; cluster: string | number }>): Map<string, number> {
  const seen = new Map<string, Set<string | number>>();
  for (const x of xs) {
    const set = seen.get(x.stratum) ?? new Set();
    set.add(x.cluster);
    seen.set(x.stratum, set);
  }
  return new Map([...seen].map(([s, set]) => [s, set.size]));
}

export function describePlan(plan: SamplingPlan): string {
  if (plan.kind === "e4") return "E.4 plan: one checklist item and one response per problem";
  if (plan.kind === "stratified") return `stratified: up to ${plan.perStratum} units per model × turn`;
  if (plan.kind === "responses") return `whole responses: up to ${plan.perStratum} per model × turn, every checklist item`;
  return `uniform: ${plan.size} units at random`;
}

export type CalibrationUnit = { itemId: number; checklistItemId?: number | null; responseId?: number | null; responseIds?: number[] };

/** Rows per multi-row insert: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const INSERT_CHUNK = 500;

/**
 * Completes a calibration task inside its creating transaction (`tx`, the handle `d.tx` gave): the neutral name
 * ("Judge calibration #id") unless one was given, the units in drawn order (ids ascending with position), and
 * k-overlap assignments from the pool, each with its seeded shown order of the unit's responses. Returns the
 * number of assignments.
 */
export async function fillCalibrationTask(
  d: Dal,
  tx: Q,
  taskId: number,
  neutralName: boolean,
  units: CalibrationUnit[],
  a: { pool: number[]; overlap: number; seed: number },
): Promise<number> {
  const { tasks, units: U, assignments: A } = d.t;
  if (neutralName)
    await tx
      .update(tasks)
      .set({ name: `Judge calibration #${taskId}` })
      .where(eq(tasks.id, taskId));
  const unitIds: number[] = [];
  for (let at = 0; at < units.length; at += INSERT_CHUNK) {
    const chunk = await tx
      .insert(U)
      .values(
        units.slice(at, at + INSERT_CHUNK).map((u, i) => ({
          taskId,
          itemId: u.itemId,
          checklistItemId: u.checklistItemId ?? null,
          responseId: u.responseId ?? null,
          responseIds: u.responseIds ?? null,
          position: at + i,
        })),
      )
      .returning({ id: U.id, position: U.position });
    unitIds.push(...chunk.sort((x, y) => x.position - y.position).map((u) => u.id));
  }
  const plan = planAssignments(unitIds, a.pool, a.overlap, a.seed);
  const rows = unitIds.flatMap((unitId, i) =>
    plan.get(unitId)!.map((annotatorId) => ({
      unitId,
      annotatorId,
      shownOrder: shownOrderFor(units[i].responseIds ?? null, a.seed, unitId, annotatorId),
    })),
  );
  for (let at = 0; at < rows.length; at += INSERT_CHUNK) await tx.insert(A).values(rows.slice(at, at + INSERT_CHUNK));
  return rows.length;
}
