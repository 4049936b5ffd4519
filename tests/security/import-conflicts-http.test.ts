/**
 * Issue 18, major 6, through the Import page of the real production server
 * over HTTP (upload, preview, confirm, as the browser's forms do; the job's
 * progress read from the page's data): a second, conflicting responses or
 * verdicts file used to be "Already imported: nothing changed" with the old
 * text kept and nothing said about the difference.
 *
 * Now: the same file again is a no-op that the preview and the confirmation
 * state as such; a file whose rows differ from what is imported under the same
 * key (responses: item, model, turn; verdicts: judge, item, response,
 * checklist item) is refused at the preview with every conflicting row named,
 * cannot be confirmed, and the imported text stays as it was.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { csrfToken, importOverHttp, signInOverHttp } from "../../scripts/import-http";
import { startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";

const FX = path.resolve(__dirname, "../fixtures/import");
const ROUTE = "routes/p.$slug.import";
const EMAIL = "researcher@imports.test";
const PASSWORD = "import-conflicts-2026";
/** Each test imports into a project of its own, so any one test runs alone. */
const SLUGS = { responses: "conflicts-responses", verdicts: "conflicts-verdicts" };

let app: RunningApp;
let base = "";
let cookie = "";
let csrf = "";
let dir = "";

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const { id } = await createUser({ email: EMAIL, name: "Researcher", password: PASSWORD }, db);
    for (const slug of Object.values(SLUGS)) {
      const project = db
        .insert(schema.projects)
        .values({ slug, name: `Conflicts (${slug})` })
        .returning()
        .get();
      await setMembership(project.id, id, "researcher", db);
    }
    db.$client.close();
  });
  base = app.url.replace("localhost", "127.0.0.1");
  cookie = await signInOverHttp(base, EMAIL, PASSWORD);
  csrf = await csrfToken(base, cookie);
  dir = tempDir("concord-conflicts-");
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

type Job = {
  state: string;
  kind: string;
  message?: string;
  summary: { errorCount: number; conflictCount: number; unchanged: boolean; alreadyPresent: number; newRows: number; committed?: boolean };
  problems: string[];
};

const page = (slug: string) => `${base}/p/${slug}/import`;
const headers = () => ({ Cookie: cookie, Origin: base, Host: new URL(base).host });

async function upload(slug: string, preset: string, file: string): Promise<string> {
  const form = new FormData();
  form.append("_csrf", csrf); // first, before the file
  form.append("intent", "upload");
  form.append("preset", preset);
  form.append("file", await fs.openAsBlob(file), path.basename(file));
  const res = await fetch(page(slug), { method: "POST", redirect: "manual", headers: headers(), body: form });
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get("Location")!, base).searchParams.get("upload")!;
}

async function post(slug: string, fields: Record<string, string>) {
  return fetch(page(slug), {
    method: "POST",
    redirect: "manual",
    headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, ...fields }),
  });
}

/** Polls the page's data until the upload's `kind` job has finished. */
async function settle(slug: string, token: string, kind: "preview" | "confirm"): Promise<Job> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const r = await fetch(`${page(slug)}?upload=${token}&_data=${encodeURIComponent(ROUTE)}`, { headers: { Cookie: cookie } });
    expect(r.status).toBe(200);
    const job = ((await r.json()) as { upload: null | { job: null | Job } }).upload?.job;
    if (job && job.kind === kind && (job.state === "done" || job.state === "failed")) return job;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`the ${kind} did not finish`);
}

async function preview(slug: string, token: string): Promise<Job> {
  const r = await post(slug, { intent: "preview", token });
  expect(r.status).toBe(302);
  return settle(slug, token, "preview");
}

/** The page as the browser renders it after the job (HTML). */
async function html(slug: string, token: string): Promise<string> {
  const r = await fetch(`${page(slug)}?upload=${token}`, { headers: { Cookie: cookie } });
  expect(r.status).toBe(200);
  return (await r.text()).replaceAll("<!-- -->", ""); // React's separators between text pieces
}

function query<T>(sql: string, ...args: unknown[]): T[] {
  const db = openDatabase(app.databaseFile);
  try {
    return db.$client.prepare(sql).all(...args) as T[];
  } finally {
    db.$client.close();
  }
}
/** A project's rows (through its datasets' items). */
const OF_PROJECT =
  "JOIN items i ON i.id = r.item_id JOIN datasets d ON d.id = i.dataset_id JOIN projects p ON p.id = d.project_id WHERE p.slug = ?";
const responses = (slug: string) =>
  query<{ id: number; model: string; turn: number; text: string }>(
    `SELECT r.id, r.model, r.turn, r.text FROM responses r ${OF_PROJECT} ORDER BY r.id`,
    slug,
  );
const verdicts = (slug: string) =>
  query<Record<string, unknown>>(
    `SELECT v.id, v.judge_id, v.response_id, v.checklist_item_id, v.value, v.raw_output FROM verdicts v JOIN responses r ON r.id = v.response_id ${OF_PROJECT} ORDER BY v.id`,
    slug,
  );

/** The benchmark and its three responses, imported into a project as a user would first. */
async function importBenchmarkAndResponses(slug: string) {
  const items = await importOverHttp(base, cookie, {
    slug,
    preset: "items-jsonl",
    file: path.join(FX, "items.jsonl"),
    fileName: "items.jsonl",
  });
  expect(items.summary).toMatchObject({ errorCount: 0, committed: true });
  return importOverHttp(base, cookie, { slug, preset: "responses", file: path.join(FX, "responses.csv"), fileName: "responses.csv" });
}

