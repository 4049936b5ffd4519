/**
 * The Python client (clients/python/concord_client.py, standard library only) against the real server, run by
 * Debian's python3 (/usr/bin/python3; .ci/run installs it with python3-pandas):
 *
 * - The example clients/python/examples/judge_agreement.py pushes three of LLMBar's public files (read from
 *   /work/shared/data at test time, never copied into the repository): two GPT-4/Vanilla result files (Natural,
 *   Adversarial/Neighbor) and MT-Bench's GPT-4/Vanilla_NoRules, through the llmbar preset (items, both
 *   responses, the judge's verdicts in both orders), then the gold labels (labels-long), and reads the
 *   judge-agreement export back. Every figure of it equals `npm run judge-agreement` on the same pairs written as
 *   a labels file and a verdicts file (the command needs no database) to 1e-12.
 * - ConcordError carries the problem details of a refused file (status, title, detail, errors by row and field).
 * - export() follows `next` cursors: with limit=2 it reads every page and gets the rows one page of 10,000 gives;
 *   export_file writes the CSV stream, the bytes of `npm run export`.
 * - A 503 and a 429 with Retry-After are waited out and the call sent again; a 403 is raised at once.
 * - A POST whose answer is lost (the connection drops after the server answered) is sent again by the client with
 *   the same Idempotency-Key: the server replays its answer (Idempotent-Replayed) and imports once.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken } from "../../app/auth/tokens.server";
import { llmbarId } from "../../app/formats/presets/llmbar.server";
import { openDatabase, schema } from "../../db/client";
import { expectMatchesSpec } from "../support/api-spec";
import { startApp, ROOT, type RunningApp } from "../support/app-server";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";

const PYTHON = fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const DATA = "/work/shared/data/LLMBar/Dataset";
const FILES = [
  "LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json",
  "LLMBar/Adversarial/Neighbor/evaluators/GPT-4/Vanilla/result.json",
  "Processed/MT-Bench/evaluators/GPT-4/Vanilla_NoRules/result.json",
].map((f) => path.join(DATA, f));
const HAVE_DATA = FILES.every((f) => fs.existsSync(f));

let app: RunningApp;
let token = "";
let readToken = "";
const dir = tempDir("concord-pyclient-");

/** Runs python3 on a script (a file path and its arguments) with the client on its path; its output and exit code. */
function python(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(PYTHON, args, {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 300_000,
    env: { ...process.env, PYTHONPATH: path.join(ROOT, "clients/python"), PYTHONDONTWRITEBYTECODE: "1", ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A Python snippet run with `c = Client(URL, TOKEN)` in scope; it prints JSON, which is returned parsed. */
function snippet<T = unknown>(code: string, url = app.url): T {
  const file = path.join(dir, `snippet-${Math.random().toString(36).slice(2)}.py`);
  fs.writeFileSync(
    file,
    `import json, sys\nfrom concord_client import Client, ConcordError\nc = Client(${JSON.stringify(url)}, ${JSON.stringify(token)}, retries=2)\n${code}\n`,
  );
  const r = python([file]);
  if (r.code !== 0) throw new Error(`python3 exited ${r.code}:\n${r.err}\n${r.out}`);
  return JSON.parse(r.out) as T;
}

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const ada = await createUser({ email: "ada@lab.test", name: "Ada", password: "correct horse battery" }, db);
    for (const slug of ["llmbar", "shapes"]) {
      const id = db.insert(schema.projects).values({ slug, name: slug }).returning({ id: schema.projects.id }).get().id;
      await setMembership(id, ada.id, "researcher", db);
    }
    token = (await createApiToken(ada.id, { name: "python", scope: "write", projects: "all" }, db)).token;
    readToken = (await createApiToken(ada.id, { name: "python read", scope: "read", projects: "all" }, db)).token;
    db.$client.close();
  });
}, 60_000);
afterAll(async () => {
  await app?.stop();
});

