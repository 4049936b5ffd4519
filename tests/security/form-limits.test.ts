/**
 * Issue 18, "Also": provider settings, form fields and JSON bodies have size and
 * depth limits — 400 (or 413 over the body limit), never 500, and an invalid
 * form never echoes a huge field back. Against the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

const PASSWORD = "correct horse battery";
let app: RunningApp;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const admin = await createUser({ email: "site@concord.test", name: "Site", password: PASSWORD, isSiteAdmin: true }, db);
    const project = db.insert(schema.projects).values({ slug: "p1", name: "P1" }).returning({ id: schema.projects.id }).get();
    db.insert(schema.memberships).values({ projectId: project.id, userId: admin.id, role: "admin" }).run();
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("form and settings limits", () => {
  it("provider settings nested 20,000 deep or over their size are 400 with the field named", async () => {
    const c = new AppClient(app.url);
    await c.signIn("site@concord.test", PASSWORD);
    const base = {
      intent: "create",
      name: "deep",
      kind: "openai-compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
      concurrency: "1",
    };
    const deep = `{"temperature": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const res = await c.postForm("/p/p1/providers", { ...base, settings: deep });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/settings/);
    expect(res.text).not.toContain("[".repeat(100));

    const big = await c.postForm("/p/p1/providers", { ...base, settings: JSON.stringify({ note: "n".repeat(400_000) }) });
    expect(big.status).toBe(400);
    expect(big.text).not.toContain("n".repeat(1000));
  });

  it("an invalid form does not echo a huge field; a 10 MB field is 413 before it is read", async () => {
    const c = new AppClient(app.url);
    await c.signIn("site@concord.test", PASSWORD);
    const name = "N".repeat(900_000); // under the 1 MB body limit, far over the field's 120
    const res = await c.postForm("/admin/users", { intent: "create", email: "x@concord.test", name, password: "long enough password" });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/name/);
    expect(res.text).not.toContain("N".repeat(1000)); // the page answers with the reason, not the value
    expect(res.text.length).toBeLessThan(50_000);

    const huge = await c.postForm("/admin/users", {
      intent: "create",
      email: "y@concord.test",
      name: "N".repeat(10 * 1024 * 1024),
      password: "long enough password",
    });
    expect(huge.status).toBe(413);
    expect(huge.text.length).toBeLessThan(200);
  });
});
