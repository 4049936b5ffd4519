/**
 * What the datasets endpoints of the HTTP API (app/routes/api.v1.projects.$slug.datasets*.tsx) share: the dataset
 * named by the path, found in the token's project (404 when it is not there). No rule lives here.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { datasetWithVersions } from "~/benchmark/datasets.server";
import { DatasetParamsSchema } from "./operations/datasets";
import { problem } from "./problem.server";

/** The dataset `params.id` of the project with its counts and versions; 404 for an id that is not one of the project's. */
export async function datasetOfPath(projectId: number, params: LoaderFunctionArgs["params"]) {
  const parsed = DatasetParamsSchema.safeParse(params);
  const dataset = parsed.success ? await datasetWithVersions(projectId, parsed.data.id) : undefined;
  if (!dataset) throw problem(404, "No such dataset in this project.");
  return dataset;
}
