import type { Entry, Ids } from "./types";

/**
 * Access expectations for the API's imports, exports, webhooks and OpenAPI routes, the Webhooks page, and the run
 * results' table downloads (tests/api/*.test.ts check what each answers a token).
 */
const api = (rest: string, params: (i: Ids) => Record<string, string>): Entry => ({
  access: "api",
  path: (i) => `/api/v1/projects/${i.slug}/${rest}`,
  params,
});

export const ROUTES: Record<string, Entry> = {
  // Served without a token, like any public API description.
  "api.v1.openapi[.]json.tsx": { access: "public", path: () => "/api/v1/openapi.json", params: () => ({}) },
  "api.v1.projects.$slug.imports.tsx": api("imports", (i) => ({ slug: i.slug })),
  "api.v1.projects.$slug.imports.$id.tsx": api("imports/1", (i) => ({ slug: i.slug, id: "1" })),
  "api.v1.projects.$slug.exports.$what.tsx": api("exports/annotations", (i) => ({ slug: i.slug, what: "annotations" })),
  "api.v1.projects.$slug.webhooks.tsx": api("webhooks", (i) => ({ slug: i.slug })),
  "api.v1.projects.$slug.webhooks.$id.tsx": api("webhooks/1", (i) => ({ slug: i.slug, id: "1" })),
  "api.v1.projects.$slug.webhooks.$id.deliveries.tsx": api("webhooks/1/deliveries", (i) => ({ slug: i.slug, id: "1" })),
  "p.$slug.webhooks.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/webhooks`,
    params: (i) => ({ slug: i.slug }),
    form: () => ({ intent: "delete", webhookId: "999999" }),
  },
  "p.$slug.runs.$runId.results.csv.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/runs/${i.runId}/results/csv?table=acc-pass`,
    params: (i) => ({ slug: i.slug, runId: String(i.runId) }),
  },
};
