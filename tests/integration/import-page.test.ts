/**
 * The import page's route: upload (streamed to disk) → columns detected →
 * preview in a job (a child process; polled through the loader) → confirm;
 * a 0-byte upload; messages in the page's words; a re-import that says so
 * before Confirm; a conflicting one refused; abandoned uploads deleted.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, ORIGIN, run, signInCookie, get } from "../support/http";
import { getDb } from "../../db/client";
import { action, loader } from "../../app/routes/p.$slug.import";
import { sweepUploads, uploadRoot, uploadTtlMs } from "../../app/formats/upload.server";

const { file: dbFile } = useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/import");
let cookie = "";
let slug = "";

beforeAll(async () => {
  const p = makeProject("upload-page");
  slug = p.slug;
  const u = await makeUser();
  await addMember(p.id, u.id, "researcher");
  cookie = await signInCookie(u.email, u.password);
});

function uploadRequest(preset: string, file: { name: string; bytes: Buffer }) {
  const form = new FormData();
  form.append("intent", "upload");
  form.append("preset", preset);
  form.append("file", new Blob([new Uint8Array(file.bytes)]), file.name);
  return new Request(`${ORIGIN}/p/${slug}/import`, { method: "POST", headers: { Cookie: cookie, Origin: ORIGIN }, body: form });
}
const post = (fields: Record<string, string>) =>
  new Request(`${ORIGIN}/p/${slug}/import`, {
    method: "POST",
    headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

async function upload(preset: string, name: string, bytes: Buffer): Promise<string> {
  const res = await run(action, args(uploadRequest(preset, { name, bytes }), { slug }));
  expect(res.status, await res.clone().text()).toBe(302);
  const token = new URL(res.headers.get("Location")!, ORIGIN).searchParams.get("upload")!;
  expect(token).toMatch(/^[0-9a-f]{32}$/);
  return token;
}

async function page(token: string) {
  return (await (await run(loader, args(get(`/p/${slug}/import?upload=${token}`, cookie), { slug }))).json()) as {
    upload: null | {
      columns: string[];
      detected: Record<string, string>;
      job: null | {
        state: string;
        kind: string;
        summary?: Record<string, unknown> & { errorCount: number; unchanged: boolean };
        problems?: string[];
        sample?: { row: number; fields: Record<string, string> }[];
      };
    };
    uploadGone: boolean;
  };
}

/** Polls the loader until the job is done (bounded: 60 s). */
async function settle(token: string) {
  for (let i = 0; i < 600; i++) {
    const p = await page(token);
    const s = p.upload?.job?.state;
    if (s === "done" || s === "failed") return p.upload!.job!;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the import job did not finish in 60 s");
}

const count = (t: string) => (getDb().$client.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n;

describe("import page", () => {
  it("upload → columns detected → preview with the first rows → confirm", async () => {
    const token = await upload("labels-long", "labels-long.csv", fs.readFileSync(path.join(FX, "labels-long.csv")));
    const stored = path.join(uploadRoot(), token);
    expect(path.dirname(uploadRoot())).toBe(path.dirname(dbFile)); // beside the database
    expect(fs.readdirSync(stored).sort()).toEqual(["meta.json", "upload.csv"]); // a name we chose
    const p = await page(token);
    expect(p.upload!.columns).toEqual(["unit", "annotator", "label"]);
    expect(p.upload!.detected).toEqual({ unit: "unit", annotator: "annotator", label: "label" });

    const preview = await run(
      action,
      args(
        post({ intent: "preview", token, "map.unit": "unit", "map.annotator": "annotator", "map.label": "label", dataset: "", level: "" }),
        { slug },
      ),
    );
    expect(preview.status).toBe(302);
    const job = await settle(token);
    expect(job).toMatchObject({
      state: "done",
      kind: "preview",
      summary: { annotations: 13, errorCount: 0, committed: false, unchanged: false },
    });
    // The first rows as parsed (row numbers as a spreadsheet shows them: the header is row 1).
    expect(job.sample!.slice(0, 2)).toEqual([
      { kind: "label", row: 2, fields: { unit: "u1", annotator: "Ada Lovelace", label: "Yes" } },
      { kind: "label", row: 3, fields: { unit: "u1", annotator: "Grace Hopper", label: "Yes" } },
    ]);
    expect(count("items")).toBe(0);

    expect((await run(action, args(post({ intent: "confirm", token }), { slug }))).status).toBe(302);
    const done = await settle(token);
    expect(done).toMatchObject({
      state: "done",
      kind: "confirm",
      summary: { annotations: 13, committed: true, dataset: { name: "labels-long" } },
    });
    expect(count("items")).toBe(5);
    expect(count("annotations")).toBe(13);
    // Once imported, the upload's whole folder is gone (file, metadata, stage); the page keeps the outcome.
    expect(fs.existsSync(stored)).toBe(false);
    expect((await page(token)).upload!.job).toMatchObject({ state: "done", kind: "confirm" });

    // The same file again: the preview says so, before any Confirm.
    const again = await upload("labels-long", "labels-long.csv", fs.readFileSync(path.join(FX, "labels-long.csv")));
    await run(
      action,
      args(post({ intent: "preview", token: again, "map.unit": "unit", "map.annotator": "annotator", "map.label": "label" }), { slug }),
    );
    const same = await settle(again);
    expect(same.summary).toMatchObject({ unchanged: true, errorCount: 0 });
    // …and a confirm of it is refused (nothing to confirm is not offered), changing nothing.
    expect(count("annotations")).toBe(13);
  });

  it("a 0-byte upload gets its own message and leaves nothing behind", async () => {
    const before = fs.existsSync(uploadRoot()) ? fs.readdirSync(uploadRoot()).length : 0;
    const res = await run(action, args(uploadRequest("labels-long", { name: "empty.csv", bytes: Buffer.alloc(0) }), { slug }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/empty|Choose a file/);
    expect(fs.existsSync(uploadRoot()) ? fs.readdirSync(uploadRoot()).length : 0).toBe(before);
  });

  it("a missing column is reported in the page's words (no command-line flags)", async () => {
    const csv = Buffer.from("unit_name,who,label\nu1,A,Yes\n");
    const token = await upload("labels-long", "odd.csv", csv);
    expect((await page(token)).upload!.detected).toEqual({ label: "label" });
    await run(action, args(post({ intent: "preview", token }), { slug }));
    const job = await settle(token);
    expect(job.summary!.errorCount).toBe(1);
    expect(job.problems![0]).toContain('missing column "unit"');
    expect(job.problems![0]).toContain("choose its column");
    expect(job.problems!.join(" ")).not.toMatch(/--map|--dataset/);
    // Mapped with the selects, the same file imports.
    await run(
      action,
      args(post({ intent: "preview", token, "map.unit": "unit_name", "map.annotator": "who", "map.label": "label" }), { slug }),
    );
    expect((await settle(token)).summary).toMatchObject({ errorCount: 0, annotations: 1 });
  });

  it("a conflicting responses file is refused with the rows named; the database keeps the old text", async () => {
    const items = await upload("items-jsonl", "items.jsonl", fs.readFileSync(path.join(FX, "items.jsonl")));
    await run(action, args(post({ intent: "preview", token: items }), { slug }));
    expect((await settle(items)).summary!.errorCount).toBe(0);
    await run(action, args(post({ intent: "confirm", token: items }), { slug }));
    expect((await settle(items)).summary).toMatchObject({ committed: true, items: 3 });
    const responses = fs.readFileSync(path.join(FX, "responses.csv"));
    const r1 = await upload("responses", "responses.csv", responses);
    await run(action, args(post({ intent: "preview", token: r1, dataset: "items" }), { slug }));
    await settle(r1);
    await run(action, args(post({ intent: "confirm", token: r1 }), { slug }));
    expect((await settle(r1)).summary).toMatchObject({ committed: true, responses: 3 });
    const texts = getDb().$client.prepare("select text from responses order by id").all();

    const changed = Buffer.from(responses.toString("utf8").replace('"Saturn, probably."', '"Jupiter, surely."'));
    const r2 = await upload("responses", "responses-v2.csv", changed);
    await run(action, args(post({ intent: "preview", token: r2, dataset: "items" }), { slug }));
    const refused = await settle(r2);
    expect(refused.summary).toMatchObject({ errorCount: 1, conflictCount: 1, committed: false });
    expect(refused.problems).toEqual([
      'row 3, field "text": conflicts with the response already imported for item "q1", model "model-b", turn 1: its text differs. Imported responses are never replaced; give the new one another model name (or response key)',
    ]);
    // A confirm is not possible after a refused preview.
    const confirm = await run(action, args(post({ intent: "confirm", token: r2 }), { slug }));
    expect(confirm.status).toBe(400);
    expect(getDb().$client.prepare("select text from responses order by id").all()).toEqual(texts);
  });

  it("abandoned uploads are deleted after the time-to-live; the page then says to upload again", async () => {
    const token = await upload("labels-long", "labels-long.csv", fs.readFileSync(path.join(FX, "labels-long.csv")));
    expect(fs.existsSync(path.join(uploadRoot(), token))).toBe(true);
    expect(sweepUploads(Date.now())).toBe(0);
    expect(fs.existsSync(path.join(uploadRoot(), token))).toBe(true);
    expect(sweepUploads(Date.now() + uploadTtlMs() + 1000)).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(path.join(uploadRoot(), token))).toBe(false);
    expect(await page(token)).toMatchObject({ upload: null, uploadGone: true });
    const res = await run(action, args(post({ intent: "confirm", token }), { slug }));
    expect(res.status).toBe(400);
  });
});
