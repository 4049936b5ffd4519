/**
 * The "start a run" form, built from each protocol's settings schema: one
 * field per setting (a select for a choice, a number with its range, a set of
 * checkboxes for a list of choices, a group for the sampling settings), each
 * filled with the protocol's default (the paper's value) and explained.
 * settingsFromForm reads the fields back; createRun checks them with the
 * protocol's own schema, so the form and the JSON definition obey one rule.
 *
 * Below: the definition the form's fields make (definitionFromForm), the one check every definition passes
 * (definitionProblems: the form's, its JSON box's, the HTTP API's), and startRun, which the Runs page and the API
 * call to create a run.
 */
import { z } from "zod";
import type { DalLike } from "../dal.server";
import { DomainError } from "../errors";
import { NewRunForm } from "../forms/runs.server";
import { humanErrors, humanIssue } from "../forms/messages";
import { getProtocol, PROTOCOLS } from "./protocols";
import { createRun, RunDefinition, RunInputError } from "./runner.server";

export type FormField =
  | { kind: "select"; name: string; label: string; help?: string; options: string[]; value: string }
  | { kind: "number"; name: string; label: string; help?: string; value: number | null; min?: number; max?: number; integer: boolean }
  | { kind: "multi"; name: string; label: string; help?: string; options: string[]; value: string[] }
  | { kind: "group"; name: string; label: string; help?: string; fields: FormField[] };

export type ProtocolForm = { id: string; title: string; fields: FormField[] };

/** What each setting means, in the words of the paper it comes from. */
const HELP: Record<string, string> = {
  setting:
    "RefineBench §3: self-refinement (the model decides whether to refine), guided (failed checklist items come back as feedback), partially guided (only a known share of the items can be fed back), criteria-provided (the checklist is shown up front).",
  maxTurns: "How many turns a conversation may last (RefineBench uses 5).",
  knownRatio: "Partially guided: the share of each item's checklist that may ever be given as feedback.",
  seed: "Fixes the random choices (which checklist items are known), so a run can be repeated.",
  parseRetries:
    "How many times a judge is asked again when its reply cannot be parsed; after that the verdict is stored as unparsed, never guessed.",
  targetSampling: "Sampling of the model under test. Empty fields keep the paper's value shown.",
  judgeSampling: "Sampling of the judge. Empty fields keep the paper's value shown.",
  maintenanceRule:
    "FB-Bench response maintenance: a response keeps its score if ANY criterion is met (the released scoring code) or only if ALL are (the paper's formula).",
  temperatureByTask: "FB-Bench Appendix A.2.1: the follow-up's temperature per task type.",
  otherTasksTemperature: "FB-Bench: the temperature of every task type not listed above.",
  conditions:
    "Self-Correction Bench: internal (the model continues its own wrong answer), external (the error is shown as the user's), internal-wait (as internal, followed by “Wait”).",
};

const label = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .replace(/^./, (c) => c.toUpperCase());

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
};

const SAFE = (n: number | undefined) => (n !== undefined && Math.abs(n) < 1e12 ? n : undefined);

function fieldFor(name: string, key: string, schema: JsonSchema, value: unknown, help?: string): FormField | null {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum)
    return { kind: "select", name, label: label(key), help, options: schema.enum.map(String), value: String(value ?? schema.enum[0]) };
  if (type === "integer" || type === "number")
    return {
      kind: "number",
      name,
      label: label(key),
      help,
      value: typeof value === "number" ? value : null,
      min: SAFE(schema.minimum ?? schema.exclusiveMinimum),
      max: SAFE(schema.maximum),
      integer: type === "integer",
    };
  if (type === "array" && schema.items?.enum)
    return {
      kind: "multi",
      name,
      label: label(key),
      help,
      options: schema.items.enum.map(String),
      value: Array.isArray(value) ? value.map(String) : [],
    };
  if (type === "object") {
    const v = (value ?? {}) as Record<string, unknown>;
    const props = schema.properties ?? {};
    const keys = Object.keys(props).length ? Object.keys(props) : Object.keys(v);
    const sub = (k: string): JsonSchema =>
      props[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : { type: "number" });
    const fields = keys.map((k) => fieldFor(`${name}.${k}`, k, sub(k), v[k])).filter((f): f is FormField => f !== null);
    return { kind: "group", name, label: label(key), help, fields };
  }
  return null;
}

