/** What the HTTP server (scripts/server.ts) passes to every loader and action as `context`. */
declare module "@remix-run/node" {
  interface AppLoadContext {
    /** The nonce of this response's Content-Security-Policy, for inline scripts. */
    cspNonce?: string;
    /** The CSRF token of this browser's session (app/auth/csrf.server.ts). */
    csrfToken?: string;
    /** The client's network address (the socket's peer), for sign-in throttling. */
    clientAddress?: string;
  }
}

export {};
