/**
 * The Import page on a team's own judge-validation files: labels-wide with the annotator
 * columns ticked (the other columns ignored and said so), then the judges' verdicts through
 * unit-verdicts, with the unparsed ones kept. Real route actions and loaders, real jobs.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, ORIGIN, run, signInCookie, get } from "../support/http";
import { getDb } from "../../db/client";
import { action, loader } from "../../app/routes/p.$slug.import";

useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/judge");
let cookie = "";
let slug = "";

beforeAll(async () => {
  const p = makeProject("judge-upload");
  slug = p.slug;
  const u = await makeUser();
  await addMember(p.id, u.id, "researcher");
  cookie = await signInCookie(u.email, u.password);
});

async function upload(preset: string, name: string): Promise<string> {
  const form = new FormData();
  form.append("intent", "upload");
  form.append("preset", preset);
  form.append("file", new Blob([new Uint8Array(fs.readFileSync(path.join(FX, name)))]), name);
  const res = await run(
    action,
    args(new Request(`${ORIGIN}/p/${slug}/import`, { method: "POST", headers: { Cookie: cookie, Origin: ORIGIN }, body: form }), { slug }),
  );
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get("Location")!, ORIGIN).searchParams.get("upload")!;
}
async function post(fields: [string, string][]) {
  return run(
    action,
    args(
      new Request(`${ORIGIN}/p/${slug}/import`, {
        method: "POST",
        headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields),
      }),
      { slug },
    ),
  );
}
type Job = {
  state: string;
  kind: string;
  warnings: string[];
  summary: { errorCount: number; annotations: number; verdicts: number; level: { level: string; source: string; reason: string } | null };
};
async function settle(token: string): Promise<Job> {
  for (let i = 0; i < 600; i++) {
    const p = await (await run(loader, args(get(`/p/${slug}/import?upload=${token}`, cookie), { slug }))).json();
    const s = p.upload?.job?.state;
    if (s === "done" || s === "failed") return p.upload.job;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the import job did not finish in 60 s");
}

describe("import page: labels-wide annotator columns, unit-verdicts", () => {
  it("the ticked columns become annotators; prompt and notes are ignored and listed; verdicts keep the unparsed", async () => {
    const labels = await upload("labels-wide", "labels-wide.csv");
    const ticked: [string, string][] = ["ann_1", "ann_2", "ann_3"].map((a) => ["annotators", a]);
    expect((await post([["intent", "preview"], ["token", labels], ["map.unit", "unit"], ...ticked])).status).toBe(302);
    const preview = await settle(labels);
    expect(preview.summary).toMatchObject({ errorCount: 0, annotations: 40 });
    // The level the preview used, and why.
    expect(preview.summary.level).toEqual({
      level: "nominal",
      source: "inferred",
      reason: "inferred: not every label is a number (3 distinct labels), so the labels are categories without an order",
    });
    // In the page's words (the command line says --annotators).
    expect(preview.warnings).toEqual(['row 1: columns ignored (not among "Annotator columns"): prompt, notes']);
    // A column that is not in the file is refused by name.
    const bad = await post([
      ["intent", "preview"],
      ["token", labels],
      ["annotators", "ann_9"],
    ]);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: "annotators", error: '"ann_9" is not a column of labels-wide.csv.' });
    // None ticked: refused beside the field, never every column.
    const none = await post([
      ["intent", "preview"],
      ["token", labels],
      ["map.unit", "unit"],
    ]);
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({
      field: "annotators",
      error: "Tick the columns that hold annotators' labels (at least one); the other columns are ignored.",
    });
    // The scale field: a bad scale is refused beside it; a label outside the scale is a problem with its row and column.
    const oneCategory = await post([["intent", "preview"], ["token", labels], ["map.unit", "unit"], ...ticked, ["categories", "A"]]);
    expect(oneCategory.status).toBe(400);
    expect(await oneCategory.json()).toEqual({ field: "categories", error: "Scale: the scale needs at least two categories." });
    expect((await post([["intent", "preview"], ["token", labels], ["map.unit", "unit"], ...ticked, ["categories", "A, B"]])).status).toBe(
      302,
    );
    const narrow = (await settle(labels)) as Job & { problems: string[] };
    expect(narrow.summary.errorCount).toBeGreaterThan(0);
    expect(narrow.problems[0]).toBe('row 4, field "ann_1": "tie" is not a category of the declared scale (A, B)');
    expect(
      (await post([["intent", "preview"], ["token", labels], ["map.unit", "unit"], ...ticked, ["categories", "A, B, tie"]])).status,
    ).toBe(302);
    await settle(labels);
    expect(
      (
        await post([
          ["intent", "confirm"],
          ["token", labels],
        ])
      ).status,
    ).toBe(302);
    expect((await settle(labels)).summary).toMatchObject({ errorCount: 0, annotations: 40 });
    const config = getDb().$client.prepare("select config from tasks where kind = 'imported-labels'").get() as { config: string };
    expect(JSON.parse(config.config).categories).toEqual(["A", "B", "tie"]);

    const verdicts = await upload("unit-verdicts", "verdicts.csv");
    expect(
      (
        await post([
          ["intent", "preview"],
          ["token", verdicts],
        ])
      ).status,
    ).toBe(302);
    expect((await settle(verdicts)).summary).toMatchObject({ errorCount: 0, verdicts: 26 });
    expect(
      (
        await post([
          ["intent", "confirm"],
          ["token", verdicts],
        ])
      ).status,
    ).toBe(302);
    expect((await settle(verdicts)).summary).toMatchObject({ errorCount: 0, verdicts: 26 });
    const statuses = getDb()
      .$client.prepare("select parse_status, count(*) as n from verdicts group by parse_status order by parse_status")
      .all();
    expect(statuses).toEqual([
      { parse_status: "ok", n: 23 },
      { parse_status: "unparsed", n: 3 },
    ]);
  });
});

describe("import page: a JSON array upload", () => {
  it("lists the keys of its first record as the columns to map (read without reading the rest)", async () => {
    const token = await upload("labels-long", "labels-numeric.json");
    const page = await (await run(loader, args(get(`/p/${slug}/import?upload=${token}`, cookie), { slug }))).json();
    const first = JSON.parse(fs.readFileSync(path.join(FX, "labels-numeric.json"), "utf8"))[0];
    expect(page.upload.columns).toEqual(Object.keys(first));
    expect(page.upload.detected).toMatchObject({ unit: "unit", annotator: "annotator", label: "label" });
  });
});
