import type { Entry } from "./types";

/** Access expectations for the import and export pages (researcher and above). */
export const ROUTES: Record<string, Entry> = {
  "p.$slug.import.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/import`,
    params: (i) => ({ slug: i.slug }),
    form: () => ({ intent: "confirm", token: "0".repeat(32) }),
  },
  "p.$slug.export.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/export`,
    params: (i) => ({ slug: i.slug }),
  },
  "p.$slug.export.$file.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/export/annotations.csv`,
    params: (i) => ({ slug: i.slug, file: "annotations.csv" }),
  },
};
