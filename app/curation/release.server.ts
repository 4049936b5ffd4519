/**
 * A dataset release: the benchmark as JSONL (one item per line, current
 * checklists and references) plus a markdown changelog of what changed and why.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";

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

export async function releaseLines(datasetId: number, db: DalLike = getDal()): Promise<ReleaseLine[]> {
  const d = dalOf(db);
  const { items, checklistItems: c, references: r } = d.t;
  const rows = await d.q.select().from(items).where(eq(items.datasetId, datasetId)).orderBy(asc(items.sourceId));
  // The dataset's live checklists and current references in one query each (not two per item).
  const checklists = new Map<number, ReleaseLine["checklist"]>();
  for (const x of await d.q
    .select({ itemId: c.itemId, text: c.text, weight: c.weight, version: c.version })
    .from(c)
    .innerJoin(items, eq(items.id, c.itemId))
    .where(and(eq(items.datasetId, datasetId), isNull(c.retiredAt)))
    .orderBy(asc(c.itemId), asc(c.position), asc(c.id))) {
    const list = checklists.get(x.itemId) ?? checklists.set(x.itemId, []).get(x.itemId)!;
    list.push({ text: x.text, weight: x.weight, version: x.version });
  }
  const refs = new Map<number, { text: string; version: number }>();
  for (const x of await d.q
    .select({ itemId: r.itemId, text: r.text, version: r.version })
    .from(r)
    .innerJoin(items, eq(items.id, r.itemId))
    .where(and(eq(items.datasetId, datasetId), eq(r.isCurrent, true)))
    .orderBy(asc(r.id))) {
    if (!refs.has(x.itemId)) refs.set(x.itemId, { text: x.text, version: x.version });
  }
  return rows.map((it) => {
    const checklist = checklists.get(it.id) ?? [];
    const ref = refs.get(it.id);
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

export async function releaseJsonl(datasetId: number, db: DalLike = getDal()): Promise<string> {
  return (await releaseLines(datasetId, db)).map((l) => JSON.stringify(l)).join("\n") + "\n";
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
export async function releaseChangelog(datasetId: number, db: DalLike = getDal()): Promise<string> {
  const d = dalOf(db);
  const { datasets, curationEvents: ev, items, users } = d.t;
  const ds = first(await d.q.select().from(datasets).where(eq(datasets.id, datasetId)).limit(1));
  if (!ds) throw new Error(`releaseChangelog: no dataset ${datasetId}`);
  const events = await d.q
    .select({
      id: ev.id,
      entity: ev.entity,
      action: ev.action,
      before: ev.before,
      after: ev.after,
      reason: ev.reason,
      createdAt: ev.createdAt,
      item: items.sourceId,
      user: users.name,
    })
    .from(ev)
    .leftJoin(items, eq(items.id, ev.itemId))
    .leftJoin(users, eq(users.id, ev.userId))
    .where(eq(ev.datasetId, datasetId))
    .orderBy(asc(ev.createdAt), asc(ev.id));
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
