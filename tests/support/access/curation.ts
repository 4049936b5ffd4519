import type { Entry } from "./types";

/** Access expectations for benchmark curation (researchers and admins). */
export const ROUTES: Record<string, Entry> = {
  "p.$slug.curation.$datasetId._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/curation/${i.datasetId}`,
    params: (i) => ({ slug: i.slug, datasetId: String(i.datasetId) }),
    form: () => ({ intent: "freeze", reason: "access test" }),
  },
  "p.$slug.curation.$datasetId.items.$itemId.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/curation/${i.datasetId}/items/${i.itemId}`,
    params: (i) => ({ slug: i.slug, datasetId: String(i.datasetId), itemId: String(i.itemId) }),
    form: (i) => ({ intent: "retire", checklistItemId: String(i.checklistItemId), reason: "access test" }),
  },
  "p.$slug.curation.$datasetId.release.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/curation/${i.datasetId}/release`,
    params: (i) => ({ slug: i.slug, datasetId: String(i.datasetId) }),
  },
};