/** The export's numeric columns and the command's JSON field holding the same figure. */
const SAME_FIGURE: Record<string, (j: Record<string, unknown>, top: Record<string, unknown>) => unknown> = {
  n: (j) => j.n,
  ties_excluded: (_j, top) => top.unitsWithoutMajority,
  accuracy: (j) => j.accuracy,
  cohen_kappa: (j) => j.cohenKappa,
  unparsed: (j) => j.unparsed,
  accuracy_ci_low: (j) => (j.accuracyCI as number[] | null)?.[0] ?? null,
  accuracy_ci_high: (j) => (j.accuracyCI as number[] | null)?.[1] ?? null,
  cohen_kappa_ci_low: (j) => (j.cohenKappaCI as number[] | null)?.[0] ?? null,
  cohen_kappa_ci_high: (j) => (j.cohenKappaCI as number[] | null)?.[1] ?? null,
  macro_precision: (j) => j.macroPrecision,
  macro_recall: (j) => j.macroRecall,
  macro_f1: (j) => j.macroF1,
  macro_f1_ci_low: (j) => (j.macroF1CI as number[] | null)?.[0] ?? null,
  macro_f1_ci_high: (j) => (j.macroF1CI as number[] | null)?.[1] ?? null,
  missing: (j) => j.missing,
  unparsed_compared: (j) => j.unparsedCompared,
  missing_verdicts: (j) => j.missingVerdicts,
};
/** Numeric columns that are not figures: the database's ids of the task and the judge. */
const IDS = new Set(["task_id", "judge_id"]);

