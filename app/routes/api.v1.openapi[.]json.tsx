/** GET /api/v1/openapi.json: the API's OpenAPI 3.1 document (app/api/openapi.server.ts), served without a token. */
import { openApiResponse } from "~/api/openapi.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request }) => openApiResponse(request));

export const action = apiMethodNotAllowed(["GET"]);
