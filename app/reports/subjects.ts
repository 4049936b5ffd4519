/**
 * From stored labels to subjects and ratings, per task kind (pure).
 *
 * - checklist-appropriateness, response-satisfaction: label "Yes" | "No"; one subject per unit.
 * - writing-quality: label {scores: {responseId: 1..5}}; one subject per scored response,
 *   ordinal 1–5; the shown position of each response comes from the stored shown order.
 * - best-of-n: label {best: responseId | "reference" | "tie"}; one subject per unit, nominal.
 * - imported-labels: the raw value; config.level = nominal | ordinal | interval.
 */
import type { Label } from "~/stats";
import { isAnnotatable } from "~/annotation/config";
import { matchesGold } from "~/annotation/labels";
import type { AnnotationRow, LabelKind, RatingRow, Subject, TaskData, TaskInfo } from "./types";

export interface RawUnit {
  id: number;
  itemId: number;
  checklistItemId: number | null;
  responseId: number | null;
  responseIds: (number | "reference")[] | null;
  isGold: boolean;
  goldLabel: string | null;
  domain: string | null;
  subject: string | null;
  taskType: string | null;
}
export interface RawResponse {
  id: number;
  model: string;
  turn: number;
  length: number;
}
export interface RawAnnotation {
  unitId: number;
  annotatorId: number;
  label: unknown;
  durationMs: number | null;
  shownOrder: (number | "reference")[] | null;
}
export interface RawTask {
  task: TaskInfo;
  config: Record<string, unknown>;
  /** Adjudicated label per unit id (the stored label shape of the kind). */
  adjudications: Record<string, unknown>;
  units: RawUnit[];
  responses: RawResponse[];
  annotations: RawAnnotation[];
  annotators: { id: number; name: string }[];
}

const parseGold = (g: string | null): unknown => {
  if (g == null) return null;
  try {
    return JSON.parse(g);
  } catch {
    return g;
  }
};

export function labelKindOf(kind: string, config: Record<string, unknown>): LabelKind {
  if (kind === "checklist-appropriateness" || kind === "response-satisfaction") return "binary";
  if (kind === "writing-quality") return "ordinal";
  if (kind === "best-of-n") return "nominal";
  const level = config.level;
  return level === "ordinal" || level === "interval" ? level : "nominal";
}

