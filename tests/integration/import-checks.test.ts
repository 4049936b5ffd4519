/**
 * Issue 36, item 7 (loose import checks): through the real presets and the
 * import's domain function (runImport, which `npm run import` calls), and once
 * through the command itself. Before: `"prompt": 123` and `"domain": 42` were
 * imported as the texts "123" and "42", a checklist weight of -1 was imported
 * silently, `1e999` was refused with "expected a number, got number", and a
 * short CSV row read "… but parsed 2 than the header has". Now each is a
 * problem naming the row, the field and the reason in plain words, and nothing
 * of the file is written.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runImport } from "../../app/formats/import.server";
import { formatProblem } from "../../app/formats/problems";
import { STAGED_TABLES } from "../../app/formats/stage.server";
import { getDb } from "../../db/client";
import { runScript } from "../support/cli";
import { tempDir, useTempDatabase } from "../support/db";

const { file: dbFile } = useTempDatabase();
const dir = tempDir("concord-import-checks-");

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}
const jsonl = (...records: unknown[]) => records.map((r) => JSON.stringify(r)).join("\n") + "\n";

const counts = () => {
  const c = getDb().$client;
  return Object.fromEntries(STAGED_TABLES.map((t) => [t, (c.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n]));
};

/** Imports for real (not a dry run) and returns every problem as the command and the page print it; nothing may be written. */
async function problems(preset: string, file: string, o: { annotators?: string[] } = {}): Promise<string[]> {
  const before = counts();
  const s = await runImport({ databaseFile: dbFile, projectSlug: "checks", preset, file, ...o });
  expect(s.committed).toBe(false);
  expect(counts()).toEqual(before);
  return s.errors.map(formatProblem);
}

describe("free-text fields take text, not numbers, yes/no or objects", () => {
  it("items-jsonl: a number prompt and a number domain are refused by row and field", async () => {
    const file = write(
      "typed.jsonl",
      jsonl(
        { id: "t1", prompt: "A real prompt", domain: "math" },
        { id: "t2", prompt: 123, domain: "math" },
        { id: "t3", prompt: "Another prompt", domain: 42 },
        { id: "t4", prompt: true },
        { id: "t5", prompt: { text: "nested" } },
        { id: "t6", prompt: "Fine", language: ["en"] },
      ),
    );
    expect(await problems("items-jsonl", file)).toEqual([
      'row 2, field "prompt": expected text, got the number 123',
      'row 3, field "domain": expected text, got the number 42',
      'row 4, field "prompt": expected text, got true',
      'row 5, field "prompt": expected text, got an object',
      'row 6, field "language": expected text, got a list',
    ]);
  });

  it("an ID may still be a number (JSON files often number their items), and imports as its text", async () => {
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "checks-ids",
      preset: "items-jsonl",
      file: write("ids.jsonl", jsonl({ id: 7, prompt: "Seven" }, { id: 8, prompt: "Eight" })),
    });
    expect(s).toMatchObject({ committed: true, items: 2, errorCount: 0 });
    const ids = getDb().$client.prepare("select source_id from items order by source_id").pluck().all();
    expect(ids).toEqual(["7", "8"]);
  });
});

