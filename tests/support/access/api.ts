import type { Entry } from "./types";

/** Access expectations for the API tokens page and the HTTP API's routes (app/routes/api.v1.*). */
export const ROUTES: Record<string, Entry> = {
  "settings.tokens.tsx": { access: "user", path: () => "/settings/tokens", params: () => ({}) },
  "api.v1.projects.tsx": { access: "api", path: () => "/api/v1/projects", params: () => ({}) },
  "api.v1.projects.$slug.tsx": { access: "api", path: (i) => `/api/v1/projects/${i.slug}`, params: (i) => ({ slug: i.slug }) },
  // Any other path under /api/v1/: 404 problem details for anyone (tests/api/auth.test.ts).
  "api.v1.$.tsx": { access: "public", path: () => "/api/v1/nothing", params: () => ({ "*": "nothing" }) },
};
