/**
 * Request-body limits, enforced by the HTTP server (scripts/server.ts) before a
 * body is read: a declared Content-Length over the limit is answered 413 at once,
 * and a body that streams past it is cut off with 413.
 */

/** Forms and JSON bodies: every page's form, with room for long instructions or templates. */
export const FORM_BODY_LIMIT = 1024 * 1024;
/** The import page's uploads (streamed to disk by app/formats/upload.server.ts), plus multipart overhead. */
export const UPLOAD_BODY_LIMIT = 200 * 1024 * 1024 + 64 * 1024;
/** JSON bodies nested deeper than this are refused (400). */
export const JSON_MAX_DEPTH = 32;

/** Routes that accept file uploads (multipart bodies larger than a form). */
const UPLOAD_ROUTES = [/^\/p\/[^/]+\/import\/?$/];

export function bodyLimitFor(pathname: string, contentType: string): number {
  if (contentType.startsWith("multipart/form-data") && UPLOAD_ROUTES.some((r) => r.test(pathname))) {
    return UPLOAD_BODY_LIMIT;
  }
  return FORM_BODY_LIMIT;
}

/** True when a parsed JSON value nests arrays/objects deeper than `max`. */
export function jsonTooDeep(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
