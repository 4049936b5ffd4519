/**
 * Issue 36, item 3: spreadsheet formula injection. A model response `=HYPERLINK("http://x","y")`, a
 * judge's raw output `=cmd|' /C calc'!A0`, an annotator named `@Alan`, a question `-- name three
 * planets`, labels `+1` / `-1` and text labels `+1 agree` / `@maybe`, all imported through the real
 * import presets, then downloaded through every CSV path: the Export page's files over HTTP, `npm run
 * export`, and every CSV link of the report pages (agreement, judges, disagreements). No cell of any of
 * them may begin with = + - @ TAB or CR (what Excel, LibreOffice and Google Sheets read as a formula:
 * the OWASP "CSV Injection" rule) unless the whole cell is a number, which a spreadsheet reads as that
 * number; such text cells carry a leading `'`. And every file loads in pandas.read_csv with the dtypes it
 * had before escaping: the same file with the escapes taken off again gives the same dtypes (so a
 * numeric column with negative values, like the contrary judge's kappa of -1, stays numeric).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { EXPORT_KINDS } from "../../app/formats/export.server";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";

const EMAIL = "researcher@inject.test";
const PASSWORD = "formula-free-2026";
const HYPERLINK = '=HYPERLINK("http://x","y")';
const CALC = "=cmd|' /C calc'!A0";

let app: RunningApp;
let files: string;
const tasks: Record<string, number> = {};

const PYTHONS = [...new Set([process.env.PANDAS_PYTHON, "python3", "/usr/bin/python3"].filter((p): p is string => !!p))];
const pandasPython = PYTHONS.find((py) => spawnSync(py, ["-c", "import pandas"], { encoding: "utf8" }).status === 0) ?? null;
const inCI = !!process.env.CI && !["0", "false"].includes(process.env.CI.toLowerCase());

/** What a spreadsheet reads as a formula: a trigger character first (OWASP), unless the whole cell is a number. */
const TRIGGER = /^[=+\-@\t\r]/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const isFormula = (cell: string) => TRIGGER.test(cell) && !NUMBER.test(cell);

/** The benchmark's files: 8 items (one question starting "--"), a response each, two judges, 3 annotators' +1/-1 labels. */
function writeFixtures(dir: string) {
  const items = Array.from({ length: 8 }, (_, k) => ({
    id: `i${k + 1}`,
    prompt: k === 1 ? "-- name three planets" : `Question ${k + 1}?`,
    checklist: ["Is the answer right?"],
  }));
  fs.writeFileSync(path.join(dir, "bench.jsonl"), items.map((x) => JSON.stringify(x)).join("\n") + "\n");
  const csv = (rows: (string | number)[][]) => Papa.unparse(rows, { newline: "\n" }) + "\n";
  fs.writeFileSync(
    path.join(dir, "responses.csv"),
    csv([["item", "model", "turn", "text"], ...items.map((it, k) => [it.id, "m1", 1, k === 0 ? HYPERLINK : `Answer ${k + 1}`])]),
  );
  const labels: string[][] = [
    ["+1", "+1", "+1"],
    ["-1", "-1", "-1"],
    ["+1", "+1", "+1"],
    ["-1", "+1", "-1"],
    ["+1", "+1", "-1"],
    ["-1", "-1", "+1"],
    ["+1", "-1", "+1"],
    ["-1", "-1", "-1"],
  ];
  const annotators = ["Ada", "Grace", "@Alan"];
  fs.writeFileSync(
    path.join(dir, "labels.csv"),
    csv([
      ["unit", "annotator", "label", "response"],
      ...labels.flatMap((ls, k) => ls.map((l, a) => [`i${k + 1}`, annotators[a], l, "m1"])),
    ]),
  );
  // judge-contrary says the opposite of the majority everywhere (Cohen's kappa -1); judge-mostly misses one unit.
  const verdicts: (string | number)[][] = [["judge", "item", "response", "value", "raw"]];
  labels.forEach((ls, k) => {
    const majority = ls.filter((l) => l === "+1").length >= 2 ? "+1" : "-1";
    const other = majority === "+1" ? "-1" : "+1";
    verdicts.push(["judge-contrary", `i${k + 1}`, "m1", other, k === 0 ? CALC : `reason ${k + 1}`]);
    verdicts.push(["judge-mostly", `i${k + 1}`, "m1", k === 3 ? other : majority, `ok ${k + 1}`]);
  });
  fs.writeFileSync(path.join(dir, "verdicts.csv"), csv(verdicts));
  // A second task with text labels that begin like formulas, on units whose text does too.
  const opinions: string[][] = [["unit", "annotator", "label", "text"]];
  const said = [
    ["+1 agree", "+1 agree"],
    ["-1 disagree", "+1 agree"],
    ["@maybe", "-1 disagree"],
    ["-1 disagree", "-1 disagree"],
  ];
  said.forEach((ls, k) =>
    ls.forEach((l, a) => opinions.push([`u${k + 1}`, ["Ada", "Grace"][a], l, k === 0 ? "@SUM(1+1)*cmd|' /C calc'!A0" : `Claim ${k + 1}`])),
  );
  fs.writeFileSync(path.join(dir, "opinions.csv"), csv(opinions));
}

