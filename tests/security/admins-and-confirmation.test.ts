/**
 * Issue 18, "Also": the last admin of a project cannot be demoted or removed, and
 * destructive actions ask for confirmation first (Chromium). Real server.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs } from "../support/browser";

const PASSWORD = "correct horse battery";
let app: RunningApp;
const ids: Record<string, number> = {};

function roleOf(email: string): string | null {
  const db = openDatabase(app.databaseFile);
  try {
    return (
      db
        .select({ role: schema.memberships.role })
        .from(schema.memberships)
        .innerJoin(schema.users, eq(schema.users.id, schema.memberships.userId))
        .where(and(eq(schema.users.email, email), eq(schema.memberships.projectId, ids.project)))
        .get()?.role ?? null
    );
  } finally {
    db.$client.close();
  }
}

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    ids.site = (await createUser({ email: "site@concord.test", name: "Site Admin", password: PASSWORD, isSiteAdmin: true }, db)).id;
    ids.ada = (await createUser({ email: "ada@concord.test", name: "Ada Admin", password: PASSWORD }, db)).id;
    ids.bob = (await createUser({ email: "bob@concord.test", name: "Bob Annotator", password: PASSWORD }, db)).id;
    ids.project = db.insert(schema.projects).values({ slug: "p1", name: "Project One" }).returning({ id: schema.projects.id }).get().id;
    db.insert(schema.memberships).values({ projectId: ids.project, userId: ids.ada, role: "admin" }).run();
    db.insert(schema.memberships).values({ projectId: ids.project, userId: ids.bob, role: "annotator" }).run();
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("the last admin of a project", () => {
  it("cannot be demoted or removed, even by a site admin; once there is a second admin, can", async () => {
    const site = new AppClient(app.url);
    await site.signIn("site@concord.test", PASSWORD);
    const members = "/p/p1/members";
    const demote = await site.postForm(members, { intent: "set-role", userId: String(ids.ada), role: "researcher" });
    expect(demote.status).toBe(409);
    expect(demote.text).toMatch(/last admin/);
    const remove = await site.postForm(members, { intent: "remove", userId: String(ids.ada) });
    expect(remove.status).toBe(409);
    expect(roleOf("ada@concord.test")).toBe("admin");

    expect((await site.postForm(members, { intent: "set-role", userId: String(ids.bob), role: "admin" })).status).toBe(200);
    expect((await site.postForm(members, { intent: "set-role", userId: String(ids.ada), role: "researcher" })).status).toBe(200);
    expect(roleOf("ada@concord.test")).toBe("researcher");
    // Now Bob is the last admin.
    expect((await site.postForm(members, { intent: "remove", userId: String(ids.bob) })).status).toBe(409);
    // Put things back for the next test.
    expect((await site.postForm(members, { intent: "set-role", userId: String(ids.ada), role: "admin" })).status).toBe(200);
    expect((await site.postForm(members, { intent: "set-role", userId: String(ids.bob), role: "annotator" })).status).toBe(200);
  });
});

describe("destructive actions ask first (Chromium)", () => {
  it("removing a member: dismissing the question changes nothing, accepting removes", async () => {
    const browser = await launchBrowser();
    try {
      const page = browser.page;
      await signInAs(page, app.url, "ada@concord.test", PASSWORD);
      await page.goto(`${app.url}/p/p1/members`);
      await page.waitForLoadState("networkidle");
      const row = page.getByRole("row", { name: /Bob Annotator/ });
      await hydrated(row.getByRole("button", { name: "Remove" }));

      const questions: string[] = [];
      page.once("dialog", (d) => {
        questions.push(d.message());
        void d.dismiss();
      });
      await row.getByRole("button", { name: "Remove" }).click();
      await expect.poll(() => questions[0]).toMatch(/Remove Bob Annotator from Project One\?/);
      expect(questions[0]).toMatch(/Remove Bob Annotator from Project One\?/);
      expect(roleOf("bob@concord.test")).toBe("annotator");

      page.once("dialog", (d) => void d.accept());
      await row.getByRole("button", { name: "Remove" }).click();
      await page.getByText("Member removed.").waitFor();
      expect(roleOf("bob@concord.test")).toBeNull();
    } finally {
      await browser.close();
    }
  });

  it("disabling a user asks first", async () => {
    const browser = await launchBrowser();
    try {
      const page = browser.page;
      await signInAs(page, app.url, "site@concord.test", PASSWORD);
      await page.goto(`${app.url}/admin/users`);
      await page.waitForLoadState("networkidle");
      let asked = "";
      page.once("dialog", (d) => {
        asked = d.message();
        void d.dismiss();
      });
      const disable = page.getByRole("row", { name: /bob@concord\.test/ }).getByRole("button", { name: "Disable" });
      await hydrated(disable);
      await disable.click();
      await expect.poll(() => asked).toMatch(/Disable bob@concord\.test\?/);
      expect(asked).toMatch(/Disable bob@concord\.test\?/);
      const db = openDatabase(app.databaseFile);
      try {
        expect(db.select({ disabled: schema.users.disabled }).from(schema.users).where(eq(schema.users.id, ids.bob)).get()?.disabled).toBe(
          false,
        );
      } finally {
        db.$client.close();
      }
    } finally {
      await browser.close();
    }
  });
});
