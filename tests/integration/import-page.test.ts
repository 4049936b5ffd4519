/** The import page: multipart upload → dry-run preview → confirm; a 0-byte upload is refused; export downloads. */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, ORIGIN, run, signInCookie, get } from "../support/http";
import { getDb } from "../../db/client";
import { action } from "../../app/routes/p.$slug.import";
import { loader as exportLoader } from "../../app/routes/p.$slug.export";

useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/import");
let cookie = "";
let slug = "";

beforeAll(async () => {
  const p = makeProject("upload-page");
  slug = p.slug;
  const u = await makeUser();
  addMember(p.id, u.id, "researcher");
  cookie = await signInCookie(u.email, u.password);
});

function upload(fields: Record<string, string>, file?: { name: string; bytes: Buffer }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append("file", new Blob([new Uint8Array(file.bytes)]), file.name);
  return new Request(`${ORIGIN}/p/${slug}/import`, { method: "POST", headers: { Cookie: cookie, Origin: ORIGIN }, body: form });
}
const post = (fields: Record<string, string>) =>
  new Request(`${ORIGIN}/p/${slug}/import`, {
    method: "POST",
    headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

describe("import page", () => {
  it("previews without writing, then confirms with the same options", async () => {
    const items = () => (getDb().$client.prepare("select count(*) as n from items").get() as { n: number }).n;
    const preview = await (await run(action, args(upload({ intent: "preview", preset: "labels-long", dataset: "", level: "" }, { name: "labels-long.csv", bytes: fs.readFileSync(path.join(FX, "labels-long.csv")) }), { slug }))).json();
    expect(preview).toMatchObject({ ok: true, intent: "preview", summary: { annotations: 13, errorCount: 0, committed: false } });
    expect(items()).toBe(0);
    const done = await (await run(action, args(post({ intent: "confirm", token: preview.token }), { slug }))).json();
    expect(done).toMatchObject({ ok: true, intent: "confirm", summary: { annotations: 13, committed: true, dataset: { name: "labels-long" } } });
    expect(items()).toBe(5);
    const csv = await (await run(exportLoader, args(get(`/p/${slug}/export?what=annotations&format=csv`, cookie), { slug }))).text();
    expect(csv.split("\n").filter(Boolean)).toHaveLength(14);
  });

  it("a 0-byte upload gets its own message", async () => {
    const res = await (await run(action, args(upload({ intent: "preview", preset: "labels-long" }, { name: "empty.csv", bytes: Buffer.alloc(0) }), { slug }))).json();
    expect(res.ok === false ? res.message : res.problems[0]).toMatch(/empty|Choose a file/);
  });
});
