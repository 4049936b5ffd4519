/**
 * Issue 36, item 1: an open redirect after sign-in. `/login?redirectTo=/%09/evil.example`
 * sent the user to evil.example, after signing in and at once when already signed in:
 * the check refused only targets starting with `//` or `/\`, and browsers remove a TAB,
 * CR or LF anywhere in a URL (WHATWG URL Standard §4.4, basic URL parser), so
 * `/<TAB>/evil.example` arrives as `//evil.example`, a link to another host.
 *
 * Every hostile variant below must end on our own origin, over HTTP (the sign-in POST
 * and the signed-in GET, page and data request) and in Chromium (signing in through
 * the page, and a signed-in visit), and a plain path of ours must still be honoured.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, type Browser } from "../support/browser";

const PASSWORD = "open-redirect-2026";
const EMAIL = "rae@redirect.test";

/** Targets that must never leave our origin; each is sent as the literal value of `redirectTo`. */
const HOSTILE: [string, string][] = [
  ["TAB", "/\t/evil.example"],
  ["CR", "/\r/evil.example"],
  ["LF", "/\n/evil.example"],
  ["CR LF", "/\r\n/evil.example"],
  ["TAB before a backslash", "/\t\\evil.example"],
  ["leading TAB", "\t//evil.example"],
  ["leading space", " //evil.example"],
  ["NUL", "/\u0000/evil.example"],
  ["slash backslash", "/\\evil.example"],
  ["backslash slash", "\\/evil.example"],
  ["two backslashes", "\\\\evil.example"],
  ["protocol-relative", "//evil.example"],
  ["encoded slash", "/%2F/evil.example"],
  ["encoded slash, lower case", "/%2f%2fevil.example"],
  ["encoded backslash", "/%5C/evil.example"],
  ["encoded backslash alone", "/%5Cevil.example"],
  ["encoded TAB (double-encoded in the query)", "/%09/evil.example"],
  ["dot segment to two slashes", "/.//evil.example"],
  ["https scheme", "https://evil.example/"],
  ["scheme without slashes", "https:evil.example"],
  ["javascript scheme", "javascript:alert(document.domain)"],
  ["userinfo", "//concord@evil.example"],
  ["userinfo after our host", "http://localhost@evil.example/"],
  ["no-break space", "/\u00a0/evil.example"],
];

/** Plain paths of ours: kept as they are. */
const LEGITIMATE: [string, string][] = [
  ["/p/demo/tasks?x=1", "/p/demo/tasks?x=1"],
  ["/p/demo?tab=members#top", "/p/demo?tab=members#top"],
  ["/p/demo/tasks?next=%2Fp%2Fdemo", "/p/demo/tasks?next=%2Fp%2Fdemo"],
];

let app: RunningApp;
let origin: string;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const user = await createUser({ email: EMAIL, name: "Rae", password: PASSWORD }, db);
    const project = db.insert(schema.projects).values({ slug: "demo", name: "Demo" }).returning().get();
    await setMembership(project.id, user.id, "researcher", db);
    db.$client.close();
  });
  origin = new URL(app.url).origin;
});
afterAll(async () => {
  await app?.stop();
});

const query = (target: string) => `/login?${new URLSearchParams({ redirectTo: target })}`;

/**
 * Where a browser goes for this Location: resolved by the WHATWG URL parser (Node's URL
 * is one), which strips tabs and newlines and reads `\` as `/` just as Chromium does.
 */
function landsOnOrigin(location: string | undefined): boolean {
  if (!location) return false;
  return new URL(location, app.url).origin === origin;
}