function isLabel(v: unknown): v is Label {
  return (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";
}

export function buildTaskData(raw: RawTask): TaskData {
  const kind = raw.task.kind;
  let labelKind = labelKindOf(kind, raw.config);
  const numeric = labelKind === "ordinal" || labelKind === "interval";
  const resp = new Map(raw.responses.map((r) => [r.id, r]));
  const subjects: Subject[] = [];
  // Writing quality: subject of (unit, response) as "unitId:responseId"; other kinds: subject of a unit id.
  const subjectIndex = new Map<string, number>();
  const subjectOfUnit = new Map<number, number>();
  const ratings: RatingRow[] = [];
  const annotations: AnnotationRow[] = [];
  const unitById = new Map(raw.units.map((u) => [u.id, u]));

  const baseSubject = (u: RawUnit, responseId: number | null): Subject => {
    const r = responseId != null ? resp.get(responseId) : undefined;
    return {
      unitId: u.id,
      itemId: u.itemId,
      responseId,
      checklistItemId: u.checklistItemId,
      domain: u.domain,
      subject: u.subject,
      taskType: u.taskType,
      model: r?.model ?? null,
      turn: r?.turn ?? null,
      length: r?.length ?? null,
      isGold: u.isGold,
      gold: null,
      adjudicated: null,
    };
  };
  const toValue = (v: unknown): Label | null => {
    if (!isLabel(v)) return null;
    if (numeric) {
      const x = Number(v);
      return Number.isFinite(x) ? x : null;
    }
    return v;
  };

  if (kind === "writing-quality") {
    for (const u of raw.units) {
      const gold = parseGold(u.goldLabel) as { scores?: Record<string, number> } | null;
      const adj = raw.adjudications[u.id] as { scores?: Record<string, number> } | undefined;
      for (const rid of u.responseIds ?? []) {
        if (rid === "reference") continue;
        const s = baseSubject(u, rid);
        s.gold = u.isGold ? toValue(gold?.scores?.[String(rid)]) : null;
        s.adjudicated = adj ? toValue(adj.scores?.[String(rid)]) : null;
        subjectIndex.set(`${u.id}:${rid}`, subjects.length);
        subjects.push(s);
      }
    }
  } else {
    const extract = (l: unknown) => (kind === "best-of-n" ? toValue((l as { best?: unknown } | null)?.best != null ? String((l as { best: unknown }).best) : null) : toValue(l));
    for (const u of raw.units) {
      const s = baseSubject(u, u.responseId);
      s.gold = u.isGold ? extract(parseGold(u.goldLabel)) : null;
      const adj = raw.adjudications[u.id];
      s.adjudicated = adj !== undefined ? extract(adj) : null;
      subjectOfUnit.set(u.id, subjects.length);
      subjects.push(s);
    }
  }

  const annotatable = isAnnotatable(kind);
  for (const a of raw.annotations) {
    const u = unitById.get(a.unitId);
    if (!u) continue;
    const order = a.shownOrder ?? u.responseIds ?? null;
    let goldCorrect: boolean | null = null;
    if (u.isGold && u.goldLabel != null) {
      goldCorrect = annotatable ? matchesGold(kind, a.label, u.goldLabel) : String(parseGold(u.goldLabel)) === String(a.label);
    }
    let pickPosition: number | null = null;
    let shownCount: number | null = null;
    let pickedLongest: boolean | null = null;
    if (kind === "writing-quality") {
      const scores = (a.label as { scores?: Record<string, unknown> } | null)?.scores ?? {};
      for (const [rid, v] of Object.entries(scores)) {
        const s = subjectIndex.get(`${u.id}:${rid}`);
        const value = toValue(v);
        if (s === undefined || value === null) continue;
        const pos = order ? order.findIndex((k) => String(k) === rid) : -1;
        ratings.push({ s, annotator: a.annotatorId, value, position: pos >= 0 ? pos : null });
      }
    } else {
      const s = subjectOfUnit.get(u.id)!;
      let value: Label | null;
      if (kind === "best-of-n") {
        const best = (a.label as { best?: unknown } | null)?.best;
        value = best != null ? String(best) : null;
        if (best != null && best !== "tie" && order && order.length > 0) {
          shownCount = order.length;
          const pos = order.findIndex((k) => String(k) === String(best));
          pickPosition = pos >= 0 ? pos : null;
          const lens = order.map((k) => (k === "reference" ? null : resp.get(k)?.length ?? null));
          if (lens.every((l) => l != null) && pos >= 0) pickedLongest = lens[pos]! >= Math.max(...(lens as number[]));
        }
      } else value = toValue(a.label);
      if (value !== null) ratings.push({ s, annotator: a.annotatorId, value, position: null });
    }
    annotations.push({ unitId: u.id, annotator: a.annotatorId, durationMs: a.durationMs, goldCorrect, pickPosition, shownCount, pickedLongest });
  }

  let categories: Label[];
  let positive: Label | null = null;
  if (labelKind === "binary") {
    categories = ["Yes", "No"];
    positive = "Yes";
  } else if (kind === "writing-quality") categories = [1, 2, 3, 4, 5];
  else {
    const seen = new Set<Label>(ratings.map((r) => r.value));
    for (const s of subjects) {
      if (s.adjudicated !== null) seen.add(s.adjudicated);
    }
    categories = [...seen].sort((a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))));
    if (labelKind === "nominal" && categories.length === 2 && categories.includes("Yes") && categories.includes("No")) {
      labelKind = "binary";
      categories = ["Yes", "No"];
      positive = "Yes";
    }
  }
  return { task: raw.task, labelKind, categories, positive, subjects, ratings, annotations, annotators: raw.annotators };
}
