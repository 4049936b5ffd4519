/**
 * From stored labels to subjects and ratings, per task kind (pure). Each kind declares
 * its coding (app/task-kinds/<kind>/index.ts, `coding`): one subject per unit or one per
 * scored response, the rated value of a stored label, the measurement level and the
 * declared scale. E.g. writing quality: one subject per scored response, ordinal 1–5, the
 * shown position of each response from the stored shown order; best-of-N: one subject
 * per unit, nominal, the pick's slot among the unit's candidates.
 *
 * imported-labels (no kind module: labels from a file): the raw value; config.level =
 * nominal | ordinal | interval; config.categories, when given, declares the scale (its
 * categories in order, used or not).
 */
import type { Label } from "~/stats";
import type { TaskConfig } from "~/annotation/config";
import { matchesGold } from "~/annotation/labels";
import { findKind } from "~/task-kinds/registry";
import type { Coding } from "~/task-kinds/types";
import type { Annotations, LabelKind, Ratings, Subject, TaskData, TaskInfo } from "./types";

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
  const k = findKind(kind);
  if (k) return k.coding.level;
  const level = config.level;
  return level === "ordinal" || level === "interval" ? level : "nominal";
}

/**
 * A task's scale: the categories coefficients count (Gwet's AC1: q) and their order. Yes/No
 * tasks: Yes, No; a kind declaring its categories (writing quality: 1–5): those; otherwise the labels seen (`seen`, numbers as numbers
 * on a numeric level), with a declared `config.categories` kept whole, in its order, even
 * where some are unused. A nominal scale of exactly Yes and No is binary.
 */
export function taskScale(
  kind: string,
  kindOfLabel: LabelKind,
  config: Record<string, unknown>,
  seen: Iterable<Label>,
): { labelKind: LabelKind; categories: Label[]; positive: Label | null } {
  const numeric = kindOfLabel === "ordinal" || kindOfLabel === "interval";
  let labelKind = kindOfLabel;
  let categories: Label[];
  let positive: Label | null = null;
  if (labelKind === "binary") {
    categories = ["Yes", "No"];
    positive = "Yes";
  } else if (declaredBy(kind)) categories = declaredBy(kind)!(config as TaskConfig);
  else {
    categories = [...new Set(seen)].sort((a, b) =>
      typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b)),
    );
    // A declared scale (config.categories) keeps its categories and their order even when some are
    // unused, so coefficients that count the categories (Gwet's AC1: q) use the scale, not the labels seen.
    const declared = config.categories;
    if (Array.isArray(declared) && declared.length > 0 && declared.every(isLabel)) {
      const scale: Label[] = numeric ? declared.map(Number).filter((x) => Number.isFinite(x)) : (declared as Label[]);
      const inScale = new Set<Label>(scale);
      categories = [...scale, ...categories.filter((c) => !inScale.has(c))];
      if (numeric) categories.sort((a, b) => (a as number) - (b as number));
    }
    if (labelKind === "nominal" && categories.length === 2 && categories.includes("Yes") && categories.includes("No")) {
      labelKind = "binary";
      categories = ["Yes", "No"];
      positive = "Yes";
    }
  }
  return { labelKind, categories, positive };
}

const declaredBy = (kind: string) => findKind(kind)?.coding.categories;

