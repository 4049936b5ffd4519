import { json } from "@remix-run/node";

/**
 * A rule of the domain refused the request: the one error base class of the
 * app's server code. `status` is the HTTP status a route answers with and
 * `field` the form field the message belongs beside (absent for the form as a
 * whole). Routes turn it into a response with `domainErrorResponse`.
 */
export class DomainError extends Error {
  readonly status: number;
  readonly field?: string;
  constructor(message: string, options: { status?: number; field?: string } = {}) {
    super(message);
    this.name = new.target.name;
    this.status = options.status ?? 400;
    this.field = options.field;
  }
}

/** The answer a form gets for a DomainError: `{ error, field? }` with the error's status. */
export function domainErrorResponse(err: DomainError) {
  return json(err.field === undefined ? { error: err.message } : { error: err.message, field: err.field }, { status: err.status });
}

/** Runs `fn`; a DomainError it throws becomes its response, anything else is rethrown. */
export async function orDomainError<T>(fn: () => T | Promise<T>) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) return domainErrorResponse(err);
    throw err;
  }
}
