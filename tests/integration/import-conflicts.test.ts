/**
 * Re-importing responses or verdicts (issue 18, major 6): the same content is
 * a no-op; different content under the same key (responses: item + model +
 * turn; verdicts: judge + item + response + checklist item) is refused with
 * the conflicting rows named, exit code 1, and the database unchanged. The
 * command line is run as a user runs it (npm run import's script).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/db";

const ROOT = path.resolve(__dirname, "../..");
const FX = path.resolve(__dirname, "../fixtures/import");

/**
 * A database of the test's own (made inside the test, removed after it), so any
 * one test runs alone: `cli` runs the command on it, `rows` reads it back.
 */
function ownDatabase() {
  const dir = tempDir("concord-conflicts-");
  const dbFile = path.join(dir, "test.db");
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, ["scripts/cli.mjs", "import", ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: dbFile },
      encoding: "utf8",
      timeout: 60_000,
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const rows = (sql: string) => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  };
  return { dir, cli, rows };
}

/** The benchmark and its three responses, imported as a user would first. */
function importBenchmarkAndResponses(cli: ReturnType<typeof ownDatabase>["cli"]) {
  expect(cli("--preset", "items-jsonl", "--project", "conf", path.join(FX, "items.jsonl")).code).toBe(0);
  expect(cli("--preset", "responses", "--project", "conf", path.join(FX, "responses.csv")).code).toBe(0);
}

describe("conflicting re-imports from the command line", () => {
  it("responses: same file is a no-op, a changed text is refused naming the row", () => {
    const { dir, cli, rows } = ownDatabase();
    importBenchmarkAndResponses(cli);
    const before = rows("select id, item_id, model, turn, text from responses order by id");
    expect(before).toHaveLength(3);

    const again = cli("--preset", "responses", "--project", "conf", path.join(FX, "responses.csv"));
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/Already imported with the same content: nothing changed/);

    // Row 3 of the file (q1, model-b, turn 1) gets a different text; the other rows are unchanged.
    const changed = path.join(dir, "responses-changed.csv");
    fs.writeFileSync(changed, fs.readFileSync(path.join(FX, "responses.csv"), "utf8").replace('"Saturn, probably."', '"Jupiter, surely."'));
    const r = cli("--preset", "responses", "--project", "conf", changed);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Import refused (1 problem); nothing was written.");
    expect(r.err).toContain(
      'row 3, field "text": conflicts with the response already imported for item "q1", model "model-b", turn 1: its text differs',
    );
    expect(r.err).toMatch(/1 row conflicts with what is already imported/);
    expect(rows("select id, item_id, model, turn, text from responses order by id")).toEqual(before);

    // A new model in the same file is fine only without conflicts: the whole file is refused, the new row too.
    fs.appendFileSync(changed, "q2,model-c,1,Three kilometres\n");
    expect(cli("--preset", "responses", "--project", "conf", changed).code).toBe(1);
    expect(rows("select count(*) as n from responses")).toEqual([{ n: 3 }]);

    // New rows next to identical ones: only the new one is written, and the summary says so.
    const grown = path.join(dir, "responses-grown.csv");
    fs.writeFileSync(grown, fs.readFileSync(path.join(FX, "responses.csv"), "utf8") + "q2,model-c,1,Three kilometres\n");
    const g = cli("--preset", "responses", "--project", "conf", "--format", "json", grown);
    expect(g.code).toBe(0);
    expect(JSON.parse(g.out)).toMatchObject({ responses: 4, alreadyPresent: 3, newRows: 1, unchanged: false, committed: true });
    expect(rows("select count(*) as n from responses")).toEqual([{ n: 4 }]);
  });

  it("verdicts: same file is a no-op, a changed value is refused naming each conflicting row", () => {
    const { dir, cli, rows } = ownDatabase();
    importBenchmarkAndResponses(cli);
    expect(cli("--preset", "verdicts", "--project", "conf", path.join(FX, "verdicts.csv")).code).toBe(0);
    const before = rows("select id, judge_id, response_id, checklist_item_id, value, raw_output from verdicts order by id");
    expect(before).toHaveLength(5);
    const again = cli("--preset", "verdicts", "--project", "conf", path.join(FX, "verdicts.csv"));
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/nothing changed/);

    // Row 2 flips Yes → No; row 6 (the whole-response score) goes from 8 to 9.
    const src = fs.readFileSync(path.join(FX, "verdicts.csv"), "utf8").split("\n");
    src[1] = src[1].replace(",Yes,", ",No,");
    src[5] = src[5].replace(",8,", ",9,");
    const changed = path.join(dir, "verdicts-changed.csv");
    fs.writeFileSync(changed, src.join("\n"));
    const r = cli("--preset", "verdicts", "--project", "conf", changed);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Import refused (2 problems)");
    expect(r.err).toContain(
      'row 2, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q1", response "model-a#1", checklist item #1: it says "Yes", the file says "No"',
    );
    expect(r.err).toContain(
      'row 6, field "value": conflicts with the verdict already imported from judge "judge-one" on item "q2", response "model-a": it says "8", the file says "9"',
    );
    expect(rows("select id, judge_id, response_id, checklist_item_id, value, raw_output from verdicts order by id")).toEqual(before);
  });

  it("a dry run of an identical file says it would change nothing", () => {
    const { cli } = ownDatabase();
    importBenchmarkAndResponses(cli);
    const r = cli("--preset", "responses", "--project", "conf", "--dry-run", path.join(FX, "responses.csv"));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/already imported with the same content: nothing would change/);
  });
});
