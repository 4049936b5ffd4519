/**
 * Judge variants (ablations): a judge marked as a variant of a base judge (settings.variantOf, with
 * an optional label settings.variant: "without rubric") sits beside its base in the judges page's
 * variant table (app/reports/judges.ts ablationGroups). Set by an import (a `variant_of` column, or
 * `npm run import -- --variant-of JUDGE=BASE`) or on the judges page ({@link setJudgeVariant}).
 */
import { and, eq } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";

/** The longest base name or variant label kept (a judge's name is at most this long too, in practice). */
const MAX = 200;

/**
 * Marks `judgeId` as a variant of the project's judge named `variantOf` (null: not a variant), with
 * the label `variant` (null: none; the table then says "prompt N"). Refuses a judge of another
 * project, a base that is not one of the project's judges, and a judge as its own base.
 */
export async function setJudgeVariant(
  projectId: number,
  judgeId: number,
  change: { variantOf: string | null; variant: string | null },
  db: DalLike = getDal(),
): Promise<void> {
  const d = dalOf(db);
  const j = d.t.judges;
  const base = change.variantOf?.trim() || null;
  const label = change.variant?.trim() || null;
  if ((base?.length ?? 0) > MAX) throw new DomainError(`The base judge's name is longer than ${MAX} characters.`, { field: "variantOf" });
  if ((label?.length ?? 0) > MAX) throw new DomainError(`The variant label is longer than ${MAX} characters.`, { field: "variant" });
  await d.tx(async (q) => {
    const judge = first(
      await q
        .select({ name: j.name, settings: j.settings })
        .from(j)
        .where(and(eq(j.id, judgeId), eq(j.projectId, projectId))),
    );
    if (!judge) throw new DomainError("No such judge in this project.", { status: 404, field: "judgeId" });
    if (base !== null) {
      if (base === judge.name) throw new DomainError("A judge cannot be a variant of itself.", { field: "variantOf" });
      const found = first(
        await q
          .select({ id: j.id })
          .from(j)
          .where(and(eq(j.projectId, projectId), eq(j.name, base))),
      );
      if (!found) throw new DomainError(`"${base}" is not a judge of this project.`, { field: "variantOf" });
    }
    const settings: Record<string, unknown> = { ...(judge.settings ?? {}) };
    delete settings.variantOf;
    delete settings.variant;
    if (base !== null) settings.variantOf = base;
    if (base !== null && label !== null) settings.variant = label;
    await q.update(j).set({ settings }).where(eq(j.id, judgeId));
  });
}
