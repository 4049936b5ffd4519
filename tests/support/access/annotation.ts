import { nextUnitId } from "../../../app/annotation/annotate.server";
import { createTask } from "../../../app/annotation/tasks.server";
import type { Entry, Ids, Setup } from "./types";

/** Access expectations for the annotation workspace. */
export const ROUTES: Record<string, Entry> = {
  "p.$slug.tasks._index.tsx": { access: "annotator", path: (i) => `/p/${i.slug}/tasks`, params: (i) => ({ slug: i.slug }) },
  "p.$slug.tasks.new.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/tasks/new`,
    params: (i) => ({ slug: i.slug }),
    form: () => ({}),
  },
  "p.$slug.tasks.$taskId._index.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/tasks/${i.taskId}`,
    params: (i) => ({ slug: i.slug, taskId: String(i.taskId) }),
    form: () => ({ intent: "reopen" }),
  },
  "p.$slug.tasks.$taskId.queue.tsx": {
    access: "annotator",
    path: (i) => `/p/${i.slug}/tasks/${i.taskId}/queue`,
    params: (i) => ({ slug: i.slug, taskId: String(i.taskId) }),
  },
  // Without ?unit= the page opens the caller's next unit, or says the queue is done;
  // another annotator's unit answers 404 (tests/integration/annotation-routes.test.ts).
  "p.$slug.tasks.$taskId.annotate.tsx": {
    access: "annotator",
    path: (i) => `/p/${i.slug}/tasks/${i.taskId}/annotate`,
    params: (i) => ({ slug: i.slug, taskId: String(i.taskId) }),
    form: (i) => ({ intent: "draft", unitId: String(i.unitId) }),
  },
  "p.$slug.tasks.$taskId.adjudicate.tsx": {
    access: "researcher",
    path: (i) => `/p/${i.slug}/tasks/${i.taskId}/adjudicate`,
    params: (i) => ({ slug: i.slug, taskId: String(i.taskId) }),
    form: (i) => ({ unitId: String(i.unitId) }),
  },
};

export const setup: Setup = async (base: Ids) => {
  const { taskId } = await createTask(base.projectId, base.userId, {
    name: "Access task",
    datasetId: base.datasetId,
    kind: "response-satisfaction",
    overlap: 1,
    pool: [base.userId],
  });
  return { taskId, unitId: (await nextUnitId(taskId, base.userId)) ?? 0 };
};
