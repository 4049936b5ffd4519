/** Any other path under /api/v1/: 404 as problem details, whatever the method (not the HTML page of a browser's 404). */
import { problem } from "~/api/problem.server";
import { apiRoute } from "~/api/route.server";

const notFound = apiRoute(async ({ request }) => problem(404, `There is no ${new URL(request.url).pathname.slice(0, 200)} in the API.`));

export const loader = notFound;
export const action = notFound;