beforeAll(async () => {
  files = tempDir("concord-inject-");
  writeFixtures(files);
  app = await startApp(async (file) => {
    const steps: [string, string, string | undefined][] = [
      ["items-jsonl", "bench.jsonl", undefined],
      ["responses", "responses.csv", "bench"],
      ["verdicts", "verdicts.csv", "bench"],
      ["labels-long", "labels.csv", "bench"],
      ["labels-long", "opinions.csv", undefined],
    ];
    for (const [preset, name, datasetName] of steps) {
      const r = await runImport({ databaseFile: file, projectSlug: "inject", preset, file: path.join(files, name), datasetName });
      if (!r.committed) throw new Error(`${preset} ${name}: ${JSON.stringify(r.errors).slice(0, 300)}`);
    }
    const db = openDatabase(file);
    const user = await createUser({ email: EMAIL, name: "Rhea Inject", password: PASSWORD }, db);
    const project = db.$client.prepare("select id from projects where slug = 'inject'").get() as { id: number };
    await setMembership(project.id, user.id, "researcher", db);
    for (const t of db.$client.prepare("select id, name from tasks where project_id = ?").all(project.id) as { id: number; name: string }[])
      tasks[t.name] = t.id;
    db.$client.close();
  });
});

afterAll(async () => {
  await app?.stop();
});

/** Every cell of a CSV text (header included), with its row and column for messages. */
function cells(text: string): { row: number; col: number; cell: string }[] {
  const parsed = Papa.parse<string[]>(text, { delimiter: ",", skipEmptyLines: true });
  expect(parsed.errors).toEqual([]);
  return parsed.data.flatMap((r, row) => r.map((cell, col) => ({ row, col, cell })));
}

