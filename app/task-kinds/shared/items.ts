import type { TaskConfig } from "~/annotation/config.server";
import { rng, sample } from "~/annotation/random";
import type { Candidate } from "../types";

/** Items in id order, or a seeded sample of `config.itemLimit` of them (still in id order). */
export function sampleItems(candidates: Candidate[], config: TaskConfig, seed: number): Candidate[] {
  const items = [...candidates].sort((a, b) => a.id - b.id);
  if (!config.itemLimit || config.itemLimit >= items.length) return items;
  const chosen = new Set(sample(items, config.itemLimit, rng("items", seed)).map((i) => i.id));
  return items.filter((i) => chosen.has(i.id));
}
