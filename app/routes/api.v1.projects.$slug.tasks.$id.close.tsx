/** POST /api/v1/projects/{slug}/tasks/{id}/close: the task page's Close button (setTaskStatus); answers the task. */
import { postOnlyLoader } from "~/api/route.server";
import { taskStatusAction } from "~/api/tasks.server";

export const loader = postOnlyLoader();
export const action = taskStatusAction("closed");
