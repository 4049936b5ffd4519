import type { Entry } from "./types";

/** Access expectations for the foundation routes. */
export const ROUTES: Record<string, Entry> = {
  "_index.tsx": { access: "public", path: () => "/", params: () => ({}) },
  "login.tsx": { access: "public", path: () => "/login", params: () => ({}) },
  "logout.tsx": { access: "public", path: () => "/logout", params: () => ({}) },
  "projects._index.tsx": {
    access: "user",
    path: () => "/projects",
    params: () => ({}),
  },
  "admin.users.tsx": {
    access: "site-admin",
    path: () => "/admin/users",
    params: () => ({}),
    form: (ids) => ({ intent: "set-disabled", userId: String(ids.userId), disabled: "0" }),
  },
  "p.$slug.tsx": { access: "annotator", path: (i) => `/p/${i.slug}`, params: (i) => ({ slug: i.slug }) },
  "p.$slug._index.tsx": {
    access: "annotator",
    path: (i) => `/p/${i.slug}`,
    params: (i) => ({ slug: i.slug }),
    // An annotator's home in a project is their task list ("My tasks").
    annotatorRedirect: (i) => `/p/${i.slug}/tasks`,
  },
  "p.$slug.datasets.$datasetId._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/datasets/${i.datasetId}`,
    params: (i) => ({ slug: i.slug, datasetId: String(i.datasetId) }),
  },
  "p.$slug.datasets.$datasetId.items.$itemId.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/datasets/${i.datasetId}/items/${i.itemId}`,
    params: (i) => ({ slug: i.slug, datasetId: String(i.datasetId), itemId: String(i.itemId) }),
  },
  "p.$slug.members.tsx": {
    access: "admin",
    path: (i) => `/p/${i.slug}/members`,
    params: (i) => ({ slug: i.slug }),
    form: (ids) => ({ intent: "set-role", userId: String(ids.userId), role: "annotator" }),
  },
};
