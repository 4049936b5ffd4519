/**
 * A JSON array of records streams through the importer one record at a time: under a
 * heap too small to hold the parsed document (32 MB for a 15 MB file — shown by reading the
 * same file whole under the same cap, which runs out of memory), `npm run import` still
 * imports every record.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { runImport } from "../../app/formats/import.server";
import { formatProblem } from "../../app/formats/problems";

const { file: dbFile, db } = useTempDatabase();
const ROOT = path.resolve(__dirname, "../..");
const dir = path.dirname(dbFile);
const HEAP_MB = 32;
const ITEMS = 10_000;

function writeBigArray(file: string): number {
  const out = fs.openSync(file, "w");
  fs.writeSync(out, "[\n");
  for (let i = 0; i < ITEMS; i++) {
    // Quotes, brackets and commas inside the strings, as real prompts have.
    const rec = {
      id: `it-${i}`,
      prompt: `Question ${i}: ${'say "why", [briefly], {kindly} '.repeat(48)}`,
      checklist: [`Does it answer question ${i}?`],
    };
    fs.writeSync(out, (i ? ",\n" : "") + JSON.stringify(rec));
  }
  fs.writeSync(out, "\n]\n");
  fs.closeSync(out);
  return fs.statSync(file).size;
}

const capped = (args: string[]) =>
  spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, "--import", "tsx", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: dbFile },
    encoding: "utf8",
    timeout: 180_000,
  });

describe("a JSON array streams under a capped heap", () => {
  it(`imports all ${ITEMS} records of a 15 MB array with a ${HEAP_MB} MB heap, which cannot hold the document whole`, () => {
    const file = path.join(dir, "items.json");
    expect(writeBigArray(file)).toBeGreaterThan(14 * 1024 * 1024);

    // Control: the same file read whole (the old way) under the same cap runs out of memory.
    const whole = path.join(dir, "whole.mts");
    fs.writeFileSync(
      whole,
      `import { readJson } from ${JSON.stringify(path.join(ROOT, "app/formats/source.server.ts"))};\nconsole.log((await readJson(process.argv[2])).length);\n`,
    );
    const control = capped([whole, file]);
    expect(control.status).not.toBe(0);
    expect(control.stderr).toMatch(/heap out of memory/);

    const r = capped(["scripts/import.ts", "--preset", "items-jsonl", "--project", "stream", "--format", "json", file]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ items: ITEMS, checklistItems: ITEMS, errorCount: 0, committed: true });
    expect(db().$client.prepare("select count(*) as n, count(distinct source_id) as ids from items").get()).toEqual({
      n: ITEMS,
      ids: ITEMS,
    });
    const last = db()
      .$client.prepare("select query from items where source_id = ?")
      .get(`it-${ITEMS - 1}`) as { query: string };
    expect(last.query).toBe(`Question ${ITEMS - 1}: ${'say "why", [briefly], {kindly} '.repeat(48)}`);
  }, 240_000);
});

describe("a broken record is named by its number, never quoted", () => {
  const SECRET = "sk-proj-4f9c2e7d1b8a6053";
  it.each([
    [
      "labels.json",
      `[{"unit": "u1", "annotator": "a", "label": "x"},\n {"unit": "u2", "annotator": "a", "label": "${SECRET}" oops},\n {"unit": "u3", "annotator": "a", "label": "y"}]`,
      2,
    ],
    ["labels.jsonl", `{"unit": "u1", "annotator": "a", "label": "x"}\n{"unit": "u2", "annotator": "a", "label": "${SECRET}" oops}\n`, 2],
  ])("%s", async (name, text, row) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    const s = await runImport({ databaseFile: dbFile, projectSlug: "hostile", preset: "labels-long", file });
    expect(s.committed).toBe(false);
    expect(s.errors.map(formatProblem)).toEqual([
      `row ${row}: not valid JSON (at character ${text.split("\n")[row - 1].indexOf("oops") + 1 - (name.endsWith(".json") ? 1 : 0)} of this ${name.endsWith(".json") ? "record" : "line"})`,
    ]);
    expect(JSON.stringify(s)).not.toContain(SECRET);
  });
});
