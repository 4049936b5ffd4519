/**
 * The read side of a dataset's curation page: its flags (judged invalid, near-duplicates, failed back-checks)
 * with the texts they are about, the promotion candidates of reference optimisation with the preferred
 * responses, the dataset's models and versions, the annotators and providers its forms offer. The page's
 * loader calls `curationIndex`; the rules live in ./flags.server.ts and ./versions.server.ts.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { visible } from "~/db.server";
import { projectMembers } from "~/annotation/tasks.server";
import { datasetVersions } from "~/benchmark/datasets.server";
import { allFlags, DEFAULT_DUPLICATE_THRESHOLD, promotionCandidates } from "./flags.server";

/** The near-duplicate threshold of the page's query (`?threshold=`): a ROUGE-L F in (0, 1], else the default. */
export function parseDuplicateThreshold(raw: string | null | undefined): number {
  const t = Number(raw);
  return t > 0 && t <= 1 ? t : DEFAULT_DUPLICATE_THRESHOLD;
}

/** Everything the curation page of `dataset` shows (researchers only: it names models). */
export async function curationIndex(
  projectId: number,
  dataset: { id: number; name: string; version: number; frozenAt: number | null },
  threshold: number,
  db: DalLike = getDal(),
) {
  const d = dalOf(db);
  const { items: it, responses: r, providers: p } = d.t;
  const { checklists, flags } = await allFlags(projectId, dataset.id, threshold, d);
  const items = await d.q
    .select({ id: it.id, sourceId: it.sourceId, domain: it.domain })
    .from(it)
    .where(eq(it.datasetId, dataset.id))
    .orderBy(asc(it.sourceId));
  const text = new Map(checklists.map((c) => [c.id, c.text]));
  const candidates = await promotionCandidates(dataset.id, d);
  const candidateTexts = new Map(
    candidates.length
      ? (
          await d.q
            .select({ id: r.id, model: r.model, text: r.text, turn: r.turn })
            .from(r)
            .where(
              inArray(
                r.id,
                candidates.map((c) => c.responseId),
              ),
            )
        ).map((x) => [x.id, x])
      : [],
  );
  const models = (
    await d.q
      .selectDistinct({ model: r.model })
      .from(r)
      .innerJoin(it, eq(it.id, r.itemId))
      .where(and(eq(it.datasetId, dataset.id), visible(r.pendingImportId)))
      .orderBy(asc(r.model))
  ).map((m) => m.model);
  const versions = (await datasetVersions(projectId, dataset.name, d)).map((v) => ({ id: v.id, version: v.version, frozenAt: v.frozenAt }));
  const providers = await d.q
    .select({ id: p.id, name: p.name, model: p.model, kind: p.kind })
    .from(p)
    .where(eq(p.projectId, projectId))
    .orderBy(asc(p.name));
  const itemById = new Map(items.map((i) => [i.id, i]));
  return {
    dataset: { id: dataset.id, name: dataset.name, version: dataset.version, frozenAt: dataset.frozenAt },
    versions,
    threshold,
    checklistCount: checklists.length,
    flags: flags.map((f) => ({
      ...f,
      sourceId: itemById.get(f.itemId)?.sourceId ?? "",
      text: text.get(f.checklistItemId) ?? "",
      otherText: f.kind === "duplicate" ? (text.get(f.otherId) ?? "") : null,
    })),
    candidates: candidates.map((c) => ({
      ...c,
      sourceId: itemById.get(c.itemId)?.sourceId ?? "",
      model: candidateTexts.get(c.responseId)?.model ?? "",
      turn: candidateTexts.get(c.responseId)?.turn ?? null,
      text: candidateTexts.get(c.responseId)?.text ?? "",
    })),
    models,
    annotators: (await projectMembers(projectId, d)).filter((m) => m.role === "annotator"),
    providers,
  };
}
