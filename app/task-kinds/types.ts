/**
 * What a task kind declares: everything Concord does differently for it, in one
 * module (app/task-kinds/<kind>/index.ts), so the rest of the app asks the
 * registry (./registry.ts) instead of checking the kind's name.
 *
 * This part is pure and client-safe (no zod, no React): the same rules serve
 * loaders, actions, reports, exports and the tests. A kind's annotate controls live
 * beside it in form.tsx, its gold and final-label fields in fields.tsx, which its
 * index.ts names as `form` and `fields`, each a literal dynamic import: the browser
 * build gives each its own chunk, loaded only by a page that renders it (lookups:
 * ./form-registry.ts, ./fields-registry.ts). A kind whose settings need a zod schema
 * keeps it in config.server.ts, which its index.ts imports as `server` (Remix's browser
 * build empties `.server` modules, so there `server` is undefined and zod stays out).
 */
import type { z } from "zod";
import type { TaskConfig } from "~/annotation/config.server";
import type { LabelKind } from "~/reports/types";
import type { Label } from "~/stats";
import type { KindFields, KindForm } from "./form-types";

export type ResponseKey = number | "reference";
export type FormLike = { get(name: string): FormDataEntryValue | null };

/** A label as stored (annotations.label / penaltyReasons / notes). */
export type ParsedLabel = {
  label: unknown;
  penaltyReasons: Record<string, string[]> | null;
  notes: Record<string, string> | string | null;
};

/** Field errors in the app's one shape: form field name → message ("form" for the whole form). */
export type FieldErrors = Record<string, string>;
export type ParseResult = { ok: true; value: ParsedLabel } | { ok: false; fieldErrors: FieldErrors };
export type GoldResult = { ok: true; label: unknown } | { ok: false; fieldErrors: FieldErrors };

/** The writing-quality score scale: 1..max, the reference's score, the score below which a penalty reason is needed. */
export type ScoreScale = { max: number; reference: number; penaltyBelow: number };

export type LabelRules = {
  kind: string;
  penaltyReasons: string[];
  allowTies: boolean;
  /** The assignment's shown order (multi-response kinds). */
  shownOrder: ResponseKey[] | null;
  /** Writing quality: the score scale (default 1–5, reference 4, penalty reason below 3). */
  scale?: ScoreScale;
};

/** An item of the dataset as the sampling plans see it. */
export type Candidate = {
  id: number;
  domain: string | null;
  hasReference: boolean;
  checklist: { id: number }[];
  responses: { id: number; model: string; turn: number }[];
};

/** One unit to create: an item, and the checklist item / response(s) it is about. */
export type UnitSpec = {
  itemId: number;
  checklistItemId?: number | null;
  responseId?: number | null;
  responseIds?: ResponseKey[] | null;
};

/** A setting of the kind that the new-task form asks for as text (stored in tasks.config under `name`). */
export type TextSetting = { name: string; label: string; placeholder?: string; required?: boolean; multiline?: boolean };

/**
 * How labels become ratings for the statistics (app/reports/subjects.ts):
 * - `subjects: "unit"`: one subject per unit; `value` reads the rated value from a stored
 *   label (default: the label itself when it is a string, number or boolean).
 * - `subjects: "response"`: one subject per scored response of a unit; `scores` reads
 *   response id → value (the reference is never a subject).
 * `level` is the measurement level the coefficients use (binary: Yes/No); `categories`
 * the task's declared scale (kept whole, in order, unused categories included), or
 * absent to use the labels seen. `pick`: for kinds that pick one of the shown responses,
 * the picked response key (the position and length bias checks).
 */
export type Coding = {
  level: Exclude<LabelKind, "interval">;
  subjects: "unit" | "response";
  categories?: (config: TaskConfig) => Label[];
  value?: (label: unknown, responseIds: ResponseKey[] | null) => Label | null;
  scores?: (label: unknown) => Record<string, unknown>;
  pick?: (label: unknown) => unknown;
};

/** New-task form settings shared by several kinds (app/routes/p.$slug.tasks.new.tsx renders them). */
export type CommonSetting =
  | "plan"
  | "models"
  | "turn"
  | "responsesPerItem"
  | "strata"
  | "perStratum"
  | "showReference"
  | "penaltyReasons"
  | "n"
  | "allowTies"
  | "includeReference";

