/**
 * Issue 36, item 5 (an import outlives its server). Before: kill -9 of the
 * server during an Import-page confirm left the import's child process
 * running; it committed the whole file minutes later, while the user had seen
 * "fetch failed" and the restarted server's Import page knew nothing of it,
 * and the job's folder (the upload, its stage) stayed until the upload sweep.
 *
 * Now the job does not outlive its server: the child notices (its stdin pipe
 * from the server closes, its parent changes), stops, deletes the rows it had
 * copied (an import is all or nothing), removes its folder and exits. And a
 * job killed together with its server (both kill -9) leaves a folder that the
 * next start removes, with the rows it had copied.
 *
 * The real production server over HTTP, its real import-job child, a labels
 * file large enough (80,000 labels) that the write is still going when the
 * server is killed: the kill comes once the database holds the import's
 * reservation (pending_imports) and chunks of its rows, as the child writes
 * them.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { STAGED_TABLES } from "../../app/formats/stage.server";
import { openDatabase, schema } from "../../db/client";
import { csrfToken, signInOverHttp } from "../../scripts/import-http";
import { startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";

const ROUTE = "routes/p.$slug.import";
const EMAIL = "researcher@import-dies.test";
const PASSWORD = "import-dies-2026";
const SLUG = "import-dies";
const UNITS = 40_000; // × 2 annotators: 80,000 labels, about 200,000 rows to write

const dir = tempDir("concord-import-dies-");
const databaseFile = path.join(dir, "app.db");
const uploads = path.join(dir, "concord-uploads");
const bigFile = path.join(dir, "labels.csv");
let app: RunningApp | undefined;

beforeAll(async () => {
  const db = openDatabase(databaseFile);
  const { id } = await createUser({ email: EMAIL, name: "Researcher", password: PASSWORD }, db);
  const project = db.insert(schema.projects).values({ slug: SLUG, name: "Import dies" }).returning().get();
  await setMembership(project.id, id, "researcher", db);
  db.$client.close();
  const out = fs.openSync(bigFile, "w");
  fs.writeSync(out, "unit,annotator,label\n");
  let chunk = "";
  for (let u = 1; u <= UNITS; u++) {
    chunk += `unit-${u},ann-a,${u % 3 === 0 ? "No" : "Yes"}\nunit-${u},ann-b,${u % 5 === 0 ? "No" : "Yes"}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(out, chunk);
      chunk = "";
    }
  }
  fs.writeSync(out, chunk);
  fs.closeSync(out);
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

/** The server on this file's own database (the same file after a restart), signed in. */
async function start(): Promise<{ base: string; cookie: string; csrf: string }> {
  app = await startApp(undefined, { env: { DATABASE_URL: databaseFile } });
  const base = app.url.replace("localhost", "127.0.0.1");
  const cookie = await signInOverHttp(base, EMAIL, PASSWORD);
  return { base, cookie, csrf: await csrfToken(base, cookie) };
}

type Job = { state: string; kind: string; phase?: string; summary?: { errorCount: number } };

async function pageData(s: { base: string; cookie: string }, token: string) {
  const r = await fetch(`${s.base}/p/${SLUG}/import?upload=${token}&_data=${encodeURIComponent(ROUTE)}`, {
    headers: { Cookie: s.cookie },
  });
  expect(r.status).toBe(200);
  return (await r.json()) as { upload: null | { job: null | Job }; uploadGone: boolean };
}

async function post(s: { base: string; cookie: string; csrf: string }, fields: Record<string, string>) {
  const r = await fetch(`${s.base}/p/${SLUG}/import`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: s.cookie, Origin: s.base, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: s.csrf, ...fields }),
  });
  expect(r.status, await r.clone().text()).toBe(302);
}

/**
 * Upload and preview (no problems); returns the upload's token, ready to confirm. Each test uploads under a name of its
 * own: the dataset is named after the file, so a test never finds the same content already imported by another.
 */
async function uploadAndPreview(s: { base: string; cookie: string; csrf: string }, name: string): Promise<string> {
  const form = new FormData();
  form.append("_csrf", s.csrf);
  form.append("intent", "upload");
  form.append("preset", "labels-long");
  form.append("file", await fs.openAsBlob(bigFile), name);
  const up = await fetch(`${s.base}/p/${SLUG}/import`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: s.cookie, Origin: s.base },
    body: form,
  });
  expect(up.status, await up.clone().text()).toBe(302);
  const token = new URL(up.headers.get("Location")!, s.base).searchParams.get("upload")!;
  await post(s, { intent: "preview", token, "map.unit": "unit", "map.annotator": "annotator", "map.label": "label" });
  for (const deadline = Date.now() + 150_000; Date.now() < deadline;) {
    const job = (await pageData(s, token)).upload?.job;
    if (job?.kind === "preview" && job.state === "done") {
      expect(job.summary!.errorCount).toBe(0);
      return token;
    }
    expect(job?.state).not.toBe("failed");
    await sleep(250);
  }
  throw new Error("the preview did not finish in 150 s");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rows per staged table and the reservations of imports under way, read beside the server. */