/** The form of every protocol, defaults filled in. */
export function protocolForms(): ProtocolForm[] {
  return Object.values(PROTOCOLS).map((p) => {
    const schema = z.toJSONSchema(p.configSchema as z.ZodType, { io: "input", unrepresentable: "any" }) as JsonSchema;
    const defaults = (p.configSchema as z.ZodType).parse({}) as Record<string, unknown>;
    const fields = Object.entries(schema.properties ?? {})
      .map(([key, s]) => fieldFor(`s.${p.id}.${key}`, key, s, defaults[key], HELP[key]))
      .filter((f): f is FormField => f !== null);
    return { id: p.id, title: p.title, fields };
  });
}

/** A settings field of the new-run form that cannot be read (400), shown beside that field. */
export class RunFormError extends DomainError {
  constructor(field: string, message: string) {
    super(message, { field });
  }
}

/** Reads one protocol's settings from a submitted form (empty numbers are left to the protocol's default). */
export function settingsFromForm(protocolId: string, form: FormData): Record<string, unknown> {
  const pf = protocolForms().find((f) => f.id === protocolId);
  if (!pf) throw new RunFormError("protocol", `protocol: choose one of ${Object.keys(PROTOCOLS).join(", ")}`);
  const read = (f: FormField): unknown => {
    if (f.kind === "group") {
      const out: Record<string, unknown> = {};
      for (const c of f.fields) {
        const v = read(c);
        if (v !== undefined) out[c.name.split(".").pop()!] = v;
      }
      return out;
    }
    if (f.kind === "multi") return form.getAll(f.name).map(String);
    const raw = form.get(f.name);
    if (raw === null) return undefined;
    const text = String(raw).trim();
    if (f.kind === "select") return text;
    if (text === "") return undefined;
    const n = Number(text);
    if (!Number.isFinite(n)) throw new RunFormError(f.name, `${f.label} must be a number.`);
    return n;
  };
  const settings: Record<string, unknown> = {};
  for (const f of pf.fields) {
    const v = read(f);
    if (v !== undefined) settings[f.name.split(".").pop()!] = v;
  }
  return settings;
}

// ─── The form, the JSON definition and the HTTP API: one definition, one check ───────────────────────────────

/** The new-run form's labels, also used to word its errors. */
export const RUN_FORM_LABELS: Record<string, string> = {
  name: "Name",
  protocol: "Protocol",
  datasetId: "Dataset",
  limit: "Items",
  definition: "Definition",
};

/** The label the form shows for a protocol setting (`s.refinebench.maxTurns` → "Max turns"). */
export function fieldLabel(protocol: string, name: string): string | undefined {
  const walk = (fields: FormField[]): string | undefined => {
    for (const f of fields) {
      if (f.name === name) return f.label;
      if (f.kind === "group") {
        const inner = walk(f.fields);
        if (inner) return f.label === inner ? inner : `${f.label} · ${inner}`;
      }
    }
    return undefined;
  };
  const pf = protocolForms().find((f) => f.id === protocol);
  return pf ? walk(pf.fields) : undefined;
}

/**
 * The run definition the new-run form's fields make (the same shape as the JSON one of `npm run runs`, the form's
 * JSON box and the HTTP API), or a RunFormError naming the field. The definition is then checked by
 * definitionProblems and createRun like any other.
 */
export function definitionFromForm(form: FormData): RunDefinition {
  const parsed = NewRunForm.safeParse(
    {
      intent: form.get("intent"),
      name: form.get("name") ?? "",
      protocol: form.get("protocol") ?? "",
      datasetId: form.get("datasetId") ?? "",
      limit: form.get("limit") ?? "",
    },
    { error: humanErrors(RUN_FORM_LABELS) },
  );
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new RunFormError(String(i.path[0] ?? "form"), i.message);
  }
  const d = parsed.data;
  const models = form.getAll("models").map(String).filter(Boolean);
  const judges = form.getAll("judges").map(String).filter(Boolean);
  if (models.length === 0) throw new RunFormError("models", "Choose at least one model to run.");
  if (judges.length === 0) throw new RunFormError("judges", "Choose at least one judge.");
  return {
    name: d.name,
    protocol: d.protocol,
    datasetId: d.datasetId,
    limit: d.limit,
    models: models.map((provider) => ({ provider })),
    judges: judges.map((provider) => ({ provider })),
    settings: settingsFromForm(d.protocol, form),
  };
}

