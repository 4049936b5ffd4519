/** Items with their checklists and references, streamed (long-form files a group at a time). */
import type { ChecklistEntry, ItemRecord, SeenItem } from "./types";
import { clip, detach, SAMPLE_ROWS, StagingWriter } from "./staging.server";

export abstract class ItemsWriter extends StagingWriter {
  /** The long-form group being streamed, and its source ID. */
  private open: SeenItem | undefined;
  private openKey: string | undefined;

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
}
