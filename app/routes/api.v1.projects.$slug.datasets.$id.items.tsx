/**
 * GET /api/v1/projects/{slug}/datasets/{id}/items: the dataset's items by id, in keyset pages (up to 10,000 a page),
 * each as its item page shows it — checklist in use, reference versions, responses with their models, the judges'
 * verdicts (app/benchmark/datasets.server.ts itemDetails, which the item page reads too). Researchers only: an
 * annotator's token gets 403, as the dataset pages answer, and never a model name or a verdict.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { itemDetails } from "~/benchmark/datasets.server";
import { datasetOfPath } from "~/api/datasets.server";
import { ItemCursorSchema } from "~/api/operations/datasets";
import { pageHeaders, pageOf, pageRequest } from "~/api/pagination.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { heavyRead } from "~/request-limits.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const dataset = await datasetOfPath(project.id, params);
  const { limit, after } = pageRequest(request, ItemCursorSchema);
  // Up to 10,000 items with their texts a page: a heavy read of the user's, as an export is.
  const rows = await heavyRead(user.id, () => itemDetails(dataset.id, { afterId: after?.[0] ?? 0, limit: limit + 1 }));
  const items = rows.map(({ item, ...detail }) => ({ ...item, ...detail }));
  const page = pageOf(request, items, limit, (i) => [i.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiMethodNotAllowed(["GET"]);
