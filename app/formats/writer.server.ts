/**
 * The import sink: presets hand it normalised records, it checks what only the
 * whole file can tell (duplicate IDs, unknown items, weight sums), writes with
 * prepared statements inside the caller's transaction, and counts.
 *
 * Stability: a benchmark file becomes a dataset version whose contentHash is
 * the SHA-256 of the normalised records. When an existing version of the same
 * name has the same hash, the import is redone against that version ("reuse"
 * mode) and changes nothing that is already there; a changed file gets a new
 * version, so what was labelled on the old one stays as it was.
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { inferLevel, placeholderEmail, type LabelLevel, type LabelValue } from "./labels";
import type { Problem } from "./problems";
import { STAGE_BASE } from "./stage.server";

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
};

/** `response` (a response key or model of the item named by `unit`) links the label to an imported response. */
export type LabelRecord = { unit: string; annotator: string; label: LabelValue; text?: string; response?: string };

/** A judge's verdict on a unit of imported labels, by unit key (the unit-verdicts preset). */
export type UnitVerdictRecord = { judge: string; unit: string; value: string | null; score: number | null; raw: string | null };

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
  /** Labels presets: the declared scale (its categories in order); labels outside it are refused. */
  categories?: LabelValue[];
  /** Benchmarks whose checklist weights must sum to 1 (warn otherwise). */
  weightsSumToOne?: boolean;
};

/** The measurement level a label import used, and why: given (--level) or inferred from the labels. */
export type LevelInfo = { level: LabelLevel; source: "given" | "inferred"; reason: string };

/** Why `inferLevel` gives what it gives on these values (the words of the import summary). */
export function describeLevel(values: LabelValue[], given: LabelLevel | undefined, scale?: LabelValue[]): LevelInfo {
  if (given) return { level: given, source: "given", reason: "given with --level" };
  if (scale) {
    // A declared scale says more than the labels in use: its categories decide.
    const level = inferLevel(scale);
    const reason =
      level === "nominal"
        ? "inferred from the declared scale (--categories): not every category is a number, so the categories have no order"
        : level === "ordinal"
          ? `inferred from the declared scale (--categories): ${scale.length} whole numbers, read as a rating scale; import with --level nominal if they are category codes`
          : `inferred from the declared scale (--categories): numbers, and not at most 10 whole numbers (${scale.length} categories)`;
    return { level, source: "inferred", reason };
  }
  const level = inferLevel(values);
  const distinct = new Set(values).size;
  const reason =
    distinct === 0
      ? "inferred: there are no labels, so nothing says they are numbers"
      : level === "nominal"
        ? `inferred: not every label is a number (${distinct} distinct label${distinct === 1 ? "" : "s"}), so the labels are categories without an order`
        : level === "ordinal"
          ? `inferred: every label is a whole number and there are at most 10 distinct values (${distinct}), read as a rating scale; import with --level nominal if they are category codes`
          : `inferred: every label is a number, and they are not at most 10 whole numbers (${distinct} distinct values)`;
  return { level, source: "inferred", reason };
}

const MAX_PROBLEMS = 1000;
const SAMPLE_ROWS = 10;

export type SampleRow = { kind: "item" | "response" | "verdict" | "label"; row: number; fields: Record<string, string> };

export class ImportWriter {
  readonly counts: Counts = { items: 0, checklistItems: 0, references: 0, responses: 0, verdicts: 0, annotations: 0 };
  readonly errors: Problem[] = [];
  readonly warnings: Problem[] = [];
  errorCount = 0;
  warningCount = 0;
  /** Rows whose key the database already holds with different content (responses, verdicts). */
  conflictCount = 0;
  /** Rows the database already holds with the same content (nothing to write). */
  alreadyPresent = 0;
  /** The first records as the preset handed them over (the preview's table). */
  readonly sample: SampleRow[] = [];
  datasetId: number | undefined;
  datasetVersion: number | undefined;
  /** Label imports: the level used and why (set by finish). */
  level: LevelInfo | undefined;
  readonly hash = createHash("sha256");
  private readonly reuse: boolean;
  private readonly seen = new Map<string, SeenItem>();
  /** The long-form group being streamed, and its source ID. */
  private open: SeenItem | undefined;
  private openKey: string | undefined;
  /** Hashed text not yet handed to `hash` (one update per ~64 KB instead of one per row; same bytes). */
  private hashPending = "";
  private projectItems: Map<string, number | "ambiguous"> | undefined;
  private readonly checklists = new Map<number, { id: number; text: string; position: number }[]>();
  private readonly judgeIds = new Map<string, number>();
  private readonly labels: (LabelRecord & { row: number; itemId?: number; responseId?: number })[] = [];
  private readonly labelKeys = new Map<string, number>();
  private readonly verdictKeys = new Map<string, number>();
  private readonly reportedUnknown = new Set<string>();
  private readonly s: Record<string, Database.Statement>;
  /** The declared scale's categories as text (labels are compared as text, as verdicts are). */
  private readonly scale: Set<string> | undefined;

