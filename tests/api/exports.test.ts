/**
 * GET /api/v1/projects/{slug}/exports/{what} (issue 37) and the run-results export (issue 42, item 2), against the
 * real server on a copy of the seeded demo database plus a generated project of 100,001 annotations:
 *
 *   - every export, as CSV and as JSONL, is byte for byte the Export page's download and `npm run export`'s output
 *     on the same database; its JSON pages, followed through their `next` links, are the JSONL file's records;
 *   - JSON pages of 10,000 over 100,001 annotations give every row exactly once, in the CSV stream's order;
 *   - the judge exports' options (reference, unparsed) change the file as they change the judge page's table;
 *   - run-results: the page's file, the command's and the API's agree; each table's CSV (the links under the
 *     tables of the run's results page) is that table's rows; its figures are the results page's (runResultsAll);
 *     the LaTeX download is a booktabs table;
 *   - a missing run is 404, run-results without a run 400, an annotator 403, another user's project 404;
 *   - the heavy-read limit (CONCORD_HEAVY_READS_PER_USER=1 here) answers 429 with Retry-After as problem+json
 *     while a stream is held open, and frees the slot when the client goes away;
 *   - CSV formula cells are escaped.
 * 2xx JSON bodies are checked against the OpenAPI document (tests/support/api-spec.ts).
 */
import http from "node:http";
import { eq } from "drizzle-orm";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../../app/auth/tokens.server";
import { EXPORT_KINDS } from "../../app/formats/export.server";
import { runResultsAll, runRow } from "../../app/runs/results.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_PROJECT } from "../../seeds/demo-names";
import { expectMatchesSpec } from "../support/api-spec";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb } from "../support/api";
import { writeBigAnnotationProject } from "../support/big-annotations";
import { runScript } from "../support/cli";
import { copyDemoDatabase } from "../support/demo";

const BIG_ROWS = 100_001;
const account = (role: string) => DEMO_ACCOUNTS.find((a) => a.role === role)!;
const slug = DEMO_PROJECT.slug;

let app: RunningApp;
const tokens: Record<string, string> = {};
let page: AppClient;
let runId = 0;

const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);

const call = (path: string, token = tokens.researcher) => new AppClient(app.url).request("GET", path, { Authorization: `Bearer ${token}` });
const json = <T = Record<string, unknown>>(r: AppResponse) => JSON.parse(r.text) as T;
const cli = (args: string[]) => runScript("export", args, { DATABASE_URL: app.databaseFile });

function problemOf(r: AppResponse, status: number) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers["content-type"]).toBe("application/problem+json");
  return json<{ type: string; title: string; status: number; detail: string; errors?: { field?: string; message: string }[] }>(r);
}

type Page = { data: Record<string, unknown>[]; next: string | null };

/** Every JSON page of an export from `path`, following `next`; the first page's body is checked against the document. */
async function allPages(path: string, token = tokens.researcher): Promise<{ rows: Record<string, unknown>[]; pages: number }> {
  const rows: Record<string, unknown>[] = [];
  let url: string | null = path;
  let pages = 0;
  while (url) {
    const r = await call(url.replace(app.url, ""), token);
    expect(r.status, r.text).toBe(200);
    const body = json<Page>(r);
    if (pages === 0)
      expectMatchesSpec({ method: "GET", path: url, status: r.status, contentType: r.headers["content-type"], body, headers: r.headers });
    if (body.next) expect(r.headers.link).toBe(`<${body.next}>; rel="next"`);
    rows.push(...body.data);
    url = body.next;
    pages++;
  }
  return { rows, pages };
}