/** One problem with a run definition: a sentence naming the field, and its place in the definition. */
export type DefinitionProblem = { message: string; path: PropertyKey[] };

/** A place in the JSON definition as its author wrote it: ["models", 0, "provider"] → "the definition's models[0].provider". */
export function jsonLabel(path: PropertyKey[]): string {
  const at = path.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i ? "." : ""}${String(k)}`)).join("");
  return at ? `the definition's ${at}` : "the definition";
}

/** A field of the new-run form as it is labelled ("Max turns" for settings.maxTurns of RefineBench). */
export function formLabel(protocol: string, path: PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  if (head === "settings") return fieldLabel(protocol, `s.${protocol}.${rest.join(".")}`) ?? rest.join(".");
  return RUN_FORM_LABELS[head] ?? path.map(String).join(".");
}

/**
 * The form field a problem of the definition belongs beside ("s.refinebench.maxTurns" for settings.maxTurns), or
 * undefined when the form has no such field (the problem is then shown for the form as a whole).
 */
export function formFieldOf(protocol: string, path: PropertyKey[]): string | undefined {
  const [head, ...rest] = path.map(String);
  if (head !== "settings") return head;
  const field = `s.${protocol}.${rest.join(".")}`;
  return fieldLabel(protocol, field) ? field : undefined;
}

/**
 * The problems of a run definition (from the form's fields, its JSON box, `npm run runs` or the HTTP API), each a
 * sentence naming the field by `labelOf` — zod's generic "Too small: expected number to be >=1" never reaches a
 * user — with its path in the definition; empty when it is well-formed. First the definition's own schema
 * (RunDefinition), then, once the protocol is known, that protocol's settings schema: the two schemas createRun
 * parses with, so nothing these pass is refused there for its shape (only for the data: a dataset or provider that
 * is not in the project).
 */
export function definitionProblems(def: unknown, labelOf: (path: PropertyKey[]) => string = jsonLabel): DefinitionProblem[] {
  const error = (prefix: PropertyKey[]) => (issue: Parameters<typeof humanIssue>[0]) =>
    humanIssue(issue, labelOf([...prefix, ...(issue.path ?? [])]));
  const parsed = RunDefinition.safeParse(def, { error: error([]) });
  if (!parsed.success) return parsed.error.issues.map((i) => ({ message: i.message, path: i.path }));
  const settings = getProtocol(parsed.data.protocol).configSchema.safeParse(parsed.data.settings, { error: error(["settings"]) });
  if (!settings.success) return settings.error.issues.map((i) => ({ message: i.message, path: ["settings", ...i.path] }));
  return [];
}

/** A run definition refused for its shape: every problem, each naming its field (400). */
export class RunDefinitionError extends RunInputError {
  readonly problems: DefinitionProblem[];
  constructor(problems: DefinitionProblem[]) {
    super(problems[0]?.message ?? "The run definition is not valid.", { at: problems[0]?.path.join(".") });
    this.problems = problems;
  }
}

/**
 * Starts a run from a definition, as the Runs page (its form and its JSON box) and the HTTP API's
 * POST /api/v1/projects/{slug}/runs do: the definition is checked (definitionProblems, worded by `labelOf`; a
 * RunDefinitionError lists every problem), then createRun checks the data and writes the run and its first jobs,
 * or refuses with a RunInputError naming the part of the definition. Nothing is written when it is refused.
 */
export async function startRun(
  db: DalLike,
  projectId: number,
  def: unknown,
  createdBy: number | null,
  opts: { labelOf?: (path: PropertyKey[]) => string } = {},
) {
  const problems = definitionProblems(def, opts.labelOf);
  if (problems.length) throw new RunDefinitionError(problems);
  return createRun(db, projectId, def as RunDefinition, createdBy);
}
