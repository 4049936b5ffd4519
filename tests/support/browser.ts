/**
 * Real headless Chromium (Debian's /usr/bin/chromium) through playwright-core,
 * with a fresh profile per launch. Nothing is downloaded.
 */
import fs from "node:fs";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { tempDir } from "./db";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export type Browser = { context: BrowserContext; page: Page; close: () => Promise<void> };

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}; install it with: apt-get install -y chromium`);
  }
  const profile = tempDir("concord-chromium-");
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in through the real /login form. */
export async function signInAs(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  // Start from no session, whatever the previous step left behind. Leave the previous page first: one that polls (a
  // run's live progress) would otherwise get a fresh pre-session CSRF cookie after the clear, replacing the one the
  // sign-in form's token belongs to, and the sign-in would be refused.
  await page.goto("about:blank");
  await page.context().clearCookies();
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  const button = page.getByRole("button", { name: "Sign in" });
  // Click once the page's script owns the button (a click while React hydrates can be lost on a busy machine); the
  // form works without script too, so after a bounded wait the click goes ahead.
  await hydrated(button, 10_000).catch(() => undefined);
  await button.click();
  // Remix navigates client-side after sign-in, so wait for the URL, not a page load. Checking the password (scrypt)
  // on a loaded machine can take several seconds: wait as long as a test may take.
  await page.waitForURL((u) => !u.pathname.startsWith("/login"), { waitUntil: "commit", timeout: 60_000 });
}

/**
 * Waits until React has hydrated this element (its props are attached), so a
 * click runs the page's script (a confirm, a client-side form) rather than the
 * plain HTML form it was before hydration. A page that has just loaded can be
 * clicked before then, above all on a busy machine. The locator is looked up
 * again at each check (hydration may replace the server's element); throws
 * after `timeoutMs`.
 */
export async function hydrated(locator: Locator, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await locator
      .evaluate((el) => Object.keys(el).some((k) => k.startsWith("__reactProps$")), undefined, {
        timeout: Math.max(1, deadline - Date.now()),
      })
      .catch(() => false);
    if (ready) return;
    if (Date.now() >= deadline) throw new Error(`not hydrated after ${timeoutMs} ms: ${locator}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
