/**
 * A dataset release: the benchmark as JSONL (one item per line, current
 * checklists and references) plus a markdown changelog of what changed and why.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";

/** Column names of a release line; stable, documented in the README. */
export type ReleaseLine = {
  id: string;
  query: string;
  passage: string | null;
  domain: string | null;
  subject: string | null;
  task_type: string | null;
  language: string | null;
  item_version: number;
  checklist: { text: string; weight: number | null; version: number }[];
  reference: string | null;
  reference_version: number | null;
  metadata: Record<string, unknown>;
};

export function releaseLines(datasetId: number, db: Db = getDb()): ReleaseLine[] {
  const items = db.select().from(schema.items).where(eq(schema.items.datasetId, datasetId)).orderBy(asc(schema.items.sourceId)).all();
  return items.map((it) => {
    const checklist = db
      .select({ text: schema.checklistItems.text, weight: schema.checklistItems.weight, version: schema.checklistItems.version })
      .from(schema.checklistItems)
      .where(and(eq(schema.checklistItems.itemId, it.id), isNull(schema.checklistItems.retiredAt)))
      .orderBy(asc(schema.checklistItems.position))
      .all();
    const ref = db
      .select({ text: schema.references.text, version: schema.references.version })
      .from(schema.references)
      .where(and(eq(schema.references.itemId, it.id), eq(schema.references.isCurrent, true)))
      .get();
    return {
      id: it.sourceId,
      query: it.query,
      passage: it.passage,
      domain: it.domain,
      subject: it.subject,
      task_type: it.taskType,
      language: it.language,
      item_version: it.version,
      checklist,
      reference: ref?.text ?? null,
      reference_version: ref?.version ?? null,
      metadata: it.metadata,
    };
  });
}

export function releaseJsonl(datasetId: number, db: Db = getDb()): string {
  return (
    releaseLines(datasetId, db)
      .map((l) => JSON.stringify(l))
      .join("\n") + "\n"
  );
}

const iso = (t: number) => new Date(t * 1000).toISOString().replace(".000Z", "Z");

function describe(e: { entity: string; action: string; before: unknown; after: unknown }): string {
  const b = (e.before ?? {}) as Record<string, unknown>;
  const a = (e.after ?? {}) as Record<string, unknown>;
  switch (`${e.entity}:${e.action}`) {
    case "checklist-item:edit":
      return `Checklist item edited (v${b.version} → v${a.version}): "${b.text}" → "${a.text}"${b.weight !== a.weight ? `; weight ${b.weight} → ${a.weight}` : ""}`;
    case "checklist-item:add":
      return `Checklist item added: "${a.text}"`;
    case "checklist-item:retire":
      return `Checklist item retired: "${b.text}"`;
    case "checklist-item:restore":
      return `Checklist item restored: "${b.text}"`;
    case "checklist-item:reorder":
      return "Checklist reordered";
    case "checklist-item:reweight":
      return "Checklist re-weighted (weights re-normalised to sum to 1)";
    case "item:edit":
      return `Item edited (v${b.version} → v${a.version}): ${Object.keys(a)
        .filter((k) => k !== "version")
        .join(", ")}`;
    case "reference:edit":
      return `Reference replaced (v${a.version})`;
    case "reference:promote":
      return `A model response was promoted to reference (v${a.version})${Array.isArray(a.justification) && a.justification.length ? `, justified by ${a.justification.length} annotation(s): ${a.justification.join(", ")}` : ""}`;
    case "dataset:freeze":
      return `Version ${a.version} frozen as a release`;
    case "dataset:new-version":
      return `Version ${a.version} started from version ${b.version}`;
    default:
      return `${e.entity} ${e.action}`;
  }
}

/** The changelog of a dataset version, oldest change first, as markdown. */
export function releaseChangelog(datasetId: number, db: Db = getDb()): string {
  const ds = db.select().from(schema.datasets).where(eq(schema.datasets.id, datasetId)).get();
  if (!ds) throw new Error(`releaseChangelog: no dataset ${datasetId}`);
  const events = db
    .select({
      id: schema.curationEvents.id,
      entity: schema.curationEvents.entity,
      action: schema.curationEvents.action,
      before: schema.curationEvents.before,
      after: schema.curationEvents.after,
      reason: schema.curationEvents.reason,
      createdAt: schema.curationEvents.createdAt,
      item: schema.items.sourceId,
      user: schema.users.name,
    })
    .from(schema.curationEvents)
    .leftJoin(schema.items, eq(schema.items.id, schema.curationEvents.itemId))
    .leftJoin(schema.users, eq(schema.users.id, schema.curationEvents.userId))
    .where(eq(schema.curationEvents.datasetId, datasetId))
    .orderBy(asc(schema.curationEvents.createdAt), asc(schema.curationEvents.id))
    .all();
  const lines = [
    `# ${ds.name} — version ${ds.version}`,
    "",
    ds.frozenAt ? `Released ${iso(ds.frozenAt)}.` : "Not yet frozen (draft changelog).",
    ds.licenseNote ? `License: ${ds.licenseNote}` : "",
    "",
    `## Changes (${events.length})`,
    "",
  ];
  if (events.length === 0) lines.push("No changes.");
  for (const e of events) {
    lines.push(`- ${iso(e.createdAt)}${e.item ? ` · ${e.item}` : ""} · ${describe(e)} — ${e.user ?? "unknown"}: ${e.reason}`);
  }
  return lines.filter((l, i, all) => !(l === "" && all[i - 1] === "")).join("\n") + "\n";
}
