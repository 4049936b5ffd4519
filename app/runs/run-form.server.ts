/**
 * The "start a run" form, built from each protocol's settings schema: one
 * field per setting (a select for a choice, a number with its range, a set of
 * checkboxes for a list of choices, a group for the sampling settings), each
 * filled with the protocol's default (the paper's value) and explained.
 * settingsFromForm reads the fields back; createRun checks them with the
 * protocol's own schema, so the form and the JSON definition obey one rule.
 */
import { z } from "zod";
import { DomainError } from "../errors";
import { PROTOCOLS } from "./protocols";

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
