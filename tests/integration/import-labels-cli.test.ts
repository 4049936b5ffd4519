/**
 * `npm run import` on labels from another tool: the annotator columns of a wide file are
 * named, never guessed; the measurement level is stated with its source; a declared scale
 * (--categories) is stored with the task and labels outside it are refused.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";

const { file: dbFile, db } = useTempDatabase();
const ROOT = path.resolve(__dirname, "../..");
const JUDGE = path.resolve(__dirname, "../fixtures/judge");

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ["scripts/cli.mjs", "import", ...args], {
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
    const r = cli(
      "--preset",
      "labels-wide",
      "--project",
      "wide-cli",
      "--annotators",
      "ann_1,ann_2,ann_3",
      "--format",
      "json",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out);
    expect(s.annotations).toBe(40);
    expect(s.warnings.map((w: { message: string }) => w.message)).toContain("columns ignored (not among --annotators): prompt, notes");
    const names = db()
      .$client.prepare("select distinct u.name from users u join assignments a on a.annotator_id = u.id order by u.name")
      .all();
    expect(names).toEqual([{ name: "ann_1" }, { name: "ann_2" }, { name: "ann_3" }]);
  });
});

describe("the measurement level is stated, with its source", () => {
  it("inferred nominal (the labels are not all numbers): in --format json and in the summary text", () => {
    const json = cli(
      "--preset",
      "labels-wide",
      "--project",
      "lvl-cli",
      "--annotators",
      "ann_1,ann_2,ann_3",
      "--dry-run",
      "--format",
      "json",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).level).toEqual({
      level: "nominal",
      source: "inferred",
      reason: "inferred: not every label is a number (3 distinct labels), so the labels are categories without an order",
    });
    const text = cli(
      "--preset",
      "labels-wide",
      "--project",
      "lvl-cli",
      "--annotators",
      "ann_1,ann_2,ann_3",
      "--dry-run",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect(text.code).toBe(0);
    expect(text.out.split("\n")).toContain(
      "Measurement level: nominal (inferred: not every label is a number (3 distinct labels), so the labels are categories without an order).",
    );
  });

  it("inferred ordinal from 0/1/2 codes, and given with --level", () => {
    const inferred = JSON.parse(
      cli("--preset", "labels-long", "--project", "lvl-cli", "--dry-run", "--format", "json", path.join(JUDGE, "labels-numeric.json")).out,
    );
    expect(inferred.level).toMatchObject({ level: "ordinal", source: "inferred" });
    expect(inferred.level.reason).toMatch(
      /^inferred: every label is a whole number and there are at most 10 distinct values \(3\), read as a rating scale; import with --level nominal if they are category codes$/,
    );
    const given = cli("--preset", "labels-long", "--project", "lvl-cli", "--level", "nominal", path.join(JUDGE, "labels-numeric.json"));
    expect(given.code).toBe(0);
    expect(given.out).toContain("Measurement level: nominal (given with --level).");
    const config = JSON.parse(
      (
        db().$client.prepare("select t.config from tasks t join projects p on p.id = t.project_id where p.slug = 'lvl-cli'").get() as {
          config: string;
        }
      ).config,
    );
    expect(config).toMatchObject({ level: "nominal", levelSource: "given", levelReason: "given with --level" });
  });

  it("imports that are not labels carry no level", () => {
    const r = cli(
      "--preset",
      "items-jsonl",
      "--project",
      "lvl-cli",
      "--dry-run",
      "--format",
      "json",
      path.resolve(__dirname, "../fixtures/import/items.jsonl"),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).level).toBeNull();
  });
});

describe("--categories declares the scale", () => {
  it("a label outside it refuses the file by row, column and reason (exit 1); a bad scale is a usage error (exit 2)", () => {
    const r = cli(
      "--preset",
      "labels-wide",
      "--project",
      "scale-cli",
      "--annotators",
      "ann_1,ann_2,ann_3",
      "--categories",
      "A,B",
      "--format",
      "json",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect(r.code).toBe(1);
    const s = JSON.parse(r.out);
    expect(s.committed).toBe(false);
    // u03 (row 4) is "tie" for ann_1 and ann_2.
    expect(s.errors.slice(0, 2)).toEqual([
      { row: 4, field: "ann_1", message: '"tie" is not a category of the declared scale (A, B)' },
      { row: 4, field: "ann_2", message: '"tie" is not a category of the declared scale (A, B)' },
    ]);
    const bad = cli(
      "--preset",
      "labels-wide",
      "--project",
      "scale-cli",
      "--annotators",
      "ann_1",
      "--categories",
      "A",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect([bad.code, bad.err.trim()]).toEqual([2, "import: --categories: the scale needs at least two categories."]);
    const ok = cli(
      "--preset",
      "labels-wide",
      "--project",
      "scale-cli",
      "--annotators",
      "ann_1,ann_2,ann_3",
      "--categories",
      "A, B, tie, skip",
      path.join(JUDGE, "labels-wide.csv"),
    );
    expect(ok.code).toBe(0);
    const config = JSON.parse(
      (
        db().$client.prepare("select t.config from tasks t join projects p on p.id = t.project_id where p.slug = 'scale-cli'").get() as {
          config: string;
        }
      ).config,
    );
    expect(config.categories).toEqual(["A", "B", "tie", "skip"]);
  });
});
