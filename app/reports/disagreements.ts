/** Query of the disagreement browser and its CSV export (zod, shared by both routes). */
import { z } from "zod";
import { FINAL_RULES } from "./types";

const optionalId = z.preprocess((v) => (v === "" || v == null ? undefined : v), z.coerce.number().int().positive().optional());
const optionalText = z.preprocess((v) => (v === "" || v == null ? undefined : v), z.string().max(200).optional());

export const DisagreementQuerySchema = z.object({
  judge: optionalId,
  domain: optionalText,
  model: optionalText,
  rule: z.preprocess((v) => ((FINAL_RULES as readonly unknown[]).includes(v) ? v : undefined), z.enum(FINAL_RULES).optional()),
  /** "exclude": leave labels and verdicts marked stale by a curation edit out. */
  stale: z.preprocess((v) => (v === "exclude" ? v : undefined), z.enum(["exclude"]).optional()),
  /** "unparsed": list the verdicts the judge's reply could not be parsed into (left out of every figure). */
  show: z.preprocess((v) => (v === "unparsed" ? v : undefined), z.enum(["unparsed"]).optional()),
  page: z.preprocess((v) => (v === "" || v == null ? undefined : v), z.coerce.number().int().min(1).max(100000).catch(1).default(1)),
});
export type DisagreementQuery = z.infer<typeof DisagreementQuerySchema>;

export function disagreementFilters(q: DisagreementQuery) {
  return {
    rule: q.rule ?? null,
    stale: q.stale === "exclude" ? ("exclude" as const) : ("include" as const),
    judgeId: q.judge ?? null,
    domain: q.domain ?? null,
    model: q.model ?? null,
    show: q.show === "unparsed" ? ("unparsed" as const) : ("disagree" as const),
    page: q.page,
    pageSize: 50,
    scale: 0.5,
    threshold: 1,
  };
}
