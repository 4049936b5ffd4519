/** Label values from other tools: normalising them and inferring their level of measurement. */

export const LABEL_LEVELS = ["nominal", "ordinal", "interval"] as const;
export type LabelLevel = (typeof LABEL_LEVELS)[number];
export type LabelValue = string | number;

/**
 * A cell as a label: yes/no in any case (and 是/否) become "Yes"/"No", numbers
 * become numbers, anything else stays the raw (trimmed) string. Blank = missing.
 */
export function parseLabel(raw: unknown): LabelValue | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === "number") return Number.isFinite(raw) ? raw : null;
  if (typeof raw === "boolean") return raw ? "Yes" : "No";
  if (typeof raw !== "string") return JSON.stringify(raw);
  const t = raw.trim();
  if (t === "") return null;
  if (/^(yes|y|是)$/i.test(t)) return "Yes";
  if (/^(no|n|否)$/i.test(t)) return "No";
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number(t);
  return t;
}

/**
 * All numeric with at most 10 distinct integer values: ordinal (a rating scale);
 * other numbers: interval; anything non-numeric: nominal.
 */
export function inferLevel(values: Iterable<LabelValue>): LabelLevel {
  const distinct = new Set<LabelValue>();
  for (const v of values) {
    if (typeof v !== "number") return "nominal";
    distinct.add(v);
  }
  if (distinct.size === 0) return "nominal";
  const ints = [...distinct].every((v) => Number.isInteger(v));
  return ints && distinct.size <= 10 ? "ordinal" : "interval";
}

/** Name → the email of a placeholder account that can never sign in. */
export function placeholderEmail(name: string): string {
  const slug =
    name
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "annotator";
  // Names that slugify to nothing or collide (non-Latin scripts) keep a short hash.
  const plain = /^[a-z0-9 ._-]+$/i.test(name.trim());
  return `${plain ? slug : `${slug}-${shortHash(name)}`}@imported.concord.invalid`;
}

export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * Whether a column name reads like one annotator's labels in a wide file ("ann_1", "rater_ana",
 * "Coder 2", "annotator3", "human", "r1"): the Import page pre-ticks only these, so a prompt, a note
 * or an ID column never becomes an annotator unless someone ticks it.
 */
export function looksLikeAnnotatorColumn(name: string): boolean {
  const t = name.trim();
  if (/^[ahr]\d+$/i.test(t)) return true;
  return /^(?:annotator|ann|rater|coder|labell?er|worker|human|reviewer|grader|assessor|expert|participant)s?(?:\d+|[\s_\-.#]+[\p{L}\p{N}][\p{L}\p{N}\s_\-.#]*)?$/iu.test(
    t,
  );
}

/**
 * A declared scale (`--categories`, the Import page's "Scale" field): its categories in order,
 * read as labels are (so "yes" is "Yes", "2" is 2). At least two, none empty, none twice.
 */
export function parseScale(names: string[]): { values: LabelValue[] } | { error: string } {
  const values: LabelValue[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const v = parseLabel(name);
    if (v === null) return { error: "the scale has an empty category (two commas in a row, or one at an end)" };
    const key = String(v);
    const before = seen.get(key);
    if (before !== undefined)
      return { error: `the scale names "${before}" twice${before !== name.trim() ? ` (as "${name.trim()}")` : ""}` };
    seen.set(key, name.trim());
    values.push(v);
  }
  if (values.length < 2) return { error: "the scale needs at least two categories" };
  return { values };
}
