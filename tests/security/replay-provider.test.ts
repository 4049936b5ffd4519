/**
 * Issue 18, critical 1, against the real production server.
 *
 * The attack: a researcher makes a `replay` provider whose `settings.file`
 * names any file on the server (/etc/passwd; the database by a relative path
 * or by its absolute path). It must be refused with a message that names the
 * setting and never echoes the file's content. A provider row left in the
 * database by an older version with such a path must fail its jobs cleanly
 * without the file being opened.
 *
 * The data loss: pointed at the database file, the old provider opened and
 * closed a second descriptor on it, which drops the server's SQLite locks; the
 * next process that opened the database (export, worker, backup) then
 * checkpointed and deleted the WAL under the live server, and every later
 * acknowledged write was lost. The reproduction here: the server's worker
 * runs a job of a provider pointed at the database file, a second process
 * opens and closes the database, then 25 writes acknowledged by the server
 * (providers added through its form) — all 25 are on disk, read by a third
 * process while the server still runs.
 *
 * Against the code before the fix, the first test and the error-message
 * checks of the second fail (the path is accepted; the job's error quotes the
 * database's first bytes). The loss itself depends on the platform's locking
 * and did not happen on the machine this was written on even before the fix,
 * so the guarantee rests on the file never being opened (the refusals above
 * come before any file access; see also replay-database-files.test.ts).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createRun } from "../../app/runs/runner.server";
import { openDatabase, schema } from "../../db/client";
import { ROOT, startApp, type RunningApp } from "../support/app-server";
import { makeRunsFixture } from "../unit/runs/fixtures";

const EMAIL = "researcher@replay.test";
const PASSWORD = "replay-attack-2026";
let app: RunningApp;
let slug = "";
let runId = 0;

/** A cookie jar and the CSRF token of the last page, for plain fetch against the server. */
class Client {
  cookies = new Map<string, string>();
  csrf = "";
  constructor(readonly base: string) {}
  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [kv] = c.split(";");
      const i = kv.indexOf("=");
      this.cookies.set(kv.slice(0, i), kv.slice(i + 1));
    }
  }
  async get(p: string) {
    const res = await fetch(this.base + p, { headers: { Cookie: this.cookieHeader() }, redirect: "manual" });
    this.keep(res);
    const text = await res.text();
    const m = /name="_csrf" value="([^"]*)"/.exec(text);
    if (m) this.csrf = m[1];
    return { status: res.status, text };
  }
  async post(p: string, form: Record<string, string>) {
    const res = await fetch(this.base + p, {
      method: "POST",
      headers: { Cookie: this.cookieHeader(), Origin: this.base, "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": this.csrf },
      body: new URLSearchParams({ ...form, _csrf: this.csrf }),
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, text: await res.text() };
  }
}

let client: Client;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const fx = makeRunsFixture(db, { baseUrl: "http://127.0.0.1:9/v1", items: 2, checklist: 1 });
    slug = fx.project.slug;
    const { id } = await createUser({ email: EMAIL, name: "Researcher", password: PASSWORD }, db);
    setMembership(fx.project.id, id, "researcher", db);
    // Rows an older version accepted: replay providers naming paths. Nothing may open these files now.
    db.insert(schema.providers).values({ projectId: fx.project.id, name: "old-passwd", kind: "replay", model: "m1", settings: { file: "/etc/passwd" } }).run();
    db.insert(schema.providers).values({ projectId: fx.project.id, name: "old-db", kind: "replay", model: "m2", settings: { file: file } }).run();
    runId = createRun(db, fx.project.id, {
      name: "points at files",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "old-db" }, { provider: "old-passwd" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
    }).id;
    db.$client.close();
  });
  client = new Client(app.url);
  await client.get("/login");
  const res = await client.post("/login", { email: EMAIL, password: PASSWORD });
  expect(res.status, res.text.slice(0, 300)).toBe(302);
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

/** Counts rows in a separate process (as an export or backup would), while the server runs. */
function countInAnotherProcess(file: string, sql: string): number {
  const code = `import Database from "better-sqlite3"; const db = new Database(${JSON.stringify(file)}); console.log(db.prepare(${JSON.stringify(sql)}).pluck().get()); db.close();`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout.trim());
}

const SECRETS = /root:|SQLite format|daemon:|\/bin\/(ba)?sh/;

