/**
 * `npm run import` on labels from another tool: the annotator columns of a wide file are
 * named, never guessed; the measurement level is stated with its source; a declared scale
 * (--categories) is stored with the task and labels outside it are refused.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";

const { file: dbFile, db } = useTempDatabase();
const ROOT = path.resolve(__dirname, "../..");
const JUDGE = path.resolve(__dirname, "../fixtures/judge");
const dir = path.dirname(dbFile);

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/import.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: dbFile },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("labels-wide annotator columns on the command line", () => {
  it("without --annotators: refused in one line naming the columns found, nothing written", () => {
    const r = cli("--preset", "labels-wide", "--project", "wide-cli", path.join(JUDGE, "labels-wide.csv"));
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.trim().split("\n")).toEqual([
      'import: labels-wide needs its annotator columns named: the file\'s columns besides the unit are "prompt", "ann_1", "ann_2", "ann_3", "notes"; give --annotators COL,COL (or --annotators all to take every one of them).',
    ]);
    expect(db().$client.prepare("select count(*) as n from projects where slug = 'wide-cli'").get()).toEqual({ n: 0 });
  });

  it("with --annotators the named columns are the annotators and the others are listed as ignored", () => {
    const r = cli("--preset", "labels-wide", "--project", "wide-cli", "--annotators", "ann_1,ann_2,ann_3", "--format", "json", path.join(JUDGE, "labels-wide.csv"));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out);
    expect(s.annotations).toBe(40);
    expect(s.warnings.map((w: { message: string }) => w.message)).toContain("columns ignored (not among --annotators): prompt, notes");
    const names = db().$client.prepare("select distinct u.name from users u join assignments a on a.annotator_id = u.id order by u.name").all();
    expect(names).toEqual([{ name: "ann_1" }, { name: "ann_2" }, { name: "ann_3" }]);
  });
});
