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
const SLUG = "conflicts";

let app: RunningApp;
let base = "";
let cookie = "";
let csrf = "";
let dir = "";

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const project = db.insert(schema.projects).values({ slug: SLUG, name: "Conflicts" }).returning().get();
    const { id } = await createUser({ email: EMAIL, name: "Researcher", password: PASSWORD }, db);
    setMembership(project.id, id, "researcher", db);
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

const page = () => `${base}/p/${SLUG}/import`;
const headers = () => ({ Cookie: cookie, Origin: base, Host: new URL(base).host });

async function upload(preset: string, file: string): Promise<string> {
  const form = new FormData();
  form.append("_csrf", csrf); // first, before the file
  form.append("intent", "upload");
  form.append("preset", preset);
  form.append("file", await fs.openAsBlob(file), path.basename(file));
  const res = await fetch(page(), { method: "POST", redirect: "manual", headers: headers(), body: form });
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get("Location")!, base).searchParams.get("upload")!;
}

async function post(fields: Record<string, string>) {
  return fetch(page(), {
    method: "POST",
    redirect: "manual",
    headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, ...fields }),
  });
}

/** Polls the page's data until the upload's `kind` job has finished. */
async function settle(token: string, kind: "preview" | "confirm"): Promise<Job> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const r = await fetch(`${page()}?upload=${token}&_data=${encodeURIComponent(ROUTE)}`, { headers: { Cookie: cookie } });
    expect(r.status).toBe(200);
    const job = ((await r.json()) as { upload: null | { job: null | Job } }).upload?.job;
    if (job && job.kind === kind && (job.state === "done" || job.state === "failed")) return job;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`the ${kind} did not finish`);
}

async function preview(token: string): Promise<Job> {
  const r = await post({ intent: "preview", token });
  expect(r.status).toBe(302);
  return settle(token, "preview");
}

/** The page as the browser renders it after the job (HTML). */
async function html(token: string): Promise<string> {
  const r = await fetch(`${page()}?upload=${token}`, { headers: { Cookie: cookie } });
  expect(r.status).toBe(200);
  return (await r.text()).replaceAll("<!-- -->", ""); // React's separators between text pieces
}

function query<T>(sql: string): T[] {
  const db = openDatabase(app.databaseFile);
  try {
    return db.$client.prepare(sql).all() as T[];
  } finally {
    db.$client.close();
  }
}
const responses = () =>
  query<{ id: number; model: string; turn: number; text: string }>("SELECT id, model, turn, text FROM responses ORDER BY id");
const verdicts = () =>
  query<Record<string, unknown>>("SELECT id, judge_id, response_id, checklist_item_id, value, raw_output FROM verdicts ORDER BY id");

