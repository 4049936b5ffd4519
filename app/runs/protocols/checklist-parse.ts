/**
 * Parses a checklist judge's per-item answer lines, e.g. RefineBench's
 * `<Q>: <Yes or No>` or FB-Bench's `1: 是`.
 *
 * A line that is missing, garbled, or contradicted by another line for the
 * same question is a parse FAILURE for that item (value null), never a silent
 * "No". An answer recognisable but wrapped in extra words ("Q3: Yes, mostly")
 * is PARTIAL: the value is kept and flagged for review.
 */

export type ParsedLine = { value: "Yes" | "No" | null; status: "ok" | "partial" | "failed"; line: string | null };

const YES = ["yes", "是", "满足", "true"];
const NO = ["no", "否", "不满足", "false"];

function answerOf(word: string): "Yes" | "No" | null {
  const w = word.toLowerCase();
  if (YES.includes(w)) return "Yes";
  if (NO.includes(w)) return "No";
  return null;
}

/** Strips markdown emphasis, bullets and surrounding punctuation. */
function clean(s: string): string {
  return s
    .replace(/[*_`]/g, "")
    .replace(/^\s*[-•>]\s*/, "")
    .replace(/[“”"'「」]/g, "")
    .trim();
}

const ANSWER_RE = /^(yes|no|是|否|不满足|满足|true|false)(?![a-z])[\s.。!！,，;；:：)）\]]*(.*)$/i;
const TRAILING_RE = /(?:^|[\s?？:：\-—])(yes|no|是|否)[\s.。!！]*$/i;

function interpret(rest: string): { value: "Yes" | "No" | null; status: "ok" | "partial" | "failed" } {
  const r = clean(rest)
    .replace(/^[<[(]|[>\])]$/g, "")
    .trim();
  const m = r.match(ANSWER_RE);
  if (m) {
    const value = answerOf(m[1]);
    const tail = m[2].trim();
    return { value, status: tail === "" ? "ok" : "partial" };
  }
  // The question restated, then the answer: "Does the response ...? Yes"
  const t = r.match(TRAILING_RE);
  if (t) return { value: answerOf(t[1]), status: "partial" };
  return { value: null, status: "failed" };
}

/**
 * @param text the judge's raw output
 * @param count number of checklist items (ids 1..count)
 * @param prefix the id prefix the prompt used ("Q" for RefineBench, "" for FB-Bench); ids are matched with or without it
 */
export function parseChecklistLines(text: string, count: number, prefix = "Q"): ParsedLine[] {
  const found = new Map<number, { value: "Yes" | "No" | null; status: ParsedLine["status"]; line: string }[]>();
  const lines = text.split(/\r?\n/);
  const idRe = new RegExp(`^(?:${prefix ? `${prefix}\\s*` : ""})?(\\d{1,3})\\s*(?:[:：.)\\]-]|\\s)\\s*(.*)$`, "i");
  const idRe2 = /^(?:Q|Question|Item|问题|第)?\s*(\d{1,3})\s*(?:题|项)?\s*[:：.)\]-]\s*(.*)$/i;
  let bare: ParsedLine[] = [];
  for (const raw of lines) {
    const line = clean(raw);
    if (!line) continue;
    const m = line.match(idRe) ?? line.match(idRe2);
    if (m) {
      const id = Number(m[1]);
      if (id < 1 || id > count) continue;
      const { value, status } = interpret(m[2]);
      const list = found.get(id) ?? [];
      list.push({ value, status, line: raw });
      found.set(id, list);
      continue;
    }
    const b = interpret(line);
    if (b.value && b.status === "ok") bare.push({ value: b.value, status: "partial", line: raw });
    else if (/^(yes|no|是|否)\b/i.test(line)) bare.push({ value: null, status: "failed", line: raw });
  }
  if (found.size === 0 && bare.length === count) {
    // Bare answers without ids, in order: usable, but flagged.
    return bare;
  }
  bare = [];
  const out: ParsedLine[] = [];
  for (let id = 1; id <= count; id++) {
    const hits = found.get(id);
    if (!hits || hits.length === 0) {
      out.push({ value: null, status: "failed", line: null });
      continue;
    }
    const values = new Set(hits.map((h) => h.value));
    if (values.size > 1 || values.has(null)) {
      // Garbled, or two lines that disagree: we cannot know the answer.
      out.push({ value: null, status: "failed", line: hits.map((h) => h.line).join("\n") });
      continue;
    }
    const status = hits.length > 1 || hits.some((h) => h.status === "partial") ? "partial" : "ok";
    out.push({ value: hits[0].value, status, line: hits[0].line });
  }
  return out;
}