// Previews and confirms run in a child process at a lower CPU priority than the server; under load each may take most
// of settle()'s 60 s, and a test here runs several of them.
describe("re-importing over the Import page (real server, HTTP)", { timeout: 300_000 }, () => {
  it("responses: the same file again is a no-op stated as such; a changed file is refused with the conflicting rows named, and the old text is kept", async () => {
    const slug = SLUGS.responses;
    const first = await importBenchmarkAndResponses(slug);
    expect(first.summary).toMatchObject({ errorCount: 0, responses: 3, newRows: 3, committed: true });
    const before = responses(slug);
    expect(before.map((r) => r.text)).toEqual(["Jupiter is the largest planet.", "Saturn, probably.", "3000 metres"]);

    // The same file again: the preview says nothing would change and offers no Confirm.
    const same = await upload(slug, "responses", path.join(FX, "responses.csv"));
    const samePreview = await preview(slug, same);
    expect(samePreview.summary).toMatchObject({ errorCount: 0, conflictCount: 0, unchanged: true, alreadyPresent: 3 });
    const samePage = await html(slug, same);
    expect(samePage).toMatch(/responses\.csv is already imported[^<]*: importing it again would change nothing/);
    expect(samePage).not.toMatch(/>Confirm import</);
    // Confirmed anyway (a form from an old tab): written as a no-op, and the page says so.
    expect((await post(slug, { intent: "confirm", token: same })).status).toBe(302);
    const sameDone = await settle(slug, same, "confirm");
    expect(sameDone.state).toBe("done");
    expect(sameDone.summary).toMatchObject({ errorCount: 0, unchanged: true });
    expect(await html(slug, same)).toMatch(/responses\.csv was already imported[^<]*; nothing changed/);
    expect(responses(slug)).toEqual(before);

    // Rows 3 and 4 of the file get another text under the same keys; a new row rides along.
    const changed = path.join(dir, "responses-changed.csv");
    fs.writeFileSync(
      changed,
      fs
        .readFileSync(path.join(FX, "responses.csv"), "utf8")
        .replace('"Saturn, probably."', '"Jupiter, surely."')
        .replace("3000 metres", "3 km") + "q3,model-c,1,The Last Light\n",
    );
    const token = await upload(slug, "responses", changed);
    const refused = await preview(slug, token);
    expect(refused.summary).toMatchObject({ errorCount: 2, conflictCount: 2, unchanged: false });
    expect(refused.problems).toEqual([
      'row 3, field "text": conflicts with the response already imported for item "q1", model "model-b", turn 1: its text differs. Imported responses are never replaced; give the new one another model name (or response key)',
      'row 4, field "text": conflicts with the response already imported for item "q2", model "model-a", turn 1: its text differs. Imported responses are never replaced; give the new one another model name (or response key)',
    ]);
    const refusedPage = await html(slug, token);
    expect(refusedPage).toMatch(/responses-changed\.csv: 2 problems; nothing was imported/);
    expect(refusedPage).toMatch(/data-testid="import-conflicts"[^>]*>2 rows of this file conflict with what is already imported/);
    expect(refusedPage).toContain("row 3, field &quot;text&quot;: conflicts with the response already imported for item &quot;q1&quot;");
    expect(refusedPage).toContain("row 4, field &quot;text&quot;: conflicts with the response already imported for item &quot;q2&quot;");
    expect(refusedPage).not.toMatch(/>Confirm import</);
    // Confirming the refused file anyway is refused, and nothing is written: not the new texts, not the new row.
    const forced = await post(slug, { intent: "confirm", token });
    expect(forced.status).toBe(400);
    expect(await forced.text()).toMatch(/Preview the file before confirming\./);
    expect(responses(slug)).toEqual(before);
  }, 60_000);

  it("verdicts: the same file is a no-op; a changed value is refused naming each conflicting row", async () => {
    const slug = SLUGS.verdicts;
    expect((await importBenchmarkAndResponses(slug)).summary).toMatchObject({ errorCount: 0, committed: true });
    const first = await importOverHttp(base, cookie, {
      slug,
      preset: "verdicts",
      file: path.join(FX, "verdicts.csv"),
      fileName: "verdicts.csv",
    });
    expect(first.summary).toMatchObject({ errorCount: 0, committed: true });
    const before = verdicts(slug);
    expect(before).toHaveLength(5);

    const same = await upload(slug, "verdicts", path.join(FX, "verdicts.csv"));
    expect((await preview(slug, same)).summary).toMatchObject({ errorCount: 0, unchanged: true });
    expect(await html(slug, same)).toMatch(/verdicts\.csv is already imported[^<]*: importing it again would change nothing/);

    // Row 2 flips Yes → No; row 6 (the whole-response score) goes from 8 to 9.
    const src = fs.readFileSync(path.join(FX, "verdicts.csv"), "utf8").split("\n");
    src[1] = src[1].replace(",Yes,", ",No,");
    src[5] = src[5].replace(",8,", ",9,");
    const changed = path.join(dir, "verdicts-changed.csv");
    fs.writeFileSync(changed, src.join("\n"));
    const token = await upload(slug, "verdicts", changed);
    const refused = await preview(slug, token);
    expect(refused.summary).toMatchObject({ errorCount: 2, conflictCount: 2 });
    expect(refused.problems).toEqual([
      'row 2, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q1", response "model-a#1", checklist item #1: it says "Yes", the file says "No". Imported verdicts are never replaced; import the new ones under another judge name',
      'row 6, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q2", response "model-a": it says "8", the file says "9". Imported verdicts are never replaced; import the new ones under another judge name',
    ]);
    expect(await html(slug, token)).toMatch(/data-testid="import-conflicts"/);
    expect((await post(slug, { intent: "confirm", token })).status).toBe(400);
    expect(verdicts(slug)).toEqual(before);
  }, 60_000);
});