describe("redirectTo over HTTP", () => {
  it(`the sign-in POST never redirects off our origin (${HOSTILE.length} hostile targets), and keeps plain paths`, async () => {
    for (const [name, target] of HOSTILE) {
      const c = new AppClient(app.url);
      const res = await c.postForm("/login", { email: EMAIL, password: PASSWORD, redirectTo: target }, { tokenFrom: query(target) });
      expect(res.status, name).toBe(302);
      expect(landsOnOrigin(res.headers.location), `${name}: ${JSON.stringify(res.headers.location)}`).toBe(true);
      expect(res.headers.location, name).toBe("/projects");
    }
    for (const [target, expected] of LEGITIMATE) {
      const c = new AppClient(app.url);
      const res = await c.postForm("/login", { email: EMAIL, password: PASSWORD, redirectTo: target }, { tokenFrom: query(target) });
      expect(res.status, target).toBe(302);
      expect(res.headers.location, target).toBe(expected);
    }
  });

  it("a signed-in GET of /login?redirectTo=… (page and data request) never redirects off our origin, and keeps plain paths", async () => {
    const c = new AppClient(app.url);
    await c.signIn(EMAIL, PASSWORD);
    for (const [name, target] of HOSTILE) {
      const page = await c.get(query(target));
      expect(page.status, name).toBe(302);
      expect(landsOnOrigin(page.headers.location), `${name}: ${JSON.stringify(page.headers.location)}`).toBe(true);
      expect(page.headers.location, name).toBe("/projects");
      // Remix's client navigation asks for the loader's data and follows X-Remix-Redirect itself.
      const data = await c.get(`${query(target)}&_data=routes%2Flogin`);
      expect(data.status, name).toBe(204);
      expect(data.headers["x-remix-redirect"], name).toBe("/projects");
    }
    for (const [target, expected] of LEGITIMATE) {
      const page = await c.get(query(target));
      expect(page.status, target).toBe(302);
      expect(page.headers.location, target).toBe(expected);
    }
  });

  it("a signed-out visit to a page sends its own path to /login as redirectTo, and back there after sign-in", async () => {
    const c = new AppClient(app.url);
    const res = await c.get("/p/demo/tasks?x=1");
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/login?redirectTo=%2Fp%2Fdemo%2Ftasks%3Fx%3D1");
    const back = new URL(res.headers.location!, app.url).searchParams.get("redirectTo")!;
    const signed = await c.postForm("/login", { email: EMAIL, password: PASSWORD, redirectTo: back }, { tokenFrom: res.headers.location });
    expect(signed.headers.location).toBe("/p/demo/tasks?x=1");
  });
});

describe("redirectTo in Chromium", () => {
  let browser: Browser;
  /** Every request the browser made to another origin (each answered here, never sent). */
  const foreign: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    await browser.context.route(
      (url) => url.origin !== origin,
      (route) => {
        foreign.push(route.request().url());
        return route.fulfill({ status: 200, contentType: "text/html", body: "<h1>evil.example</h1>" });
      },
    );
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** Signs in through the page at /login?redirectTo=target and returns the URL the browser ends on. */
  async function signInWith(target: string): Promise<URL> {
    const { page } = browser;
    await page.goto("about:blank");
    await browser.context.clearCookies();
    await page.goto(app.url + query(target));
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    const button = page.getByRole("button", { name: "Sign in" });
    await hydrated(button, 10_000).catch(() => undefined);
    await button.click();
    await page.waitForURL((u) => !(u.origin === origin && u.pathname.startsWith("/login")), { waitUntil: "commit", timeout: 60_000 });
    await page.waitForLoadState("load");
    return new URL(page.url());
  }

  // One test per target: each signs in (scrypt) through the page, which on a busy machine takes a few seconds.
  for (const [name, target] of HOSTILE) {
    it(`signing in through the page with redirectTo=${JSON.stringify(target)} (${name}) stays on our origin`, async () => {
      foreign.length = 0;
      const landed = await signInWith(target);
      expect(landed.origin).toBe(origin);
      expect(landed.pathname).toBe("/projects");
      expect(foreign).toEqual([]);
    });
  }

  it("signing in through the page with a plain path of ours goes there", async () => {
    const landed = await signInWith("/p/demo/tasks?x=1");
    expect(landed.pathname + landed.search).toBe("/p/demo/tasks?x=1");
    // The page itself, not an error: the user is a researcher of "demo".
    await browser.page.getByRole("heading", { name: "Annotation tasks" }).waitFor({ timeout: 30_000 });
  });

  it("a signed-in visit to /login with a hostile redirectTo stays on our origin", async () => {
    await signInWith("/projects");
    const { page } = browser;
    for (const [name, target] of HOSTILE) {
      foreign.length = 0;
      await page.goto(app.url + query(target));
      const landed = new URL(page.url());
      expect(landed.origin, name).toBe(origin);
      expect(landed.pathname, name).toBe("/projects");
      expect(foreign, name).toEqual([]);
    }
    await page.goto(app.url + query("/p/demo/tasks?x=1"));
    const landed = new URL(page.url());
    expect(landed.pathname + landed.search).toBe("/p/demo/tasks?x=1");
  });
});
