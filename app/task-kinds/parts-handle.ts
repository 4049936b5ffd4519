/**
 * How a route says which kind parts its page renders: `handle.kindParts(loaderData)`
 * loads them (./form-registry.ts, ./fields-registry.ts). app/entry.client.tsx awaits it
 * for the matched routes before hydrating; the same route's clientLoader awaits it after
 * serverLoader() on client navigations. No imports: the browser entry takes this module.
 */

/** A route handle that loads the parts its page renders, from that route's loader data. */
export type KindPartsHandle<Data> = { kindParts: (data: Data) => Promise<unknown> };

/**
 * The handle's loader, or null when the route declares none. Remix gives a route's handle
 * only that route's loader data, which is what the route's own function was written for.
 */
export function kindPartsOf(handle: unknown): ((data: unknown) => Promise<unknown>) | null {
  if (typeof handle !== "object" || handle === null || !("kindParts" in handle)) return null;
  const load = handle.kindParts;
  return isLoader(load) ? (data) => Promise.resolve(load(data)) : null;
}

function isLoader(v: unknown): v is (data: unknown) => unknown {
  return typeof v === "function";
}
