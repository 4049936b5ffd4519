/** POST /api/v1/projects/{slug}/runs/{id}/retry-failed: the run page's button (app/api/runs.server.ts runControlAction); 409 when it does not apply. */
import { postOnlyLoader } from "~/api/route.server";
import { runControlAction } from "~/api/runs.server";

export const loader = postOnlyLoader();
export const action = runControlAction("retry-failed");
