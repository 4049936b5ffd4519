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
import { inferLevel } from "./labels";
import { describeLevel } from "./writer/level";
import { round } from "./writer/staging.server";
import { VerdictsWriter } from "./writer/verdicts.server";

export { describeLevel } from "./writer/level";
export { UNIT_RESPONSE_KEY } from "./writer/types";
export type {
  ChecklistEntry,
  ChecklistRef,
  Counts,
  ItemRecord,
  LabelRecord,
  LevelInfo,
  ResponseRecord,
  SampleRow,
  UnitVerdictRecord,
  VerdictRecord,
  WriterOptions,
} from "./writer/types";

/**
 * The import writer: items (writer/items), labels (writer/labels), responses and verdicts
 * (writer/verdicts) over the shared staging (writer/staging); `finish` runs the checks that need the whole file.
 */
export class ImportWriter extends VerdictsWriter {
  /** Checks that need the whole file; returns the ID of an identical existing version, if any. */
  finish(): { identicalDatasetId?: number } {
    this.warnOutOfScale();
    this.warnVariants();
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
}
