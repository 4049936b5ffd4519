/**
 * What a judge–human comparison compares: labels and verdicts as text, the references
 * (majority, each annotator, adjudicated), the unparsed policies, and the words the command,
 * the judge page and the tables use for them.
 */
import { parseLabel } from "~/formats/labels";

export const REFERENCES = ["majority", "each", "adjudicated"] as const;
export type Reference = (typeof REFERENCES)[number];
export type UnparsedPolicy = "count-as-wrong" | "exclude" | `as:${string}`;
/** The class an unparsed verdict counts as under `count-as-wrong`. */
export const UNPARSED = "(unparsed)";

export class JudgeAgreementError extends Error {}

/**
 * A verdict written as missing: in CSV an empty cell, `NA` or `N/A` (pandas writes a missing
 * value as an empty cell, R's write.csv as `NA`); in JSON `null` (or no key); imported into the
 * app, a verdict stored without a value. Not the same as an unparsed verdict (a reply the judge
 * gave that is not a label: `""` in JSON, "Unsure"). The missing policy says what it counts as.
 */
export const MISSING: unique symbol = Symbol("missing verdict");
/** A judge's verdict on a unit: its text; null = unparsed (an empty or unreadable reply); MISSING; undefined = none. */
export type Verdict = string | null | undefined | typeof MISSING;

/** The texts a CSV cell holds for a missing value besides the empty cell (`npm run agreement`'s default --missing). */
export const CSV_MISSING_TOKENS: readonly string[] = ["NA", "N/A"];

/**
 * What a verdict written as missing counts as: `missing` (default) — no verdict: counted in
 * `missing`, left out of n, as a unit the judge has no verdict on; `unparsed` — an unparsed
 * verdict, as the unparsed policy says.
 */
export const MISSING_POLICIES = ["missing", "unparsed"] as const;
export type MissingPolicy = (typeof MISSING_POLICIES)[number];

export function parseMissingPolicy(raw: string | null | undefined): MissingPolicy | null {
  return (MISSING_POLICIES as readonly string[]).includes(raw ?? "") ? (raw as MissingPolicy) : null;
}

/** The words of each missing policy (as {@link policyLabel}): `effect` completes "missing verdicts are …". */
export function missingPolicyLabel(p: MissingPolicy, form: "effect" | "choice" = "effect"): string {
  if (form === "choice") return p === "missing" ? "Leave out (count as missing)" : "Count as unparsed";
  return p === "missing"
    ? 'left out of n and counted as missing ("No verdict")'
    : "counted as unparsed verdicts (as the unparsed policy says)";
}

/**
 * A label or verdict as the text it is compared by: trimmed; yes/no (any case, 是/否,
 * booleans) → "Yes"/"No"; a number → its shortest decimal form (1, "1", "1.0" → "1").
 * Blank → null.
 */
export function labelText(v: unknown): string | null {
  const l = parseLabel(v);
  return l === null ? null : String(l);
}

/** `count-as-wrong`, `exclude` or `as:LABEL`; null for anything else. */
export function parseUnparsedPolicy(raw: string | null | undefined): UnparsedPolicy | null {
  if (raw === "count-as-wrong" || raw === "exclude") return raw;
  if (typeof raw === "string" && raw.startsWith("as:") && raw.length > 3) return raw as UnparsedPolicy;
  return null;
}

export function parseReference(raw: string | null | undefined): Reference | null {
  return (REFERENCES as readonly string[]).includes(raw ?? "") ? (raw as Reference) : null;
}

/**
 * The words of each unparsed policy, the one definition the command, the judge page (its
 * select and its notes) and the tables use: `effect` completes "unparsed verdicts are …",
 * `choice` names the policy as an option to pick.
 */
export function policyLabel(p: UnparsedPolicy, form: "effect" | "choice" = "effect"): string {
  if (p === "count-as-wrong") return form === "effect" ? `counted as wrong (class "${UNPARSED}")` : "Count as wrong (a class of their own)";
  if (p === "exclude") return form === "effect" ? "left out (those units are not compared for that judge)" : "Leave those units out";
  return form === "effect" ? `counted as "${p.slice(3)}"` : `Count as “${p.slice(3)}”`;
}

/** The words of each reference, for the command, the judge page's select and its notes. */
export function referenceLabel(r: Reference, form: "effect" | "choice" = "effect"): string {
  if (form === "choice")
    return r === "majority" ? "Majority of the annotators" : r === "each" ? "Each annotator (pooled)" : "Adjudicated final label";
  return r === "majority"
    ? "the strict majority of the annotators"
    : r === "each"
      ? "each annotator (every annotator × unit pair, pooled)"
      : "the adjudicated label (the strict majority where a unit was not adjudicated)";
}

export const isNumberText = (s: string) => s.trim() !== "" && Number.isFinite(Number(s));

/** Numbers by value when every label is a number, else code-unit order (scikit-learn's sort of strings). */
export function sortLabels(labels: Iterable<string>): string[] {
  const list = [...new Set(labels)];
  if (list.length > 0 && list.every(isNumberText)) return list.sort((a, b) => Number(a) - Number(b));
  return list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The label more than half of the unit's annotators gave, or null. */
export function strictMajority(labels: readonly (string | null)[], skip = -1): string | null {
  // A unit has a few annotators: count by scanning (no map per unit). `skip`: leave that annotator out.
  let total = 0;
  for (let i = 0; i < labels.length; i++) if (i !== skip && labels[i] !== null) total++;
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i];
    if (i === skip || l === null) continue;
    let n = 0;
    for (let k = i; k < labels.length; k++) if (k !== skip && labels[k] === l) n++;
    if (2 * n > total) return l;
  }
  return null;
}
