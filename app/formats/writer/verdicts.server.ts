/** Responses, judges and verdicts, each refused when it conflicts with what the database already holds under its key. */
import { STAGE_BASE } from "../stage.server";
import { LabelsWriter, type TaskScale } from "./labels.server";
import { clip } from "./staging.server";
import { UNIT_RESPONSE_KEY, type ResponseRecord, type UnitVerdictRecord, type VerdictRecord } from "./types";

export abstract class VerdictsWriter extends LabelsWriter {
  private readonly checklists = new Map<number, { id: number; text: string; position: number }[]>();
  private readonly judgeIds = new Map<string, number>();
  private readonly verdictKeys = new Map<string, number>();
  private unitItems: Map<string, { itemId: number; taskId: number } | "ambiguous"> | undefined;

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

  /** Per judge: the base judge the file (or --variant-of) declares it a variant of, and the row that said so. */
  private readonly variants = new Map<string, { base: string; row: number }>();

  /**
   * Notes a judge's `variant_of` (or the import's --variant-of for it): one base per judge in a file
   * (another one on a later row is an error naming both rows). False when the row is refused.
   */
  private noteVariant(judge: string, given: string | null | undefined, row: number): boolean {
    const base = given?.trim() || this.opts.variantOf?.[judge] || null;
    if (base === null) return true;
    if (base === judge) {
      this.error({ row, field: "variant_of", message: `judge "${clip(judge, 60)}" cannot be a variant of itself` });
      return false;
    }
    const had = this.variants.get(judge);
    if (had && had.base !== base) {
      this.error({
        row,
        field: "variant_of",
        message: `judge "${clip(judge, 60)}" is a variant of "${clip(had.base, 60)}" at row ${had.row}, of "${clip(base, 60)}" here`,
      });
      return false;
    }
    if (!had) {
      this.variants.set(judge, { base, row });
      // A judge this file already created (on a row without variant_of): its settings say so now.
      const id = this.judgeIds.get(judge);
      if (id !== undefined && id >= STAGE_BASE)
        this.conn.prepare("update stage.judges set settings = ? where id = ?").run(JSON.stringify({ variantOf: base }), id);
    }
    return true;
  }

  /** Warnings on the variants when the file has been read: a base that is no judge, an existing judge whose base the import cannot change. */
  protected warnVariants(): void {
    for (const [judge, { base, row }] of this.variants) {
      if (!this.judgeIds.has(base) && !this.s.judgeId.get(this.opts.projectId, base))
        this.warn({
          row,
          field: "variant_of",
          message: `judge "${clip(judge, 60)}" is marked a variant of "${clip(base, 60)}", which is not a judge of this project (the variant table pairs them once it is)`,
        });
      const live = this.s.judgeId.get(this.opts.projectId, judge) as { id: number } | undefined;
      if (live && live.id < STAGE_BASE) {
        const settings = this.conn.prepare("select settings from main.judges where id = ?").get(live.id) as { settings: string };
        let current: unknown;
        try {
          current = (JSON.parse(settings.settings) as { variantOf?: unknown }).variantOf;
        } catch {
          current = undefined;
        }
        if (current !== base)
          this.warn({
            row,
            field: "variant_of",
            message: `judge "${clip(judge, 60)}" already exists; the import does not change it: mark it a variant of "${clip(base, 60)}" on the judges page`,
          });
      }
    }
  }

  /** The judge's ID: an existing judge of the project, else a new one (staged) when `model` is given. */
  private judgeId(name: string, model?: string): number | undefined {
    let id = this.judgeIds.get(name);
    if (id === undefined) {
      id = (this.s.judgeId.get(this.opts.projectId, name) as { id: number } | undefined)?.id;
      if (id === undefined) {
        if (model === undefined) return undefined;
        const base = this.variants.get(name)?.base;
        id = Number(this.s.judge.run(this.opts.projectId, name, model, JSON.stringify(base ? { variantOf: base } : {})).lastInsertRowid);
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
      const scale = checklistItemId === null ? this.scaleOfResponse(responseId) : undefined;
      if (scale) {
        // A judge of labelled units: on a numeric scale a number is a score, kept whatever its value; else
        // an empty output or one outside the task's labels is kept as unparsed.
        const score = this.scoreOn(scale, rec.value, rec.judge, row, rec.againstLabels.valueField ?? "value");
        const parsed = score !== null || (rec.value !== null && scale.labels.has(rec.value));
        rec = { ...rec, score: score ?? (parsed ? rec.score : null), parseStatus: parsed ? "ok" : "unparsed" };
      } else if (rec.value === null) {
        this.error({
          row,
          field: rec.againstLabels.valueField ?? "value",
          message: "is empty (an empty verdict is kept, as unparsed, only on a response labelled by imported labels)",
        });
        return;
      }
    }
    if (!this.noteVariant(rec.judge, rec.variantOf, row)) return;
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

  /** Per judge: verdicts outside the human scale of a numeric task (kept as scores), the first row and value. */
  private readonly outOfScale = new Map<string, { count: number; row: number; field: string; value: number; min: number; max: number }>();

  /**
   * A verdict on a unit of a numeric (ordinal or interval) task: a number is a score, whatever its
   * value (an averaged 2.33, a 0 or a -1 on a 1-5 scale, a 1-10 judge against 1-5 ratings); one
   * outside the human scale's range is counted per judge for a warning. Null: not a number, or
   * the scale is not numeric (the verdict is then checked against the labels as text).
   */
  private scoreOn(scale: TaskScale, value: string | null, judge: string, row: number, field: string): number | null {
    if (!scale.numeric || value === null || value.trim() === "") return null;
    const x = Number(value);
    if (!Number.isFinite(x)) return null;
    if (x < scale.min || x > scale.max) {
      const o = this.outOfScale.get(judge);
      if (o) o.count++;
      else this.outOfScale.set(judge, { count: 1, row, field, value: x, min: scale.min, max: scale.max });
    }
    return x;
  }

  /** One warning per judge with scores outside the human scale (called when the file has been read). */
  protected warnOutOfScale(): void {
    for (const [judge, o] of this.outOfScale)
      this.warn({
        row: o.row,
        field: o.field,
        message:
          `judge "${clip(judge, 60)}": ${o.count} score${o.count === 1 ? "" : "s"} outside the human scale ${o.min}–${o.max} ` +
          `(the first, ${o.value}, at row ${o.row}); kept as scores, in every figure`,
      });
  }

  private checklistOf(itemId: number) {
    let list = this.checklists.get(itemId);
    if (!list) {
      list = this.s.checklistOf.all(itemId, itemId) as { id: number; text: string; position: number }[];
      this.checklists.set(itemId, list);
    }
    return list;
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
    const scale = this.scaleOfTask(hit.taskId);
    const score = this.scoreOn(scale, rec.value, rec.judge, row, "verdict");
    const parsed = score !== null || (rec.value !== null && scale.labels.has(rec.value));
    this.verdict(
      {
        judge: rec.judge,
        item: rec.unit,
        itemId: hit.itemId,
        response: UNIT_RESPONSE_KEY,
        checklist: null,
        value: rec.value,
        score: score ?? (parsed ? rec.score : null),
        raw: rec.raw,
        parseStatus: parsed ? "ok" : "unparsed",
        variantOf: rec.variantOf,
      },
      row,
    );
  }
}
