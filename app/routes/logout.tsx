import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { assertSameOrigin } from "~/auth/guards.server";
import { destroySession } from "~/auth/session.server";

export async function action({ request }: ActionFunctionArgs) {
  assertSameOrigin(request);
  return redirect("/login", { headers: { "Set-Cookie": await destroySession(request) } });
}

export async function loader() {
  return redirect("/projects");
}
