import { describe, expect, it } from "vitest";
import { lcsLength, rougeL, tokenize } from "../../../app/curation/rougeL";
import { nearDuplicates } from "../../../app/curation/nearDuplicates";
import { checklistDraftPrompt, parseChecklistDraft } from "../../../app/curation/checklistDraft";

describe("ROUGE-L against hand-computed values", () => {
  it("the textbook pair: 'the cat sat on the mat' vs 'the cat lay on the mat'", () => {
    // Tokens: 6 and 6. LCS = the, cat, on, the, mat = 5. P = R = 5/6, F = 5/6.
    const r = rougeL("the cat sat on the mat", "the cat lay on the mat");
    expect(r.lcs).toBe(5);
    expect(r.precision).toBeCloseTo(5 / 6, 12);
    expect(r.recall).toBeCloseTo(5 / 6, 12);
    expect(r.f).toBeCloseTo(5 / 6, 12);
  });

  it("unequal lengths: Lin (2004)'s S1/S2 example", () => {
    // Reference "police killed the gunman" (4 tokens); candidate "police kill the gunman" (4):
    // LCS = police, the, gunman = 3 → P = R = F = 3/4 (Lin 2004, §3.1 worked example).
    expect(rougeL("police kill the gunman", "police killed the gunman").f).toBeCloseTo(0.75, 12);
    // Candidate "the gunman kill police": LCS = the, gunman = 2 → F = 2/4 = 0.5 (same example, S3).
    expect(rougeL("the gunman kill police", "police killed the gunman").f).toBeCloseTo(0.5, 12);
  });

  it("different lengths give different precision and recall", () => {
    // Candidate 3 tokens, reference 6, LCS 3: P = 1, R = 1/2, F = 2·1·0.5/1.5 = 2/3.
    const r = rougeL("does the response", "does the response cite the statute");
    expect(r.precision).toBe(1);
    expect(r.recall).toBe(0.5);
    expect(r.f).toBeCloseTo(2 / 3, 12);
  });

  it("ignores case and punctuation, splits CJK into characters, and is 0 for empty text", () => {
    expect(tokenize("Does the response, CITE §356?")).toEqual(["does", "the", "response", "cite", "356"]);
    expect(tokenize("回答是否指出错误")).toEqual(["回", "答", "是", "否", "指", "出", "错", "误"]);
    // 回答是否指出错误 vs 回答是否改正错误: LCS = 回答是否 + 错误 = 6 of 8 each → F = 0.75.
    expect(rougeL("回答是否指出错误", "回答是否改正错误").f).toBeCloseTo(0.75, 12);
    expect(rougeL("", "anything").f).toBe(0);
    expect(lcsLength(["a", "b", "c", "b", "d", "a", "b"], ["b", "d", "c", "a", "b", "a"])).toBe(4); // CLRS 15.4 example: BCBA
  });

  it("flags near-duplicate checklist items above the threshold only", () => {
    const items = [
      { id: 1, text: "Does the response state the final pH to two decimal places?" },
      { id: 2, text: "Does the response state the final pH to two decimals?" },
      { id: 3, text: "Does the response explain why the buffer resists added acid?" },
    ];
    const pairs = nearDuplicates(items, 0.7);
    expect(pairs.map((p) => [p.a, p.b])).toEqual([[1, 2]]);
    // 1 vs 2: tokens 11 and 10, LCS 9 ("does the response state the final ph to two") → F = 2·9/(11+10) = 18/21.
    expect(pairs[0].f).toBeCloseTo(18 / 21, 12);
    expect(() => nearDuplicates(items, 2)).toThrow(/^nearDuplicates:/);
  });
});

describe("checklist drafts", () => {
  it("the prompt carries the question and the reference", () => {
    const p = checklistDraftPrompt("What is 2+2?", "4");
    expect(p).toContain("Each item should start with “Does the response” and end with a question mark.");
    expect(p).toContain("### Question:\nWhat is 2+2?");
    expect(p).toContain("### Reference Answer:\n4");
  });

  it("parses a plain Python list", () => {
    const r = parseChecklistDraft(`["Does the response give 4?", 'Does the response show the addition?']`);
    expect(r).toEqual({ ok: true, items: ["Does the response give 4?", "Does the response show the addition?"], warnings: [] });
  });

  it("parses a fenced list with prose, escapes, comments, concatenation and a trailing comma", () => {
    const reply = [
      "Sure! Here is the checklist:",
      "```python",
      "[",
      "    'Does the response name the court\\'s test?',  # key element",
      '    "Does the response quote the \\"penalty\\" clause?",',
      '    "Does the response compute " "the damages as $20,000?",',
      "]",
      "```",
      "Let me know if you need more.",
    ].join("\n");
    const r = parseChecklistDraft(reply);
    expect(r).toEqual({
      ok: true,
      items: [
        "Does the response name the court's test?",
        'Does the response quote the "penalty" clause?',
        "Does the response compute the damages as $20,000?",
      ],
      warnings: [],
    });
  });

  it("keeps what it can from a truncated list and says so", () => {
    const r = parseChecklistDraft(`['Does the response define X?', 'Does the response cite Y?', 'Does the resp`);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.items).toEqual(["Does the response define X?", "Does the response cite Y?"]);
      expect(r.warnings[0]).toMatch(/not closed/);
    }
  });

  it("falls back to numbered lines, drops repeats, warns about wording", () => {
    const r = parseChecklistDraft("1. Does the response define X?\n2. Mentions Y\n3. Does the response define X?");
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.items).toEqual(["Does the response define X?", "Mentions Y"]);
      expect(r.warnings).toEqual([
        "The reply was not a Python list; one item was read per bulleted or numbered line.",
        'Not phrased "Does the response …?": "Mentions Y"',
        'Dropped a repeated item: "Does the response define X?"',
      ]);
    }
  });

  it("refuses a reply with no checklist", () => {
    expect(parseChecklistDraft("I cannot help with that.")).toEqual({
      ok: false,
      error: "No checklist found: the reply holds neither a Python list nor bulleted lines.",
    });
    expect(parseChecklistDraft("[]")).toEqual({ ok: false, error: "The reply's list is empty." });
  });
});