export interface TaskKind<Id extends string = string> {
  id: Id;
  /** Shown to researchers and annotators ("Writing quality"). */
  title: string;
  /** Its annotate form (form.tsx), loaded on demand: `() => import("./form").then(...)`. */
  form: () => Promise<KindForm>;
  /** Its gold and final-label fields (fields.tsx), loaded on demand likewise. */
  fields: () => Promise<KindFields>;
  /** Sampling plans, the default first. */
  plans: readonly [string, ...string[]];
  /** The shared new-task settings this kind uses (the form shows only these). */
  settings: readonly CommonSetting[];
  /** The kind's own settings, asked for as text on the new-task form (validated by its config.server.ts). */
  textSettings?: readonly TextSetting[];
  /**
   * Its server part (config.server.ts): the zod schema of those settings. Server code only
   * (app/task-kinds/registry.server.ts reads it): in the browser build it is undefined.
   */
  server?: KindServer;
  /** Units show several responses side by side (units.response_ids), in a per-annotator shown order. */
  multiResponse: boolean;
  /** Whether annotators see the item's reference answer beside the unit. */
  showsReference: (config: TaskConfig) => boolean;
  /**
   * Whether its labels always judge the item's reference (shown as the anchor, or compared
   * as one of the responses), so an edited reference marks them stale; otherwise only when
   * the task shows the reference (config.showReference).
   */
  labelsJudgeReference: boolean;
  /** Whether the researcher's gold-answer panel shows the reference. */
  goldShowsReference: boolean;
  /** The units of a new task (the same seed always gives the same units). */
  buildUnits: (items: Candidate[], config: TaskConfig, seed: number) => UnitSpec[];
  /** A submitted (or draft) form → the stored label, or field errors. */
  parseLabel: (rules: LabelRules, form: FormLike, mode: "draft" | "submit") => ParseResult;
  /** An adjudicator's final label (default: parseLabel in submit mode); its reason is read by the caller. */
  parseFinal?: (rules: LabelRules, form: FormLike) => ParseResult;
  /** The form values (by shown letter) that reproduce a stored label. */
  labelToForm: (stored: ParsedLabel, shownOrder: ResponseKey[] | null) => Record<string, string>;
  /** Whether two submitted labels of one unit disagree (the adjudication queue). */
  labelsDisagree: (a: unknown, b: unknown) => boolean;
  /** Whether a submitted label matches a gold unit's known answer (parsed from its JSON text). */
  matchesGold: (label: unknown, gold: unknown) => boolean;
  /** The known answer of a gold unit from the researcher's form (letters in the unit's own order). */
  parseGoldLabel: (responseIds: ResponseKey[] | null, config: TaskConfig, form: FormLike) => GoldResult;
  /** A stored label in words, for adjudication: summary lines and note lines (`nameOf` names a response key). */
  describe: (
    label: unknown,
    penalties: Record<string, string[]> | null,
    notes: unknown,
    nameOf: (key: unknown) => string,
  ) => { summary: string[]; notes: string[] };
  /** How labels are coded for agreement and the other statistics. */
  coding: Coding;
  /**
   * Whether its labels compare with judges' verdicts on the same subjects (the judge-agreement
   * page and export): each subject of its coding carries one scalar label that a judge also
   * gives (Yes/No on a response and checklist item, a point on a scale, a picked response).
   */
  judgeAgreement?: boolean;
  /** Extra report tables of this kind (app/reports/report.server.ts). */
  reportExtras?: readonly "checklist"[];
  /** Settings the annotator's form needs (blind: never model names), from the task config. */
  annotatorSettings?: (config: TaskConfig) => Record<string, string>;
  /**
   * The texts of its settings that annotators read (a Likert question and its anchors, the
   * penalty reasons), by the new-task form field that holds each ("settings.question",
   * "penaltyReasons"), from the task config. The blinding check
   * (app/annotation/task-names.server.ts) reads them beside the task's name and guidelines;
   * without it, every `textSettings` text and the penalty reasons count as seen.
   */
  annotatorTexts?: (config: TaskConfig) => Record<string, string>;
}

/** A kind's server part: the zod schema of its own settings (stored in tasks.config). */
export type KindServer = { id: string; settings: z.ZodType<Record<string, unknown>> };

/** Keeps the id's literal type, so the registry knows its kinds' names. */
export function defineKind<Id extends string>(kind: TaskKind<Id>): TaskKind<Id> {
  return kind;
}
