/**
 * `npm run import` and `npm run export` against a remote server (--server URL --token TOKEN, or CONCORD_URL and
 * CONCORD_TOKEN; scripts/remote.ts over the HTTP API) say and write what the local commands do:
 *
 * - the same file imported remotely (into the running server's database) and locally (into a database of its own
 *   that has seen the same imports) prints the same summary, on the same stream, with the same exit code: text and
 *   --format json, a dry run, a file over 1 MB (answered 202 and polled), an LLMBar file (whose folders name its
 *   dataset and judge), a refused file and a conflicting re-import (exit 1, the refusal by row and field);
 * - every export kind, CSV and JSONL, with options, is the same bytes remotely as locally on the server's database;
 * - what the server refuses (a wrong token, a read token importing, a project the token cannot see) exits 2 with
 *   the server's reason on one line of stderr.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken } from "../../app/auth/tokens.server";
import { llmbarId } from "../../app/formats/presets/llmbar.server";
import { openDatabase, schema } from "../../db/client";
import { startApp, ROOT, type RunningApp } from "../support/app-server";
import { runScript, type ScriptResult } from "../support/cli";
import { tempDir } from "../support/db";

const FX = path.join(ROOT, "tests/fixtures/import");
const dir = tempDir("concord-remote-cli-");
const localDb = path.join(dir, "local.db");
let app: RunningApp;
let write = "";
let read = "";

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const ada = await createUser({ email: "ada@lab.test", name: "Ada", password: "correct horse battery" }, db);
    const bob = await createUser({ email: "bob@lab.test", name: "Bob", password: "correct horse battery" }, db);
    const law = db.insert(schema.projects).values({ slug: "law", name: "law" }).returning({ id: schema.projects.id }).get().id;
    const art = db.insert(schema.projects).values({ slug: "art", name: "art" }).returning({ id: schema.projects.id }).get().id;
    await setMembership(law, ada.id, "researcher", db);
    await setMembership(art, bob.id, "researcher", db);
    write = (await createApiToken(ada.id, { name: "cli", scope: "write", projects: "all" }, db)).token;
    read = (await createApiToken(ada.id, { name: "cli read", scope: "read", projects: "all" }, db)).token;
    db.$client.close();
  });
}, 60_000);
afterAll(async () => {
  await app?.stop();
});

const remote = (command: "import" | "export", args: string[], token = write) =>
  runScript(command, [...args, "--server", app.url, "--token", token], { DATABASE_URL: path.join(dir, "never-opened.db") });
const local = (command: "import" | "export", args: string[], database = localDb) => runScript(command, args, { DATABASE_URL: database });

/** The same import both ways: the same output, stream and exit code. */
async function importBoth(args: string[]): Promise<ScriptResult> {
  // Two databases, two processes: run side by side.
  const [l, r] = await Promise.all([local("import", ["--project", "law", ...args]), remote("import", ["--project", "law", ...args])]);
  expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: l.code, out: l.out, err: l.err });
  return r;
}

describe("remote import prints what the local import prints", () => {
  it("items, responses and verdicts (text and --format json), then labels: the same summaries, exit 0", async () => {
    const items = await importBoth(["--preset", "items-jsonl", path.join(FX, "items.jsonl")]);
    expect(items.code).toBe(0);
    expect(items.out).toMatch(/^Imported into dataset "items" v1 in project "law": 3 items/);
    const responses = await importBoth(["--preset", "responses", "--format", "json", path.join(FX, "responses.csv")]);
    expect(JSON.parse(responses.out)).toMatchObject({ errorCount: 0, committed: true });
    expect((await importBoth(["--preset", "verdicts", path.join(FX, "verdicts.csv")])).code).toBe(0);
    const labels = await importBoth(["--preset", "labels-long", "--level", "nominal", path.join(FX, "labels-long.csv")]);
    expect(labels.out).toMatch(/Measurement level: nominal/);
    // Nothing was opened locally by the remote runs.
    expect(fs.existsSync(path.join(dir, "never-opened.db"))).toBe(false);
  }, 180_000);

  it("an LLMBar file (its folders name the dataset and the judge on the server as they do locally), and its gold labels", async () => {
    const file = path.join(FX, "LLMBar/Toy/evaluators/ToyJudge/Plain/result.json");
    const r = await importBoth(["--preset", "llmbar", "--format", "json", file]);
    expect(JSON.parse(r.out).dataset).toMatchObject({ name: "LLMBar Toy" });
    // The gold labels on output_1 of each pair (what the judge's verdicts judge): the judge exports below have rows.
    const pairs = JSON.parse(fs.readFileSync(file, "utf8")) as { input: string; output_1: string; output_2: string; label: number }[];
    const labels = path.join(dir, "toy-gold.csv");
    fs.writeFileSync(labels, "unit,response,annotator,label\n" + pairs.map((p) => `${llmbarId(p)},output_1,gold,${p.label}\n`).join(""));
    const gold = await importBoth(["--preset", "labels-long", "--level", "nominal", labels]);
    expect(gold.out).toMatch(/Measurement level: nominal \(given with --level\)/);
    const db = openDatabase(app.databaseFile);
    try {
      expect(db.$client.prepare("select name from judges where name like 'ToyJudge%' order by name").all()).toEqual([
        { name: "ToyJudge/Plain" },
        { name: "ToyJudge/Plain (swapped)" },
      ]);
    } finally {
      db.$client.close();
    }
  }, 120_000);

  it("a dry run, and a file over 1 MB (the server answers 202; the command polls the import): the same summaries", async () => {
    const big = path.join(dir, "big-items.csv");
    const lines = ["item_id,prompt,reference,domain"];
    for (let i = 0; i < 12000; i++)
      lines.push(`big-${i},"Prompt ${i}: explain, step by step, topic ${i % 89} to a newcomer.",Reference ${i},Domain ${i % 7}`);
    fs.writeFileSync(big, lines.join("\n") + "\n");
    expect(fs.statSync(big).size).toBeGreaterThan(1024 * 1024);
    const dry = await importBoth(["--preset", "items-csv", "--dry-run", big]);
    expect(dry.out).toMatch(/^Dry run: the file is valid into dataset "big-items": 12000 items/);
    const done = await importBoth(["--preset", "items-csv", big]);
    expect(done.out).toMatch(/^Imported into dataset "big-items" v1 in project "law": 12000 items/);
    const db = openDatabase(app.databaseFile);
    try {
      // The remote import went through the 202 path (and is recorded as such).
      expect(db.$client.prepare("select status, size from api_imports where preset = 'items-csv' and dry_run = 0").all()).toEqual([
        { status: "succeeded", size: fs.statSync(big).size },
      ]);
    } finally {
      db.$client.close();
    }
  }, 180_000);

  it("a refused file and a conflicting re-import: exit 1, the same refusal by row and field on stderr, nothing written", async () => {
    const bad = await importBoth(["--preset", "items-csv", path.join(FX, "bad/missing-column.csv")]);
    expect(bad.code).toBe(1);
    expect(bad.out).toBe("");
    expect(bad.err).toMatch(/^Import refused \(\d+ problems?\); nothing was written\./);
    expect(bad.err).toMatch(/error: (row \d+|file)/);

    const conflict = path.join(dir, "responses.csv");
    fs.writeFileSync(conflict, fs.readFileSync(path.join(FX, "responses.csv"), "utf8").replace("Jupiter is the largest planet.", "Mars."));
    const r = await importBoth(["--preset", "responses", conflict]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/conflicts? with what is already imported under the same key/);
    expect(r.err).toMatch(/error: row 2/);
  }, 180_000);

  it("CONCORD_URL and CONCORD_TOKEN stand in for --server and --token", async () => {
    const file = path.join(FX, "items.csv");
    const l = await local("import", ["--project", "law", "--preset", "items-csv", file]);
    const r = await runScript("import", ["--project", "law", "--preset", "items-csv", file], {
      CONCORD_URL: app.url,
      CONCORD_TOKEN: write,
      DATABASE_URL: path.join(dir, "never-opened.db"),
    });
    expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: l.code, out: l.out, err: l.err });
    expect(r.code).toBe(0);
  }, 120_000);
});

