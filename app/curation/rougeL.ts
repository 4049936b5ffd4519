/**
 * ROUGE-L between two texts: precision, recall and F-measure of their longest
 * common subsequence of tokens (Lin, 2004, "ROUGE: A Package for Automatic
 * Evaluation of Summaries", section 3.1, with β = 1 so F = 2PR / (P + R)).
 *
 * Tokens: lower-cased runs of letters or digits; each CJK character is its own
 * token (Chinese text has no spaces). RefineBench (appendix D.3) uses ROUGE-L
 * between the items of one checklist to show they do not overlap.
 *
 * @example rougeL("the cat sat on the mat", "the cat lay on the mat").f // 5/6 ≈ 0.8333
 */
export type RougeL = { precision: number; recall: number; f: number; lcs: number };

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const run of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (!CJK.test(run)) {
      tokens.push(run);
      continue;
    }
    let word = "";
    for (const ch of run) {
      if (CJK.test(ch)) {
        if (word) tokens.push(word);
        word = "";
        tokens.push(ch);
      } else word += ch;
    }
    if (word) tokens.push(word);
  }
  return tokens;
}

/** Length of the longest common subsequence, O(n·m) time and O(min(n, m)) memory. */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  if (a.length < b.length) [a, b] = [b, a];
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    }
    [prev, cur] = [cur, prev];
    cur.fill(0);
  }
  return prev[b.length];
}

export function rougeL(candidate: string, reference: string): RougeL {
  const c = tokenize(candidate);
  const r = tokenize(reference);
  if (c.length === 0 || r.length === 0) return { precision: 0, recall: 0, f: 0, lcs: 0 };
  const lcs = lcsLength(c, r);
  const precision = lcs / c.length;
  const recall = lcs / r.length;
  const f = lcs === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f, lcs };
}
