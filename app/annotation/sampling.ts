/**
 * Sampling plans: which units a task is made of. Each kind declares its plans
 * (app/task-kinds/<kind>/index.ts, buildUnits): pure functions over the dataset's
 * candidates; the same seed always gives the same units.
 */
import { taskKind } from "~/task-kinds/registry";
import type { Candidate, UnitSpec } from "~/task-kinds/types";
import type { TaskConfig } from "./config";
import { rng, shuffle } from "./random";

export { SamplingError } from "~/task-kinds/shared/errors";
export type { Candidate, UnitSpec } from "~/task-kinds/types";

export function buildUnits(kind: string, candidates: Candidate[], config: TaskConfig, seed: number): UnitSpec[] {
  return taskKind(kind).buildUnits(candidates, config, seed);
}

/** The positions of gold units: a seeded share `rate` of the units (at least one if rate > 0). */
export function chooseGold(unitCount: number, rate: number, seed: number): Set<number> {
  if (!(rate > 0) || unitCount === 0) return new Set();
  const k = Math.min(unitCount, Math.max(1, Math.round(unitCount * rate)));
  return new Set(shuffle([...Array(unitCount).keys()], rng("gold", seed)).slice(0, k));
}
