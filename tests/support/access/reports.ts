import { getDb, schema } from "../../../db/client";
import type { Entry, Ids } from "./types";

/** Access expectations for the report pages (researcher and above). */
export const ROUTES: Record<string, Entry> = {
  "p.$slug.reports._index.tsx": { access: "researcher", path: (i) => `/p/${i.slug}/reports`, params: (i) => ({ slug: i.slug }) },
  "p.$slug.reports.$taskId._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/reports/${i.reportTaskId}`,
    params: (i) => ({ slug: i.slug, taskId: String(i.reportTaskId) }),
  },
  "p.$slug.reports.$taskId.judges.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/reports/${i.reportTaskId}/judges`,
    params: (i) => ({ slug: i.slug, taskId: String(i.reportTaskId) }),
  },
  "p.$slug.reports.$taskId.disagreements.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/reports/${i.reportTaskId}/disagreements`,
    params: (i) => ({ slug: i.slug, taskId: String(i.reportTaskId) }),
  },
  "p.$slug.reports.$taskId.csv.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/reports/${i.reportTaskId}/csv?table=iaa`,
    params: (i) => ({ slug: i.slug, taskId: String(i.reportTaskId) }),
  },
};

/** A response-satisfaction task with one unit on the base fixture item. */
export function setup(base: Ids) {
  const db = getDb();
  const task = db
    .insert(schema.tasks)
    .values({ projectId: base.projectId, datasetId: base.datasetId, kind: "response-satisfaction", name: "Report access fixture" })
    .returning({ id: schema.tasks.id })
    .get();
  db.insert(schema.units)
    .values({ taskId: task.id, itemId: base.itemId, checklistItemId: base.checklistItemId, responseId: base.responseId })
    .run();
  return { reportTaskId: task.id };
}