  constructor(
    private readonly conn: Database.Database,
    private readonly opts: WriterOptions,
  ) {
    const c = conn;
    this.scale = opts.categories ? new Set(opts.categories.map(String)) : undefined;
    // A declared scale or a given level is part of what the import makes (the task's config): the same labels
    // with another scale or level are another version, never "already imported" with the old one kept.
    if (opts.categories) this.hashText(`\u0003scale ${JSON.stringify(opts.categories)}\n`);
    if (opts.level) this.hashText(`\u0003level ${opts.level}\n`);
    // Rows go to the stage (see stage.server.ts); look-ups read the database and the stage.
    this.s = {
      item: c.prepare(
        "insert into stage.items (dataset_id, source_id, query, passage, domain, subject, task_type, language, metadata) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      checklist: c.prepare("insert into stage.checklist_items (item_id, text, weight, position) values (?, ?, ?, ?)"),
      reference: c.prepare("insert into stage.\"references\" (item_id, text, provenance) values (?, ?, 'import')"),
      response: c.prepare(
        "insert into stage.responses (item_id, model, turn, text, origin, source_key, metadata) values (?, ?, ?, ?, 'import', ?, ?)",
      ),
      // The response keys of this file so far (their ID: staged, already in the database, or 0 if refused): on disk, not in memory.
      keyGet: c.prepare("select id from stage.response_keys where item_id = ? and source_key = ?"),
      keyIns: c.prepare("insert into stage.response_keys (item_id, source_key, id) values (?, ?, ?)"),
      liveResponse: c.prepare("select id, model, turn, text from main.responses where item_id = ? and source_key = ?"),
      responseId: c.prepare(
        "select id from main.responses where item_id = ? and source_key = ? union all select id from stage.responses where item_id = ? and source_key = ?",
      ),
      responseByModel: c.prepare(
        "select id from main.responses where item_id = ? and model = ? union all select id from stage.responses where item_id = ? and model = ?",
      ),
      judge: c.prepare("insert into stage.judges (project_id, name, provider, model) values (?, ?, 'import', ?)"),
      judgeId: c.prepare("select id from main.judges where project_id = ? and name = ?"),
      verdict: c.prepare(
        "insert into stage.verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status) values (?, ?, ?, ?, ?, ?, ?)",
      ),
      liveVerdict: c.prepare(
        "select id, value, score, raw_output from main.verdicts where judge_id = ? and response_id = ? and checklist_item_id is ? order by id limit 1",
      ),
      checklistOf: c.prepare(
        `select id, text, position from (
           select id, text, position from main.checklist_items where item_id = ? and retired_at is null
           union all select id, text, position from stage.checklist_items where item_id = ?)
         order by position, id`,
      ),
    };
    if (opts.dataset) {
      if (opts.dataset.reuseId) {
        this.reuse = true;
        this.datasetId = opts.dataset.reuseId;
        const d = c.prepare("select version from main.datasets where id = ?").get(this.datasetId) as { version: number };
        this.datasetVersion = d.version;
        for (const r of c.prepare("select id, source_id from main.items where dataset_id = ?").all(this.datasetId) as {
          id: number;
          source_id: string;
        }[]) {
          this.seen.set(r.source_id, { id: r.id, row: 0, fields: undefined, checklist: undefined, count: 0, weight: 0, weighted: false });
        }
      } else {
        this.reuse = false;
        const max = c
          .prepare("select max(version) as v from main.datasets where project_id = ? and name = ?")
          .get(opts.projectId, opts.dataset.name) as { v: number | null };
        this.datasetVersion = (max.v ?? 0) + 1;
        this.datasetId = Number(
          c
            .prepare("insert into stage.datasets (project_id, name, version, source) values (?, ?, ?, ?)")
            .run(opts.projectId, opts.dataset.name, this.datasetVersion, opts.dataset.source).lastInsertRowid,
        );
      }
    } else this.reuse = false;
  }

  get failed(): boolean {
    return this.errorCount > 0;
  }

  /** A row that differs from what the database already holds under the same key (an error; counted apart). */
  private conflict(p: Problem): void {
    this.conflictCount++;
    this.error(p);
  }

  /** Keeps the first SAMPLE_ROWS records as parsed, for the preview (long texts clipped). */
  private sampleRow(kind: SampleRow["kind"], row: number, fields: Record<string, unknown>): void {
    if (this.sample.length >= SAMPLE_ROWS) return;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined || v === null) continue;
      out[k] = clip(typeof v === "string" ? v : JSON.stringify(v), 300);
    }
    this.sample.push({ kind, row, fields: out });
  }

  error(p: Problem): void {
    this.errorCount++;
    if (this.errors.length < MAX_PROBLEMS) this.errors.push(p);
  }

  warn(p: Problem): void {
    this.warningCount++;
    if (this.warnings.length < MAX_PROBLEMS) this.warnings.push(p);
  }

  /**
   * An item (with its checklist and references). With `merge`, a repeated ID
   * adds its checklist entries to the item (long-form CSV) as long as the
   * item's own fields agree; without, a repeated ID is an error.
   *
   * Memory stays bounded on long-form files: the rows of one item are
   * normally contiguous, so only the item being streamed (the open group)
   * keeps its checklist texts and fields in memory. When a group closes and
   * all of it is written, it keeps only its ID, first row and weight sum; if
   * the same ID comes back later (rows not contiguous), its fields and
   * checklist are read back from the database, exactly. Groups that were not
   * written (a reuse or failed run) keep theirs in memory.
   */
  item(rec: ItemRecord, row: number, merge = false): void {
    const refs = rec.references ?? [];
    if (this.sample.length < SAMPLE_ROWS) this.sampleItem(row, rec.sourceId, rec.query, rec.domain, refs, rec.checklist);
    let entry = this.seen.get(rec.sourceId);
    if (entry && entry.row > 0) {
      if (!merge) {
        this.error({ row, field: "id", message: `duplicate ID "${rec.sourceId}" (first seen at row ${entry.row})` });
        return;
      }
      if (entry !== this.open) this.reopen(entry);
      const f = entry.fields!;
      if (
        f.query !== rec.query ||
        (f.passage ?? "") !== (rec.passage ?? "") ||
        (f.domain ?? "") !== (rec.domain ?? "") ||
        f.refs !== refs.join("\u0001")
      ) {
        this.error({
          row,
          message: `item "${rec.sourceId}" appears again with a different prompt, reference or domain than at row ${entry.row}`,
        });
        return;
      }
    } else {
      const { checklist: _c, ...fields } = rec;
      this.hashText(JSON.stringify(fields));
      this.hashText("\n");
      this.counts.items++;
      this.counts.references += refs.length;
      let id = entry?.id ?? 0;
      if (this.writing) {
        id = Number(
          this.s.item.run(
            this.datasetId,
            rec.sourceId,
            rec.query,
            rec.passage ?? null,
            rec.domain ?? null,
            rec.subject ?? null,
            rec.taskType ?? null,
            rec.language ?? null,
            rec.metadata && Object.keys(rec.metadata).length ? JSON.stringify(rec.metadata) : "{}",
          ).lastInsertRowid,
        );
        for (const r of refs) this.s.reference.run(id, r);
      }
      entry = { id, row, fields: undefined, checklist: new Set(), count: 0, weight: 0, weighted: false };
      if (merge) entry.fields = { query: rec.query, passage: rec.passage ?? null, domain: rec.domain ?? null, refs: refs.join("\u0001") };
      this.seen.set(detach(rec.sourceId), entry);
    }
    if (merge && entry !== this.open) this.openGroup(entry, rec.sourceId);
    const list = rec.checklist;
    if (list) for (let i = 0; i < list.length; i++) this.checklistEntry(entry, rec.sourceId, list[i].text, list[i].weight, row);
    if (!merge) entry.checklist = undefined;
  }

  /**
   * One row of a long-form file (items-csv's fast path): the same as
   * `item({...}, row, true)` with at most one reference and one checklist
   * entry, without building the record.
   */
  longFormRow(
    row: number,
    sourceId: string,
    query: string,
    passage: string | null,
    domain: string | null,
    subject: string | null,
    taskType: string | null,
    language: string | null,
    reference: string | undefined,
    text: string | undefined,
    weight: number | null,
  ): void {
    const open = this.open;
    if (open !== undefined && this.openKey === sourceId) {
      if (this.sample.length < SAMPLE_ROWS)
        this.sampleItem(
          row,
          sourceId,
          query,
          domain,
          reference === undefined ? [] : [reference],
          text === undefined ? [] : [{ text, weight }],
        );
      const f = open.fields!;
      if (
        f.query !== query ||
        (f.passage ?? "") !== (passage ?? "") ||
        (f.domain ?? "") !== (domain ?? "") ||
        f.refs !== (reference ?? "")
      ) {
        this.error({
          row,
          message: `item "${sourceId}" appears again with a different prompt, reference or domain than at row ${open.row}`,
        });
        return;
      }
      if (text !== undefined) this.checklistEntry(open, sourceId, text, weight, row);
      return;
    }
    this.item(
      {
        sourceId,
        query,
        passage,
        domain,
        subject,
        taskType,
        language,
        references: reference === undefined ? [] : [reference],
        checklist: text === undefined ? [] : [{ text, weight }],
      },
      row,
      true,
    );
  }

  private sampleItem(
    row: number,
    id: string,
    prompt: string,
    domain: string | null | undefined,
    refs: string[],
    checklist: ChecklistEntry[] | undefined,
  ): void {
    this.sampleRow("item", row, {
      id,
      prompt,
      domain: domain ?? undefined,
      reference: refs.length ? refs.join(" | ") : undefined,
      checklist: checklist?.length ? checklist.map((c) => (c.weight === null ? c.text : `${c.text} (${c.weight})`)).join(" | ") : undefined,
    });
  }

  private checklistEntry(entry: SeenItem, sourceId: string, text: string, weight: number | null, row: number): void {
    const set = entry.checklist!;
    if (set.has(text)) {
      this.error({ row, field: "checklist", message: `duplicate checklist item for "${sourceId}": "${clip(text)}"` });
      return;
    }
    set.add(text);
    this.hashText(`\u0002${text}\u0002${weight ?? ""}\n`);
    if (weight !== null) {
      entry.weighted = true;
      entry.weight += weight;
    }
    this.counts.checklistItems++;
    const position = entry.count++;
    if (this.writing) this.s.checklist.run(entry.id, text, weight, position);
  }

  /** True while rows are written: a fresh version and no error so far. */
  private get writing(): boolean {
    return !this.reuse && this.errorCount === 0;
  }

  /** Makes `entry` the group being streamed, closing the previous one. */
  private openGroup(entry: SeenItem, sourceId: string): void {
    const prev = this.open;
    if (prev) {
      // Written in full (no error since it opened, fresh version): the database has it.
      if (this.writing && prev.openedWriting) {
        prev.fields = undefined;
        prev.checklist = undefined;
      } else if (prev.fields && prev.checklist) {
        // Kept in memory: keep copies, not slices of the file's chunks.
        const f = prev.fields;
        prev.fields = {
          query: detach(f.query),
          passage: f.passage && detach(f.passage),
          domain: f.domain && detach(f.domain),
          refs: detach(f.refs),
        };
        prev.checklist = new Set(Array.from(prev.checklist, detach));
      }
    }
    this.open = entry;
    this.openKey = sourceId;
    entry.openedWriting = this.writing;
  }

  /** A closed group's fields and checklist, from memory or read back from the database. */
  private reopen(entry: SeenItem): void {
    if (entry.checklist && entry.fields) return;
    const c = this.conn;
    const it = c.prepare("select query, passage, domain from stage.items where id = ?").get(entry.id) as {
      query: string;
      passage: string | null;
      domain: string | null;
    };
    const refs = (c.prepare('select text from stage."references" where item_id = ? order by id').all(entry.id) as { text: string }[]).map(
      (r) => r.text,
    );
    entry.fields = { query: it.query, passage: it.passage, domain: it.domain, refs: refs.join("\u0001") };
    entry.checklist = new Set(
      (c.prepare("select text from stage.checklist_items where item_id = ? order by position, id").all(entry.id) as { text: string }[]).map(
        (r) => r.text,
      ),
    );
  }

  private itemId(sourceId: string, row: number, field = "item"): number | undefined {
    const own = this.seen.get(sourceId);
    if (own) return own.id;
    if (!this.projectItems) this.projectItems = this.loadProjectItems();
    const id = this.projectItems.get(sourceId);
    if (id === "ambiguous") {
      this.error({ row, field, message: `item "${sourceId}" exists in more than one dataset; name one with --dataset` });
      return undefined;
    }
    if (id === undefined) {
      const once = `${row}\u0000${sourceId}`;
      if (this.reportedUnknown.has(once)) return undefined;
      this.reportedUnknown.add(once);
      const where = this.opts.lookupDataset ? `dataset "${this.opts.lookupDataset}"` : "this project";
      this.error({ row, field, message: `unknown item "${clip(sourceId)}": it is not in ${where}; import the benchmark first` });
    }
    return id;
  }

  /** source ID → item ID over the latest version of each dataset in the project. */
  private loadProjectItems(): Map<string, number | "ambiguous"> {
    const rows = this.conn
      .prepare(
        `select i.id, i.source_id from main.items i join main.datasets d on d.id = i.dataset_id
         where d.project_id = ? and (? is null or d.name = ?)
           and d.version = (select max(d2.version) from main.datasets d2 where d2.project_id = d.project_id and d2.name = d.name)`,
      )
      .all(this.opts.projectId, this.opts.lookupDataset ?? null, this.opts.lookupDataset ?? null) as {
      id: number;
      source_id: string;
    }[];
    const map = new Map<string, number | "ambiguous">();
    for (const r of rows) map.set(r.source_id, map.has(r.source_id) ? "ambiguous" : r.id);
    return map;
  }

  response(rec: ResponseRecord, row: number): void {
    const key = rec.key ?? `${rec.model}#${rec.turn}`;
    const itemId = this.itemId(rec.item, row);
    if (itemId === undefined) return;
    if (this.s.keyGet.get(itemId, key)) {
      this.error({ row, message: `duplicate response "${key}" for item "${rec.item}"` });
      return;
    }
    this.counts.responses++;
    this.sampleRow("response", row, { item: rec.item, model: rec.model, turn: rec.turn, text: rec.text });
    // The same key already in the database: identical content is a no-op; a different text is refused (imported
    // responses are what labels and verdicts refer to, so they are never replaced underneath them).
    const live =
      itemId < STAGE_BASE
        ? (this.s.liveResponse.get(itemId, key) as { id: number; model: string; turn: number; text: string } | undefined)
        : undefined;
    if (live) {
      if (live.text === rec.text && live.model === rec.model && live.turn === rec.turn) {
        this.alreadyPresent++;
        this.s.keyIns.run(itemId, key, live.id);
        return;
      }
      const what = live.text !== rec.text ? "text" : live.model !== rec.model ? `model ("${clip(live.model, 40)}")` : `turn (${live.turn})`;
      this.conflict({
        row,
        field: live.text !== rec.text ? "text" : live.model !== rec.model ? "model" : "turn",
        message:
          `conflicts with the response already imported for item "${clip(rec.item, 60)}", ` +
          (rec.key ? `response "${clip(key, 60)}"` : `model "${clip(rec.model, 60)}", turn ${rec.turn}`) +
          `: its ${what} differs. Imported responses are never replaced; give the new one another model name (or response key)`,
      });
      this.s.keyIns.run(itemId, key, 0);
      return;
    }
    if (this.failed) {
      this.s.keyIns.run(itemId, key, 0);
      return;
    }
    const res = this.s.response.run(itemId, rec.model, rec.turn, rec.text, key, JSON.stringify(rec.metadata ?? {}));
    this.s.keyIns.run(itemId, key, Number(res.lastInsertRowid));
  }

  /** The judge's ID: an existing judge of the project, else a new one (staged) when `model` is given. */
  private judgeId(name: string, model?: string): number | undefined {
    let id = this.judgeIds.get(name);
    if (id === undefined) {
      id = (this.s.judgeId.get(this.opts.projectId, name) as { id: number } | undefined)?.id;
      if (id === undefined) {
        if (model === undefined) return undefined;
        id = Number(this.s.judge.run(this.opts.projectId, name, model).lastInsertRowid);
      }
      this.judgeIds.set(name, id);
    }
    return id;
  }

  verdict(rec: VerdictRecord, row: number): void {
    const itemId = rec.itemId ?? this.itemId(rec.item, row);
    if (itemId === undefined) return;
    let responseId = (this.s.keyGet.get(itemId, rec.response) as { id: number } | undefined)?.id;
    if (responseId === undefined) {
      const byKey = this.s.responseId.get(itemId, rec.response, itemId, rec.response) as { id: number } | undefined;
      const byModel = byKey ? [] : (this.s.responseByModel.all(itemId, rec.response, itemId, rec.response) as { id: number }[]);
      responseId = byKey?.id ?? (byModel.length === 1 ? byModel[0].id : undefined);
      if (responseId === undefined) {
        this.error({
          row,
          field: "response",
          message:
            byModel.length > 1
              ? `item "${rec.item}" has ${byModel.length} responses of model "${rec.response}"; give the response key`
              : `unknown response "${clip(rec.response)}" for item "${rec.item}"; import the responses first`,
        });
        return;
      }
    }
    let checklistItemId: number | null = null;
    if (rec.checklist) {
      const list = this.checklistOf(itemId);
      const ref = rec.checklist;
      let hit = "text" in ref ? list.find((c) => c.text === ref.text) : undefined;
      if (!hit && ref.position !== undefined) hit = list[ref.position - 1];
      if (!hit) {
        this.error({
          row,
          field: "checklist_item",
          message:
            "text" in ref
              ? `item "${rec.item}" has no checklist item "${clip(ref.text)}"`
              : `item "${rec.item}" has no checklist item number ${ref.position} (it has ${list.length})`,
        });
        return;
      }
      checklistItemId = hit.id;
    }
    if (rec.againstLabels) {
      const labels = checklistItemId === null ? this.labelsOfResponse(responseId) : undefined;
      if (labels) {
        // A judge of labelled units: an empty output or one outside the task's labels is kept as unparsed.
        const parsed = rec.value !== null && labels.has(rec.value);
        rec = { ...rec, score: parsed ? rec.score : null, parseStatus: parsed ? "ok" : "unparsed" };
      } else if (rec.value === null) {
        this.error({
          row,
          field: rec.againstLabels.valueField ?? "value",
          message: "is empty (an empty verdict is kept, as unparsed, only on a response labelled by imported labels)",
        });
        return;
      }
    }
    const key = `${rec.judge}\u0000${responseId}\u0000${checklistItemId}`;
    if (this.verdictKeys.has(key)) {
      this.error({ row, message: `duplicate verdict of judge "${rec.judge}" (first at row ${this.verdictKeys.get(key)})` });
      return;
    }
    this.verdictKeys.set(key, row);
    this.counts.verdicts++;
    this.sampleRow("verdict", row, {
      judge: rec.judge,
      item: rec.item,
      response: rec.response,
      checklist_item: checklistItemId === null ? "" : "text" in rec.checklist! ? rec.checklist.text : `#${rec.checklist!.position}`,
      value: rec.value ?? "",
      raw: rec.raw ?? "",
    });
    if (responseId === 0) return;
    // The same judge, response and checklist item already judged in the database: identical is a no-op, different is refused.
    const existingJudge = this.judgeId(rec.judge);
    if (existingJudge !== undefined && existingJudge < STAGE_BASE && responseId < STAGE_BASE && (checklistItemId ?? 0) < STAGE_BASE) {
      const live = this.s.liveVerdict.get(existingJudge, responseId, checklistItemId) as
        { id: number; value: string | null; score: number | null; raw_output: string | null } | undefined;
      if (live) {
        if (live.value === rec.value && live.score === (rec.score ?? null) && live.raw_output === (rec.raw ?? null)) {
          this.alreadyPresent++;
          return;
        }
        const field = live.value !== rec.value ? "value" : live.score !== (rec.score ?? null) ? "score" : "raw";
        this.conflict({
          row,
          field,
          message:
            `conflicts with the verdict already imported from judge "${clip(rec.judge, 60)}" on item "${clip(rec.item, 60)}", response "${clip(rec.response, 60)}"` +
            (checklistItemId === null
              ? ""
              : `, checklist item ${"text" in rec.checklist! ? `"${clip(rec.checklist.text, 60)}"` : `#${rec.checklist!.position}`}`) +
            (field === "value"
              ? `: it says ${JSON.stringify(clip(live.value ?? "", 40))}, the file says ${JSON.stringify(clip(rec.value ?? "", 40))}`
              : `: its ${field} differs`) +
            ". Imported verdicts are never replaced; import the new ones under another judge name",
        });
        return;
      }
    }
    if (this.failed) return;
    const judgeId = this.judgeId(rec.judge, rec.judgeModel ?? rec.judge)!;
    this.s.verdict.run(judgeId, responseId, checklistItemId, rec.value, rec.score ?? null, rec.raw ?? null, rec.parseStatus ?? "ok");
  }

  private checklistOf(itemId: number) {
    let list = this.checklists.get(itemId);
    if (!list) {
      list = this.s.checklistOf.all(itemId, itemId) as { id: number; text: string; position: number }[];
      this.checklists.set(itemId, list);
    }
    return list;
  }

  /** One label; `field` is the column it was read from (named in problems). */
  label(rec: LabelRecord, row: number, field = "label"): void {
    this.sampleRow("label", row, { unit: rec.unit, annotator: rec.annotator, label: rec.label, text: rec.text });
    if (this.scale && !this.scale.has(String(rec.label))) {
      this.error({
        row,
        field,
        message: `${JSON.stringify(clip(String(rec.label), 40))} is not a category of the declared scale (${this.opts.categories!.join(", ")})`,
      });
      return;
    }
    this.hashText(
      JSON.stringify(
        rec.response === undefined
          ? [rec.unit, rec.annotator, rec.label, rec.text ?? null]
          : [rec.unit, rec.annotator, rec.label, rec.text ?? null, rec.response],
      ),
    );
    this.hashText("\n");
    const what = rec.response === undefined ? `unit "${rec.unit}"` : `item "${rec.unit}", response "${rec.response}"`;
    const key = rec.response === undefined ? `${rec.unit}\u0000${rec.annotator}` : `${rec.unit}\u0000${rec.annotator}\u0000${rec.response}`;
    const first = this.labelKeys.get(key);
    if (first !== undefined) {
      this.error({ row, message: `duplicate label: annotator "${rec.annotator}" already labelled ${what} at row ${first}` });
      return;
    }
    this.labelKeys.set(key, row);
    let link: { itemId: number; responseId: number } | undefined;
    if (rec.response !== undefined) {
      // A label on an imported response: the unit is (that item, that response), so judges' verdicts on the response meet it.
      const itemId = this.itemId(rec.unit, row, "unit");
      if (itemId === undefined) return;
      const byKey = this.s.responseId.get(itemId, rec.response, itemId, rec.response) as { id: number } | undefined;
      const byModel = byKey ? [] : (this.s.responseByModel.all(itemId, rec.response, itemId, rec.response) as { id: number }[]);
      const responseId = byKey?.id ?? (byModel.length === 1 ? byModel[0].id : undefined);
      if (responseId === undefined) {
        this.error({
          row,
          field: "response",
          message:
            byModel.length > 1
              ? `item "${clip(rec.unit)}" has ${byModel.length} responses of model "${clip(rec.response)}"; give the response key`
              : `unknown response "${clip(rec.response)}" for item "${clip(rec.unit)}"; import the responses first`,
        });
        return;
      }
      link = { itemId, responseId };
    }
    this.labels.push({ ...rec, row, ...link });
    this.counts.annotations++;
  }

  /**
   * Adds text to the content hash. Pieces are joined before hashing, which
   * gives the same digest as hashing them one by one: every piece starts and
   * ends with ASCII, so joining never pairs up surrogate halves.
   */
  private hashText(text: string): void {
    this.hashPending += text;
    if (this.hashPending.length > 65536) {
      this.hash.update(this.hashPending);
      this.hashPending = "";
    }
  }

  get contentHash(): string {
    if (this.hashPending) {
      this.hash.update(this.hashPending);
      this.hashPending = "";
    }
    return this.hash.copy().digest("hex");
  }

  /** Checks that need the whole file; returns the ID of an identical existing version, if any. */
  finish(): { identicalDatasetId?: number } {
    for (const [sourceId, e] of this.seen) {
      if (e.row === 0 || !e.weighted) continue;
      if (this.opts.weightsSumToOne !== false && Math.abs(e.weight - 1) > 1e-6) {
        this.warn({
          row: e.row,
          field: "weight",
          message: `checklist weights of item "${sourceId}" sum to ${round(e.weight)}, not 1`,
        });
      }
    }
    if (this.labels.length) this.counts.items = this.labelUnits();
    if (this.labels.length)
      this.level = describeLevel(
        this.labels.map((l) => l.label),
        this.opts.level,
        this.opts.categories,
      );
    if (this.labels.length && !this.opts.level && !this.opts.categories) {
      // The level of measurement is inferred only from numbers; say so, so a code book (0/1/2 for categories) is not taken as a scale unnoticed.
      const level = inferLevel(this.labels.map((l) => l.label));
      if (level !== "nominal") {
        const distinct = [...new Set(this.labels.map((l) => l.label as number))].sort((x, y) => x - y);
        const shown = distinct.length > 10 ? `${distinct.slice(0, 10).join(", ")}, …` : distinct.join(", ");
        this.warn({
          row: 0,
          field: "label",
          message:
            `level "${level}" inferred: every label is a number (${distinct.length} distinct: ${shown})` +
            `${level === "ordinal" ? ", whole numbers, at most 10 values" : ""}; if the numbers are category codes, import with --level nominal (the Label level select on the Import page)`,
        });
      }
    }
    if (this.labels.length === 0 && this.opts.dataset && this.counts.annotations === 0 && this.counts.items === 0 && !this.failed) {
      this.error({ row: 0, message: "the file has no records to import" });
    }
    if (!this.opts.dataset || this.reuse || this.failed) return {};
    const hash = this.contentHash;
    const same = this.conn
      .prepare("select id from main.datasets where project_id = ? and name = ? and content_hash = ? order by version desc limit 1")
      .get(this.opts.projectId, this.opts.dataset.name, hash) as { id: number } | undefined;
    if (same) return { identicalDatasetId: same.id };
    this.conn.prepare("update stage.datasets set content_hash = ? where id = ?").run(hash, this.datasetId);
    if (this.labels.length) this.writeLabels();
    return {};
  }

  /** Labels from another tool: one item and unit per unit ID, placeholder annotators, submitted annotations. */
  private writeLabels(): void {
    const c = this.conn;
    const info =
      this.level ??
      describeLevel(
        this.labels.map((l) => l.label),
        this.opts.level,
        this.opts.categories,
      );
    const perUnit = new Map<string, number>();
    for (const l of this.labels) {
      const k = l.response === undefined ? l.unit : `${l.unit}\u0000${l.response}`;
      perUnit.set(k, (perUnit.get(k) ?? 0) + 1);
    }
    const overlap = Math.max(...perUnit.values());
    const taskId = Number(
      c
        .prepare(
          "insert into stage.tasks (project_id, dataset_id, kind, name, overlap, config, status) values (?, ?, 'imported-labels', ?, ?, ?, 'closed')",
        )
        .run(
          this.opts.projectId,
          this.datasetId,
          this.opts.taskName ?? this.opts.dataset!.name,
          overlap,
          JSON.stringify({
            level: info.level,
            levelSource: info.source,
            levelReason: info.reason,
            ...(this.opts.categories ? { categories: this.opts.categories } : {}),
            source: this.opts.dataset!.source,
          }),
        ).lastInsertRowid,
    );
    const insItem = c.prepare("insert into stage.items (dataset_id, source_id, query) values (?, ?, ?)");
    // Each unit gets a response standing for it, so judges' verdicts on the unit (unit-verdicts) attach to it.
    const insResp = c.prepare(
      `insert into stage.responses (item_id, model, turn, text, origin, source_key, metadata) values (?, '${UNIT_RESPONSE_KEY}', 1, ?, 'import', '${UNIT_RESPONSE_KEY}', '{}')`,
    );
    const insUnit = c.prepare("insert into stage.units (task_id, item_id, response_id, position) values (?, ?, ?, ?)");
    const findUser = c.prepare("select id from main.users where email = ?");
    const insUser = c.prepare("insert into stage.users (email, name, password_hash, disabled) values (?, ?, '!', 1)");
    const insAssign = c.prepare(
      "insert into stage.assignments (unit_id, annotator_id, status, started_at, submitted_at) values (?, ?, 'submitted', unixepoch(), unixepoch())",
    );
    const insAnn = c.prepare("insert into stage.annotations (assignment_id, revision, label, status) values (?, 1, ?, 'submitted')");
    const unitIds = new Map<string, number>();
    const users = new Map<string, number>();
    for (const l of this.labels) {
      const unitKey = l.response === undefined ? l.unit : `${l.unit}\u0000${l.response}`;
      let unitId = unitIds.get(unitKey);
      if (unitId === undefined && l.responseId !== undefined) {
        // Linked to an imported response: the unit judges that response of that item.
        unitId = Number(insUnit.run(taskId, l.itemId, l.responseId, unitIds.size).lastInsertRowid);
        unitIds.set(unitKey, unitId);
      }
      if (unitId === undefined) {
        const itemId = Number(insItem.run(this.datasetId, l.unit, l.text ?? l.unit).lastInsertRowid);
        const responseId = Number(insResp.run(itemId, l.text ?? l.unit).lastInsertRowid);
        unitId = Number(insUnit.run(taskId, itemId, responseId, unitIds.size).lastInsertRowid);
        unitIds.set(unitKey, unitId);
      }
      let userId = users.get(l.annotator);
      if (userId === undefined) {
        const email = placeholderEmail(l.annotator);
        userId = (findUser.get(email) as { id: number } | undefined)?.id ?? Number(insUser.run(email, l.annotator).lastInsertRowid);
        users.set(l.annotator, userId);
      }
      const assignmentId = Number(insAssign.run(unitId, userId).lastInsertRowid);
      insAnn.run(assignmentId, JSON.stringify(l.label));
    }
  }

  labelUnits(): number {
    return new Set(this.labels.map((l) => (l.response === undefined ? l.unit : `${l.unit}\u0000${l.response}`))).size;
  }

  private unitItems: Map<string, { itemId: number; taskId: number } | "ambiguous"> | undefined;
  private readonly taskLabels = new Map<number, Set<string>>();

  /** The labels of an imported-labels task as text: the human labels submitted, and its declared scale. */
  private labelsOfTask(taskId: number): Set<string> {
    let labels = this.taskLabels.get(taskId);
    if (labels) return labels;
    labels = new Set();
    for (const r of this.conn
      .prepare(
        `select distinct an.label from main.annotations an join main.assignments a on a.id = an.assignment_id join main.units u on u.id = a.unit_id
         where u.task_id = ? and an.status = 'submitted'`,
      )
      .all(taskId) as { label: string }[]) {
      try {
        labels.add(String(JSON.parse(r.label)));
      } catch {
        labels.add(r.label);
      }
    }
    const config = this.conn.prepare("select config from main.tasks where id = ?").get(taskId) as { config: string | null } | undefined;
    try {
      const declared = (JSON.parse(config?.config ?? "{}") as { categories?: unknown }).categories;
      if (Array.isArray(declared)) for (const c of declared) labels.add(String(c));
    } catch {
      // a config that is not JSON declares no scale
    }
    this.taskLabels.set(taskId, labels);
    return labels;
  }

  private readonly responseLabels = new Map<number, Set<string> | undefined>();

  /** The labels of the imported-labels task(s) whose units judge this response; undefined when none does. */
  private labelsOfResponse(responseId: number): Set<string> | undefined {
    if (responseId <= 0 || responseId >= STAGE_BASE) return undefined;
    if (this.responseLabels.has(responseId)) return this.responseLabels.get(responseId);
    const tasks = this.conn
      .prepare(
        "select distinct u.task_id from main.units u join main.tasks t on t.id = u.task_id where u.response_id = ? and t.kind = 'imported-labels'",
      )
      .all(responseId) as { task_id: number }[];
    let out: Set<string> | undefined;
    for (const t of tasks) {
      out ??= new Set();
      for (const l of this.labelsOfTask(t.task_id)) out.add(l);
    }
    this.responseLabels.set(responseId, out);
    return out;
  }

  /**
   * A judge's verdict on a unit of imported labels, by its unit key: the verdict goes on the
   * response standing for the unit. An empty value, or one outside the human labels of the
   * unit's task, is stored with parse status "unparsed" (kept, never dropped).
   */
  unitVerdict(rec: UnitVerdictRecord, row: number): void {
    if (!this.unitItems) {
      this.unitItems = new Map();
      const rows = this.conn
        .prepare(
          `select i.source_id, i.id as item_id, u.task_id from main.items i
           join main.datasets d on d.id = i.dataset_id
           join main.units u on u.item_id = i.id
           join main.responses r on r.id = u.response_id and r.source_key = '${UNIT_RESPONSE_KEY}'
           where d.project_id = ? and (? is null or d.name = ?)
             and d.version = (select max(d2.version) from main.datasets d2 where d2.project_id = d.project_id and d2.name = d.name)`,
        )
        .all(this.opts.projectId, this.opts.lookupDataset ?? null, this.opts.lookupDataset ?? null) as {
        source_id: string;
        item_id: number;
        task_id: number;
      }[];
      for (const r of rows) {
        const prev = this.unitItems.get(r.source_id);
        this.unitItems.set(
          r.source_id,
          prev && (prev === "ambiguous" || prev.itemId !== r.item_id) ? "ambiguous" : { itemId: r.item_id, taskId: r.task_id },
        );
      }
    }
    const hit = this.unitItems.get(rec.unit);
    if (hit === undefined || hit === "ambiguous") {
      const where = this.opts.lookupDataset ? `the labels dataset "${this.opts.lookupDataset}"` : "this project's imported labels";
      this.error({
        row,
        field: "unit",
        message:
          hit === "ambiguous"
            ? `unit "${clip(rec.unit)}" is in more than one labels dataset; name one with --dataset`
            : `unknown unit "${clip(rec.unit)}": it is not in ${where}; import the labels first`,
      });
      return;
    }
    const labels = this.labelsOfTask(hit.taskId);
    const parsed = rec.value !== null && labels.has(rec.value);
    this.verdict(
      {
        judge: rec.judge,
        item: rec.unit,
        itemId: hit.itemId,
        response: UNIT_RESPONSE_KEY,
        checklist: null,
        value: rec.value,
        score: parsed ? rec.score : null,
        raw: rec.raw,
        parseStatus: parsed ? "ok" : "unparsed",
      },
      row,
    );
  }
}

type SeenItem = {
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

/**
 * A copy of s that does not keep alive the string it was cut from. Parsers
 * return fields as slices of their input chunk (V8 sliced strings, 13+
 * characters); keeping one would keep the whole 1 MB chunk, and keeping one
 * per item would keep the whole file.
 */
function detach(s: string): string {
  return s.length < 13 ? s : (" " + s).slice(1);
}

function clip(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
