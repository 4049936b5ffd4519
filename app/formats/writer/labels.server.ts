/** Labels from another tool: checked as they come, written as an imported-labels task (units, placeholder annotators) at the end. */
import { placeholderEmail } from "../labels";
import { STAGE_BASE } from "../stage.server";
import { describeLevel } from "./level";
import { ItemsWriter } from "./items.server";
import { clip } from "./staging.server";
import { UNIT_RESPONSE_KEY, type LabelRecord } from "./types";

/** An imported-labels task's scale, as a verdict on its units is checked against it (LabelsWriter.scaleOfTask). */
export type TaskScale = { labels: Set<string>; numeric: boolean; min: number; max: number };

export abstract class LabelsWriter extends ItemsWriter {
  protected readonly labels: (LabelRecord & { row: number; itemId?: number; responseId?: number })[] = [];
  private readonly labelKeys = new Map<string, number>();

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

  /** Labels from another tool: one item and unit per unit ID, placeholder annotators, submitted annotations. */
  protected writeLabels(): void {
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

  private readonly taskLabels = new Map<number, Set<string>>();

  /** The labels of an imported-labels task as text: the human labels submitted, and its declared scale. */
  protected labelsOfTask(taskId: number): Set<string> {
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

  private readonly taskScales = new Map<number, TaskScale>();

  /**
   * An imported-labels task's scale as verdicts are checked against it: its labels as text
   * (labelsOfTask), whether its level is numeric (ordinal or interval: a verdict that is a number
   * is a score, kept whatever its value), and the range of its numeric labels and declared
   * categories (a score outside it is out of the human scale: kept, counted in a warning).
   */
  protected scaleOfTask(taskId: number): TaskScale {
    let scale = this.taskScales.get(taskId);
    if (scale) return scale;
    const labels = this.labelsOfTask(taskId);
    let level: unknown;
    try {
      const config = this.conn.prepare("select config from main.tasks where id = ?").get(taskId) as { config: string | null } | undefined;
      level = (JSON.parse(config?.config ?? "{}") as { level?: unknown }).level;
    } catch {
      // a config that is not JSON declares no level
    }
    const numbers = [...labels].map(Number).filter(Number.isFinite);
    scale = {
      labels,
      numeric: (level === "ordinal" || level === "interval") && numbers.length > 0,
      min: numbers.length ? Math.min(...numbers) : NaN,
      max: numbers.length ? Math.max(...numbers) : NaN,
    };
    this.taskScales.set(taskId, scale);
    return scale;
  }

  private readonly responseLabels = new Map<number, Set<string> | undefined>();
  private readonly responseScales = new Map<number, TaskScale | undefined>();

  /** The scale of the imported-labels task(s) whose units judge this response (numeric only if every one is); undefined when none does. */
  protected scaleOfResponse(responseId: number): TaskScale | undefined {
    if (this.responseScales.has(responseId)) return this.responseScales.get(responseId);
    const labels = this.labelsOfResponse(responseId);
    let out: TaskScale | undefined;
    if (labels) {
      const scales = this.tasksOfResponse(responseId).map((t) => this.scaleOfTask(t));
      out = {
        labels,
        numeric: scales.length > 0 && scales.every((s) => s.numeric),
        min: Math.min(...scales.map((s) => s.min)),
        max: Math.max(...scales.map((s) => s.max)),
      };
    }
    this.responseScales.set(responseId, out);
    return out;
  }

  private tasksOfResponse(responseId: number): number[] {
    return (
      this.conn
        .prepare(
          "select distinct u.task_id from main.units u join main.tasks t on t.id = u.task_id where u.response_id = ? and t.kind = 'imported-labels'",
        )
        .all(responseId) as { task_id: number }[]
    ).map((t) => t.task_id);
  }

  /** The labels of the imported-labels task(s) whose units judge this response; undefined when none does. */
  protected labelsOfResponse(responseId: number): Set<string> | undefined {
    if (responseId <= 0 || responseId >= STAGE_BASE) return undefined;
    if (this.responseLabels.has(responseId)) return this.responseLabels.get(responseId);
    let out: Set<string> | undefined;
    for (const t of this.tasksOfResponse(responseId)) {
      out ??= new Set();
      for (const l of this.labelsOfTask(t)) out.add(l);
    }
    this.responseLabels.set(responseId, out);
    return out;
  }
}
