import type { Entry } from "./types";

/** Access expectations for the API tokens page and the HTTP API's routes (app/routes/api.v1.*). */
export const ROUTES: Record<string, Entry> = {
  "settings.tokens.tsx": { access: "user", path: () => "/settings/tokens", params: () => ({}) },
  "api.v1.projects.tsx": { access: "api", path: () => "/api/v1/projects", params: () => ({}) },
  "api.v1.projects.$slug.tsx": { access: "api", path: (i) => `/api/v1/projects/${i.slug}`, params: (i) => ({ slug: i.slug }) },
  // Datasets and tasks (tests/api/datasets-tasks.test.ts checks what each answers a token).
  ...Object.fromEntries(
    [
      ["api.v1.projects.$slug.datasets.tsx", "datasets"],
      ["api.v1.projects.$slug.datasets.$id.tsx", "datasets/1"],
      ["api.v1.projects.$slug.datasets.$id.items.tsx", "datasets/1/items"],
      ["api.v1.projects.$slug.tasks.tsx", "tasks"],
      ["api.v1.projects.$slug.tasks.$id.tsx", "tasks/1"],
      ["api.v1.projects.$slug.tasks.$id.close.tsx", "tasks/1/close"],
      ["api.v1.projects.$slug.tasks.$id.reopen.tsx", "tasks/1/reopen"],
      ["api.v1.projects.$slug.tasks.$id.report.tsx", "tasks/1/report"],
    ].map(([file, rest]): [string, Entry] => [
      file,
      {
        access: "api",
        path: (i) => `/api/v1/projects/${i.slug}/${rest}`,
        params: (i) => ({ slug: i.slug, ...(rest.includes("/") ? { id: "1" } : {}) }),
      },
    ]),
  ),
  // Any other path under /api/v1/: 404 problem details for anyone (tests/api/auth.test.ts).
  "api.v1.$.tsx": { access: "public", path: () => "/api/v1/nothing", params: () => ({ "*": "nothing" }) },
};
