/**
 * Where a page may send the user next (the `redirectTo` of the sign-in page).
 * Pure and browser-safe: the sign-in route (its loader for a signed-in user and
 * its action) and the guards that send a signed-out user to /login use it.
 *
 * A target is accepted only if it is a plain path on our own site. Browsers are
 * lenient in ways a simple prefix check misses: the WHATWG URL Standard's basic
 * URL parser removes every ASCII tab and newline anywhere in the input and
 * strips leading and trailing C0 controls and spaces (URL Standard, §4.4 "URL
 * parsing", steps 1–3), and treats `\` like `/` in http(s) URLs ("special
 * authority slashes state"). So `/<TAB>/evil.example` becomes
 * `//evil.example`, a network-path reference (RFC 3986 §4.2) to another host.
 * The rule therefore looks at the raw input and refuses anything unusual,
 * then resolves what is left against our own origin and keeps it only if the
 * origin is unchanged.
 */

/** Where a refused or missing target goes. */
export const DEFAULT_REDIRECT = "/projects";

/** Longer targets are refused (no page of ours has a URL this long). */
export const REDIRECT_MAX_LENGTH = 2048;

/** C0 controls, DEL and C1 controls (which browsers strip or treat unpredictably). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Any whitespace, ASCII or Unicode (no-break space, line separator, BOM, ideographic space...). */
const WHITESPACE = /\s/;
/** A percent-encoded slash or backslash (`%2F`, `%5C`, any case). */
const ENCODED_SLASH = /%(2f|5c)/gi;

/**
 * The same-origin path `target` names, normalised (`pathname + search + hash`),
 * or null when `target` is not a plain path on our site.
 *
 * A plain path starts with a single `/`; contains no control character
 * (U+0000–U+001F, U+007F–U+009F), no whitespace and no backslash; its path part
 * (before `?` or `#`) has no `//`, even once percent-encoded slashes and
 * backslashes (`%2F`, `%5C`) are decoded, and no percent-encoded control
 * character; and resolved against `origin` (RFC 3986 §5.2) it stays on
 * `origin`. A scheme (`https:`, `javascript:`) or a userinfo `@` can then not
 * reach the authority, since the input never starts with one.
 *
 * @param origin our own origin or any URL on it (e.g. `request.url`).
 * @example sameOriginPath("/p/demo/tasks?x=1", "http://concord.test") // "/p/demo/tasks?x=1"
 * @example sameOriginPath("/\t/evil.example", "http://concord.test") // null
 */
export function sameOriginPath(target: unknown, origin: string | URL): string | null {
  if (typeof target !== "string" || target.length === 0 || target.length > REDIRECT_MAX_LENGTH) return null;
  if (target[0] !== "/") return null;
  if (CONTROL.test(target) || WHITESPACE.test(target) || target.includes("\\")) return null;
  const pathPart = target.split(/[?#]/, 1)[0];
  const slashesDecoded = pathPart.replace(ENCODED_SLASH, (m) => (m.toLowerCase() === "%2f" ? "/" : "\\"));
  if (slashesDecoded.includes("//") || slashesDecoded.includes("\\")) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    return null; // a malformed escape such as "%E0%A4%A"
  }
  if (CONTROL.test(decoded)) return null;

  let base: URL;
  let resolved: URL;
  try {
    base = new URL(origin);
    resolved = new URL(target, base);
  } catch {
    return null;
  }
  if (resolved.origin !== base.origin) return null;
  const path = resolved.pathname + resolved.search + resolved.hash;
  // Dot segments are removed while resolving ("/a/../b" → "/b"); the result must still be a single-slash path.
  if (!path.startsWith("/") || path.startsWith("//") || path.includes("\\")) return null;
  return path;
}

/** `target` if it is a plain path on our site (see sameOriginPath), normalised; otherwise `fallback`. */
export function safeRedirect(target: unknown, origin: string | URL, fallback: string = DEFAULT_REDIRECT): string {
  return sameOriginPath(target, origin) ?? fallback;
}
