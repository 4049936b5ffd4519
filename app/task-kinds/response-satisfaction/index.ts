/**
 * Response satisfaction: does the response satisfy the checklist item? Yes/No with an
 * optional comment; units by one of three sampling plans (RefineBench E.4 "paper", every
 * checklist item of m sampled responses, or a fixed number per stratum).
 */
import { pick, rng, sample } from "~/annotation/random";
import { SamplingError } from "../shared/errors";
import { filterResponses } from "../shared/form";
import { sampleItems } from "../shared/items";
import { yesNo } from "../shared/yes-no";
import { defineKind, type Candidate, type UnitSpec } from "../types";

export const responseSatisfaction = defineKind({
  id: "response-satisfaction",
  title: "Response satisfaction",
  // Its client parts, each a chunk of its own in the browser build (literal dynamic imports).
  form: () => import("./form").then((m) => m.responseSatisfactionForm),
  fields: () => import("./fields").then((m) => m.responseSatisfactionFields),
  plans: ["paper", "all-items-of-sampled-responses", "stratified"],
  settings: ["plan", "models", "turn", "responsesPerItem", "strata", "perStratum", "showReference"],
  showsReference: (config) => config.showReference === true,
  labelsJudgeReference: false,
  goldShowsReference: false,
  buildUnits(candidates, config, seed) {
    const items = sampleItems(candidates, config, seed);
    const out: UnitSpec[] = [];
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
    return out;
  },
  ...yesNo,
});
