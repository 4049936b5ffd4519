import { describe, expect, it } from "vitest";
import { buildUnits, chooseGold, type Candidate } from "../../../app/annotation/sampling";

const MODELS = ["m1", "m2", "m3"];
const candidates: Candidate[] = Array.from({ length: 12 }, (_, i) => ({
  id: 100 + i,
  domain: i % 2 ? "Math" : "Law",
  hasReference: true,
  checklist: Array.from({ length: 3 + (i % 3) }, (_, c) => ({ id: 1000 + i * 10 + c })),
  responses: MODELS.flatMap((model, m) => [1, 2].map((turn) => ({ id: 5000 + i * 10 + m * 2 + turn, model, turn }))),
}));

describe("sampling plans", () => {
  it("checklist appropriateness: one unit per checklist item", () => {
    const units = buildUnits("checklist-appropriateness", candidates, {}, 1);
    expect(units).toHaveLength(candidates.reduce((s, c) => s + c.checklist.length, 0));
    expect(new Set(units.map((u) => u.checklistItemId)).size).toBe(units.length);
  });

  it("response satisfaction, paper plan: one (item, response) per problem, seeded", () => {
    const a = buildUnits("response-satisfaction", candidates, { plan: "paper", models: ["m1", "m2"] }, 7);
    const b = buildUnits("response-satisfaction", candidates, { plan: "paper", models: ["m1", "m2"] }, 7);
    const c = buildUnits("response-satisfaction", candidates, { plan: "paper", models: ["m1", "m2"] }, 8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a).toHaveLength(12);
    for (const u of a) {
      const it = candidates.find((x) => x.id === u.itemId)!;
      expect(it.checklist.map((x) => x.id)).toContain(u.checklistItemId);
      const r = it.responses.find((x) => x.id === u.responseId)!;
      expect(["m1", "m2"]).toContain(r.model);
    }
  });

  it("response satisfaction: every item of each sampled response", () => {
    const units = buildUnits("response-satisfaction", candidates, { plan: "all-items-of-sampled-responses", responsesPerItem: 2 }, 3);
    expect(units).toHaveLength(candidates.reduce((s, c) => s + 2 * c.checklist.length, 0));
  });

  it("response satisfaction stratified by model draws perStratum per model", () => {
    const units = buildUnits("response-satisfaction", candidates, { plan: "stratified", strata: "model", perStratum: 4 }, 3);
    expect(units).toHaveLength(12);
    const byModel = new Map<string, number>();
    for (const u of units) {
      const r = candidates.flatMap((c) => c.responses).find((x) => x.id === u.responseId)!;
      byModel.set(r.model, (byModel.get(r.model) ?? 0) + 1);
    }
    expect([...byModel.values()]).toEqual([4, 4, 4]);
  });

  it("writing quality: one unit per instruction with all chosen responses", () => {
    const units = buildUnits("writing-quality", candidates, { turn: 1 }, 1);
    expect(units).toHaveLength(12);
    expect(units[0].responseIds).toHaveLength(3);
  });

  it("best-of-N: n responses, the reference hidden among them when asked", () => {
    const units = buildUnits("best-of-n", candidates, { n: 4, includeReference: true }, 1);
    for (const u of units) {
      expect(u.responseIds).toHaveLength(4);
      expect(u.responseIds).toContain("reference");
    }
    const pair = buildUnits("best-of-n", candidates, { n: 2 }, 1);
    expect(pair.every((u) => u.responseIds!.length === 2 && !u.responseIds!.includes("reference"))).toBe(true);
  });

  it("itemLimit samples items, seeded", () => {
    const a = buildUnits("writing-quality", candidates, { itemLimit: 5 }, 9);
    expect(a).toHaveLength(5);
    expect(buildUnits("writing-quality", candidates, { itemLimit: 5 }, 9)).toEqual(a);
  });

  it("gold units are a seeded share", () => {
    expect(chooseGold(100, 0.1, 1).size).toBe(10);
    expect(chooseGold(100, 0.1, 1)).toEqual(chooseGold(100, 0.1, 1));
    expect(chooseGold(5, 0.01, 1).size).toBe(1);
    expect(chooseGold(5, 0, 1).size).toBe(0);
  });
});
