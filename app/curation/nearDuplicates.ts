import { rougeL } from "./rougeL";

export type DuplicatePair = { a: number; b: number; f: number };

/**
 * Pairs of checklist items within one checklist whose ROUGE-L F-measure is at
 * or above the threshold (default 0.7), most similar first. Items are given in
 * checklist order; a and b are their ids.
 */
export function nearDuplicates(items: readonly { id: number; text: string }[], threshold = 0.7): DuplicatePair[] {
  if (!(threshold >= 0 && threshold <= 1)) throw new Error(`nearDuplicates: threshold must be in [0, 1], got ${threshold}`);
  const pairs: DuplicatePair[] = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const { f } = rougeL(items[i].text, items[j].text);
      if (f >= threshold) pairs.push({ a: items[i].id, b: items[j].id, f });
    }
  }
  return pairs.sort((x, y) => y.f - x.f);
}