function isLabel(v: unknown): v is Label {
  return (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";
}

/**
 * Builds TaskData one unit and one label at a time (units first, then labels), so a
 * loader can stream database rows into it without holding intermediate objects.
 * {@link buildTaskData} is the same over arrays.
 */
export class TaskDataBuilder {
  private readonly kind: string;
  /** The kind's coding; undefined for imported labels (the raw value, one subject per unit). */
  private readonly coding: Coding | undefined;
  private labelKind: LabelKind;
  private readonly numeric: boolean;
  private readonly annotatable: boolean;
  private readonly resp: Map<number, RawResponse>;
  private readonly subjects: Subject[] = [];
  // Ratings and annotations, column by column (plain arrays of small numbers while building).
  private readonly rS: number[] = [];
  private readonly rAnnotator: number[] = [];
  private readonly rValue: Label[] = [];
  private readonly rPosition: number[] = [];
  private readonly aUnit: number[] = [];
  private readonly aAnnotator: number[] = [];
  private readonly aDuration: number[] = [];
  private readonly aGold: number[] = [];
  private readonly aPick: number[] = [];
  private readonly aShown: number[] = [];
  private readonly aLongest: number[] = [];
  /** Unit id → the unit's ordinal in the order added. */
  private readonly unitOrdinal = new Map<number, number>();
  /** Per unit ordinal: its subject (kinds with one subject per unit), gold label, gold flag, response ids. */
  private readonly unitSubject: number[] = [];
  private readonly unitGold: (string | null)[] = [];
  private readonly unitIsGold: boolean[] = [];
  private readonly unitResponseIds: ((number | "reference")[] | null)[] = [];
  /** Writing quality, per unit ordinal: the scored responses (the reference is not), whose subjects follow unitSubject. */
  private readonly unitScored: number[][] = [];

  constructor(private readonly raw: Pick<RawTask, "task" | "config" | "adjudications" | "responses">) {
    this.kind = raw.task.kind;
    this.coding = findKind(this.kind)?.coding;
    this.labelKind = labelKindOf(this.kind, raw.config);
    this.numeric = this.labelKind === "ordinal" || this.labelKind === "interval";
    this.annotatable = this.coding !== undefined;
    this.resp = new Map(raw.responses.map((r) => [r.id, r]));
  }

  private toValue(v: unknown): Label | null {
    if (!isLabel(v)) return null;
    if (this.numeric) {
      const x = Number(v);
      return Number.isFinite(x) ? x : null;
    }
    return v;
  }

  private extract(l: unknown, responseIds: (number | "reference")[] | null): Label | null {
    const value = this.coding?.value;
    return value ? value(l, responseIds) : this.toValue(l);
  }

  private baseSubject(u: RawUnit, responseId: number | null): Subject {
    const r = responseId != null ? this.resp.get(responseId) : undefined;
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
  }

  addUnit(u: RawUnit): void {
    const ordinal = this.unitSubject.length;
    this.unitOrdinal.set(u.id, ordinal);
    this.unitGold.push(u.goldLabel);
    this.unitIsGold.push(u.isGold);
    this.unitResponseIds.push(u.responseIds);
    const scoresOf = this.coding?.subjects === "response" ? this.coding.scores : undefined;
    if (scoresOf) {
      const gold = u.isGold ? scoresOf(parseGold(u.goldLabel)) : null;
      const adjLabel = this.raw.adjudications[u.id];
      const adj = adjLabel ? scoresOf(adjLabel) : null;
      this.unitSubject.push(this.subjects.length);
      const scored: number[] = [];
      for (const rid of u.responseIds ?? []) {
        if (rid === "reference") continue;
        const s = this.baseSubject(u, rid);
        s.gold = gold ? this.toValue(gold[String(rid)]) : null;
        s.adjudicated = adj ? this.toValue(adj[String(rid)]) : null;
        scored.push(rid);
        this.subjects.push(s);
      }
      this.unitScored.push(scored);
      return;
    }
    const s = this.baseSubject(u, u.responseId);
    s.gold = u.isGold ? this.extract(parseGold(u.goldLabel), u.responseIds) : null;
    const adj = this.raw.adjudications[u.id];
    s.adjudicated = adj !== undefined ? this.extract(adj, u.responseIds) : null;
    this.unitSubject.push(this.subjects.length);
    this.unitScored.push([]);
    this.subjects.push(s);
  }

  /** A label of a unit added before; labels of unknown units are ignored. */
  addAnnotation(a: RawAnnotation): void {
    const ordinal = this.unitOrdinal.get(a.unitId);
    if (ordinal === undefined) return;
    const kind = this.kind;
    const unitId = a.unitId;
    const goldLabel = this.unitGold[ordinal];
    const order = a.shownOrder ?? this.unitResponseIds[ordinal] ?? null;
    let goldCorrect: boolean | null = null;
    if (this.unitIsGold[ordinal] && goldLabel != null) {
      goldCorrect = this.annotatable ? matchesGold(kind, a.label, goldLabel) : String(parseGold(goldLabel)) === String(a.label);
    }
    let pickPosition: number | null = null;
    let shownCount: number | null = null;
    let pickedLongest: boolean | null = null;
    const coding = this.coding;
    if (coding?.subjects === "response" && coding.scores) {
      const scores = coding.scores(a.label);
      const scored = this.unitScored[ordinal];
      for (const key in scores) {
        // The subject of (unit, response): the unit's first subject + the response's place among its scored ones.
        const rid = Number(key);
        const k = scored.indexOf(rid);
        const value = this.toValue(scores[key]);
        if (k < 0 || value === null) continue;
        let pos = order ? order.indexOf(rid) : -1;
        if (pos < 0 && order) pos = order.findIndex((x) => String(x) === key);
        this.rate(this.unitSubject[ordinal] + k, a.annotatorId, value, pos);
      }
    } else {
      const s = this.unitSubject[ordinal];
      let value: Label | null;
      if (coding?.pick) {
        const best = coding.pick(a.label);
        value = this.extract(a.label, this.unitResponseIds[ordinal]);
        if (best != null && best !== "tie" && order && order.length > 0) {
          shownCount = order.length;
          const pos = order.findIndex((k) => String(k) === String(best));
          pickPosition = pos >= 0 ? pos : null;
          const lens = order.map((k) => (k === "reference" ? null : (this.resp.get(k)?.length ?? null)));
          if (lens.every((l) => l != null) && pos >= 0) pickedLongest = lens[pos]! >= Math.max(...(lens as number[]));
        }
      } else value = this.extract(a.label, this.unitResponseIds[ordinal]);
      if (value !== null) this.rate(s, a.annotatorId, value, -1);
    }
    this.aUnit.push(unitId);
    this.aAnnotator.push(a.annotatorId);
    this.aDuration.push(a.durationMs ?? NaN);
    this.aGold.push(goldCorrect === null ? -1 : goldCorrect ? 1 : 0);
    this.aPick.push(pickPosition ?? -1);
    this.aShown.push(shownCount ?? 0);
    this.aLongest.push(pickedLongest === null ? -1 : pickedLongest ? 1 : 0);
  }

  private rate(s: number, annotator: number, value: Label, position: number): void {
    this.rS.push(s);
    this.rAnnotator.push(annotator);
    this.rValue.push(value);
    this.rPosition.push(position >= 0 ? position : -1);
  }

  finish(annotators: { id: number; name: string }[]): TaskData {
    const { kind, subjects } = this;
    const ratings: Ratings = {
      length: this.rS.length,
      s: Int32Array.from(this.rS),
      annotator: Int32Array.from(this.rAnnotator),
      value: this.rValue,
      position: Int32Array.from(this.rPosition),
    };
    const annotations: Annotations = {
      length: this.aUnit.length,
      unitId: Int32Array.from(this.aUnit),
      annotator: Int32Array.from(this.aAnnotator),
      durationMs: Float64Array.from(this.aDuration),
      goldCorrect: Int8Array.from(this.aGold),
      pickPosition: Int32Array.from(this.aPick),
      shownCount: Int32Array.from(this.aShown),
      pickedLongest: Int8Array.from(this.aLongest),
    };
    const seen = new Set<Label>(ratings.value);
    for (const s of subjects) {
      if (s.adjudicated !== null) seen.add(s.adjudicated);
    }
    const { labelKind, categories, positive } = taskScale(kind, this.labelKind, this.raw.config, seen);
    return { task: this.raw.task, labelKind, categories, positive, subjects, ratings, annotations, annotators };
  }
}

export function buildTaskData(raw: RawTask): TaskData {
  const b = new TaskDataBuilder(raw);
  for (const u of raw.units) b.addUnit(u);
  for (const a of raw.annotations) b.addAnnotation(a);
  return b.finish(raw.annotators);
}
