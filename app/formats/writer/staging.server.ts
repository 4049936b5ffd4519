/**
 * The writer's shared staging: the prepared statements into the stage, the
 * dataset version being made (or reused), problems and counts, the preview
 * sample, the content hash, and the look-up of items by source ID.
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Problem } from "../problems";
import type { Counts, LevelInfo, SampleRow, SeenItem, WriterOptions } from "./types";

export const MAX_PROBLEMS = 1000;
export const SAMPLE_ROWS = 10;

export abstract class StagingWriter {
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
  protected readonly reuse: boolean;
  protected readonly seen = new Map<string, SeenItem>();
  /** Hashed text not yet handed to `hash` (one update per ~64 KB instead of one per row; same bytes). */
  private hashPending = "";
  private projectItems: Map<string, number | "ambiguous"> | undefined;
  private readonly reportedUnknown = new Set<string>();
  protected readonly s: Record<string, Database.Statement>;
  /** The declared scale's categories as text (labels are compared as text, as verdicts are). */
  protected readonly scale: Set<string> | undefined;

  constructor(
    protected readonly conn: Database.Database,
    protected readonly opts: WriterOptions,
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
      judge: c.prepare("insert into stage.judges (project_id, name, provider, model, settings) values (?, ?, 'import', ?, ?)"),
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
  protected conflict(p: Problem): void {
    this.conflictCount++;
    this.error(p);
  }

  /** Keeps the first SAMPLE_ROWS records as parsed, for the preview (long texts clipped). */
  protected sampleRow(kind: SampleRow["kind"], row: number, fields: Record<string, unknown>): void {
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

  protected itemId(sourceId: string, row: number, field = "item"): number | undefined {
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

  /**
   * Adds text to the content hash. Pieces are joined before hashing, which
   * gives the same digest as hashing them one by one: every piece starts and
   * ends with ASCII, so joining never pairs up surrogate halves.
   */
  protected hashText(text: string): void {
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
}

/**
 * A copy of s that does not keep alive the string it was cut from. Parsers
 * return fields as slices of their input chunk (V8 sliced strings, 13+
 * characters); keeping one would keep the whole 1 MB chunk, and keeping one
 * per item would keep the whole file.
 */
export function detach(s: string): string {
  return s.length < 13 ? s : (" " + s).slice(1);
}

export function clip(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

export function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