describe("checklist weights must be positive, finite numbers", () => {
  it("items-csv: -1 and 0 are refused with the value; 1e999 is not a finite number", async () => {
    const file = write(
      "weights.csv",
      "item_id,prompt,checklist_item,weight\n" +
        "w1,Prompt one,First?,0.5\n" +
        "w1,Prompt one,Second?,-1\n" + // row 3
        "w2,Prompt two,Third?,0\n" + // row 4
        "w3,Prompt three,Fourth?,1e999\n" + // row 5
        "w4,Prompt four,Fifth?,heavy\n", // row 6
    );
    expect(await problems("items-csv", file)).toEqual([
      'row 3, field "weight": weight must be a positive number, got -1',
      'row 4, field "weight": weight must be a positive number, got 0',
      'row 5, field "weight": 1e999 is not a finite number',
      'row 6, field "weight": expected a number, got "heavy"',
    ]);
  });

  it("items-jsonl: a negative weight in a [text, weight] pair or a {text, weight} entry is named at its place", async () => {
    const file = write(
      "weights.jsonl",
      jsonl(
        {
          id: "j1",
          prompt: "P1",
          checklist: [
            ["Fine?", 0.5],
            ["Negative?", -1],
          ],
        },
        { id: "j2", prompt: "P2", checklist: [{ text: "Object form?", weight: -0.25 }] },
        { id: "j3", prompt: "P3", checklist: [["Text weight?", "0.5"]] },
        { id: "j4", prompt: "P4", checklist: [42] },
      ),
    );
    expect(await problems("items-jsonl", file)).toEqual([
      'row 1, field "checklist.1.1": weight must be a positive number, got -1',
      'row 2, field "checklist.0.weight": weight must be a positive number, got -0.25',
      'row 3, field "checklist.0.1": weight: expected a number, got "0.5"',
      'row 4, field "checklist.0": each checklist entry must be a text, a [text, weight] pair or {text, weight}',
    ]);
  });

  it("fb-bench: a negative weight in an error-correction checklist is refused", async () => {
    const file = write(
      "fb.json",
      JSON.stringify([
        {
          bench_type: "error correction",
          user_query: "Q",
          origin_first_response: "R1",
          feedback: "F",
          checklist: [
            ["Fixes the error?", 1.2],
            ["Keeps the tone?", -0.2],
          ],
        },
      ]),
    );
    expect(await problems("fb-bench", file)).toEqual(['row 1, field "checklist.1.1": weight must be a positive number, got -0.2']);
  });
});

describe("1e999 is not a finite number, wherever a number is read", () => {
  it("in JSON (where it is already Infinity), a weight, a turn and a label say so", async () => {
    // JSON.stringify cannot write 1e999; the file holds it as text, as another tool would write it.
    const items = write("inf-weight.jsonl", '{"id": "i1", "prompt": "P", "checklist": [["Huge?", 1e999]]}\n');
    expect(await problems("items-jsonl", items)).toEqual(['row 1, field "checklist.0.1": not a finite number (too large to store)']);
    const labels = write("inf-label.jsonl", '{"unit": "u1", "annotator": "ann-a", "label": 1e999}\n');
    expect(await problems("labels-long", labels)).toEqual(['row 1, field "label": not a finite number (too large to store)']);
  });

  it("in CSV, a turn, a label, a wide label and a verdict quote the text", async () => {
    const responses = write("inf-turn.csv", "item,model,turn,text\nq1,m,1e999,Some answer\n");
    expect(await problems("responses", responses)).toEqual(['row 2, field "turn": 1e999 is not a finite number']);
    const long = write("inf-long.csv", "unit,annotator,label\nu1,ann-a,1e999\nu1,ann-b,2\n");
    expect(await problems("labels-long", long)).toEqual(['row 2, field "label": 1e999 is not a finite number']);
    const wide = write("inf-wide.csv", "unit,ann_a,ann_b\nu1,1,-1e999\n");
    expect(await problems("labels-wide", wide, { annotators: ["ann_a", "ann_b"] })).toEqual([
      'row 2, field "ann_b": -1e999 is not a finite number',
    ]);
    const verdicts = write("inf-verdict.csv", "judge,item,response,value\nj,q1,m,1e999\n");
    expect(await problems("verdicts", verdicts)).toEqual(['row 2, field "value": 1e999 is not a finite number']);
  });
});

describe("a CSV row with a field too few or too many", () => {
  it("says how many fields the row has and how many the header has", async () => {
    const file = write("ragged.csv", "unit,annotator,label\nu1,ann-a,Yes\nu2,ann-a\nu3,ann-a,No,extra\n");
    expect(await problems("labels-long", file)).toEqual([
      "row 3: this row has 2 fields, the header has 3",
      "row 4: this row has 4 fields, the header has 3",
    ]);
  });
});

describe("npm run import", () => {
  it("prints the same words and exits 1, writing nothing", async () => {
    const file = write("cli.jsonl", jsonl({ id: "c1", prompt: 123 }, { id: "c2", prompt: "P", checklist: [["W?", -1]] }));
    const before = counts();
    const r = await runScript("import", ["--preset", "items-jsonl", "--project", "checks-cli", file], { DATABASE_URL: dbFile });
    expect(r.code).toBe(1);
    expect(r.err).toContain('error: row 1, field "prompt": expected text, got the number 123');
    expect(r.err).toContain('error: row 2, field "checklist.0.1": weight must be a positive number, got -1');
    expect(counts()).toEqual(before);
  });
});
