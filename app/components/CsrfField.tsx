/**
 * The CSRF token of the current session as a hidden form field. Every form that
 * POSTs (Remix <Form>, fetcher.Form, plain <form>) renders one; `useCsrfToken()`
 * gives the value for `fetcher.submit({...})` calls. The server refuses any
 * state-changing request without the session's token (see app/auth/csrf.server.ts).
 */
import { useRouteLoaderData } from "@remix-run/react";

export const CSRF_FIELD = "_csrf";

export function useCsrfToken(): string {
  const data = useRouteLoaderData("root") as { csrf?: string } | undefined;
  return data?.csrf ?? "";
}

export function CsrfField() {
  return <input type="hidden" name={CSRF_FIELD} value={useCsrfToken()} />;
}