describe("replay providers read only named recordings", () => {
  it("refuses a recording given as a path (/etc/passwd, ../../data/concord.db, the database's own path) with a clean message", async () => {
    const page = await client.get(`/p/${slug}/providers`);
    expect(page.status).toBe(200);
    const before = countInAnotherProcess(app.databaseFile, "SELECT COUNT(*) FROM providers");
    const attempts = ["/etc/passwd", "../../data/concord.db", app.databaseFile, path.relative(ROOT, app.databaseFile), "seeds/recorded/../../package.json", "demo-refinebench.json/../../../etc/passwd"];
    for (const [i, file] of attempts.entries()) {
      const res = await client.post(`/p/${slug}/providers`, { intent: "create", name: `evil-${i}`, kind: "replay", model: "m", concurrency: "1", requestsPerMinute: "", settings: JSON.stringify({ file }) });
      expect(res.status, file).toBe(400);
      expect(res.text, file).toMatch(/settings\.file: a recording is chosen by its name in the recordings folder, not by a path/);
      expect(res.text, file).not.toMatch(SECRETS);
    }
    // A bare name that is not in the folder is refused too, listing what is there.
    const missing = await client.post(`/p/${slug}/providers`, { intent: "create", name: "evil-name", kind: "replay", model: "m", concurrency: "1", requestsPerMinute: "", settings: JSON.stringify({ file: "passwd" }) });
    expect(missing.status).toBe(400);
    expect(missing.text).toMatch(/no recording named \\"passwd\\" in the recordings folder/);
    // An unknown setting is named, not ignored.
    const typo = await client.post(`/p/${slug}/providers`, { intent: "create", name: "typo", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m", concurrency: "1", requestsPerMinute: "", settings: JSON.stringify({ temprature: 0 }) });
    expect(typo.status).toBe(400);
    expect(typo.text).toMatch(/settings\.temprature: unknown setting/);
    expect(countInAnotherProcess(app.databaseFile, "SELECT COUNT(*) FROM providers")).toBe(before);
    // A recording of the folder, by name, is accepted.
    const ok = await client.post(`/p/${slug}/providers`, { intent: "create", name: "recorded-ok", kind: "replay", model: "m", concurrency: "1", requestsPerMinute: "", recording: "demo-refinebench.json", settings: "{}" });
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(ok.text).toMatch(/Provider recorded-ok added/);
  });

  it("a stored path (older version) fails its jobs with a clean message; a second process then opens the database, and 25 acknowledged writes are all on disk", async () => {
    // The runs page starts the server's in-process worker, which runs the jobs of both path-named providers.
    expect((await client.get(`/p/${slug}/runs`)).status).toBe(200);
    const failedJobs = () => countInAnotherProcess(app.databaseFile, `SELECT COUNT(*) FROM jobs WHERE run_id = ${runId} AND status = 'failed'`);
    await expect.poll(failedJobs, { timeout: 20_000, interval: 200 }).toBe(4);
    const errors = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", `import Database from "better-sqlite3"; const db = new Database(${JSON.stringify(app.databaseFile)}); console.log(JSON.stringify(db.prepare("SELECT error FROM jobs WHERE run_id = ${runId}").pluck().all())); db.close();`],
      { cwd: ROOT, encoding: "utf8" },
    );
    const messages = JSON.parse(errors.stdout) as string[];
    expect(messages).toHaveLength(4);
    for (const m of messages) {
      expect(m).toMatch(/settings\.file: a recording is chosen by its name in the recordings folder, not by a path/);
      expect(m).not.toMatch(SECRETS);
    }
    const runPage = await client.get(`/p/${slug}/runs/${runId}`);
    expect(runPage.text).not.toMatch(SECRETS);

    // A second process opens the database and closes it (what export, import, a worker or a backup does).
    const second = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `import { openDatabase } from "./db/client.ts"; const db = openDatabase(${JSON.stringify(app.databaseFile)}); db.$client.close();`], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(second.status, second.stderr).toBe(0);

    // 25 writes acknowledged by the server.
    for (let i = 0; i < 25; i++) {
      const res = await client.post(`/p/${slug}/providers`, { intent: "create", name: `after-${i}`, kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m", concurrency: "1", requestsPerMinute: "", settings: "{}" });
      expect(res.status).toBe(200);
    }
    // On disk, as another process sees it while the server still runs.
    expect(countInAnotherProcess(app.databaseFile, "SELECT COUNT(*) FROM providers WHERE name LIKE 'after-%'")).toBe(25);
  }, 60_000);
});
