/**
 * Shapes of the report engine (pure; no database access).
 *
 * A *subject* is one thing a human rated: a unit (Yes/No, best-of-N, imported
 * labels) or one response inside a unit (writing quality scores every response
 * of an instruction). Ratings, final labels, agreement and judge verdicts are
 * all per subject.
 */
import type { Interval, Label } from "~/stats";

export type LabelKind = "binary" | "nominal" | "ordinal" | "interval";
export const FINAL_RULES = ["majority", "mean", "adjudication"] as const;
export type FinalRule = (typeof FINAL_RULES)[number];
/**
 * What reports do with labels and verdicts marked stale by a curation edit (they
 * judged an older version of the item, checklist item or reference): count them
 * (the default, with a note saying how many) or leave them out of every figure.
 */
export const STALE_MODES = ["include", "exclude"] as const;
export type StaleMode = (typeof STALE_MODES)[number];

export interface Subject {
  unitId: number;
  itemId: number;
  responseId: number | null;
  checklistItemId: number | null;
  domain: string | null;
  subject: string | null;
  taskType: string | null;
  model: string | null;
  turn: number | null;
  /** Response length in characters (bias checks). */
  length: number | null;
  isGold: boolean;
  /** The gold answer for this subject, if any. */
  gold: Label | null;
  /** The adjudicated label for this subject, if the unit was adjudicated. */
  adjudicated: Label | null;
}

/**
 * Every rating of a task as parallel arrays (index i = one rating): no object per
 * rating, which keeps a 50,000-label report cheap to build, keep and collect.
 */
export interface Ratings {
  readonly length: number;
  /** Index into TaskData.subjects. */
  readonly s: Int32Array;
  readonly annotator: Int32Array;
  readonly value: readonly Label[];
  /** 0-based position at which the rated response was shown (multi-response kinds); -1 when not applicable. */
  readonly position: Int32Array;
}

/** Every current annotation (one per assignment) as parallel arrays, index i = one annotation. */
export interface Annotations {
  readonly length: number;
  readonly unitId: Int32Array;
  readonly annotator: Int32Array;
  /** Time spent, in ms; NaN when not recorded. */
  readonly durationMs: Float64Array;
  /** Gold units only: 1 when the annotation matches the gold answer, 0 when not; -1 for other units. */
  readonly goldCorrect: Int8Array;
  /** Best-of-N: position (0-based) of the pick among the shown responses; -1 when not applicable. */
  readonly pickPosition: Int32Array;
  /** Best-of-N: how many responses were shown; 0 when not applicable. */
  readonly shownCount: Int32Array;
  /** Best-of-N: 1 when the pick was the longest shown response, 0 when not; -1 when not applicable. */
  readonly pickedLongest: Int8Array;
}

export interface TaskInfo {
  id: number;
  name: string;
  kind: string;
  datasetId: number;
  seed: number;
  overlap: number;
}

export interface TaskData {
  task: TaskInfo;
  labelKind: LabelKind;
  /** All categories in order (ordinal: ascending). */
  categories: Label[];
  /** The positive label of a binary task ("Yes"). */
  positive: Label | null;
  subjects: Subject[];
  ratings: Ratings;
  annotations: Annotations;
  annotators: { id: number; name: string }[];
}

export interface Estimate {
  value: number;
  ci: Interval | null;
  n: number;
  /** How the CI was obtained, e.g. "asymptotic SE", "bootstrap (B=1000, clustered by item)". */
  method: string;
  se?: number | null;
}

export interface FinalLabels {
  rule: FinalRule;
  values: (Label | null)[];
  /** Subjects whose ratings tie under majority and have no final label. */
  ties: number;
  adjudicated: number;
  note: string | null;
}

export type ColumnKind = "int" | "coef" | "pct" | "num" | "ms" | "text" | "ci" | "p" | "flag" | "link";
export interface Column {
  key: string;
  label: string;
  kind: ColumnKind;
}
export type Row = Record<string, string | number | boolean | null | [number, number]>;
export interface ReportTable {
  id: string;
  title: string;
  columns: Column[];
  rows: Row[];
  note?: string;
}
