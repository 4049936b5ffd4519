/**
 * items-csv's fast path (a cheap row check instead of the zod schema, rows
 * grouped by item) must be indistinguishable from the schema path: the same
 * rows in the database, the same content hash (re-import stability across
 * versions of Concord), and the same problems, word for word. Each file is
 * imported twice, once with the fast path and once without, and compared.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { runImport, type ImportSummary } from "../../../app/formats/import.server";
import { tuning } from "../../../app/formats/presets/index.server";
import { formatProblem } from "../../../app/formats/problems";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-fast-path-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function importBoth(csv: string, name = "bench") {
  const file = path.join(dir, `${name}.csv`);
  fs.writeFileSync(file, csv);
  const out: { summary: ImportSummary; problems: string[]; rows: unknown; hash: string | null; db: string }[] = [];
  for (const fast of [true, false]) {
    const db = path.join(dir, `t${n++}.db`);
    tuning.fastPaths = fast;
    try {
      const summary = await runImport({ databaseFile: db, projectSlug: "fast", preset: "items-csv", file });
      out.push({ summary, problems: [...summary.errors, ...summary.warnings].map(formatProblem), ...dump(db), db });
    } finally {
      tuning.fastPaths = true;
    }
  }
  const [fast, slow] = out;
  expect(fast.problems).toEqual(slow.problems);
  expect(fast.rows).toEqual(slow.rows);
  expect(fast.hash).toEqual(slow.hash);
  // The write lock's holds are timings, not counts (their number follows the chunk sizes, which follow timings too).
  const { errors: _e, warnings: _w, lockMs: _l, lockTotalMs: _t, lockHolds: _h, lockLongGaps: _g, ...fastCounts } = fast.summary;
  const { errors: _e2, warnings: _w2, lockMs: _l2, lockTotalMs: _t2, lockHolds: _h2, lockLongGaps: _g2, ...slowCounts } = slow.summary;
  expect(fastCounts).toEqual(slowCounts);
  return fast;
}

function dump(file: string) {
  const c = new Database(file, { readonly: true });
  try {
    const items = c
      .prepare("select id, source_id, query, passage, domain, subject, task_type, language, metadata from items order by id")
      .all() as { id: number }[];
    const rows = items.map(({ id, ...it }) => ({
      ...it,
      references: c.prepare('select text, provenance from "references" where item_id = ? order by id').all(id),
      checklist: c.prepare("select text, weight, position from checklist_items where item_id = ? order by position").all(id),
    }));
    const hash = (c.prepare("select content_hash as h from datasets").get() as { h: string } | undefined)?.h ?? null;
    return { rows, hash };
  } finally {
    c.close();
  }
}

const HEADER = "item_id,prompt,reference,domain,checklist_item,weight,subject,language\n";

describe("items-csv fast path = schema path", () => {
  it("valid rows: blanks, spaces, BOM, CRLF, quoted newlines, weights with spaces, non-contiguous items", async () => {
    const csv =
      "\uFEFF" +
      HEADER.replace("\n", "\r\n") +
      '  a1 ,"Line one\r\nline two",Ref A,Dom,First?, 0.25 ,Sub,en\r\n' +
      'a1,"Line one\r\nline two",Ref A,Dom,Second?,.75,Sub,en\r\n' +
      "b1,Prompt B,,   ,Only?,,\u00a0,\r\n" +
      "c1,Prompt C,Ref C,Dom C,,,,\r\n" +
      'a1,"Line one\r\nline two",Ref A,Dom,Third (rows not contiguous)?,1e-1,Sub,en\r\n' +
      "b1,Prompt B,,,Another?,,,\r\n";
    const r = await importBoth(csv);
    expect(r.summary).toMatchObject({ committed: true, items: 3, checklistItems: 5, references: 2, errorCount: 0 });
    const a1 = (r.rows as { source_id: string; checklist: { text: string; position: number }[] }[]).find((x) => x.source_id === "a1")!;
    expect(a1.checklist.map((c) => [c.text, c.position])).toEqual([
      ["First?", 0],
      ["Second?", 1],
      ["Third (rows not contiguous)?", 2],
    ]);
    expect(r.problems).toEqual(['row 2, field "weight": checklist weights of item "a1" sum to 1.1, not 1']);
  });

  it("bad rows get the schema's messages, with row, field and reason", async () => {
    const csv =
      HEADER +
      "x1,Prompt,,,Q1?,heavy,,\n" + // row 2: not a number
      "x1,Prompt,,,Q2?,1e999,,\n" + // row 3: not a finite number
      "  ,Prompt,,,Q3?,,,\n" + // row 4: blank ID
      "x2,,,,Q4?,,,\n" + // row 5: blank prompt
      "x2,Prompt 2,,,,0.5,,\n" + // row 6: weight without checklist item
      "x3,Prompt 3\n" + // row 7: too few fields
      "x1,Prompt,,,Q5?,,,\n" +
      "x1,Prompt,,,Q5?,,,\n" + // row 9: duplicate checklist item
      "x1,Other prompt,,,Q6?,,,\n" + // row 10: different prompt
      "x4,Prompt 4,,,Q7?,,,\n" +
      "x1,Prompt,,,Q5?,,,\n" + // row 12: duplicate again, after the group closed (not contiguous)
      "x4,Prompt 4,,,Q7?,,,\n"; // row 13: duplicate after reopening
    const r = await importBoth(csv);
    expect(r.summary.committed).toBe(false);
    expect(r.problems).toEqual([
      'row 2, field "weight": expected a number, got "heavy"',
      'row 3, field "weight": 1e999 is not a finite number',
      'row 4, field "item_id": is empty',
      'row 5, field "prompt": is empty',
      'row 6, field "weight": a weight without a checklist item',
      "row 7: this row has 2 fields, the header has 8",
      'row 9, field "checklist": duplicate checklist item for "x1": "Q5?"',
      'row 10: item "x1" appears again with a different prompt, reference or domain than at row 8',
      'row 12, field "checklist": duplicate checklist item for "x1": "Q5?"',
      'row 13, field "checklist": duplicate checklist item for "x4": "Q7?"',
    ]);
  });

  it("a group that was written and closed is read back exactly when its ID returns", async () => {
    const csv =
      HEADER +
      "p1,Prompt 1,Ref 1,D,One?,,,\n" +
      "p2,Prompt 2,Ref 2,D,Two?,,,\n" +
      "p1,Prompt 1,Ref 1,D,One?,,,\n" + // row 4: duplicate of a written, closed group
      "p2,Prompt 2,Ref X,D,Three?,,,\n"; // row 5: a different reference
    const r = await importBoth(csv);
    expect(r.problems).toEqual([
      'row 4, field "checklist": duplicate checklist item for "p1": "One?"',
      'row 5: item "p2" appears again with a different prompt, reference or domain than at row 3',
    ]);
  });

  it("re-import of the same file changes nothing; the content hash is the schema path's", async () => {
    const csv = HEADER + "r1,Prompt,Ref,Dom,One?,0.5,,\nr1,Prompt,Ref,Dom,Two?,0.5,,\nr2,Prompt 2,,,Three?,,,\n";
    const r = await importBoth(csv, "again");
    const file = path.join(dir, "again.csv");
    const again = await runImport({ databaseFile: r.db, projectSlug: "fast", preset: "items-csv", file });
    expect(again).toMatchObject({ unchanged: true, errorCount: 0, dataset: { version: 1 } });
    fs.writeFileSync(file, csv.replace("Two?", "Two!"));
    const changed = await runImport({ databaseFile: r.db, projectSlug: "fast", preset: "items-csv", file });
    expect(changed).toMatchObject({ unchanged: false, committed: true, dataset: { version: 2 } });
  });
});
