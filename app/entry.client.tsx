/**
 * Browser entry: Remix's default (hydrateRoot inside a transition), after loading the
 * task kinds' parts that the server rendered into this page. Those parts are dynamic
 * imports (a chunk per kind and part, so the task page never fetches an annotate form);
 * a route that renders one names it in its `handle.kindParts` from its loader data.
 * Awaiting those imports here, with the data Remix already put in the page, makes the
 * first client render equal the server's HTML: hydration neither falls back nor flashes,
 * and no component needs a loading state. (The other way, `clientLoader.hydrate`, would
 * render a HydrateFallback instead of the server's page.) Client navigations load the
 * parts in the route's clientLoader.
 */
import { RemixBrowser } from "@remix-run/react";
import { startTransition, StrictMode } from "react";
import { hydrateRoot } from "react-dom/client";
import { kindPartsOf } from "~/task-kinds/parts-handle";

/** The kind parts of the matched routes that declare some. */
function loadPageParts(): Promise<unknown> {
  const loaderData = window.__remixContext.state.loaderData ?? {};
  return Promise.all(
    Object.entries(loaderData).map(([routeId, data]) => {
      const load = kindPartsOf(window.__remixRouteModules[routeId]?.handle);
      return load && data !== undefined ? load(data) : null;
    }),
  );
}

loadPageParts().then(
  () =>
    startTransition(() => {
      hydrateRoot(
        document,
        <StrictMode>
          <RemixBrowser />
        </StrictMode>,
      );
    }),
  // A part that fails to load (the network dropped): the server's page stays as it is,
  // a plain-HTML page whose forms post without JavaScript, rather than hydrating a page
  // that cannot render.
  (err: unknown) => console.error("Could not load this page's task-kind parts; the page works without JavaScript.", err),
);
