/** Downloads of a dataset version: the release JSONL and its changelog. */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { findDataset } from "~/benchmark/browse.server";
import { releaseChangelog, releaseJsonl } from "~/curation/release.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const dataset = await findDataset(project.id, Number(params.datasetId));
  if (!dataset) notFound("Dataset not found.");
  const file = new URL(request.url).searchParams.get("file") ?? "jsonl";
  const base = `${dataset.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")}-v${dataset.version}`;
  if (file === "changelog") {
    return new Response(await releaseChangelog(dataset.id), {
      headers: { "Content-Type": "text/markdown; charset=utf-8", "Content-Disposition": `attachment; filename="${base}-CHANGELOG.md"` },
    });
  }
  if (file !== "jsonl") throw new Response('file must be "jsonl" or "changelog".', { status: 400 });
  return new Response(await releaseJsonl(dataset.id), {
    headers: { "Content-Type": "application/x-ndjson; charset=utf-8", "Content-Disposition": `attachment; filename="${base}.jsonl"` },
  });
}
