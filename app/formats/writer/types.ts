/** The records presets hand to the import writer, and what it reports back. */
import type { LabelLevel, LabelValue } from "../labels";

export type ChecklistEntry = { text: string; weight: number | null };

export type ItemRecord = {
  sourceId: string;
  query: string;
  passage?: string | null;
  domain?: string | null;
  subject?: string | null;
  taskType?: string | null;
  language?: string | null;
  metadata?: Record<string, unknown>;
  checklist?: ChecklistEntry[];
  references?: string[];
};

export type ResponseRecord = {
  item: string;
  model: string;
  turn: number;
  text: string;
  /** Stable key of the response within its item; default `model#turn`. */
  key?: string;
  metadata?: Record<string, unknown>;
};

/** Which checklist item a verdict is about: 1-based position or its text; null = the whole response. */
export type ChecklistRef = { position: number } | { text: string; position?: number } | null;

export type VerdictRecord = {
  judge: string;
  judgeModel?: string;
  item: string;
  /** Response key (or the model name when the item has one response of that model). */
  response: string;
  checklist: ChecklistRef;
  value: string | null;
  score?: number | null;
  raw?: string | null;
  parseStatus?: "ok" | "partial" | "failed" | "unparsed";
  /** The item, already resolved (unit verdicts); `item` then only names it in messages. */
  itemId?: number;
  /**
   * The verdicts preset: a whole-response verdict on a response that is a unit of imported labels is
   * checked against that task's labels (empty or outside them: kept, parse status "unparsed"); on any
   * other response an empty value is refused, naming `valueField`.
   */
  againstLabels?: { valueField?: string };
  /** The judge is a variant (ablation) of the judge named here (`variant_of`, or the import's --variant-of); stored in its settings when the import creates it. */
  variantOf?: string | null;
};

/** `response` (a response key or model of the item named by `unit`) links the label to an imported response. */
export type LabelRecord = { unit: string; annotator: string; label: LabelValue; text?: string; response?: string };

/** A judge's verdict on a unit of imported labels, by unit key (the unit-verdicts preset). */
export type UnitVerdictRecord = {
  judge: string;
  unit: string;
  value: string | null;
  score: number | null;
  raw: string | null;
  variantOf?: string | null;
};

/** The response that stands for a unit of imported labels (what a judge of that unit judged). */
export const UNIT_RESPONSE_KEY = "(unit)";

export type Counts = {
  items: number;
  checklistItems: number;
  references: number;
  responses: number;
  verdicts: number;
  annotations: number;
};

export type WriterOptions = {
  projectId: number;
  /** Set for presets that create a dataset (benchmarks, labels). */
  dataset?: { name: string; source: string; reuseId?: number };
  /** Restrict item look-ups to the latest version of this dataset name. */
  lookupDataset?: string;
  level?: LabelLevel;
  taskName?: string;
  /** Verdict presets: judge name → the base judge it is a variant of (`--variant-of JUDGE=BASE`), for judges the file does not mark. */
  variantOf?: Record<string, string>;
  /** Labels presets: the declared scale (its categories in order); labels outside it are refused. */
  categories?: LabelValue[];
  /** Benchmarks whose checklist weights must sum to 1 (warn otherwise). */
  weightsSumToOne?: boolean;
};

/** The measurement level a label import used, and why: given (--level) or inferred from the labels. */
export type LevelInfo = { level: LabelLevel; source: "given" | "inferred"; reason: string };

export type SampleRow = { kind: "item" | "response" | "verdict" | "label"; row: number; fields: Record<string, string> };

/** An item seen in the file (or of the reused version), as the writer tracks it. */
export type SeenItem = {
  id: number;
  /** First row (0: an item of the reused version not seen in the file yet). */
  row: number;
  /** Long-form: the fields every row of the item must repeat (refs joined by U+0001); dropped once written. */
  fields: { query: string; passage: string | null; domain: string | null; refs: string } | undefined;
  /** Checklist texts so far (duplicates are errors); dropped once written. */
  checklist: Set<string> | undefined;
  count: number;
  weight: number;
  weighted: boolean;
  /** Whether rows were being written when this group opened. */
  openedWriting?: boolean;
};
