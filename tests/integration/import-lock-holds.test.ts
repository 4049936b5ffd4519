/**
 * Issue 18, major 4: every write-lock hold of an import is bounded by rows
 * and by time, not only on average. A chunk ends after its time target or
 * MAX_CHUNK_ROWS rows, whichever comes first, one short statement at a time;
 * responses go in by item (their index pages shared within a chunk), and the
 * responses of one item keep the file's order. Counted in rows (what the
 * clock of a busy machine does not change), through the real import and the
 * real responses preset.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { runImport } from "../../app/formats/import.server";
import { MAX_CHUNK_ROWS } from "../../app/formats/stage.server";
import { useTempDatabase } from "../support/db";

const { file, db } = useTempDatabase();
const dir = path.dirname(file);
const SLUG = "holds";
const ITEMS = 200;

function write(name: string, text: string): string {
  const out = path.join(dir, name);
  fs.writeFileSync(out, text);
  return out;
}

/** One model's answers to every item, then the next model's (the order that spreads a chunk over the most index pages). */
function modelMajor(name: string, models: number): string {
  const lines = ["item,model,turn,text"];
  for (let m = 1; m <= models; m++) for (let i = 1; i <= ITEMS; i++) lines.push(`q${i},${name}-m${m},1,${name} answer ${m} to ${i}`);
  return write(`${name}.csv`, lines.join("\n") + "\n");
}

beforeAll(async () => {
  db();
  const items = Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ id: `q${i + 1}`, prompt: `Question ${i + 1}?` })).join("\n");
  const s = await runImport({ databaseFile: file, projectSlug: SLUG, preset: "items-jsonl", file: write("items.jsonl", items + "\n") });
  expect(s.errors).toEqual([]);
}, 120_000);

describe("an import's write-lock holds", () => {
  it("end after the time target even when that is shorter than one statement: one short statement per chunk", async () => {
    const models = 20;
    const rows: number[] = [];
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "responses",
      file: modelMajor("tiny", models),
      // Far below what one statement takes: every chunk is cut after its first statement (64 staged IDs, then fewer).
      chunkTargetMs: 0.001,
      onCommitChunk: (e) => {
        rows.push(e.rows);
      },
    });
    expect(s.errors).toEqual([]);
    expect(s.committed).toBe(true);
    expect(rows.reduce((a, b) => a + b, 0)).toBe(ITEMS * models);
    expect(Math.max(...rows)).toBeLessThanOrEqual(64);
    expect(rows.length).toBeGreaterThanOrEqual((ITEMS * models) / 64);
    // The reservation, every chunk and the final transaction.
    expect(s.lockHolds).toBe(rows.length + 2);
  }, 180_000);

  it("never copy more than MAX_CHUNK_ROWS rows, however long the time target", async () => {
    const models = 30;
    const rows: number[] = [];
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "responses",
      file: modelMajor("wide", models),
      chunkTargetMs: 60_000,
      onCommitChunk: (e) => {
        rows.push(e.rows);
      },
    });
    expect(s.errors).toEqual([]);
    expect(rows.reduce((a, b) => a + b, 0)).toBe(ITEMS * models);
    expect(Math.max(...rows)).toBeLessThanOrEqual(MAX_CHUNK_ROWS);
    expect(rows.length).toBeGreaterThanOrEqual(Math.ceil((ITEMS * models) / MAX_CHUNK_ROWS));
  }, 180_000);

  it("copy responses by item: one item's get consecutive IDs, in the file's order", () => {
    const r = new Database(file, { readonly: true });
    const q = r
      .prepare(
        `select r.id, r.model from responses r join items i on i.id = r.item_id where i.source_id in ('q1', 'q7') and r.model like 'wide-%' order by i.source_id, r.id`,
      )
      .all() as { id: number; model: string }[];
    r.close();
    for (const source of [q.slice(0, 30), q.slice(30)]) {
      expect(source.map((x) => x.model)).toEqual(Array.from({ length: 30 }, (_, m) => `wide-m${m + 1}`));
      expect(source.at(-1)!.id - source[0].id).toBe(29);
    }
  });
});
