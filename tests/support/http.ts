/** Build Requests for route loaders and actions the way Remix passes them. */
import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { action as loginAction } from "../../app/routes/login";

export const ORIGIN = "http://concord.test";

export function get(pathname: string, cookie?: string): Request {
  return new Request(ORIGIN + pathname, { headers: cookie ? { Cookie: cookie } : {} });
}

export function post(pathname: string, form: Record<string, string>, cookie?: string, origin = ORIGIN): Request {
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    Origin: origin,
    Host: new URL(ORIGIN).host,
  };
  if (cookie) headers.Cookie = cookie;
  return new Request(ORIGIN + pathname, { method: "POST", headers, body: new URLSearchParams(form) });
}

export function args(request: Request, params: Record<string, string> = {}): LoaderFunctionArgs & ActionFunctionArgs {
  return { request, params, context: {} } as LoaderFunctionArgs & ActionFunctionArgs;
}

/** Signs in through the real login action and returns the Cookie header to send. */
export async function signInCookie(email: string, password: string): Promise<string> {
  const res = (await loginAction(args(post("/login", { email, password })))) as Response;
  const setCookie = res.headers.get("Set-Cookie");
  if (res.status !== 302 || !setCookie) throw new Error(`sign-in failed for ${email}: ${res.status}`);
  return setCookie.split(";")[0];
}

/** Runs a loader/action and returns the thrown or returned Response. */
export async function run(
  fn: (a: LoaderFunctionArgs & ActionFunctionArgs) => unknown,
  a: LoaderFunctionArgs & ActionFunctionArgs,
): Promise<Response> {
  try {
    const out = await fn(a);
    if (out instanceof Response) return out;
    return new Response(JSON.stringify(out), { status: 200 });
  } catch (thrown) {
    if (thrown instanceof Response) return thrown;
    throw thrown;
  }
}
