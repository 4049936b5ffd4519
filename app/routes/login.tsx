import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, HeadersFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, useActionData, useNavigation, useSearchParams } from "@remix-run/react";
import { LoginSchema } from "~/forms/accounts.server";
import { signIn } from "~/auth/accounts.server";
import { assertSameOrigin, getOptionalUser } from "~/auth/guards.server";
import { safeRedirect } from "~/auth/redirects";
import { createSession } from "~/auth/session.server";

export const meta: MetaFunction = () => [{ title: "Sign in · Concord" }];

/** A refused sign-in page tells the client when to try again. */
export const headers: HeadersFunction = ({ actionHeaders }) => {
  const retry = actionHeaders.get("Retry-After");
  return retry ? { "Retry-After": retry } : new Headers();
};

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await getOptionalUser(request);
  // Only a plain path on our own site; anything else goes to the project list (app/auth/redirects.ts).
  if (user) throw redirect(safeRedirect(new URL(request.url).searchParams.get("redirectTo"), request.url));
  return json({});
}

export async function action({ request, context }: ActionFunctionArgs) {
  assertSameOrigin(request);
  const form = Object.fromEntries(await request.formData());
  const parsed = LoginSchema.safeParse(form);
  if (!parsed.success) {
    return json({ error: parsed.error.issues[0].message }, { status: 400 });
  }
  const result = await signIn(parsed.data.email, parsed.data.password, context?.clientAddress ?? "unknown");
  if (!result.ok) {
    if (result.reason === "locked") {
      const minutes = Math.max(1, Math.ceil(result.retryAfterSeconds / 60));
      return json(
        { error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.` },
        { status: 429, headers: { "Retry-After": String(result.retryAfterSeconds) } },
      );
    }
    return json({ error: "That email and password do not match an account." }, { status: 401 });
  }
  const cookie = await createSession(result.userId);
  return redirect(safeRedirect(parsed.data.redirectTo, request.url), { headers: { "Set-Cookie": cookie } });
}

export default function Login() {
  const data = useActionData<typeof action>();
  const [params] = useSearchParams();
  const navigation = useNavigation();
  const expired = params.get("reason") === "expired";
  return (
    <div className="login panel">
      <h1>Sign in</h1>
      {expired && !data ? (
        <div className="alert info" role="status">
          Your session has ended. Please sign in again.
        </div>
      ) : null}
      {data && "error" in data ? (
        <div className="alert error" role="alert">
          {data.error}
        </div>
      ) : null}
      <Form method="post" className="stack">
        <CsrfField />
        <input type="hidden" name="redirectTo" value={params.get("redirectTo") ?? "/projects"} />
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" disabled={navigation.state === "submitting"}>
          {navigation.state === "submitting" ? "Signing in…" : "Sign in"}
        </button>
      </Form>
    </div>
  );
}
