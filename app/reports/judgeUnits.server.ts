/**
 * The candidates of the units of a kind whose label picks one of the shown responses
 * (best-of-N: coding.pick), for matching judges' verdicts to those units in the judge–human
 * table (./judgeAgreementReport). A unit shows several responses, so no single response
 * stands for it: a judge's pick is a verdict (no checklist item) on one of the unit's
 * responses whose value names the response it picked — its model name or response key — or
 * "tie" / "reference". Each candidate carries its slot, the letter the human labels are coded
 * by (best-of-n pickSlot: "A" for the unit's first response, "B" for the second, …).
 */
import { sql } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";

export interface PickCandidate {
  responseId: number;
  /** The slot letter of the candidate among the unit's responses (the reference excluded). */
  slot: string;
  /** How a verdict may name it: the model name, the response key. */
  names: string[];
}

/** unit id → its candidates, in the unit's own order. */
export type PickCandidates = Map<number, PickCandidate[]>;

export async function loadPickCandidates(taskId: number, db: DalLike = getDal()): Promise<PickCandidates> {
  const d = dalOf(db);
  const units = (await d.arrays(sql`SELECT id, response_ids FROM units WHERE task_id = ${taskId} AND response_ids IS NOT NULL`)) as [
    number,
    unknown,
  ][];
  const responses = (await d.arrays(
    sql`SELECT r.id, r.model, r.source_key FROM responses r WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ${taskId})`,
  )) as [number, string, string][];
  const byId = new Map(responses.map(([id, model, key]) => [id, [model, key].filter((x) => x != null && x !== "")]));
  const out: PickCandidates = new Map();
  for (const [unitId, raw] of units) {
    let ids: unknown = raw; // jsonb arrives parsed from PostgreSQL, text from SQLite
    if (typeof raw === "string")
      try {
        ids = JSON.parse(raw);
      } catch {
        continue;
      }
    if (!Array.isArray(ids)) continue;
    const list: PickCandidate[] = [];
    for (const id of ids) {
      if (id === "reference" || typeof id !== "number") continue;
      list.push({ responseId: id, slot: String.fromCharCode(65 + list.length), names: byId.get(id) ?? [] });
    }
    out.set(unitId, list);
  }
  return out;
}
