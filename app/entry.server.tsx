/**
 * Server rendering. Streams the page; the inline scripts Remix writes carry the
 * request's CSP nonce (from scripts/server.ts via the load context), which the
 * Content-Security-Policy header requires of every inline script. The task kinds'
 * client parts (dynamic imports, a chunk each in the browser) are loaded once before the
 * first render, so pages render them synchronously and in full on the server.
 */
import { PassThrough } from "node:stream";
import type { AppLoadContext, EntryContext } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { closeDb } from "../db/client";
import { closeDal } from "./dal.server";
import { loadKindParts } from "./task-kinds/parts";
import { NonceContext } from "./nonce";

const ABORT_DELAY = 5_000;

/** Called by scripts/server.ts on shutdown: the build's own database connection (SQLite) or pool (PostgreSQL). */
export async function closeDatabase() {
  closeDb();
  await closeDal();
}

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  await loadKindParts();
  const nonce = loadContext?.cspNonce ?? "";
  // Crawlers get the whole page at once; browsers get the shell as soon as it is ready.
  const waitForAll = isbot(request.headers.get("user-agent") ?? "") || remixContext.isSpaMode;
  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false;
    const ready = () => {
      shellRendered = true;
      const body = new PassThrough();
      responseHeaders.set("Content-Type", "text/html");
      resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }));
      pipe(body);
    };
    const { pipe, abort } = renderToPipeableStream(
      <NonceContext.Provider value={nonce}>
        <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} />
      </NonceContext.Provider>,
      {
        nonce: nonce || undefined,
        ...(waitForAll ? { onAllReady: ready } : { onShellReady: ready }),
        onShellError(error: unknown) {
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          if (shellRendered) console.error(error);
        },
      },
    );
    setTimeout(abort, ABORT_DELAY);
  });
}
