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

export interface RatingRow {
  /** Index into TaskData.subjects. */
  s: number;
  annotator: number;
  value: Label;
  /** 0-based position at which the rated response was shown (multi-response kinds). */
  position: number | null;
}

export interface AnnotationRow {
  unitId: number;
  annotator: number;
  durationMs: number | null;
  /** Whether this annotation matches the unit's gold answer (gold units only). */
  goldCorrect: boolean | null;
  /** Best-of-N: position (0-based) of the pick among the shown responses, and how many were shown. */
  pickPosition: number | null;
  shownCount: number | null;
  /** Best-of-N: whether the pick was the longest shown response. */
  pickedLongest: boolean | null;
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
  ratings: RatingRow[];
  annotations: AnnotationRow[];
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
