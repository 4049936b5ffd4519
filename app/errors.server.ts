import { json } from "@remix-run/node";
import { DomainError } from "./errors";

export { DomainError };

/**
 * The answer a form gets for a DomainError: `{ error, field? }` with the error's status,
 * plus the page's own keys (`extra`, e.g. `form`: which of the page's forms answered).
 */
export function domainErrorResponse<E extends Record<string, unknown> = Record<never, never>>(err: DomainError, extra?: E) {
  const body = err.field === undefined ? { error: err.message } : { error: err.message, field: err.field };
  return json<{ error: string; field?: string } & E>({ ...body, ...extra } as { error: string; field?: string } & E, {
    status: err.status,
  });
}

/**
 * The same refusal for a form that shows every problem beside its field
 * (`{ fieldErrors }`, app/components/FieldError.tsx): the message under its field, or
 * under "form" for the form as a whole. `fieldErrors` words it for the page instead.
 */
export function domainFieldErrorsResponse<E extends Record<string, unknown> = Record<never, never>>(
  err: DomainError,
  extra?: E & { fieldErrors?: Record<string, string> },
) {
  const fieldErrors = extra?.fieldErrors ?? { [err.field ?? "form"]: err.message };
  return json<E & { fieldErrors: Record<string, string> }>({ ...extra, fieldErrors } as E & { fieldErrors: Record<string, string> }, {
    status: err.status,
  });
}

/**
 * Runs `fn`; a DomainError it throws becomes its response (`domainErrorResponse`, or
 * `respond` for a page that answers in its own shape), anything else is rethrown.
 */
export async function orDomainError<T, R = ReturnType<typeof domainErrorResponse>>(
  fn: () => T | Promise<T>,
  respond: (err: DomainError) => R = domainErrorResponse as (err: DomainError) => R,
) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) return respond(err);
    throw err;
  }
}
