/**
 * `npm run tokens` (scripts/tokens.ts) as an operator runs it, on a real database and a real server: `create`
 * prints the token and nothing else on stdout, and it opens the API as its user; `list` shows every token (or
 * one user's) with its prefix, never the token; `revoke ID` ends its access at the next request; an expiry
 * over 365 days, a project the user is not in, an unknown email or project are refused with a message naming
 * the flag, and write nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { runScript } from "../support/cli";

const PASSWORD = "correct horse battery";
let app: RunningApp;

const tokens = (...args: string[]) => runScript("tokens", args, { DATABASE_URL: app.databaseFile });
const tokenCount = () => {
  const db = openDatabase(app.databaseFile);
  try {
    return db.select().from(schema.apiTokens).all().length;
  } finally {
    db.$client.close();
  }
};
const api = (token: string, path: string) => new AppClient(app.url).get(path, { Authorization: `Bearer ${token}` });
const slugs = (text: string) => (JSON.parse(text) as { data: { slug: string }[] }).data.map((p) => p.slug);

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const ada = (await createUser({ email: "ada@lab.test", name: "Ada", password: PASSWORD }, db)).id;
    await createUser({ email: "bob@lab.test", name: "Bob", password: PASSWORD }, db);
    for (const [slug, name] of [
      ["law", "Law"],
      ["med", "Medicine"],
      ["art", "Art"],
    ]) {
      const id = db.insert(schema.projects).values({ slug, name }).returning({ id: schema.projects.id }).get().id;
      if (slug !== "art") await setMembership(id, ada, "researcher", db);
    }
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("npm run tokens", () => {
  let listed = "";
  let listedId = 0;

  it("create prints the token and nothing else on stdout; it opens the API as its user, for the listed projects", async () => {
    const all = await tokens("create", "--email", "ADA@lab.test", "--name", "notebook", "--scope", "read");
    expect(all.code, all.err).toBe(0);
    expect(all.out).toMatch(/^ccd_[A-Za-z0-9_-]{43}\n$/);
    expect(all.err).toMatch(
      /^tokens: token \d+ "notebook" for ada@lab\.test \(read, all projects\), expires \d{4}-\d\d-\d\d \d\d:\d\d UTC\. It is shown only this once\.\n$/,
    );
    const r = await api(all.out.trim(), "/api/v1/projects");
    expect(r.status).toBe(200);
    expect(slugs(r.text)).toEqual(["law", "med"]);

    const one = await tokens(
      "create",
      "--email",
      "ada@lab.test",
      "--name",
      "ci",
      "--scope",
      "write",
      "--project",
      "med",
      "--expires-days",
      "7",
    );
    expect(one.code, one.err).toBe(0);
    listed = one.out.trim();
    listedId = Number(/token (\d+)/.exec(one.err)![1]);
    expect(one.err).toContain("(write, med)");
    expect(slugs((await api(listed, "/api/v1/projects")).text)).toEqual(["med"]);
    expect((await api(listed, "/api/v1/projects/law")).status).toBe(404);
  });

  it("refuses an expiry over 365 days, a project the user is not in, an unknown email or project, naming the flag; nothing is written", async () => {
    const before = tokenCount();
    const base = ["create", "--email", "ada@lab.test", "--name", "x", "--scope", "read"];
    const cases: [string[], string][] = [
      [[...base, "--expires-days", "366"], "tokens: --expires-days: A token can be valid for at most 365 days (1 year).\n"],
      [[...base, "--expires-days", "0"], "tokens: --expires-days: A token must be valid for at least 1 day.\n"],
      [[...base, "--expires-days", "soon"], "tokens: --expires-days: The expiry is a number of days.\n"],
      [[...base, "--project", "art"], "tokens: --project: ada@lab.test is not a member of art.\n"],
      [[...base, "--project", "nope"], "tokens: --project nope: no such project\n"],
      [
        ["create", "--email", "nobody@lab.test", "--name", "x", "--scope", "read"],
        "tokens: --email: no account with the email nobody@lab.test\n",
      ],
      [["create", "--email", "ada@lab.test", "--name", "x", "--scope", "admin"], 'tokens: --scope: The scope is "read" or "write".\n'],
      [["create", "--email", "ada@lab.test", "--scope", "read"], "tokens: --name N is required\n"],
    ];
    for (const [args, message] of cases) {
      const r = await tokens(...args);
      expect([r.code, r.out, r.err], args.join(" ")).toEqual([1, "", message]);
    }
    expect(tokenCount()).toBe(before);
  });

  it("list shows every token, or one user's, by prefix and never the token itself", async () => {
    const bob = await tokens("create", "--email", "bob@lab.test", "--name", "bob's", "--scope", "read");
    expect(bob.code).toBe(0);
    const all = await tokens("list");
    expect(all.code, all.err).toBe(0);
    const lines = all.out.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.split("\t")[3])).toEqual(["bob's", "ci", "notebook"]);
    const ci = lines.find((l) => l.split("\t")[3] === "ci")!.split("\t");
    expect(ci.slice(0, 7)).toEqual([String(listedId), "active", "ada@lab.test", "ci", `ccd_${listed.slice(4, 12)}…`, "write", "med"]);
    expect(ci[9]).toMatch(/^last used \d{4}-\d\d-\d\d \d\d:\d\d UTC from 127\.0\.0\.1$/);
    expect(all.out).not.toContain(listed.slice(12));
    expect(all.out).not.toContain(bob.out.trim().slice(12));
    const adaOnly = await tokens("list", "--email", "ada@lab.test");
    expect(
      adaOnly.out
        .trim()
        .split("\n")
        .map((l) => l.split("\t")[2]),
    ).toEqual(["ada@lab.test", "ada@lab.test"]);
  });

  it("revoke ID ends the token's access at its next request; again, it says so; an unknown id is refused", async () => {
    expect((await api(listed, "/api/v1/projects")).status).toBe(200);
    const r = await tokens("revoke", String(listedId));
    expect([r.code, r.out]).toEqual([0, `token ${listedId} revoked\n`]);
    expect((await api(listed, "/api/v1/projects")).status).toBe(401);
    expect((await tokens("revoke", String(listedId))).out).toBe(`token ${listedId} was already revoked\n`);
    expect((await tokens("list", "--email", "ada@lab.test")).out).toContain(`${listedId}\trevoked\t`);
    const unknown = await tokens("revoke", "999999");
    expect([unknown.code, unknown.err]).toEqual([1, "tokens: no token with id 999999\n"]);
    expect((await tokens("revoke", "abc")).code).toBe(1);
  });
});
