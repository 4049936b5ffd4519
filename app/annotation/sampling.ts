/**
 * Sampling plans: which units a task is made of. Pure functions over the
 * dataset's candidates; the same seed always gives the same units.
 */
import type { AnnotatableKind, TaskConfig } from "./config";
import { pick, rng, sample, shuffle } from "./random";

export type Candidate = {
  id: number;
  domain: string | null;
  hasReference: boolean;
  checklist: { id: number }[];
  responses: { id: number; model: string; turn: number }[];
};

export type UnitSpec = {
  itemId: number;
  checklistItemId?: number | null;
  responseId?: number | null;
  responseIds?: (number | "reference")[] | null;
};

export class SamplingError extends Error {
  constructor(message: string) {
    super(`sampling: ${message}`);
    this.name = "SamplingError";
  }
}

function filterResponses(c: Candidate, config: TaskConfig) {
  return c.responses
    .filter((r) => !config.models?.length || config.models.includes(r.model))
    .filter((r) => config.turn == null || r.turn === config.turn)
    .sort((a, b) => a.id - b.id);
}

export function buildUnits(kind: AnnotatableKind, candidates: Candidate[], config: TaskConfig, seed: number): UnitSpec[] {
  let items = [...candidates].sort((a, b) => a.id - b.id);
  if (config.itemLimit && config.itemLimit < items.length) {
    const chosen = new Set(sample(items, config.itemLimit, rng("items", seed)).map((i) => i.id));
    items = items.filter((i) => chosen.has(i.id));
  }
  const out: UnitSpec[] = [];
  switch (kind) {
    case "checklist-appropriateness":
      for (const it of items) for (const c of it.checklist) out.push({ itemId: it.id, checklistItemId: c.id });
      break;
    case "response-satisfaction": {
      const plan = config.plan ?? "paper";
      if (plan === "paper") {
        // RefineBench E.4: per problem, one checklist item and one response, drawn at random.
        for (const it of items) {
          const rs = filterResponses(it, config);
          if (rs.length === 0 || it.checklist.length === 0) continue;
          const rand = rng("paper", seed, it.id);
          const c = pick(it.checklist, rand);
          const r = pick(rs, rand);
          out.push({ itemId: it.id, checklistItemId: c.id, responseId: r.id });
        }
      } else if (plan === "all-items-of-sampled-responses") {
        const m = config.responsesPerItem ?? 1;
        for (const it of items) {
          const rs = sample(filterResponses(it, config), m, rng("responses", seed, it.id)).sort((a, b) => a.id - b.id);
          for (const r of rs) for (const c of it.checklist) out.push({ itemId: it.id, checklistItemId: c.id, responseId: r.id });
        }
      } else if (plan === "stratified") {
        const by = config.strata ?? "model";
        const per = config.perStratum ?? 5;
        const strata = new Map<string, { it: Candidate; r: Candidate["responses"][number] }[]>();
        for (const it of items) {
          if (it.checklist.length === 0) continue;
          for (const r of filterResponses(it, config)) {
            const key = by === "model" ? r.model : by === "turn" ? String(r.turn) : (it.domain ?? "(none)");
            if (!strata.has(key)) strata.set(key, []);
            strata.get(key)!.push({ it, r });
          }
        }
        for (const key of [...strata.keys()].sort()) {
          const rand = rng("stratum", seed, key);
          for (const { it, r } of sample(strata.get(key)!, per, rand)) {
            out.push({ itemId: it.id, checklistItemId: pick(it.checklist, rand).id, responseId: r.id });
          }
        }
      } else throw new SamplingError(`unknown plan "${plan}" for response satisfaction`);
      break;
    }
    case "writing-quality":
      for (const it of items) {
        const rs = filterResponses(it, config);
        if (rs.length > 0) out.push({ itemId: it.id, responseIds: rs.map((r) => r.id) });
      }
      break;
    case "best-of-n": {
      const n = config.n ?? 4;
      const withRef = config.includeReference === true;
      for (const it of items) {
        const rand = rng("bestofn", seed, it.id);
        const ref = withRef && it.hasReference;
        const ids: (number | "reference")[] = sample(filterResponses(it, config), ref ? n - 1 : n, rand).map((r) => r.id);
        if (ref) ids.push("reference");
        if (ids.length >= 2) out.push({ itemId: it.id, responseIds: ids });
      }
      break;
    }
  }
  return out;
}

/** The positions of gold units: a seeded share `rate` of the units (at least one if rate > 0). */
export function chooseGold(unitCount: number, rate: number, seed: number): Set<number> {
  if (!(rate > 0) || unitCount === 0) return new Set();
  const k = Math.min(unitCount, Math.max(1, Math.round(unitCount * rate)));
  return new Set(shuffle([...Array(unitCount).keys()], rng("gold", seed)).slice(0, k));
}
