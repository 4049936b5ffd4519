/**
 * The shape of every `/api/v1/` route (app/routes/api.v1.*.tsx, resource routes without a component):
 *
 *   export const loader = apiRoute(async ({ request, params }) => {
 *     const { project, role } = await requireApiProjectRole(request, params.slug, "researcher");
 *     return apiJson(await someDomainFunction(project.id));
 *   });
 *   export const action = apiMethodNotAllowed(["GET"]);
 *
 * apiRoute hands the guards the client's address (for a token's "last used from") and turns whatever the
 * handler throws into problem details (app/api/problem.server.ts). A route holds no rules: it authenticates,
 * parses, calls a domain function and answers.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { rememberClientAddress, requireApiToken } from "~/auth/api-guards.server";
import { problem, problemFromThrown } from "./problem.server";

export type ApiArgs = LoaderFunctionArgs | ActionFunctionArgs;

export function apiRoute(handler: (args: ApiArgs) => Promise<Response>) {
  return async (args: ApiArgs): Promise<Response> => {
    rememberClientAddress(args.request, args.context?.clientAddress);
    try {
      return await handler(args);
    } catch (thrown) {
      return problemFromThrown(thrown);
    }
  };
}

/**
 * The action of a route that only reads: 405 with Allow (RFC 9110 §15.5.6), after the token is checked, so an
 * unauthenticated request gets 401 and a read token 403, as on any write endpoint.
 */
export function apiMethodNotAllowed(allowed: string[]) {
  return apiRoute(async ({ request }) => {
    await requireApiToken(request, { scope: "write" });
    return problem(405, `This endpoint answers ${allowed.join(" and ")} only, not ${request.method}.`, {
      headers: { Allow: [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : [])].join(", ") },
    });
  });
}

/** The loader of a POST-only endpoint: 405 with Allow (RFC 9110 §15.5.6), after the token is checked. */
export function postOnlyLoader() {
  return apiRoute(async ({ request }) => {
    await requireApiToken(request);
    return postOnly(request.method);
  });
}

export function postOnly(method: string): Response {
  return problem(405, `This endpoint answers POST only, not ${method}.`, { headers: { Allow: "POST" } });
}