describe.skipIf(!HAVE_DATA)("the LLMBar example against npm run judge-agreement", () => {
  it("pushes items, both responses, gold labels and verdicts in both orders; reads back the judge table equal to the command's to 1e-12", () => {
    const r = python(["clients/python/examples/judge_agreement.py", "--project", "llmbar", "--json", ...FILES], {
      CONCORD_URL: app.url,
      CONCORD_TOKEN: token,
    });
    expect(r.code, r.err).toBe(0);
    // What it pushed, file by file (the llmbar preset: two responses and two verdicts per pair).
    expect(r.err).toContain(`${FILES[0]}: 100 items, 200 responses, 200 verdicts`);
    expect(r.err).toContain(`${FILES[1]}: 134 items, 268 responses, 268 verdicts`);
    expect(r.err).toContain(`${FILES[2]}: 200 items, 400 responses, 400 verdicts`);
    expect(r.err).toContain("gold labels: 434 labels");
    const rows = JSON.parse(r.out) as Record<string, unknown>[];
    expect(rows.map((x) => x.judge).sort()).toEqual([
      "GPT-4/Vanilla",
      "GPT-4/Vanilla (swapped)",
      "GPT-4/Vanilla_NoRules",
      "GPT-4/Vanilla_NoRules (swapped)",
    ]);

    // The same pairs as two plain files for the command: unit = the preset's item id (so units sort alike),
    // the gold label, and each order's winner under the judge name the preset gives (its folders).
    const labels: string[] = [];
    const verdicts: string[] = [];
    const seen = new Set<string>();
    for (const file of FILES) {
      const judge = file.split("/evaluators/")[1].replace(/\/result\.json$/, "");
      const records = JSON.parse(fs.readFileSync(file, "utf8")) as {
        input: string;
        output_1: string;
        output_2: string;
        label: number;
        results: Record<string, { winner: string }>[];
      }[];
      for (const rec of records) {
        const unit = llmbarId(rec);
        if (!seen.has(unit)) labels.push(JSON.stringify({ unit, annotator: "gold", label: rec.label }));
        seen.add(unit);
        for (const res of rec.results)
          for (const [order, v] of Object.entries(res))
            verdicts.push(JSON.stringify({ unit, judge: /true/i.test(order) ? `${judge} (swapped)` : judge, verdict: v.winner }));
      }
    }
    fs.writeFileSync(path.join(dir, "labels.jsonl"), labels.join("\n") + "\n");
    fs.writeFileSync(path.join(dir, "verdicts.jsonl"), verdicts.join("\n") + "\n");
    const cmd = spawnSync(
      process.execPath,
      [
        "scripts/judge-agreement-cli.mjs",
        "--labels",
        path.join(dir, "labels.jsonl"),
        "--verdicts",
        path.join(dir, "verdicts.jsonl"),
        "--format",
        "json",
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
    );
    expect(cmd.stderr).toBe("");
    expect(cmd.status).toBe(0);
    const top = JSON.parse(cmd.stdout) as Record<string, unknown> & { judges: Record<string, unknown>[]; units: number };
    expect(top.units).toBe(434);
    expect(top.judges).toHaveLength(4);

    let compared = 0;
    for (const row of rows) {
      const j = top.judges.find((x) => x.judge === row.judge)!;
      expect(j, String(row.judge)).toBeDefined();
      for (const [col, value] of Object.entries(row)) {
        if (IDS.has(col) || value === null || typeof value !== "number") continue;
        // Every numeric column of the export has its counterpart in the command's output: none is left unchecked.
        expect(SAME_FIGURE[col], `column ${col} has no counterpart`).toBeDefined();
        const expected = SAME_FIGURE[col](j, top) as number;
        expect(Math.abs(value - expected), `${row.judge} ${col}: ${value} vs ${expected}`).toBeLessThanOrEqual(1e-12);
        compared++;
      }
      // A figure the command gives is never missing from the export.
      for (const [col, f] of Object.entries(SAME_FIGURE)) if (f(j, top) !== null) expect(row[col], `${row.judge} ${col}`).not.toBeNull();
      expect(row).toMatchObject({ reference: "majority", unparsed_policy: "count-as-wrong", missing_policy: "missing" });
    }
    expect(compared).toBeGreaterThanOrEqual(4 * 17);
    // The Vanilla judge saw 234 pairs (Natural and Neighbor); MT-Bench's 200 count as missing for it.
    const vanilla = rows.find((x) => x.judge === "GPT-4/Vanilla")!;
    expect([vanilla.n, vanilla.missing]).toEqual([234, 200]);
    // LLMBar's statistics.json for MT-Bench, no swap: "correct_False": "159 / 200 = 79.5%".
    expect(rows.find((x) => x.judge === "GPT-4/Vanilla_NoRules")!.accuracy).toBe(0.795);

    // The same figures through the client's other reads: the task's report (GET …/tasks/{id}/report) per judge.
    const viaReport = snippet<{ task: number; judges: { judge: string; accuracy: number; cohenKappa: number }[] }>(`
tasks = c.tasks("llmbar")
task = next(t for t in tasks if t["kind"] == "imported-labels")
r = c.report("llmbar", task["id"], reference="majority")
print(json.dumps({"task": task["id"], "judges": r["judgeAgreement"]["judges"]}))
`);
    for (const row of rows) {
      expect(row.task_id).toBe(viaReport.task);
      const j = viaReport.judges.find((x) => x.judge === row.judge)!;
      expect([j.accuracy, j.cohenKappa]).toEqual([row.accuracy, row.cohen_kappa]);
    }
  }, 300_000);
});

describe("client behaviours", () => {
  it("a refused file raises ConcordError with the problem details: status, title, detail, errors by row and field", () => {
    const bad = path.join(dir, "bad-responses.csv");
    fs.writeFileSync(bad, "item,model,turn,text\nq1,model-a,1,fine\nq1,,1,no model\nq2,model-b,x,bad turn\n");
    const e = snippet<Record<string, unknown>>(`
try:
    c.import_file("shapes", "responses", ${JSON.stringify(bad)})
    print(json.dumps({"raised": False}))
except ConcordError as e:
    print(json.dumps({"raised": True, "status": e.status, "title": e.title, "detail": e.detail, "errors": e.errors, "type": e.type, "text": str(e)}))
`);
    expect(e).toMatchObject({ raised: true, status: 422, title: "Unprocessable Content" });
    expect(e.detail).toMatch(/refused/i);
    const errors = e.errors as { row?: number; field?: string; message: string }[];
    // Rows as the command counts them (the header is row 1): the empty model on row 3, the turn on row 4.
    expect(errors.map((x) => [x.row, x.field])).toEqual(expect.arrayContaining([[3, "model"]]));
    expect(errors.some((x) => x.row === 4 && x.field === "turn")).toBe(true);
    expect(errors.every((x) => typeof x.message === "string" && x.message.length > 0)).toBe(true);
    // str(e) names them too, for a harness that only logs the exception.
    expect(e.text).toMatch(/^422 Unprocessable Content: /);
    expect(e.text).toMatch(/row 3, field "model": /);
    // Nothing was written: not even the valid row 2.
    const db = openDatabase(app.databaseFile);
    try {
      expect(db.$client.prepare("select count(*) as n from responses where text = 'fine'").get()).toEqual({ n: 0 });
    } finally {
      db.$client.close();
    }
  }, 120_000);

  it.skipIf(!HAVE_DATA)(
    "export() follows the next cursors over every page (limit=2); export_df and export_file give the same rows",
    async () => {
      const r = snippet<{
        paged: Record<string, unknown>[];
        whole: Record<string, unknown>[];
        df: { shape: number[]; columns: string[] };
        bytes: number;
      }>(`
paged = c.export("llmbar", "judge-confusion", limit=2)
whole = c.export("llmbar", "judge-confusion")
df = c.export_df("llmbar", "judge-confusion", limit=3)
n = c.export_file("llmbar", "judge-confusion", ${JSON.stringify(path.join(dir, "confusion.csv"))}, format="csv")
print(json.dumps({"paged": paged, "whole": whole, "df": {"shape": list(df.shape), "columns": list(df.columns)}, "bytes": n}))
`);
      // 4 judges × the 2 × 2 cells of labels 1 and 2: many pages of 2.
      expect(r.whole.length).toBeGreaterThanOrEqual(16);
      expect(r.paged).toEqual(r.whole);
      expect(r.df.shape).toEqual([r.whole.length, Object.keys(r.whole[0]).length]);
      expect(r.df.columns).toEqual(Object.keys(r.whole[0]));
      // export_file: the CSV stream, the same bytes as npm run export on the server's database.
      const cli = await runScript("export", ["--project", "llmbar", "--what", "judge-confusion", "--format", "csv"], {
        DATABASE_URL: app.databaseFile,
      });
      expect(cli.code).toBe(0);
      const file = fs.readFileSync(path.join(dir, "confusion.csv"), "utf8");
      expect(file).toBe(cli.out);
      expect(r.bytes).toBe(Buffer.byteLength(file));
    },
    120_000,
  );

  it("a 503 and a 429 with Retry-After are waited out and sent again; a 403 is not", async () => {
    // A proxy that answers the first two requests itself (503, then 429, each with Retry-After: 1) and passes the rest on.
    const statuses: number[] = [];
    const proxy = http.createServer((req, res) => {
      const own = [503, 429][statuses.length];
      if (own) {
        statuses.push(own);
        res.writeHead(own, { "Content-Type": "application/problem+json", "Retry-After": "1" });
        res.end(JSON.stringify({ type: "about:blank", title: "Busy", status: own, detail: "try again" }));
        return;
      }
      const upstream = http.request(
        { host: "127.0.0.1", port: new URL(app.url).port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          statuses.push(up.statusCode!);
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const code = [
        "import json, time",
        "from concord_client import Client, ConcordError",
        `c = Client(${JSON.stringify(proxyUrl)}, ${JSON.stringify(token)})`,
        "t0 = time.monotonic()",
        "slugs = sorted(p['slug'] for p in c.projects())",
        "waited = time.monotonic() - t0",
        `r = Client(${JSON.stringify(proxyUrl)}, ${JSON.stringify(readToken)})`,
        "try:",
        "    r.import_records('shapes', 'items-jsonl', [{'id': 'r1', 'prompt': 'Read-only?'}])",
        "    refused = None",
        "except ConcordError as e:",
        "    refused = e.status",
        "print(json.dumps({'slugs': slugs, 'waited': waited, 'refused': refused}))",
      ].join("\n");
      const out = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(PYTHON, ["-c", code], {
          cwd: ROOT,
          env: { ...process.env, PYTHONPATH: path.join(ROOT, "clients/python"), PYTHONDONTWRITEBYTECODE: "1" },
        });
        let o = "";
        let e = "";
        child.stdout.on("data", (d: Buffer) => (o += d));
        child.stderr.on("data", (d: Buffer) => (e += d));
        child.on("exit", (c) => resolve({ code: c, out: o, err: e }));
      });
      expect(out.code, out.err).toBe(0);
      const r = JSON.parse(out.out) as { slugs: string[]; waited: number; refused: number };
      expect(r.slugs).toEqual(["llmbar", "shapes"]);
      // Two Retry-After: 1 waits.
      expect(r.waited).toBeGreaterThanOrEqual(2);
      // 503, 429, the answer; then the read token's POST: 403 once, not sent again.
      expect(statuses).toEqual([503, 429, 200, 403]);
      expect(r.refused).toBe(403);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  }, 120_000);

  it("a POST whose answer is lost is sent again with the same Idempotency-Key: replayed, imported once", async () => {
    // A proxy in front of the server that lets the first import through, waits for the server's whole answer,
    // and then drops the connection instead of passing it on: the client never learns the import happened.
    const seen: { key: string | undefined; status: number; replayed: string | undefined }[] = [];
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        { host: "127.0.0.1", port: new URL(app.url).port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            const isImport = req.method === "POST" && req.url!.includes("/imports");
            if (isImport)
              seen.push({
                key: req.headers["idempotency-key"] as string | undefined,
                status: up.statusCode!,
                replayed: up.headers["idempotent-replayed"] as string | undefined,
              });
            if (isImport && seen.length === 1) {
              req.socket.destroy();
              return;
            }
            res.writeHead(up.statusCode!, up.headers);
            res.end(Buffer.concat(chunks));
          });
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const file = path.join(dir, "shapes.jsonl");
      fs.writeFileSync(
        file,
        '{"id": "s1", "prompt": "Name a shape with three sides."}\n{"id": "s2", "prompt": "Name a shape with four equal sides."}\n',
      );
      const out = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        // Asynchronously: the proxy runs in this process.
        const code = `import json\nfrom concord_client import Client\nc = Client(${JSON.stringify(proxyUrl)}, ${JSON.stringify(token)})\nr = c.import_file("shapes", "items-jsonl", ${JSON.stringify(file)})\nprint(json.dumps(r))\n`;
        const child = spawn(PYTHON, ["-c", code], {
          cwd: ROOT,
          env: { ...process.env, PYTHONPATH: path.join(ROOT, "clients/python"), PYTHONDONTWRITEBYTECODE: "1" },
        });
        let o = "";
        let e = "";
        child.stdout.on("data", (d: Buffer) => (o += d));
        child.stderr.on("data", (d: Buffer) => (e += d));
        child.on("exit", (c) => resolve({ code: c, out: o, err: e }));
      });
      expect(out.code, out.err).toBe(0);
      // Two POSTs reached the server, with one key; the second was answered from the first's stored answer.
      expect(seen).toHaveLength(2);
      expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[1].key).toBe(seen[0].key);
      expect([seen[0].status, seen[0].replayed]).toEqual([201, undefined]);
      expect([seen[1].status, seen[1].replayed]).toEqual([201, "true"]);
      const answer = JSON.parse(out.out) as Record<string, unknown> & { summary: { items: number } };
      expect(answer.summary.items).toBe(2);
      expectMatchesSpec({
        method: "POST",
        path: "/api/v1/projects/shapes/imports",
        status: 201,
        contentType: "application/json",
        body: answer,
      });
      // One import recorded, two items.
      const db = openDatabase(app.databaseFile);
      try {
        expect(db.$client.prepare("select count(*) as n from api_imports where preset = 'items-jsonl'").get()).toEqual({ n: 1 });
        expect(db.$client.prepare("select count(*) as n from items where source_id in ('s1', 's2')").get()).toEqual({ n: 2 });
      } finally {
        db.$client.close();
      }
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  }, 120_000);
});
