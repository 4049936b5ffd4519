/**
 * The removal planner (app/annotation/assignment.ts, planRemoval): an annotator
 * leaves a task's pool and their unstarted work is handed over. Expected values
 * are properties, checked on plans built by planAssignments itself: k distinct
 * annotators per unit, loads within one, started work unmoved, same seed same plan.
 */
import { describe, expect, it } from "vitest";
import { AssignmentError, planAssignments, planRemoval, type Held, type Move } from "../../../app/annotation/assignment";
import { rng, shuffle } from "../../../app/annotation/random";

const units = (n: number) => Array.from({ length: n }, (_, i) => 100 + i);

/** Held assignments of a fresh plan; `started(unit, annotator)` marks work that may not move. */
function heldFor(
  unitIds: number[],
  pool: number[],
  k: number,
  seed: number,
  started: (u: number, p: number) => boolean = () => false,
): Held[] {
  let id = 1;
  const out: Held[] = [];
  for (const [unitId, people] of planAssignments(unitIds, pool, k, seed))
    for (const p of people) out.push({ assignmentId: id++, unitId, annotatorId: p, movable: !started(unitId, p) });
  return out;
}

/** Applies moves in order, failing if any step puts one annotator twice on a unit or moves a stale assignment. */
function apply(held: Held[], moves: Move[]): Held[] {
  const now = new Map(held.map((h) => [h.assignmentId, { ...h }]));
  for (const m of moves) {
    const h = now.get(m.assignmentId)!;
    expect(h.annotatorId, `move of ${m.assignmentId} starts from its holder`).toBe(m.from);
    expect(h.movable, `assignment ${m.assignmentId} has started`).toBe(true);
    const onUnit = [...now.values()].filter((x) => x.unitId === h.unitId).map((x) => x.annotatorId);
    expect(onUnit, `unit ${h.unitId} already has annotator ${m.to}`).not.toContain(m.to);
    h.annotatorId = m.to;
  }
  return [...now.values()];
}

const perUnit = (held: Held[]) => {
  const m = new Map<number, number[]>();
  for (const h of held) m.set(h.unitId, [...(m.get(h.unitId) ?? []), h.annotatorId]);
  return m;
};
const loads = (held: Held[], pool: number[]) => pool.map((p) => held.filter((h) => h.annotatorId === p).length);

describe("planRemoval", () => {
  it("hands every unstarted unit of the leaving annotator to the rest, k distinct per unit, loads within one", () => {
    const pool = [1, 2, 3, 4];
    const held = heldFor(units(30), pool, 3, 11);
    const after = apply(held, planRemoval(held, [1, 2, 4], 3, 11));
    expect(after.filter((h) => h.annotatorId === 3)).toEqual([]);
    for (const [, people] of perUnit(after)) {
      expect(people).toHaveLength(3);
      expect(new Set(people).size).toBe(3);
    }
    // 30 units × 3 = 90 assignments over 3 people: 30 each.
    expect(loads(after, [1, 2, 4])).toEqual([30, 30, 30]);
  });

  it("never moves started work: the leaving annotator keeps drafts, submissions and skips", () => {
    const pool = [5, 6, 7, 8, 9];
    const started = (u: number, p: number) => (u + p) % 3 === 0;
    const held = heldFor(units(40), pool, 2, 5, started);
    const moves = planRemoval(held, [5, 6, 8, 9], 7, 5);
    const startedIds = new Set(held.filter((h) => !h.movable).map((h) => h.assignmentId));
    for (const m of moves) expect(startedIds.has(m.assignmentId)).toBe(false);
    const after = apply(held, moves);
    const keptByLeaver = after.filter((h) => h.annotatorId === 7).map((h) => h.assignmentId);
    expect(keptByLeaver.sort()).toEqual(
      held
        .filter((h) => h.annotatorId === 7 && !h.movable)
        .map((h) => h.assignmentId)
        .sort(),
    );
    expect(keptByLeaver.length).toBeGreaterThan(0);
    for (const [, people] of perUnit(after)) expect(new Set(people).size).toBe(2);
    // The remaining pool is balanced as far as unstarted work allows (here fully).
    const l = loads(after, [5, 6, 8, 9]);
    expect(Math.max(...l) - Math.min(...l)).toBeLessThanOrEqual(1);
  });

  it("balances across the remaining pool even when it was uneven before", () => {
    // Annotator 4 joined late: 1–3 hold everything, most of it started.
    const held = heldFor(units(24), [1, 2, 3], 2, 2, (u, p) => p !== 3 && u % 4 !== 0);
    const moves = planRemoval(held, [1, 2, 4], 3, 2);
    const after = apply(held, moves);
    const l = loads(after, [1, 2, 4]);
    expect(Math.max(...l) - Math.min(...l)).toBeLessThanOrEqual(1);
    for (const [, people] of perUnit(after)) expect(new Set(people).size).toBe(2);
  });

  it("with exactly k left, each unit goes to the one annotator not yet on it", () => {
    const held = heldFor(units(9), [1, 2, 3], 2, 4);
    const after = apply(held, planRemoval(held, [1, 2], 3, 4));
    for (const [, people] of perUnit(after)) expect(people.sort()).toEqual([1, 2]);
  });

  it("is deterministic for a seed, whatever order the rows come in; the seed breaks ties", () => {
    const held = heldFor(units(17), [1, 2, 3, 4, 5], 2, 9, (u, p) => u % 5 === p);
    const a = planRemoval(held, [1, 2, 4, 5], 3, 9);
    const b = planRemoval(shuffle(held, rng("test", 1)), [5, 4, 2, 1], 3, 9);
    const final = (moves: Move[]) => apply(held, moves).sort((x, y) => x.assignmentId - y.assignmentId);
    expect(final(b)).toEqual(final(a));
    expect(b).toEqual(a);
    const outcomes = new Set(
      Array.from({ length: 12 }, (_, s) => JSON.stringify(final(planRemoval(held, [1, 2, 4, 5], 3, s)).map((h) => h.annotatorId))),
    );
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it("throws, naming the unit, when a unit has nobody left to take it", () => {
    const held = heldFor(units(4), [1, 2, 3], 3, 1);
    expect(() => planRemoval(held, [1, 2], 3, 1)).toThrow(AssignmentError);
    expect(() => planRemoval(held, [1, 2], 3, 1)).toThrow(/unit 100/);
    expect(() => planRemoval(held, [3], 3, 1)).toThrow(/no annotator would be left/);
  });

  it("moves nothing when the leaving annotator has no unstarted work and the rest is balanced", () => {
    const held = heldFor(units(6), [1, 2, 3], 1, 3, (_, p) => p === 3);
    expect(planRemoval(held, [1, 2], 3, 3)).toEqual([]);
  });
});
