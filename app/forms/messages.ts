/**
 * Form errors in plain sentences. A zod schema's own messages ("Give the task a
 * name.") are kept; zod's generic ones ("Too big: expected number to be <=0.5")
 * become sentences that name the field as the form labels it ("Gold rate must be
 * 0.5 or less."). Pure: used by actions (server) and pages (client).
 */
import type { z } from "zod";

/** Field name → the label the form shows for it. */
export type FieldLabels = Record<string, string>;
/** Field name → the first problem with it; "form" for problems with no field. */
export type FieldErrors = Record<string, string>;

type Issue = {
  code: string;
  path?: PropertyKey[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  expected?: string;
  received?: string;
  values?: unknown[];
  input?: unknown;
};

const fmt = (n: number | bigint | undefined) => (typeof n === "bigint" ? n.toString() : String(n));
const capital = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);

/** One issue as a sentence about the field labelled `label`. */
export function humanIssue(issue: Issue, label: string): string {
  const L = capital(label);
  switch (issue.code) {
    case "too_small":
      if (issue.origin === "string")
        return issue.minimum === 1 ? `${L} cannot be empty.` : `${L} needs at least ${fmt(issue.minimum)} characters.`;
      if (issue.origin === "array" || issue.origin === "set")
        return issue.minimum === 1 ? `Choose at least one: ${label}.` : `Choose at least ${fmt(issue.minimum)}: ${label}.`;
      if (!issue.inclusive && Number(issue.minimum) === 0) return `${L} must be more than 0.`;
      return issue.inclusive === false ? `${L} must be more than ${fmt(issue.minimum)}.` : `${L} must be ${fmt(issue.minimum)} or more.`;
    case "too_big":
      if (issue.origin === "string") return `${L} can be at most ${fmt(issue.maximum)} characters long.`;
      if (issue.origin === "array" || issue.origin === "set") return `Choose at most ${fmt(issue.maximum)}: ${label}.`;
      return issue.inclusive === false ? `${L} must be less than ${fmt(issue.maximum)}.` : `${L} must be ${fmt(issue.maximum)} or less.`;
    case "invalid_type":
      if (issue.expected === "int") return `${L} must be a whole number.`;
      if (issue.expected === "number") return `${L} must be a number.`;
      if (issue.input === undefined || issue.input === null) return `${L} is required.`;
      return `${L} is not valid.`;
    case "invalid_value":
    case "invalid_enum_value":
      return issue.values?.length ? `Choose one of the offered values for ${label}.` : `${L} is not one of the allowed values.`;
    case "invalid_format":
      return `${L} is not in the expected format.`;
    case "not_multiple_of":
      return `${L} is not an allowed step.`;
    default:
      return `${L} is not valid.`;
  }
}

/**
 * The `error` option for `schema.safeParse(data, { error })`: zod gives a schema's
 * own message precedence over this, so only its generic messages are replaced.
 */
export function humanErrors(labels: FieldLabels) {
  return (issue: Issue) => {
    const field = String(issue.path?.[0] ?? "");
    return humanIssue(issue, labels[field] ?? (field ? field.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase() : "this value"));
  };
}

/** The first problem of each field (top-level path), in the schema's issue order. */
export function fieldErrorsOf(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) out[String(issue.path[0] ?? "form")] ??= issue.message;
  return out;
}

/**
 * A domain refusal worded "field: reason" ("email: a@b.c already has an account.") as the
 * sentence shown beside that field ("a@b.c already has an account."); any other as it is.
 */
export function besideField(field: string | undefined, message: string): string {
  if (!field || !message.startsWith(`${field}: `)) return message;
  const text = message.slice(field.length + 2);
  // "no such project." → "No such project."; an email address keeps its case.
  const sentence = /^\S*@/.test(text) ? text : text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(sentence) ? sentence : `${sentence}.`;
}
