import { describe, expect, it } from "vitest";
import { planAssignments, planRebalance, type Held } from "../../../app/annotation/assignment";
import { shownOrderFor } from "../../../app/annotation/random";

const units = Array.from({ length: 31 }, (_, i) => i + 1);

describe("assignment", () => {
  it("gives each unit exactly k distinct annotators, balanced within one", () => {
    const plan = planAssignments(units, [10, 11, 12, 13], 2, 5);
    const load = new Map<number, number>();
    for (const [, people] of plan) {
      expect(new Set(people).size).toBe(2);
      people.forEach((p) => load.set(p, (load.get(p) ?? 0) + 1));
    }
    const loads = [...load.values()];
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(loads.reduce((a, b) => a + b)).toBe(62);
  });

  it("is deterministic for a seed", () => {
    expect(planAssignments(units, [1, 2, 3], 2, 5)).toEqual(planAssignments(units, [3, 2, 1], 2, 5));
  });

  it("refuses k larger than the pool", () => {
    expect(() => planAssignments(units, [1], 2, 1)).toThrow(/at least 2/);
  });

  it("rebalancing moves only work that has not started, onto the newcomer", () => {
    const plan = planAssignments(units, [1, 2, 3], 2, 5);
    let id = 0;
    const held: Held[] = [];
    for (const [unitId, people] of plan)
      for (const p of people) held.push({ assignmentId: ++id, unitId, annotatorId: p, movable: unitId > 10 });
    const moves = planRebalance(held, [1, 2, 3, 4]);
    const movedIds = new Set(moves.map((m) => m.assignmentId));
    for (const h of held) if (!h.movable) expect(movedIds.has(h.assignmentId)).toBe(false);
    expect(moves.every((m) => m.to === 4)).toBe(true);
    // 62 assignments over 4 people: the newcomer ends with 15 or 16.
    expect(moves.length).toBeGreaterThanOrEqual(15);
    // Still k distinct annotators per unit.
    const after = new Map<number, number[]>();
    for (const h of held) {
      const m = moves.find((x) => x.assignmentId === h.assignmentId);
      const who = m ? m.to : h.annotatorId;
      after.set(h.unitId, [...(after.get(h.unitId) ?? []), who]);
    }
    for (const people of after.values()) expect(new Set(people).size).toBe(2);
  });

  it("shuffles the shown order per assignment, deterministically", () => {
    const ids = [5, 6, 7, "reference" as const];
    const a = shownOrderFor(ids, 1, 9, 100)!;
    expect([...a].sort()).toEqual([...ids].sort());
    expect(shownOrderFor(ids, 1, 9, 100)).toEqual(a);
    const orders = new Set(Array.from({ length: 20 }, (_, i) => JSON.stringify(shownOrderFor(ids, 1, 9, i))));
    expect(orders.size).toBeGreaterThan(1);
  });
});
