/**
 * Issue 18, major 4, for rows added to what already exists: responses
 * imported onto a dataset's existing items and verdicts of an existing judge
 * on existing responses. There is no new dataset or judge to hold them back,
 * so they are copied in chunks marked with their import (pending_import_id)
 * and every reader leaves marked rows out until the import's last, short
 * transaction. After every chunk, with the lock free, the app's own readers —
 * the project's dataset counts, the dataset browser and an item's page, the
 * candidates a new task is drawn from, the judge report's verdicts, the runs
 * export — answer exactly as before; afterwards they show the whole file.
 * A failure midway and an item deleted midway leave nothing visible and
 * delete every copied row.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { runImport } from "../../app/formats/import.server";
import { exportRows } from "../../app/formats/export.server";
import { browseItems, itemDetail } from "../../app/benchmark/browse.server";
import { datasetSummaries } from "../../app/projects/projects.server";
import { loadCandidates } from "../../app/annotation/tasks.server";
import { loadVerdicts } from "../../app/reports/load.server";
import { useTempDatabase } from "../support/db";

const { file, db } = useTempDatabase();
const dir = path.dirname(file);
const SLUG = "marked";
const ITEMS = 100;
/** Models of the big responses file: ITEMS × MODELS responses added to the existing items. */
const MODELS = 150;

function write(name: string, text: string): string {
  const out = path.join(dir, name);
  fs.writeFileSync(out, text);
  return out;
}

const raw = () => new Database(file, { readonly: true });
const ids = () => {
  const r = raw();
  const project = (r.prepare("select id from projects where slug = ?").get(SLUG) as { id: number }).id;
  const dataset = (r.prepare("select id from datasets where project_id = ?").get(project) as { id: number }).id;
  const task = (r.prepare("select id from tasks where project_id = ?").get(project) as { id: number }).id;
  const item = (r.prepare("select id from items where dataset_id = ? and source_id = 'q1'").get(dataset) as { id: number }).id;
  r.close();
  return { project, dataset, task, item };
};

/** What the app's readers answer about the project, through the app's own functions. */
async function readers() {
  const { project, dataset, task, item } = ids();
  const detail = await itemDetail(dataset, item, db());
  return {
    summaries: await datasetSummaries(project, db()),
    browse: await browseItems(dataset, { q: "", domain: "", page: 1 }, db()),
    item: { responses: detail?.responses, verdicts: detail?.verdicts },
    candidates: await loadCandidates(dataset, db()),
    judgeVerdicts: (await loadVerdicts(project, task)).length,
    runsExport: (await exportRows(db(), project, "runs")).length,
  };
}

function rawCounts() {
  const r = raw();
  const n = (t: string) => (r.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n;
  const out = { responses: n("responses"), verdicts: n("verdicts"), pending: n("pending_imports") };
  r.close();
  return out;
}

const verdictVersion = () => {
  const r = raw();
  const v = (r.prepare("select version from project_verdict_versions where project_id = ?").get(ids().project) as { version: number })
    .version;
  r.close();
  return v;
};

function bigResponses(name: string, salt: string, extra = false): string {
  const lines = ["item,model,turn,text"];
  for (let m = 1; m <= MODELS; m++) for (let i = 1; i <= ITEMS; i++) lines.push(`q${i},${salt}-m${m},1,${salt} answer ${m} to ${i}`);
  // Last in the file, so their chunks come after the first: answers to the item nobody labelled.
  if (extra) for (let m = 1; m <= MODELS; m++) lines.push(`extra,${salt}-m${m},1,${salt} answer ${m} to the extra item`);
  return write(name, lines.join("\n") + "\n");
}

beforeAll(async () => {
  db(); // migrations
  const items = [
    ...Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ id: `q${i + 1}`, prompt: `Question ${i + 1}?` })),
    JSON.stringify({ id: "extra", prompt: "An item nobody labels?" }),
  ].join("\n");
  const responses = ["item,model,turn,text", ...Array.from({ length: ITEMS }, (_, i) => `q${i + 1},model-a,1,Answer ${i + 1}`)];
  const labels = ["unit,model,annotator,label"];
  for (let i = 1; i <= ITEMS; i++) for (const a of ["rae", "sol"]) labels.push(`q${i},model-a,${a},${i % 3 ? "Yes" : "No"}`);
  for (const [preset, f] of [
    ["items-jsonl", write("items.jsonl", items + "\n")],
    ["responses", write("responses.csv", responses.join("\n") + "\n")],
    ["labels-long", write("labels.csv", labels.join("\n") + "\n")],
    ["verdicts", write("first-verdicts.csv", "judge,item,response,value\nbot,q1,model-a#1,Yes\n")],
  ] as const) {
    const s = await runImport({ databaseFile: file, projectSlug: SLUG, preset, file: f });
    expect(s.errors).toEqual([]);
  }
}, 120_000);

