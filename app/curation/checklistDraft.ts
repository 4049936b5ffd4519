/**
 * Checklist drafting (RefineBench appendix G.3): the published prompt, and a
 * robust parser for the Python-list reply.
 */

export const CHECKLIST_PROMPT_VERSION = "refinebench-g3-v1";

/**
 * The G.3 template. The paper's extracted text ends "### Question: {question}
 * Answer:"; the guidelines ask for a checklist "based on the given question
 * and reference answer", so the reference follows under its own heading.
 */
export function checklistDraftPrompt(question: string, referenceAnswer: string): string {
  return `Your task is to create a checklist for grading numerous responses that will come in later, based on the given question and reference answer.

### Guidelines:
- The checklist should consist of items that are questions that can only be answered with Yes/No.
- Each item should start with “Does the response” and end with a question mark.
- Think of this as decomposing the key points that made the reference answer good. However, don’t simply create items like “Does XXX appear in the answer?” based on the reference answer content. Instead, think more deeply about what elements made the reference answer worthy of a good evaluation, and create items that can be universally applied to any response.
- The item should be very detailed and specific. For instance, instead of asking if the response is clear, fluent, logically sound, it should ask if it includes a specific element, mentions a specific knowledge, or succeeds at driving a certain intermediate conclusion using a certain logic, which could be found by examining the reference answer.
- The number of items in the checklist should be determined based on the difficulty of the problem and the key points in the reference answer. It shouldn’t be too few or too many, and each item should have minimal correlation with others.
- Generate the checklist in Python list format. Your answer should always start with “[” and end with “]”. Do not include greeting messages or ending remarks.
- Note that there could be multiple reference answers. In this case, examine the common elements in the reference answers when creating the checklist.

### Question:
${question}

### Reference Answer:
${referenceAnswer}`;
}

export type DraftParse = { ok: true; items: string[]; warnings: string[] } | { ok: false; error: string };

/** Reads a Python (or JSON) string literal starting at s[i] (a quote); returns the value and the index after it. */
function readString(s: string, i: number): { value: string; end: number } | null {
  const quote = s[i];
  let triple = false;
  if (s.startsWith(quote.repeat(3), i)) {
    triple = true;
    i += 3;
  } else i += 1;
  let out = "";
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\" && i + 1 < s.length) {
      const n = s[i + 1];
      const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };
      if (n === "u" && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      out += map[n] ?? n;
      i += 2;
      continue;
    }
    if (triple ? s.startsWith(quote.repeat(3), i) : ch === quote) {
      return { value: out, end: i + (triple ? 3 : 1) };
    }
    if (!triple && ch === "\n") return null;
    out += ch;
    i++;
  }
  return null;
}

/**
 * Parses an LM's checklist reply. Accepts a Python list of strings (single,
 * double or triple quotes, escapes, implicit concatenation of adjacent
 * literals, a trailing comma), wrapped in prose or a ```python fence; falls
 * back to one item per bulleted or numbered line. Items are trimmed and
 * de-duplicated; items not phrased "Does the response …?" are kept with a warning.
 */
export function parseChecklistDraft(reply: string): DraftParse {
  const text = reply.replace(/^\uFEFF/, "");
  const start = text.indexOf("[");
  const warnings: string[] = [];
  let items: string[] | null = null;
  if (start >= 0) {
    const parsed: string[] = [];
    let i = start + 1;
    let pending: string | null = null;
    let closed = false;
    while (i < text.length) {
      const ch = text[i];
      if (ch === "'" || ch === '"') {
        const lit = readString(text, i);
        if (!lit) break;
        pending = (pending ?? "") + lit.value;
        i = lit.end;
      } else if (ch === ",") {
        if (pending !== null) parsed.push(pending);
        pending = null;
        i++;
      } else if (ch === "]") {
        if (pending !== null) parsed.push(pending);
        closed = true;
        break;
      } else if (ch === "#") {
        while (i < text.length && text[i] !== "\n") i++;
      } else if (/\s/.test(ch)) i++;
      else break;
    }
    if (closed) items = parsed;
    else if (parsed.length > 0 || pending !== null) {
      if (pending !== null) parsed.push(pending);
      warnings.push("The list was not closed with ']'; the items before the break were kept.");
      items = parsed;
    }
  }
  if (!items) {
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.match(/^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$/)?.[1])
      .filter((l): l is string => Boolean(l));
    if (lines.length > 0) {
      warnings.push("The reply was not a Python list; one item was read per bulleted or numbered line.");
      items = lines.map((l) => l.replace(/^["']|["'],?$/g, ""));
    }
  }
  if (!items) return { ok: false, error: "No checklist found: the reply holds neither a Python list nor bulleted lines." };
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of items) {
    const item = raw.replace(/\s+/g, " ").trim();
    if (!item) continue;
    if (seen.has(item)) {
      warnings.push(`Dropped a repeated item: "${item}"`);
      continue;
    }
    seen.add(item);
    if (!/^Does the response\b.*\?$/.test(item)) warnings.push(`Not phrased "Does the response …?": "${item}"`);
    out.push(item);
  }
  if (out.length === 0) return { ok: false, error: "The reply's list is empty." };
  return { ok: true, items: out, warnings };
}
