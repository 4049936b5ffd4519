/**
 * Assignment planning: each unit goes to exactly k distinct annotators,
 * balanced across the pool and deterministic for a seed. Pure.
 */
import { DomainError } from "~/errors";
import { rng, shuffle } from "./random";

/** The pool cannot cover the units as asked (400); its message starts "assignment: ". */
export class AssignmentError extends DomainError {
  constructor(message: string) {
    super(`assignment: ${message}`);
  }
}

/**
 * Greedy least-loaded assignment: for each unit in order, the k annotators with
 * the fewest units so far, ties broken by a seeded order of the pool. Gives
 * loads that differ by at most one.
 */
export function planAssignments(unitIds: number[], pool: number[], k: number, seed: number): Map<number, number[]> {
  const people = [...new Set(pool)];
  if (k < 1) throw new AssignmentError(`overlap must be at least 1, got ${k}`);
  if (people.length < k) throw new AssignmentError(`overlap ${k} needs at least ${k} annotators in the pool, got ${people.length}`);
  const rank = new Map(
    shuffle(
      people.sort((a, b) => a - b),
      rng("pool", seed),
    ).map((p, i) => [p, i]),
  );
  const load = new Map(people.map((p) => [p, 0]));
  const out = new Map<number, number[]>();
  for (const unitId of unitIds) {
    const chosen = [...people].sort((a, b) => load.get(a)! - load.get(b)! || rank.get(a)! - rank.get(b)!).slice(0, k);
    chosen.forEach((p) => load.set(p, load.get(p)! + 1));
    out.set(unitId, chosen);
  }
  return out;
}

export type Held = { assignmentId: number; unitId: number; annotatorId: number; movable: boolean };
export type Move = { assignmentId: number; unitId: number; from: number; to: number };

/**
 * Moves not-yet-started assignments from the most to the least loaded
 * annotators of the pool until loads differ by at most one or nothing movable
 * remains. Started work (drafts, submissions, skips) never moves.
 */
export function planRebalance(held: Held[], pool: number[]): Move[] {
  const people = [...new Set(pool)].sort((a, b) => a - b);
  const load = new Map(people.map((p) => [p, 0]));
  const units = new Map<number, Set<number>>();
  for (const h of held) {
    if (load.has(h.annotatorId)) load.set(h.annotatorId, load.get(h.annotatorId)! + 1);
    if (!units.has(h.unitId)) units.set(h.unitId, new Set());
    units.get(h.unitId)!.add(h.annotatorId);
  }
  const movable = held.filter((h) => h.movable).sort((a, b) => b.unitId - a.unitId);
  const moves: Move[] = [];
  for (let guard = 0; guard < held.length + 1; guard++) {
    const byLoad = [...people].sort((a, b) => load.get(a)! - load.get(b)! || a - b);
    let moved = false;
    for (let hi = byLoad.length - 1; hi > 0 && !moved; hi--) {
      const from = byLoad[hi];
      for (let lo = 0; lo < hi && !moved; lo++) {
        const to = byLoad[lo];
        if (load.get(from)! - load.get(to)! <= 1) break;
        const idx = movable.findIndex((h) => h.annotatorId === from && !units.get(h.unitId)!.has(to));
        if (idx < 0) continue;
        const h = movable.splice(idx, 1)[0];
        units.get(h.unitId)!.delete(from);
        units.get(h.unitId)!.add(to);
        load.set(from, load.get(from)! - 1);
        load.set(to, load.get(to)! + 1);
        moves.push({ assignmentId: h.assignmentId, unitId: h.unitId, from, to });
        moved = true;
      }
    }
    if (!moved) break;
  }
  return moves;
}

/**
 * An annotator leaves the pool: each of their not-yet-started assignments goes
 * to a remaining pool member not already on that unit (so every unit keeps its
 * k distinct annotators), least loaded first, ties broken by a seeded order of
 * the remaining pool. A rebalance among the remaining pool follows, so loads
 * end up differing by at most one wherever unstarted work allows. Started work
 * (drafts, submissions, skips) never moves, the leaving annotator's included.
 *
 * Returns moves in the order they must be applied: each keeps the units'
 * annotators distinct at every step (an assignment may move more than once).
 * @param pool the pool after removal (`leaving` is ignored if present)
 */
export function planRemoval(held: Held[], pool: number[], leaving: number, seed: number): Move[] {
  const people = [...new Set(pool)].filter((p) => p !== leaving).sort((a, b) => a - b);
  if (people.length === 0) throw new AssignmentError("no annotator would be left in the pool");
  const rank = new Map(shuffle(people, rng("removal", seed, leaving)).map((p, i) => [p, i]));
  const load = new Map(people.map((p) => [p, 0]));
  const units = new Map<number, Set<number>>();
  for (const h of held) {
    if (load.has(h.annotatorId)) load.set(h.annotatorId, load.get(h.annotatorId)! + 1);
    if (!units.has(h.unitId)) units.set(h.unitId, new Set());
    units.get(h.unitId)!.add(h.annotatorId);
  }
  const leavingWork = held
    .filter((h) => h.annotatorId === leaving && h.movable)
    .sort((a, b) => a.unitId - b.unitId || a.assignmentId - b.assignmentId);
  const moves: Move[] = [];
  const after = new Map(held.map((h) => [h.assignmentId, h]));
  for (const h of leavingWork) {
    const onUnit = units.get(h.unitId)!;
    const to = people.filter((p) => !onUnit.has(p)).sort((a, b) => load.get(a)! - load.get(b)! || rank.get(a)! - rank.get(b)!)[0];
    if (to === undefined) throw new AssignmentError(`unit ${h.unitId} has no other annotator left in the pool to take it`);
    onUnit.delete(leaving);
    onUnit.add(to);
    load.set(to, load.get(to)! + 1);
    moves.push({ assignmentId: h.assignmentId, unitId: h.unitId, from: leaving, to });
    after.set(h.assignmentId, { ...h, annotatorId: to });
  }
  return [...moves, ...planRebalance([...after.values()], people)];
}