describe("rows added to existing items and judges are copied in chunks, hidden until the import commits", () => {
  it("responses onto existing items: no reader sees one before the last transaction, then all at once", async () => {
    const before = await readers();
    const rawBefore = rawCounts();
    const seen: { readers: Awaited<ReturnType<typeof readers>>; raw: ReturnType<typeof rawCounts> }[] = [];
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "responses",
      file: bigResponses("big-responses.csv", "big"),
      chunkTargetMs: 2,
      onCommitChunk: async () => {
        seen.push({ readers: await readers(), raw: rawCounts() });
      },
    });
    expect(s.errors).toEqual([]);
    expect(s.committed).toBe(true);
    expect(s.responses).toBe(ITEMS * MODELS);
    // Written in many chunks (not one transaction), rows piling up in the table, none of them visible.
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.at(-1)!.raw.responses).toBeGreaterThan(rawBefore.responses + (ITEMS * MODELS) / 2);
    for (const o of seen) {
      expect(o.raw.pending).toBe(1);
      expect(o.readers).toEqual(before);
    }
    // The lock was never held for long: the last transaction only makes the rows visible.
    expect(s.lockMs).toBeLessThan(60);
    const after = await readers();
    expect(after.summaries[0]!.responses).toBe(before.summaries[0]!.responses + ITEMS * MODELS);
    const counts = after.browse.rows.filter((row) => row.sourceId !== "extra").map((row) => row.responseCount);
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.every((n) => n === MODELS + 1)).toBe(true);
    expect(after.item.responses).toHaveLength(MODELS + 1);
    expect(after.candidates.find((c) => c.responses.length > 0)!.responses).toHaveLength(MODELS + 1);
    expect(after.runsExport).toBe(before.runsExport + ITEMS * MODELS);
    expect(rawCounts().pending).toBe(0);
  }, 180_000);

  it("verdicts of an existing judge on existing responses: hidden from the judge report until the commit, which refreshes it", async () => {
    const before = await readers();
    const lines = ["judge,item,response,value"];
    for (let i = 2; i <= ITEMS; i++) lines.push(`bot,q${i},model-a#1,${i % 2 ? "Yes" : "No"}`);
    for (let m = 1; m <= MODELS; m++) for (let i = 1; i <= ITEMS; i++) lines.push(`bot,q${i},big-m${m}#1,Yes`);
    const versions: number[] = [];
    const seen: Awaited<ReturnType<typeof readers>>[] = [];
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "verdicts",
      file: write("big-verdicts.csv", lines.join("\n") + "\n"),
      chunkTargetMs: 2,
      onCommitChunk: async () => {
        seen.push(await readers());
        versions.push(verdictVersion());
      },
    });
    expect(s.errors).toEqual([]);
    expect(s.verdicts).toBe(lines.length - 1);
    expect(seen.length).toBeGreaterThan(5);
    for (const o of seen) expect(o).toEqual(before);
    // The judge report of the labelled task: the one verdict before, all of them on the task's responses after.
    const after = await readers();
    expect(before.judgeVerdicts).toBe(1);
    // Every response of the task's items counts: model-a's (one verdict each now) and the big file's.
    expect(after.judgeVerdicts).toBe(ITEMS + ITEMS * MODELS);
    expect(after.summaries[0]!.verdicts).toBe(before.summaries[0]!.verdicts + lines.length - 1);
    // A report memoised while the verdicts were hidden is not served afterwards: the version moved at the commit.
    expect(verdictVersion()).toBeGreaterThan(versions.at(-1)!);
  }, 180_000);

  it("a failure midway leaves nothing visible and deletes every marked row", async () => {
    const before = await readers();
    const rawBefore = rawCounts();
    let chunks = 0;
    let during: ReturnType<typeof rawCounts> | undefined;
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "responses",
      file: bigResponses("fails.csv", "fails"),
      chunkTargetMs: 2,
      onCommitChunk: () => {
        if (++chunks === 4) {
          during = rawCounts();
          throw new Error("disk full (simulated)");
        }
      },
    });
    expect(s.committed).toBe(false);
    expect(during!.responses).toBeGreaterThan(rawBefore.responses);
    expect(rawCounts()).toEqual(rawBefore);
    expect(await readers()).toEqual(before);
  }, 180_000);

  it("an item deleted while its responses are being copied fails the import cleanly and deletes what it copied", async () => {
    const rawBefore = rawCounts();
    const w = new Database(file);
    w.pragma("busy_timeout = 5000");
    w.pragma("foreign_keys = ON");
    let deleted = false;
    const s = await runImport({
      databaseFile: file,
      projectSlug: SLUG,
      preset: "responses",
      file: bigResponses("race.csv", "race", true),
      chunkTargetMs: 2,
      onCommitChunk: () => {
        if (deleted) return;
        deleted = true;
        // Someone deletes the item nobody labelled while the import's answers to it are still to come.
        expect(w.prepare(`delete from items where source_id = 'extra'`).run().changes).toBe(1);
      },
    });
    expect(s.committed).toBe(false);
    expect(s.errors.map((e) => e.message).join("\n")).toMatch(
      /FOREIGN KEY constraint failed \(a row that responses refer to was deleted\)/,
    );
    // Nothing of the import is left.
    expect(rawCounts()).toEqual(rawBefore);
    w.close();
  }, 180_000);
});
