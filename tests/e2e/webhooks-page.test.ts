/**
 * The Webhooks page in real Chromium (issue 37): a researcher opens it from the project's navigation, adds a
 * webhook pointing at a local receiver, sees the signing secret once (copied with the button) and never again
 * after a reload, sends a test event, and reads in the delivery log that the server delivered it — the
 * receiver having got it signed with that very secret. A refused address shows its reason beside the URL field.
 */
import { createHmac } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const pageErrors: string[] = [];

type Received = { headers: http.IncomingHttpHeaders; body: string };
const received: Received[] = [];
let receiverUrl = "";
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.statusCode = 204;
    res.end();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/concord`;
  app = await startApp(copyDemoDatabase);
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(e.message));
  browser.page.on("dialog", (d) => void d.accept());
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await new Promise((r) => receiver.close(r));
});

describe("webhooks page", () => {
  it("refuses a private address beside the URL field, adding nothing", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo`);
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(/\/p\/demo\/webhooks$/);
    await page.getByText("No webhooks yet.").waitFor();
    await page.getByLabel("URL").fill("http://10.20.30.40/hook");
    const add = page.getByRole("button", { name: "Add webhook" });
    await hydrated(add, 60_000);
    await add.click();
    const error = page.locator('.field-error[data-field="url"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/10\.20\.30\.40 is a private address; webhooks may reach it only if the operator lists it/);
    expect(await page.getByLabel("URL").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByText("No webhooks yet.").count()).toBe(1);
  });

  it("adds a webhook, shows its secret once with Copy, and its delivery log shows a test event delivered", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/webhooks`);
    await page.getByLabel("URL").fill(receiverUrl);
    // Only runs and imports: the task box unticked.
    await page.getByRole("checkbox", { name: /task\.completed/ }).uncheck();
    const add = page.getByRole("button", { name: "Add webhook" });
    await hydrated(add, 60_000);
    await add.click();
    const secretBox = page.getByLabel("Signing secret");
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    const hook = page.locator('section[data-testid^="webhook-"]');
    expect(await hook.count()).toBe(1);
    expect(await hook.locator("h2").textContent()).toContain(receiverUrl);
    expect(await hook.textContent()).toMatch(/Events: run\.finished, import\.finished/);
    expect(await hook.textContent()).toContain("No deliveries yet.");

    // Shown once: a reload has the webhook, not its secret.
    await page.reload();
    await page.locator('section[data-testid^="webhook-"]').waitFor();
    expect(await page.getByLabel("Signing secret").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const test = page.getByRole("button", { name: "Send test event" });
    await hydrated(test, 60_000);
    await test.click();
    await page.getByText(/Test event queued/).waitFor();
    // The server's sender delivers it (it polls every second); the receiver checks the signature as documented.
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
    const got = received[0];
    const ts = String(got.headers["concord-timestamp"]);
    expect(got.headers["concord-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(`${ts}.${got.body}`).digest("hex")}`);
    expect(got.headers["concord-event"]).toBe("ping");
    expect(JSON.parse(got.body)).toMatchObject({ event: "ping", project: { slug: "demo" } });

    const log = page.locator('table[data-testid^="deliveries-"] tbody tr');
    await expect
      .poll(
        async () => {
          await page.reload();
          return (
            (await log
              .first()
              .textContent()
              .catch(() => "")) ?? ""
          );
        },
        { timeout: 20_000 },
      )
      .toMatch(/ping\s*delivered\s*1\s*HTTP 204/);
    expect(await log.first().textContent()).toContain(`#${String(got.headers["concord-delivery"])}`);
    expect(pageErrors).toEqual([]);
  });
});
