/** One scored response: the item it answers, its human score and its judge score. */
export interface ScoredResponse {
  itemId: string | number;
  /** Human score (e.g. the mean of two annotators); null/undefined = not rated, skipped. */
  human: number | null | undefined;
  /** Judge score; null/undefined = no verdict, skipped. */
  judge: number | null | undefined;
}

/** Result of {@link pairwiseOrderingConsistency}. */
export interface PairwiseOrderingResult {
  /** Share of all pairs where sign(judge diff) = sign(human diff), a tie matching only a tie. NaN without pairs. */
  withTies: number;
  /** Share of consistent pairs among pairs tied by neither the humans nor the judge. NaN without such pairs. */
  withoutTies: number;
  /**
   * Share of consistent pairs among the pairs the humans order (human scores differ), a judge tie
   * counted as inconsistent (RAVEL/C3EBench §5.5). NaN without such pairs.
   */
  humanDiffering: number;
  /** All within-item pairs. */
  pairs: number;
  consistentWithTies: number;
  /** Pairs with no human tie and no judge tie. */
  pairsWithoutTies: number;
  consistentWithoutTies: number;
  /** Pairs the humans order (no human tie), whatever the judge did. */
  pairsHumanDiffering: number;
  /** Of those, the pairs the judge orders the same way. */
  consistentHumanDiffering: number;
  /** Pairs the humans scored equal. */
  humanTies: number;
  /** Pairs the judge scored equal. */
  judgeTies: number;
  /** Items contributing at least one pair. */
  items: number;
}

/**
 * Pairwise ordering consistency of a score judge with human scores
 * (RAVEL/C3EBench §5.5): for every pair of responses to the same item, does
 * the judge order them as the humans do?
 *
 * Definition: for responses i, j of one item, h = sign(human_i - human_j) and
 * g = sign(judge_i - judge_j) in {-1, 0, 1}.
 * - with ties counted: consistent iff g = h, over all pairs (a tie is a third
 *   outcome, as MT-Bench's "w/ tie" agreement);
 * - with ties excluded: consistent iff g = h, over pairs with h ≠ 0 and g ≠ 0
 *   (MT-Bench's "w/o tie": only non-tie votes);
 * - humans differing: consistent iff g = h, over pairs with h ≠ 0 (the pairs the
 *   humans order), a judge tie (g = 0) counted as inconsistent (RAVEL/C3EBench §5.5:
 *   does the judge discriminate what the humans discriminate?).
 *
 * References: RAVEL/C3EBench §5.5 (judge meta-evaluation by pairwise
 * consistency); L. Zheng et al. (2023) "Judging LLM-as-a-Judge with MT-Bench
 * and Chatbot Arena", §4.2 (agreement with and without ties).
 *
 * Preconditions: scores are finite numbers (or null/undefined to skip the
 * response); itemId a string or number. O(Σ m_item²) time.
 *
 * @throws {Error} "pairwiseOrderingConsistency: ..." for non-array input, a
 *   missing itemId, or non-finite scores
 * @example
 * pairwiseOrderingConsistency([
 *   { itemId: "a", human: 5, judge: 9 }, { itemId: "a", human: 3, judge: 6 }, { itemId: "a", human: 3, judge: 7 },
 * ]); // => withTies 2/3 (two strict pairs agree; the human tie is not a judge tie), withoutTies 1, humanDiffering 1
 */
export function pairwiseOrderingConsistency(responses: readonly ScoredResponse[]): PairwiseOrderingResult {
  const fn = "pairwiseOrderingConsistency";
  if (!Array.isArray(responses)) throw new Error(`${fn}: responses must be an array of { itemId, human, judge }`);
  const groups = new Map<string | number, { h: number[]; j: number[] }>();
  responses.forEach((r, i) => {
    if (r == null || typeof r !== "object") throw new Error(`${fn}: responses[${i}] is not an object`);
    const { itemId, human, judge } = r;
    if (typeof itemId !== "string" && typeof itemId !== "number")
      throw new Error(`${fn}: responses[${i}].itemId must be a string or number`);
    for (const [name, v] of [
      ["human", human],
      ["judge", judge],
    ] as const) {
      if (v === null || v === undefined) continue;
      if (typeof v !== "number" || !Number.isFinite(v))
        throw new Error(`${fn}: responses[${i}].${name} is not a finite number (${String(v)})`);
    }
    if (human === null || human === undefined || judge === null || judge === undefined) return;
    let g = groups.get(itemId);
    if (!g) groups.set(itemId, (g = { h: [], j: [] }));
    g.h.push(human);
    g.j.push(judge);
  });
  let pairs = 0;
  let consistentWithTies = 0;
  let pairsWithoutTies = 0;
  let consistentWithoutTies = 0;
  let pairsHumanDiffering = 0;
  let consistentHumanDiffering = 0;
  let humanTies = 0;
  let judgeTies = 0;
  let items = 0;
  for (const { h, j } of groups.values()) {
    const m = h.length;
    if (m < 2) continue;
    items++;
    for (let a = 0; a < m; a++) {
      for (let b = a + 1; b < m; b++) {
        const hs = Math.sign(h[a] - h[b]);
        const js = Math.sign(j[a] - j[b]);
        pairs++;
        if (hs === 0) humanTies++;
        if (js === 0) judgeTies++;
        if (hs === js) consistentWithTies++;
        if (hs !== 0) {
          pairsHumanDiffering++;
          if (hs === js) consistentHumanDiffering++;
        }
        if (hs !== 0 && js !== 0) {
          pairsWithoutTies++;
          if (hs === js) consistentWithoutTies++;
        }
      }
    }
  }
  return {
    withTies: pairs === 0 ? NaN : consistentWithTies / pairs,
    withoutTies: pairsWithoutTies === 0 ? NaN : consistentWithoutTies / pairsWithoutTies,
    humanDiffering: pairsHumanDiffering === 0 ? NaN : consistentHumanDiffering / pairsHumanDiffering,
    pairs,
    consistentWithTies,
    pairsWithoutTies,
    consistentWithoutTies,
    pairsHumanDiffering,
    consistentHumanDiffering,
    humanTies,
    judgeTies,
    items,
  };
}