function counts(): { rows: Record<string, number>; pending: number } {
  const c = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    const n = (t: string) => (c.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n;
    return { rows: Object.fromEntries(STAGED_TABLES.map((t) => [t, n(t)])), pending: n("pending_imports") };
  } finally {
    c.close();
  }
}
const total = (c: { rows: Record<string, number> }) => Object.values(c.rows).reduce((a, b) => a + b, 0);

/** Confirms, then waits until the child is writing: its reservation is in the database and rows have been copied. */
async function confirmUntilWriting(s: { base: string; cookie: string; csrf: string }, token: string, before: number) {
  await post(s, { intent: "confirm", token });
  for (const deadline = Date.now() + 150_000; Date.now() < deadline;) {
    const c = counts();
    if (c.pending === 1 && total(c) > before + 5_000) return c;
    const job = (await pageData(s, token)).upload?.job;
    if (job?.kind === "confirm" && job.state !== "running" && job.state !== "queued")
      throw new Error(`the confirm ended (${job.state}) before it was caught writing; make the file larger`);
    await sleep(50);
  }
  throw new Error("the confirm did not start writing in 150 s");
}

/** The server's import-job child (scripts/cli.mjs import-job), found among the processes whose parent is the server. */
function importChild(server: number): number {
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
  throw new Error("the server has no import-job child");
}

/** Whether a process has ended (gone, or a zombie that nobody reaped yet). */
function ended(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function waitEnded(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (ended(pid)) return true;
    await sleep(100);
  }
  return ended(pid);
}

describe("an Import-page import whose server dies (kill -9) during the confirm", { timeout: 600_000 }, () => {
  it("stops: the child exits, nothing of the file is written, its folder is gone; the restarted page says so", async () => {
    const s = await start();
    const before = counts();
    const token = await uploadAndPreview(s, "labels-server-killed.csv");
    const writing = await confirmUntilWriting(s, token, total(before));
    const child = importChild(app!.pid);
    process.kill(app!.pid, "SIGKILL");
    await waitEnded(app!.pid, 10_000);

    // The child stops by itself: within seconds, not after writing the rest of the file.
    expect(await waitEnded(child, 60_000)).toBe(true);
    // It took back the rows it had copied (there were some), and its reservation with them.
    expect(total(writing)).toBeGreaterThan(total(before));
    expect(counts()).toEqual(before);
    // Its folder is gone: the upload, the stage with every checked row, the marker.
    expect(fs.existsSync(path.join(uploads, token))).toBe(false);

    // Still nothing a while later: no import commits behind the restarted server's back.
    await app!.stop();
    const again = await start();
    await sleep(2_000);
    expect(counts()).toEqual(before);
    // The restarted server's page tells the user the upload is gone (and why it may be), rather than nothing.
    expect(await pageData(again, token)).toMatchObject({ upload: null, uploadGone: true });
    const html = await (await fetch(`${again.base}/p/${SLUG}/import?upload=${token}`, { headers: { Cookie: again.cookie } })).text();
    expect(html).toContain("the server restarted while it was being imported (an import cut short writes nothing)");
    await app!.stop();
  });

  it("killed together with its child: the next start removes the job's folder and the rows it had copied", async () => {
    const s = await start();
    const before = counts();
    const token = await uploadAndPreview(s, "labels-both-killed.csv");
    const writing = await confirmUntilWriting(s, token, total(before));
    const child = importChild(app!.pid);
    // Both at once, as when the machine or its container stops: no one cleans anything. The child is frozen first, so it
    // cannot see its server go, and the server is killed before it can see its child go.
    process.kill(child, "SIGSTOP");
    process.kill(app!.pid, "SIGKILL");
    process.kill(child, "SIGKILL");
    expect(await waitEnded(child, 10_000)).toBe(true);
    await waitEnded(app!.pid, 10_000);
    expect(writing.pending).toBe(1);
    expect(counts().pending).toBe(1);
    // Its folder stays behind: the upload, the stage with every checked row (and the marker naming the dead server).
    expect(fs.readdirSync(path.join(uploads, token))).toEqual(expect.arrayContaining(["meta.json", "stage.db", "upload.csv"]));

    await app!.stop();
    const again = await start();
    // At start: the folder of the job whose server is gone, and the rows its child had copied.
    expect(fs.existsSync(path.join(uploads, token))).toBe(false);
    expect(counts()).toEqual(before);
    expect(await pageData(again, token)).toMatchObject({ upload: null, uploadGone: true });
  });
});