/** pandas.read_csv's dtypes for each file, and for the same file with every `'` escape taken off again. */
function pandasDtypes(paths: string[]): Record<string, { columns: string[]; dtypes: string[]; unescaped: string[]; rows: number }> {
  const script = `
import csv, io, json, re, sys
import pandas as pd
escaped = re.compile(r"^'[=+\\-@\\t\\r]")
out = {}
for f in sys.argv[1:]:
    df = pd.read_csv(f)
    with open(f, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\\n")
    for r in rows:
        w.writerow([c[1:] if escaped.match(c) else c for c in r])
    buf.seek(0)
    twin = pd.read_csv(buf)
    # By position: a header cell may be escaped too (a column named after the annotator "@Alan").
    out[f] = {"columns": list(df.columns), "dtypes": [str(t) for t in df.dtypes], "unescaped": [str(t) for t in twin.dtypes], "rows": len(df)}
print(json.dumps(out))
`;
  const py = spawnSync(pandasPython!, ["-c", script, ...paths], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  expect(py.status, py.stderr).toBe(0);
  return JSON.parse(py.stdout) as ReturnType<typeof pandasDtypes>;
}

describe("CSV downloads escape formula cells", () => {
  it("every CSV path: no cell a spreadsheet would run, the formulas kept as text, and pandas dtypes unchanged", async () => {
    const c = new AppClient(app.url);
    await c.signIn(EMAIL, PASSWORD);
    const downloads = new Map<string, string>();

    // 1. The Export page's files over HTTP, and npm run export (the same rows, the same text).
    const commands = EXPORT_KINDS.map((what) =>
      runScript("export", ["--project", "inject", "--what", what], { DATABASE_URL: app.databaseFile }),
    );
    for (const [i, what] of EXPORT_KINDS.entries()) {
      const res = await c.get(`/p/inject/export/${what}.csv`);
      expect(res.status, `${what}.csv`).toBe(200);
      downloads.set(`http ${what}.csv`, res.text);
      const cli = await commands[i];
      expect(cli.code, cli.err).toBe(0);
      downloads.set(`npm run export ${what}`, cli.out);
      expect(cli.out, `npm run export --what ${what} = the Export page's file`).toBe(res.text);
    }
    // JSONL is not a spreadsheet format: it keeps the text as imported.
    const jsonl = await c.get("/p/inject/export/runs.jsonl");
    expect(jsonl.text.split("\n").some((l) => l && (JSON.parse(l) as { response: string }).response === HYPERLINK)).toBe(true);

    // 2. Every CSV link of every report page of both tasks.
    const links = new Set<string>();
    for (const taskId of Object.values(tasks)) {
      for (const page of ["", "/judges", "/disagreements"]) {
        const res = await c.get(`/p/inject/reports/${taskId}${page}`);
        expect(res.status, `reports/${taskId}${page}`).toBe(200);
        for (const m of res.text.matchAll(/href="([^"]*\/csv\?[^"]*)"/g)) {
          const href = m[1].replaceAll("&amp;", "&");
          if (!href.includes("format=latex")) links.add(href);
        }
      }
    }
    expect(links.size).toBeGreaterThan(10);
    for (const href of links) {
      const res = await c.get(href);
      expect(res.status, href).toBe(200);
      expect(res.headers["content-type"]).toContain("text/csv");
      downloads.set(href, res.text);
    }

    // No cell anywhere that a spreadsheet would read as a formula.
    const offenders = [...downloads].flatMap(([name, text]) =>
      cells(text)
        .filter((x) => isFormula(x.cell))
        .map((x) => `${name} row ${x.row} column ${x.col}: ${JSON.stringify(x.cell.slice(0, 40))}`),
    );
    expect(offenders).toEqual([]);

    // The texts are still there, as text: a leading ' that a spreadsheet hides and shows the rest of.
    const all = (name: string) => cells(downloads.get(name)!).map((x) => x.cell);
    for (const source of ["http", "npm run export"]) {
      const runs = all(`${source} ${source === "http" ? "runs.csv" : "runs"}`);
      expect(runs).toContain(`'${HYPERLINK}`);
      expect(runs).toContain(`'${CALC}`);
      expect(runs).toContain("'@SUM(1+1)*cmd|' /C calc'!A0"); // the opinion unit's text
      const annotations = all(`${source} ${source === "http" ? "annotations.csv" : "annotations"}`);
      expect(annotations).toContain("'@Alan");
      expect(annotations).toContain("'+1 agree");
      expect(annotations).toContain("'@maybe");
      // The imported label "+1" is the number 1 (app/formats/labels.ts parseLabel), "-1" is -1: numbers, as they were.
      expect(annotations).toContain("1");
      expect(annotations).toContain("-1");
    }
    const disagreements = [...downloads].find(([name]) => name.includes(`reports/${tasks.bench}/csv?`) && name.includes("disagreements"));
    expect(disagreements, "the bench task's disagreements CSV").toBeDefined();
    expect(cells(disagreements![1]).map((x) => x.cell)).toEqual(expect.arrayContaining([`'${HYPERLINK}`, "'-- name three planets"]));
    const judges = [...downloads].find(([name]) => name.includes(`reports/${tasks.bench}/csv?`) && name.includes("table=agreement-judges"));
    expect(judges, "the judge page's judge-agreement CSV").toBeDefined();
    // judge-contrary's Cohen's kappa is -1 (it says the opposite of the majority on every unit): a number, not escaped.
    expect(judges![1]).toMatch(/^judge-contrary,majority,[^\n]*,-1,/m);

    // pandas reads every file with the dtypes it had before escaping.
    if (!pandasPython) {
      if (inCI) throw new Error(`pandas.read_csv check NOT RUN: none of ${PYTHONS.join(", ")} can import pandas; CI is set`);
      console.warn(`\n*** pandas.read_csv check NOT RUN: none of ${PYTHONS.join(", ")} can import pandas ***\n`);
      return;
    }
    const dir = tempDir("concord-inject-csv-");
    const paths = new Map<string, string>();
    [...downloads].forEach(([name, text], i) => {
      if (text.trim() === "") return; // a table with no rows (the opinions task has no judges to disagree)
      const file = path.join(dir, `${i}.csv`);
      fs.writeFileSync(file, text);
      paths.set(file, name);
    });
    const types = pandasDtypes([...paths.keys()]);
    for (const [file, name] of paths) expect(types[file].dtypes, `${name}: dtypes`).toEqual(types[file].unescaped);
    const typesOf = (name: string) => {
      const t = types[[...paths].find(([, n]) => n === name)![0]];
      return Object.fromEntries(t.columns.map((col, i) => [col, t.dtypes[i]]));
    };
    // Numeric columns stay numeric, negative values included.
    expect(typesOf("http judge-agreement.csv").cohen_kappa).toBe("float64");
    expect(typesOf("http runs.csv").value).toBe("float64"); // the verdicts "1" and "-1"
    expect(typesOf("http runs.csv").score).toBe("float64");
    expect(typesOf("http annotations.csv").revision).toBe("int64");
    expect(typesOf("npm run export judge-confusion").count).toBe("int64");
  });
});
