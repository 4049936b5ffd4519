/**
 * "JSON arrays are accepted wherever JSONL is" (issue 12): every preset that reads JSONL also
 * reads a JSON array of the same records — here the two with their own record schema, c3ebench
 * and fb-bench-judgments, on small original fixtures with the upstream field names
 * (tests/fixtures/import/*.json), and on the public files of ../shared/data turned into JSON
 * arrays in a temporary directory when they are present (never copied into the repository).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { getDb } from "../../db/client";
import { runImport, type ImportOptions } from "../../app/formats/import.server";
import { formatProblem } from "../../app/formats/problems";
import { PRESETS } from "../../app/formats/presets/index.server";

const { file: dbFile } = useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/import");
const SHARED = path.resolve(__dirname, "../../../shared/data");
const dir = tempDir();

const imp = (preset: string, file: string, o: Partial<ImportOptions> = {}) =>
  runImport({ databaseFile: dbFile, projectSlug: "arr", preset, file: path.isAbsolute(file) ? file : path.join(FX, file), ...o });
const c = () => getDb().$client;
/** JSONL → the same records as a JSON array, in a temporary file. */
function asArray(jsonl: string, name: string): string {
  const records = fs
    .readFileSync(jsonl, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const out = path.join(dir, name);
  fs.writeFileSync(out, JSON.stringify(records));
  return out;
}
const items = (slug: string) =>
  c()
    .prepare(
      "select i.source_id, i.query, i.passage, i.domain, i.task_type, i.language, i.metadata from items i join datasets d on d.id = i.dataset_id join projects p on p.id = d.project_id where p.slug = ? order by i.source_id",
    )
    .all(slug);
const verdicts = (slug: string, judge: string) =>
  c()
    .prepare(
      `select i.source_id as item, r.model, r.text, ci.text as checklist, v.value, v.score, v.raw_output as raw, v.parse_status as status
       from verdicts v join judges j on j.id = v.judge_id join projects p on p.id = j.project_id
       join responses r on r.id = v.response_id join items i on i.id = r.item_id
       left join checklist_items ci on ci.id = v.checklist_item_id
       where p.slug = ? and j.name = ? order by i.source_id, ci.position`,
    )
    .all(slug, judge);

describe("JSON arrays wherever JSONL", () => {
  it("every preset that reads JSONL reads JSON too", () => {
    const jsonl = Object.values(PRESETS).filter((p) => p.formats.includes("jsonl"));
    expect(jsonl.map((p) => p.name)).toContain("c3ebench");
    expect(jsonl.map((p) => p.name)).toContain("fb-bench-judgments");
    for (const p of jsonl) expect(p.formats, p.name).toContain("json");
  });

  it("c3ebench: a JSON array of RAVEL records (infer_id, task_type, sub_task, instruction, input, reference)", async () => {
    const s = await imp("c3ebench", "ravel-mini.json", { projectSlug: "c3-array" });
    expect(s).toMatchObject({ items: 2, references: 2, errorCount: 0, committed: true });
    const rows = items("c3-array") as { source_id: string; passage: string; task_type: string; language: string; domain: string }[];
    expect(rows.map((r) => [r.source_id, r.task_type, r.language, r.domain])).toEqual([
      ["condition_en_0", "condition", "en", "story"],
      ["edit_en_0", "edit", "en", "essay"],
    ]);
    // The edit task's content and critique reach the passage, as from JSONL.
    expect(rows[1].passage).toBe(
      "Trains are good. They are fast.\n\nCritique:\nSay why they matter to a commuter; join the two sentences.",
    );
    // The same records as JSONL and as a JSON array give the same items.
    const jsonl = path.join(dir, "ravel-mini-as-lines.jsonl");
    fs.writeFileSync(
      jsonl,
      (JSON.parse(fs.readFileSync(path.join(FX, "ravel-mini.json"), "utf8")) as unknown[]).map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    expect((await imp("c3ebench", jsonl, { projectSlug: "c3-lines" })).errorCount).toBe(0);
    expect(items("c3-lines")).toEqual(items("c3-array"));
  });

  it("fb-bench-judgments: a JSON array of FB-Bench judge records (judgement → {评判理由, 评判结果, weight})", async () => {
    expect((await imp("fb-bench", "fb-bench-mini.json", { projectSlug: "fb-array" })).errorCount).toBe(0);
    const j = await imp("fb-bench-judgments", "fb-judgment-mini.json", { projectSlug: "fb-array" });
    expect(j).toMatchObject({ responses: 2, verdicts: 6, errorCount: 0, committed: true });
    const v = verdicts("fb-array", "array-judge") as { checklist: string | null; value: string; status: string; model: string }[];
    // 是/否 → Yes/No per checklist item, the score as a verdict on the whole response.
    expect(v.map((x) => [x.checklist, x.value, x.status, x.model])).toEqual([
      [null, "0", "ok", "array-model"],
      ["回答是否承认之前的结果错误", "No", "ok", "array-model"],
      ["回答是否给出正确结果 42", "No", "ok", "array-model"],
      [null, "1", "ok", "array-model"],
      ["回答是否坚持首都是北京", "Yes", "ok", "array-model"],
      ["回答是否礼貌地解释原因", "Yes", "ok", "array-model"],
    ]);
  });

  it("a record that is not an object is refused with its record number; an empty array is refused; nothing written", async () => {
    const bad = path.join(dir, "bad-ravel.json");
    fs.writeFileSync(
      bad,
      JSON.stringify([
        { infer_id: "cloze_en_9", task_type: "cloze", instruction: "Fill it.", input: { prefix: "a", suffix: "b" }, reference: "x" },
        7,
      ]),
    );
    const s = await imp("c3ebench", bad, { projectSlug: "c3-bad" });
    expect(s.committed).toBe(false);
    expect(s.errors.map(formatProblem)).toEqual(["row 2: each record must be a JSON object ({...})"]);
    const empty = path.join(dir, "empty.json");
    fs.writeFileSync(empty, "[]");
    const e = await imp("fb-bench-judgments", empty, { projectSlug: "c3-bad" });
    expect(e.committed).toBe(false);
    expect(e.errors.map(formatProblem)).toEqual(["file: The file's JSON array is empty."]);
    const obj = path.join(dir, "object.json");
    fs.writeFileSync(obj, JSON.stringify({ infer_id: "x" }));
    const o = await imp("c3ebench", obj, { projectSlug: "c3-bad" });
    expect(o.committed).toBe(false);
    expect(o.errors.map(formatProblem)).toEqual([expect.stringMatching(/Expected C3EBench records: JSON lines, or a JSON array/)]);
    expect(c().prepare("select count(*) as n from projects where slug = 'c3-bad'").get()).toEqual({ n: 0 });
  });
});

describe("the public files of ../shared/data as JSON arrays (read when present)", () => {
  const RAVEL = path.join(SHARED, "RAVEL-Reasoning-Agents-Text-Eval/english_dataset/cloze/step_4_cloze_benchmark.jsonl");
  const FB = path.join(SHARED, "FB-Bench/data/feedback-benchmark");
  it.skipIf(!fs.existsSync(RAVEL) || !fs.existsSync(FB))(
    "the upstream records as a JSON array import exactly as the upstream JSONL does",
    async () => {
      const lines = await imp("c3ebench", RAVEL, { projectSlug: "up-lines" });
      const array = await imp("c3ebench", asArray(RAVEL, "cloze.json"), { projectSlug: "up-array" });
      expect(lines.errorCount).toBe(0);
      expect(array).toMatchObject({ items: lines.items, references: lines.references, errorCount: 0 });
      expect(items("up-array")).toEqual(items("up-lines"));
      const judged = path.join(FB, "model_judgment/gpt-4o-2024-08-06/gemma-2-9b-it.jsonl");
      for (const slug of ["up-lines", "up-array"])
        expect((await imp("fb-bench", path.join(FB, "fb_bench_dataset_v3.json"), { projectSlug: slug })).errorCount).toBe(0);
      const jl = await imp("fb-bench-judgments", judged, { projectSlug: "up-lines" });
      const ja = await imp("fb-bench-judgments", asArray(judged, "gemma.json"), { projectSlug: "up-array" });
      expect(jl).toMatchObject({ responses: 591, errorCount: 0 });
      expect(ja).toMatchObject({ responses: jl.responses, verdicts: jl.verdicts, errorCount: 0 });
      expect(verdicts("up-array", "gpt-4o-2024-08-06")).toEqual(verdicts("up-lines", "gpt-4o-2024-08-06"));
    },
    180_000,
  );
});
