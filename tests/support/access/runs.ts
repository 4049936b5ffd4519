import { getDb, schema } from "../../../db/client";
import type { Entry, Ids } from "./types";

/** Access expectations for the runs and providers pages. */
export function setup(base: Ids) {
  const db = getDb();
  const provider = db
    .insert(schema.providers)
    .values({
      projectId: base.projectId,
      name: "access-provider",
      kind: "openai-compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "sk-access-SECRET",
      model: "m",
    })
    .returning()
    .get();
  const judge = db
    .insert(schema.judges)
    .values({ projectId: base.projectId, name: "access-judge", provider: "access-provider", model: "m" })
    .returning()
    .get();
  // A finished run, so its event stream closes at once.
  const run = db
    .insert(schema.runs)
    .values({
      projectId: base.projectId,
      datasetId: base.datasetId,
      name: "access run",
      protocol: "refinebench",
      status: "completed",
      config: {
        settings: { setting: "self-refinement", maxTurns: 1 },
        models: [{ providerId: provider.id, name: "m" }],
        judges: [{ providerId: provider.id, judgeId: judge.id, name: "access-judge" }],
        itemCount: 1,
        estimatedJobs: 0,
      },
    })
    .returning()
    .get();
  return { runId: run.id, providerId: provider.id };
}

const p = (i: Ids) => ({ slug: i.slug, runId: String(i.runId) });

export const ROUTES: Record<string, Entry> = {
  "p.$slug.providers.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/providers`,
    params: (i) => ({ slug: i.slug }),
    form: () => ({ intent: "delete", providerId: "999999" }),
  },
  "p.$slug.runs._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/runs`,
    params: (i) => ({ slug: i.slug }),
    form: () => ({ intent: "create", definition: "{}" }),
  },
  "p.$slug.runs.$runId._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/runs/${i.runId}`,
    params: p,
    form: () => ({ intent: "pause" }),
  },
  "p.$slug.runs.$runId.events.tsx": { access: "researcher", path: (i) => `/p/${i.slug}/runs/${i.runId}/events`, params: p },
  "p.$slug.runs.$runId.results.tsx": { access: "researcher", path: (i) => `/p/${i.slug}/runs/${i.runId}/results`, params: p },
  // The HTTP API's runs endpoints (tests/api/runs.test.ts tests them with tokens).
  "api.v1.projects.$slug.runs.tsx": { access: "api", path: (i) => `/api/v1/projects/${i.slug}/runs`, params: (i) => ({ slug: i.slug }) },
  ...Object.fromEntries(
    ["", ".pause", ".resume", ".cancel", ".retry-failed", ".results"].map((end): [string, Entry] => [
      `api.v1.projects.$slug.runs.$id${end}.tsx`,
      {
        access: "api",
        path: (i) => `/api/v1/projects/${i.slug}/runs/${i.runId}${end.replace(".", "/")}`,
        params: (i) => ({ slug: i.slug, id: String(i.runId) }),
      },
    ]),
  ),
};
