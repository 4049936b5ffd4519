/** POST /api/v1/projects/{slug}/tasks/{id}/close: the task page's Close button (setTaskStatus); answers the task. */
import { postOnlyLoader, taskStatusAction } from "~/api/tasks.server";

export const loader = postOnlyLoader();
export const action = taskStatusAction("closed");