describe("remote export writes the bytes the local export writes", () => {
  const KINDS = ["annotations", "agreement", "judge-agreement", "judge-confusion", "runs"];
  it.each(KINDS.flatMap((k) => ["csv", "jsonl"].map((f) => [k, f])))(
    "%s as %s",
    async (what, format) => {
      const args = ["--project", "law", "--what", what, "--format", format];
      const [l, r] = await Promise.all([local("export", args, app.databaseFile), remote("export", args)]);
      expect(l.code).toBe(0);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toBe(l.out);
      expect(r.out.length).toBeGreaterThan(0);
    },
    120_000,
  );

  it("with options (--reference each --unparsed exclude --missing-as unparsed) and to --out FILE", async () => {
    const opts = [
      "--project",
      "law",
      "--what",
      "judge-agreement",
      "--reference",
      "each",
      "--unparsed",
      "exclude",
      "--missing-as",
      "unparsed",
    ];
    const lf = path.join(dir, "local-ja.csv");
    const rf = path.join(dir, "remote-ja.csv");
    const l = await local("export", [...opts, "--out", lf], app.databaseFile);
    const r = await remote("export", [...opts, "--out", rf]);
    expect([l.code, r.code]).toEqual([0, 0]);
    expect(fs.readFileSync(rf)).toEqual(fs.readFileSync(lf));
    expect(fs.readFileSync(rf, "utf8")).toMatch(/,each,exclude,/);
    // The same count of rows said.
    expect(r.err.replace(rf, "FILE")).toBe(l.err.replace(lf, "FILE"));
    // The options reached the server: the default export differs.
    const plain = await remote("export", ["--project", "law", "--what", "judge-agreement"]);
    expect(plain.out).not.toBe(fs.readFileSync(rf, "utf8"));
  }, 120_000);
});

describe("what the server refuses: exit 2, its reason on stderr", () => {
  it("a wrong token, a read token importing, a project the token cannot see, no token", async () => {
    const wrong = await remote("export", ["--project", "law", "--what", "runs"], "ccd_" + "A".repeat(43));
    expect([wrong.code, wrong.out]).toEqual([2, ""]);
    expect(wrong.err).toMatch(/^export: The token is not valid/);

    const readOnly = await remote("import", ["--project", "law", "--preset", "items-jsonl", path.join(FX, "items.jsonl")], read);
    expect(readOnly.code).toBe(2);
    expect(readOnly.err).toMatch(/^import: .*(read|scope)/i);

    // "art" exists, but Ada is not a member: the same answer as a project that does not exist.
    const hidden = await remote("export", ["--project", "art", "--what", "runs"]);
    const missing = await remote("export", ["--project", "nope", "--what", "runs"]);
    expect([hidden.code, missing.code]).toEqual([2, 2]);
    expect(hidden.err).toMatch(/^export: /);
    expect(hidden.err).toBe(missing.err);

    const noToken = await runScript("export", ["--project", "law", "--what", "runs", "--server", app.url], { CONCORD_TOKEN: "" });
    expect(noToken.code).toBe(2);
    expect(noToken.err).toMatch(/^export: --server needs a token/);
  }, 120_000);
});
