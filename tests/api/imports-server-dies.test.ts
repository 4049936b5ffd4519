/**
 * An API import whose server dies (kill -9) while the import runs (issue 37): the import's child stops with its
 * server and writes nothing (app/formats/import-jobs.server.ts), and the restarted server fails the record the
 * dead one left running, so that a client polling it learns the import will never end: status "failed", "The
 * server stopped during the import; nothing of it was written." The real server, restarted on the same database
 * file, and its real import job, on an 80,000-label file that takes seconds to import.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken } from "../../app/auth/tokens.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";

const UNITS = 40_000;
const dir = tempDir("concord-api-import-dies-");
const databaseFile = path.join(dir, "app.db");
const bigFile = path.join(dir, "labels.csv");
let app: RunningApp | undefined;
let token: string;

beforeAll(async () => {
  const db = openDatabase(databaseFile);
  const user = await createUser({ email: "ada@lab.test", name: "ada", password: "correct horse battery" }, db);
  const project = db.insert(schema.projects).values({ slug: "dies", name: "Dies" }).returning().get();
  await setMembership(project.id, user.id, "researcher", db);
  token = (await createApiToken(user.id, { name: "t", scope: "write", projects: "all" }, db)).token;
  db.$client.close();
  let text = "unit,annotator,label\n";
  for (let u = 1; u <= UNITS; u++) text += `unit-${u},ann-a,${u % 3 === 0 ? "No" : "Yes"}\nunit-${u},ann-b,${u % 5 === 0 ? "No" : "Yes"}\n`;
  fs.writeFileSync(bigFile, text);
});
afterAll(async () => {
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function ended(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}
/** The server's import-job child, among the processes whose parent is the server. */
function importChild(server: number): number | null {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === server && fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").includes("import-job")) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
const labels = () => {
  const c = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    return (c.prepare("select count(*) as n from annotations").get() as { n: number }).n;
  } finally {
    c.close();
  }
};

it("the child stops and writes nothing; the restarted server fails the record", { timeout: 300_000 }, async () => {
  app = await startApp(undefined, { env: { DATABASE_URL: databaseFile } });
  const auth = { Authorization: `Bearer ${token}` };
  const accepted = await new AppClient(app.url).request(
    "POST",
    "/api/v1/projects/dies/imports?preset=labels-long&filename=labels.csv",
    { ...auth, "Content-Type": "text/csv" },
    fs.readFileSync(bigFile),
  );
  expect(accepted.status, accepted.text).toBe(202);
  const location = accepted.headers.location!;
  // The import is under way (its child started) when the server is killed.
  let child: number | null = null;
  for (const deadline = Date.now() + 60_000; child === null && Date.now() < deadline;) {
    child = importChild(app.pid);
    if (child === null) await sleep(20);
  }
  expect(child).not.toBeNull();
  const running = JSON.parse((await new AppClient(app.url).get(location, auth)).text) as { status: string };
  expect(["queued", "running"]).toContain(running.status);
  process.kill(app.pid, "SIGKILL");
  for (const deadline = Date.now() + 60_000; !ended(child!) && Date.now() < deadline;) await sleep(100);
  expect(ended(child!)).toBe(true);
  expect(labels()).toBe(0);

  await app.stop().catch(() => {});
  app = await startApp(undefined, { env: { DATABASE_URL: databaseFile } });
  const r = await new AppClient(app.url).get(location, auth);
  expect(r.status).toBe(200);
  expect(JSON.parse(r.text)).toMatchObject({
    status: "failed",
    error: "The server stopped during the import; nothing of it was written.",
    progress: null,
    summary: null,
  });
  expect(labels()).toBe(0);
});
