/**
 * The human value of a calibration unit.
 *
 * The human value of a unit is the strict majority of its submitted Yes/No
 * labels (the latest revision of each annotator). A split (no strict
 * majority) is left out, or — when the researcher chooses adjudication — takes
 * the adjudicated label, and is left out while not adjudicated; the report
 * counts what each rule dropped. C3EBench writings take the mean of their
 * annotators' 1–10 scores (humanScores).
 */
import { asc, eq, sql } from "drizzle-orm";
import { dalOf, first, type Dal, type DalLike } from "../dal.server";
import { readConfig } from "../annotation/config";
import { unitKey } from "./protocols/calibration";
import type { SplitRule } from "./calibration-sampling.server";
import { orderFreeMean } from "../stats/orderFreeSum";

export type HumanCounts = {
  units: number;
  /** Units with a human value under the rule. */
  valued: number;
  /** Dropped: no submitted label yet. */
  unlabelled: number;
  /** Dropped: a split (no strict majority) without an adjudication under the rule. */
  splitDropped: number;
  /** Splits resolved by adjudication (rule "adjudicate"). */
  adjudicated: number;
};

/**
 * The latest submitted label of each assignment of the task's units (JSON text on SQLite, a parsed jsonb value on
 * PostgreSQL: the readers below take either), in assignment order.
 */
async function latestLabels(d: Dal, taskId: number): Promise<{ unitId: number; label: unknown }[]> {
  const rows = await d.rows<{ unitId: number | string; label: unknown }>(
    sql`SELECT a.unit_id AS "unitId", an.label FROM units u JOIN assignments a ON a.unit_id = u.id JOIN annotations an ON an.assignment_id = a.id
        WHERE u.task_id = ${taskId} AND an.status = 'submitted'
          AND an.revision = (SELECT MAX(revision) FROM annotations x WHERE x.assignment_id = a.id AND x.status = 'submitted')
        ORDER BY a.id`,
  );
  return rows.map((r) => ({ unitId: Number(r.unitId), label: r.label }));
}

/** The task's row and its units (id, response ids), in position order. */
async function taskUnits(d: Dal, taskId: number) {
  const { tasks, units } = d.t;
  const [task, us] = await Promise.all([
    d.q.select().from(tasks).where(eq(tasks.id, taskId)).then(first),
    d.q
      .select({ id: units.id, responseIds: units.responseIds })
      .from(units)
      .where(eq(units.taskId, taskId))
      .orderBy(asc(units.position), asc(units.id)),
  ]);
  return { task, units: us };
}

/** The human value (1 = Yes) of each unit: strict majority of submitted labels; splits left out or adjudicated. */
export async function humanValues(
  db: DalLike,
  taskId: number,
  rule: SplitRule,
): Promise<{ values: Map<number, number>; counts: HumanCounts }> {
  const d = dalOf(db);
  const [{ task, units }, labels] = await Promise.all([taskUnits(d, taskId), latestLabels(d, taskId)]);
  const ids = units.map((u) => u.id);
  const yesNo = (raw: unknown): number | null => {
    let v = raw;
    if (typeof raw === "string") {
      try {
        v = JSON.parse(raw);
      } catch {
        v = raw;
      }
    }
    return v === "Yes" ? 1 : v === "No" ? 0 : null;
  };
  const byUnit = new Map<number, number[]>();
  for (const l of labels) {
    const v = yesNo(l.label);
    if (v !== null) byUnit.set(l.unitId, [...(byUnit.get(l.unitId) ?? []), v]);
  }
  const adjudications = readConfig(task?.config).adjudications ?? {};
  const values = new Map<number, number>();
  const counts: HumanCounts = { units: ids.length, valued: 0, unlabelled: 0, splitDropped: 0, adjudicated: 0 };
  for (const id of ids) {
    const xs = byUnit.get(id);
    if (!xs || xs.length === 0) {
      counts.unlabelled++;
      continue;
    }
    const yes = xs.filter((x) => x === 1).length;
    if (2 * yes > xs.length) values.set(id, 1);
    else if (2 * yes < xs.length) values.set(id, 0);
    else {
      const adj = rule === "adjudicate" ? yesNo(adjudications[String(id)]?.label) : null;
      if (adj === null) {
        counts.splitDropped++;
        continue;
      }
      values.set(id, adj);
      counts.adjudicated++;
    }
  }
  counts.valued = values.size;
  return { values, counts };
}

/**
 * The human 1–10 score of each writing of a C3EBench calibration task: the mean of its annotators' latest submitted
 * scores; with the "adjudicate" rule, a unit with an adjudicated label takes the adjudicated scores.
 */
export async function humanScores(
  db: DalLike,
  taskId: number,
  rule: SplitRule,
): Promise<{ values: Map<string, number>; counts: HumanCounts }> {
  const d = dalOf(db);
  const [{ task, units }, labels] = await Promise.all([taskUnits(d, taskId), latestLabels(d, taskId)]);
  const ids = units.map((u) => u.id);
  const scoresOf = (raw: unknown): Record<string, number> => {
    let v = raw;
    if (typeof raw === "string") {
      try {
        v = JSON.parse(raw);
      } catch {
        return {};
      }
    }
    const sc = (v as { scores?: Record<string, unknown> } | null)?.scores ?? {};
    return Object.fromEntries(Object.entries(sc).filter((e): e is [string, number] => typeof e[1] === "number" && Number.isFinite(e[1])));
  };
  const byUnit = new Map<number, Record<string, number>[]>();
  for (const l of labels) byUnit.set(l.unitId, [...(byUnit.get(l.unitId) ?? []), scoresOf(l.label)]);
  const adjudications = readConfig(task?.config).adjudications ?? {};
  const values = new Map<string, number>();
  const counts: HumanCounts = { units: ids.length, valued: 0, unlabelled: 0, splitDropped: 0, adjudicated: 0 };
  for (const u of units) {
    const rids = (u.responseIds ?? []).filter((r): r is number => typeof r === "number");
    const adj = rule === "adjudicate" && adjudications[String(u.id)] ? scoresOf(adjudications[String(u.id)].label) : null;
    const ls = byUnit.get(u.id) ?? [];
    if (adj && rids.every((r) => adj[String(r)] !== undefined)) {
      for (const r of rids) values.set(unitKey(r, null), adj[String(r)]);
      counts.adjudicated++;
      counts.valued++;
      continue;
    }
    if (ls.length === 0) {
      counts.unlabelled++;
      continue;
    }
    let any = false;
    for (const r of rids) {
      const xs = ls.map((l) => l[String(r)]).filter((x): x is number => x !== undefined);
      if (xs.length) {
        values.set(unitKey(r, null), orderFreeMean(xs));
        any = true;
      }
    }
    if (any) counts.valued++;
    else counts.unlabelled++;
  }
  return { values, counts };
}