beforeAll(async () => {
  app = await startApp(
    async (file) => {
      await copyDemoDatabase(file);
      await writeBigAnnotationProject(file, BIG_ROWS, { slug: "big" });
      const db = openDatabase(file);
      const userId = (email: string) => db.select().from(schema.users).where(eq(schema.users.email, email)).get()!.id;
      for (const role of ["researcher", "annotator"])
        tokens[role] = (await createApiToken(userId(account(role).email), { name: "exports", scope: "read", projects: "all" }, db)).token;
      tokens.big = (await createApiToken(userId("big-researcher@lab.test"), { name: "big", scope: "read", projects: "all" }, db)).token;
      runId = db.select().from(schema.runs).where(eq(schema.runs.status, "completed")).get()!.id;
      db.$client.close();
    },
    { env: { CONCORD_HEAVY_READS_PER_USER: "1", CONCORD_API_RATE_LIMIT: "100000" } },
  );
  page = new AppClient(app.url);
  await page.signIn(account("researcher").email, account("researcher").password);
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe("every export: the API's file is the page's download and the command's output", () => {
  it.each(EXPORT_KINDS)("%s: CSV and JSONL byte-equal to the page and npm run export; JSON pages are the JSONL records", async (what) => {
    for (const format of ["csv", "jsonl"] as const) {
      const api = await call(`/api/v1/projects/${slug}/exports/${what}?format=${format}`);
      expect(api.status, api.text).toBe(200);
      expect(api.headers["content-type"]).toBe(format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
      expect(api.headers["content-disposition"]).toBe(`attachment; filename="${slug}-${what}.${format}"`);
      const download = await page.get(`/p/${slug}/export/${what}.${format}`);
      expect(download.status).toBe(200);
      expect(download.headers["content-disposition"]).toBe(api.headers["content-disposition"]);
      const command = await cli(["--project", slug, "--what", what, "--format", format]);
      expect(command.code, command.err).toBe(0);
      expect(api.text.length).toBeGreaterThan(format === "csv" ? 100 : 10);
      expect(api.text).toBe(download.text);
      expect(api.text).toBe(command.out);
      if (format === "jsonl") {
        const records = api.text
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        // Small pages, so that pages end inside a unit's annotators and a response's verdicts.
        const { rows, pages } = await allPages(`/api/v1/projects/${slug}/exports/${what}?limit=7`);
        expect(rows).toEqual(records);
        expect(pages).toBe(Math.max(1, Math.ceil(records.length / 7)));
      }
    }
  });

  it("the task option: one task's rows, the same from the API, the page and the command", async () => {
    const all = (await allPages(`/api/v1/projects/${slug}/exports/annotations?limit=10000`)).rows;
    const taskIds = [...new Set(all.map((r) => r.task_id as number))];
    expect(taskIds.length).toBeGreaterThan(1);
    const task = taskIds[1];
    const api = await call(`/api/v1/projects/${slug}/exports/annotations?format=csv&task=${task}`);
    expect(api.headers["content-disposition"]).toBe(`attachment; filename="${slug}-annotations-task-${task}.csv"`);
    const download = await page.get(`/p/${slug}/export/annotations.csv?task=${task}`);
    const command = await cli(["--project", slug, "--what", "annotations", "--task", String(task)]);
    expect(api.text).toBe(download.text);
    expect(api.text).toBe(command.out);
    const { rows } = await allPages(`/api/v1/projects/${slug}/exports/annotations?task=${task}&limit=5`);
    expect(rows).toEqual(all.filter((r) => r.task_id === task));
    problemOf(await call(`/api/v1/projects/${slug}/exports/annotations?task=999999`), 404);
  });
});

describe("the judge exports' options", () => {
  it("reference and unparsed change the judge exports as on the judge page, and the API, the page and the command agree", async () => {
    const q = "reference=each&unparsed=exclude";
    const base = (await allPages(`/api/v1/projects/${slug}/exports/judge-agreement`)).rows;
    const each = (await allPages(`/api/v1/projects/${slug}/exports/judge-agreement?${q}`)).rows;
    expect(base.length).toBeGreaterThan(0);
    expect(base.every((r) => r.reference === "majority" && r.unparsed_policy === "count-as-wrong")).toBe(true);
    expect(each.every((r) => r.reference === "each" && r.unparsed_policy === "exclude")).toBe(true);
    expect(each.map((r) => r.n)).not.toEqual(base.map((r) => r.n));
    for (const what of ["judge-agreement", "judge-confusion"]) {
      const api = await call(`/api/v1/projects/${slug}/exports/${what}?format=csv&${q}`);
      const download = await page.get(`/p/${slug}/export/${what}.csv?${q}`);
      const command = await cli(["--project", slug, "--what", what, "--reference", "each", "--unparsed", "exclude"]);
      expect(api.text).toBe(download.text);
      expect(api.text).toBe(command.out);
    }
    // The judge page's own table (its CSV download) under the same options has the same figures, judge by judge.
    const task = each[0].task_id as number;
    const judgePage = await page.get(`/p/${slug}/reports/${task}/csv?table=agreement-judges&${q}`);
    expect(judgePage.status, judgePage.text).toBe(200);
    const pageRows = Papa.parse<Record<string, string>>(judgePage.text.trim(), { header: true }).data;
    for (const r of each.filter((x) => x.task_id === task)) {
      const p = pageRows.find((x) => x.judge === r.judge)!;
      expect(Number(p.n)).toBe(r.n);
      expect(Number(p.accuracy)).toBe(r.accuracy);
      expect(p.reference).toBe("each");
    }
    const bad = problemOf(await call(`/api/v1/projects/${slug}/exports/judge-agreement?reference=mode`), 400);
    expect(bad.errors?.[0].field).toBe("reference");
  });
});

describe("run-results", () => {
  it("the run's tables as tidy rows: the API, the page's file and the command agree, each table's download is its rows, and the figures are the results page's", async () => {
    const api = await call(`/api/v1/projects/${slug}/exports/run-results?format=csv&run=${runId}`);
    expect(api.status, api.text).toBe(200);
    expect(api.headers["content-disposition"]).toBe(`attachment; filename="${slug}-run-${runId}-results.csv"`);
    const download = await page.get(`/p/${slug}/export/run-results.csv?run=${runId}`);
    const command = await cli(["--project", slug, "--what", "run-results", "--run", String(runId)]);
    expect(command.code, command.err).toBe(0);
    expect(api.text).toBe(download.text);
    expect(api.text).toBe(command.out);
    const rows = (await allPages(`/api/v1/projects/${slug}/exports/run-results?run=${runId}&limit=10`)).rows;
    expect(rows.length).toBe(Papa.parse(api.text.trim(), { header: true }).data.length);

    // The figures are those of the results page's function (runResultsAll): Pass_t and Acc_t per model and turn.
    const results = await withDb(async (db) => runResultsAll(db, (await runRow(db, 1, runId))!));
    const metrics = results[0].metrics as { model: string; turns: { turn: number; acc: number; pass: number; n: number }[] }[];
    expect(metrics.length).toBeGreaterThan(0);
    for (const m of metrics)
      for (const t of m.turns)
        for (const [metric, value] of [
          ["Acc", t.acc],
          ["Pass", t.pass],
        ] as const) {
          const row = rows.find((r) => r.table === "acc-pass" && r.model === m.model && r.turn === t.turn && r.metric === metric);
          expect(row, `${m.model} ${metric}_${t.turn}`).toMatchObject({ value, n: t.n, judge: results[0].judge, estimate: "judge" });
        }

    // The results page links a CSV and a LaTeX download under each table; each CSV is that table's rows.
    const html = await page.get(`/p/${slug}/runs/${runId}/results`);
    expect(html.status).toBe(200);
    const links = [...html.text.matchAll(/href="(\/p\/[^"]+\/results\/csv\?table=([a-z0-9-]+)&amp;judge=(\d+))"/g)];
    const tables = [...new Set(rows.map((r) => r.table as string))];
    expect(new Set(links.map((l) => l[2]))).toEqual(new Set(tables.filter((t) => !t.startsWith("calibration-"))));
    const header = api.text.split("\n")[0];
    let joined = "";
    for (const l of links) {
      const csv = await page.get(l[1].replace(/&amp;/g, "&"));
      expect(csv.status, csv.text).toBe(200);
      expect(csv.text.split("\n")[0]).toBe(header);
      joined += csv.text.slice(header.length + 1);
      const tex = await page.get(`${l[1].replace(/&amp;/g, "&")}&format=latex`);
      expect(tex.status).toBe(200);
      expect(tex.headers["content-type"]).toBe("application/x-tex; charset=utf-8");
      expect(tex.text).toContain("\\begin{tabular}");
      expect(tex.text).toContain("\\toprule");
    }
    // In the page's order, the per-table files together are the run's file (no calibration task in the demo run).
    expect(header + "\n" + joined).toBe(api.text);
    const accPass = links.find((l) => l[2] === "acc-pass")!;
    const tex = await page.get(`${accPass[1].replace(/&amp;/g, "&")}&format=latex`);
    expect(tex.text).toContain("Acc\\_1 / Pass\\_1");
  });

  it("a missing run is 404, run-results without a run 400, on the API, the page and the command", async () => {
    const missing = problemOf(await call(`/api/v1/projects/${slug}/exports/run-results?run=999999`), 404);
    expect(missing.detail).toBe("Run not found.");
    const none = problemOf(await call(`/api/v1/projects/${slug}/exports/run-results`), 400);
    expect(none.errors?.[0].field).toBe("run");
    expect((await page.get(`/p/${slug}/export/run-results.csv?run=999999`)).status).toBe(404);
    expect((await page.get(`/p/${slug}/runs/${runId}/results/csv?table=no-such-table`)).status).toBe(404);
    const command = await cli(["--project", slug, "--what", "run-results", "--run", "999999"]);
    expect(command.code).toBe(2);
    expect(command.err).toContain("Run not found");
    expect(command.out).toBe("");
  });
});

describe("access", () => {
  it("an annotator's token is refused (403, as the page refuses annotators); another user's project is 404, as one that does not exist", async () => {
    const annotator = problemOf(await call(`/api/v1/projects/${slug}/exports/annotations`, tokens.annotator), 403);
    expect(annotator.detail).toContain("researcher");
    const other = problemOf(await call(`/api/v1/projects/big/exports/annotations`), 404);
    const none = problemOf(await call(`/api/v1/projects/no-such-project/exports/annotations`), 404);
    expect(other.detail).toBe(none.detail);
    problemOf(await call(`/api/v1/projects/${slug}/exports/annotations`, "ccd_not-a-token"), 401);
    problemOf(await call(`/api/v1/projects/${slug}/exports/nothing`), 404);
    const cursor = problemOf(await call(`/api/v1/projects/${slug}/exports/annotations?cursor=WzFd`), 400);
    expect(cursor.errors?.[0].field).toBe("cursor");
  });
});

describe("100,001 annotations", () => {
  it("JSON pages of 10,000 give every row exactly once, in the CSV stream's order; formula cells are escaped in the CSV", async () => {
    const t0 = performance.now();
    const { rows, pages } = await allPages(`/api/v1/projects/big/exports/annotations?limit=10000`, tokens.big);
    const jsonSeconds = (performance.now() - t0) / 1000;
    expect(pages).toBe(11);
    expect(rows.length).toBe(BIG_ROWS);
    const keys = rows.map((r) => `${r.unit_id}/${r.annotator_id}`);
    expect(new Set(keys).size).toBe(BIG_ROWS);

    const t1 = performance.now();
    const csv = await call(`/api/v1/projects/big/exports/annotations?format=csv`, tokens.big);
    const csvSeconds = (performance.now() - t1) / 1000;
    expect(csv.status).toBe(200);
    const parsed = Papa.parse<Record<string, string>>(csv.text.trim(), { header: true }).data;
    expect(parsed.map((r) => `${r.unit_id}/${r.annotator_id}`)).toEqual(keys);
    console.log(
      `exports: ${BIG_ROWS} annotations as JSON pages of 10,000 in ${jsonSeconds.toFixed(2)} s (${Math.round(BIG_ROWS / jsonSeconds)} rows/s), ` +
        `as a CSV stream in ${csvSeconds.toFixed(2)} s (${Math.round(BIG_ROWS / csvSeconds)} rows/s)`,
    );
    // Item "=item-0" and the notes "+SUM(A1:A2)" are text, never formulas, in the CSV; the JSON keeps them as they are.
    expect(csv.text).toContain(`,"'=item-0",`);
    expect(csv.text).toContain(`"'+SUM(A1:A2)"`);
    expect(csv.text).not.toMatch(/,=item-0,/);
    expect(rows[0].item).toBe("=item-0");
  }, 120_000);

  it("the heavy-read limit: while one export stream is held open, another export is 429 problem+json with Retry-After; closing it frees the slot", async () => {
    const url = new URL(`${app.url}/api/v1/projects/big/exports/annotations?format=csv`);
    const held = await new Promise<{ req: http.ClientRequest; res: http.IncomingMessage }>((resolve, reject) => {
      const req = http.get(
        {
          host: "127.0.0.1",
          port: url.port,
          path: url.pathname + url.search,
          headers: { Authorization: `Bearer ${tokens.big}` },
          agent: false,
        },
        (res) => {
          res.once("data", () => {
            res.pause();
            resolve({ req, res });
          });
        },
      );
      req.on("error", reject);
    });
    expect(held.res.statusCode).toBe(200);
    const refused = problemOf(await call(`/api/v1/projects/big/exports/annotations?limit=5`, tokens.big), 429);
    expect(refused.detail).toContain("at once");
    const r = await call(`/api/v1/projects/big/exports/annotations?format=jsonl`, tokens.big);
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toMatch(/^\d+$/);
    held.req.destroy();
    // The server frees the slot when it sees the client gone.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((res) => setTimeout(res, 100));
      status = (await call(`/api/v1/projects/big/exports/annotations?limit=5`, tokens.big)).status;
    }
    expect(status).toBe(200);
  }, 60_000);
});
