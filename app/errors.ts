/**
 * A rule of the domain refused the request: the one error base class of the app.
 * `status` is the HTTP status a route answers with and `field` the form field the
 * message belongs beside (absent for the form as a whole). Pure, so that client-safe
 * modules (the task kinds' sampling, the assignment planner) can throw it too; routes
 * turn it into a response with the helpers of ./errors.server.ts.
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