describe("re-importing over the Import page (real server, HTTP)", () => {
  it("responses: the same file again is a no-op stated as such; a changed file is refused with the conflicting rows named, and the old text is kept", async () => {
    await importOverHttp(base, cookie, { slug: SLUG, preset: "items-jsonl", file: path.join(FX, "items.jsonl"), fileName: "items.jsonl" });
    const first = await importOverHttp(base, cookie, {
      slug: SLUG,
      preset: "responses",
      file: path.join(FX, "responses.csv"),
      fileName: "responses.csv",
    });
    expect(first.summary).toMatchObject({ errorCount: 0, responses: 3, newRows: 3, committed: true });
    const before = responses();
    expect(before.map((r) => r.text)).toEqual(["Jupiter is the largest planet.", "Saturn, probably.", "3000 metres"]);

    // The same file again: the preview says nothing would change and offers no Confirm.
    const same = await upload("responses", path.join(FX, "responses.csv"));
    const samePreview = await preview(same);
    expect(samePreview.summary).toMatchObject({ errorCount: 0, conflictCount: 0, unchanged: true, alreadyPresent: 3 });
    const samePage = await html(same);
    expect(samePage).toMatch(/responses\.csv is already imported[^<]*: importing it again would change nothing/);
    expect(samePage).not.toMatch(/>Confirm import</);
    // Confirmed anyway (a form from an old tab): written as a no-op, and the page says so.
    expect((await post({ intent: "confirm", token: same })).status).toBe(302);
    const sameDone = await settle(same, "confirm");
    expect(sameDone.state).toBe("done");
    expect(sameDone.summary).toMatchObject({ errorCount: 0, unchanged: true });
    expect(await html(same)).toMatch(/responses\.csv was already imported[^<]*; nothing changed/);
    expect(responses()).toEqual(before);

    // Rows 3 and 4 of the file get another text under the same keys; a new row rides along.
    const changed = path.join(dir, "responses-changed.csv");
    fs.writeFileSync(
      changed,
      fs
        .readFileSync(path.join(FX, "responses.csv"), "utf8")
        .replace('"Saturn, probably."', '"Jupiter, surely."')
        .replace("3000 metres", "3 km") + "q3,model-c,1,The Last Light\n",
    );
    const token = await upload("responses", changed);
    const refused = await preview(token);
    expect(refused.summary).toMatchObject({ errorCount: 2, conflictCount: 2, unchanged: false });
    expect(refused.problems).toEqual([
      'row 3, field "text": conflicts with the response already imported for item "q1", model "model-b", turn 1: its text differs. Imported responses are never replaced; give the new one another model name (or response key)',
      'row 4, field "text": conflicts with the response already imported for item "q2", model "model-a", turn 1: its text differs. Imported responses are never replaced; give the new one another model name (or response key)',
    ]);
    const refusedPage = await html(token);
    expect(refusedPage).toMatch(/responses-changed\.csv: 2 problems; nothing was imported/);
    expect(refusedPage).toMatch(/data-testid="import-conflicts"[^>]*>2 rows of this file conflict with what is already imported/);
    expect(refusedPage).toContain("row 3, field &quot;text&quot;: conflicts with the response already imported for item &quot;q1&quot;");
    expect(refusedPage).toContain("row 4, field &quot;text&quot;: conflicts with the response already imported for item &quot;q2&quot;");
    expect(refusedPage).not.toMatch(/>Confirm import</);
    // Confirming the refused file anyway is refused, and nothing is written: not the new texts, not the new row.
    const forced = await post({ intent: "confirm", token });
    expect(forced.status).toBe(400);
    expect(await forced.text()).toMatch(/Preview the file before confirming\./);
    expect(responses()).toEqual(before);
  });

  it("verdicts: the same file is a no-op; a changed value is refused naming each conflicting row", async () => {
    const first = await importOverHttp(base, cookie, {
      slug: SLUG,
      preset: "verdicts",
      file: path.join(FX, "verdicts.csv"),
      fileName: "verdicts.csv",
    });
    expect(first.summary).toMatchObject({ errorCount: 0, committed: true });
    const before = verdicts();
    expect(before).toHaveLength(5);

    const same = await upload("verdicts", path.join(FX, "verdicts.csv"));
    expect((await preview(same)).summary).toMatchObject({ errorCount: 0, unchanged: true });
    expect(await html(same)).toMatch(/verdicts\.csv is already imported[^<]*: importing it again would change nothing/);

    // Row 2 flips Yes → No; row 6 (the whole-response score) goes from 8 to 9.
    const src = fs.readFileSync(path.join(FX, "verdicts.csv"), "utf8").split("\n");
    src[1] = src[1].replace(",Yes,", ",No,");
    src[5] = src[5].replace(",8,", ",9,");
    const changed = path.join(dir, "verdicts-changed.csv");
    fs.writeFileSync(changed, src.join("\n"));
    const token = await upload("verdicts", changed);
    const refused = await preview(token);
    expect(refused.summary).toMatchObject({ errorCount: 2, conflictCount: 2 });
    expect(refused.problems).toEqual([
      'row 2, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q1", response "model-a#1", checklist item #1: it says "Yes", the file says "No". Imported verdicts are never replaced; import the new ones under another judge name',
      'row 6, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q2", response "model-a": it says "8", the file says "9". Imported verdicts are never replaced; import the new ones under another judge name',
    ]);
    expect(await html(token)).toMatch(/data-testid="import-conflicts"/);
    expect((await post({ intent: "confirm", token })).status).toBe(400);
    expect(verdicts()).toEqual(before);
  });
});
