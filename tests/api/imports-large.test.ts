/**
 * A 100,000-response JSONL body pushed through the HTTP API (issue 37) completes: it is streamed to disk, answered
 * 202 (it is over 1 MB), imported by the page's job machinery and polled to its end, with the summary
 * `npm run import -- --format json` gives for the same file on a database in the same state. The times of both and
 * the server's largest resident set seen during the push are printed (for the benchmark figures; not asserted:
 * `npm run bench:api` measures them).
 */
import fs from "node:fs";
import path from "node:path";
import { count } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken } from "../../app/auth/tokens.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";

const ITEMS = 1000;
const MODELS = 100;
let app: RunningApp;
let token: string;
let dir: string;
let cliDb: string;

/** Items i-1 … i-1000 (the items-jsonl preset's fields: id, prompt). */
function itemsFile(): string {
  const file = path.join(dir, "items.jsonl");
  const lines: string[] = [];
  for (let i = 1; i <= ITEMS; i++) lines.push(JSON.stringify({ id: `i-${i}`, prompt: `Question ${i}: what is ${i} squared?` }));
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

/** 100,000 responses (the responses preset's fields: item, model, turn, text), about 12 MB. */
function responsesFile(): string {
  const file = path.join(dir, "responses.jsonl");
  const out = fs.openSync(file, "w");
  for (let m = 1; m <= MODELS; m++) {
    let chunk = "";
    for (let i = 1; i <= ITEMS; i++) {
      chunk +=
        JSON.stringify({
          item: `i-${i}`,
          model: `model-${m}`,
          turn: 1,
          text: `Model ${m} says ${i} squared is ${i * i}, because ${i} × ${i}.`,
        }) + "\n";
    }
    fs.writeSync(out, chunk);
  }
  fs.closeSync(out);
  return file;
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  dir = tempDir("concord-api-import-large-");
  cliDb = path.join(dir, "cli.db");
  const c = openDatabase(cliDb);
  c.insert(schema.projects).values({ slug: "big", name: "Big" }).run();
  c.$client.close();
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const user = await createUser({ email: "ada@lab.test", name: "ada", password: "correct horse battery" }, db);
    const project = db.insert(schema.projects).values({ slug: "big", name: "Big" }).returning({ id: schema.projects.id }).get();
    await setMembership(project.id, user.id, "researcher", db);
    token = (await createApiToken(user.id, { name: "bench", scope: "write", projects: "all" }, db)).token;
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

it("a 100,000-response JSONL push completes with npm run import's summary", async () => {
  const client = new AppClient(app.url);
  const auth = { Authorization: `Bearer ${token}` };
  const items = itemsFile();
  const base = "/api/v1/projects/big/imports";
  const first = await client.request(
    "POST",
    `${base}?preset=items-jsonl&filename=items.jsonl`,
    { ...auth, "Content-Type": "application/x-ndjson" },
    fs.readFileSync(items),
  );
  expect(first.status, first.text).toBe(201);
  const cliItems = await runScript("import", ["--preset", "items-jsonl", "--project", "big", items], { DATABASE_URL: cliDb });
  expect(cliItems.code, cliItems.err).toBe(0);

  const responses = responsesFile();
  const body = fs.readFileSync(responses);
  const idle = rssMb(app.pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(app.pid))), 50);
  const t0 = performance.now();
  const accepted = await client.request(
    "POST",
    `${base}?preset=responses&filename=responses.jsonl`,
    { ...auth, "Content-Type": "application/x-ndjson" },
    body,
  );
  expect(accepted.status, accepted.text).toBe(202);
  let rec = JSON.parse(accepted.text) as Record<string, unknown>;
  while (rec.status === "queued" || rec.status === "running") {
    await new Promise((r) => setTimeout(r, 100));
    rec = JSON.parse((await client.get(accepted.headers.location!, auth)).text) as Record<string, unknown>;
  }
  const apiSeconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  expect(rec.status, JSON.stringify(rec.error)).toBe("succeeded");

  const t1 = performance.now();
  const local = await runScript("import", ["--preset", "responses", "--project", "big", "--format", "json", responses], {
    DATABASE_URL: cliDb,
  });
  const cliSeconds = (performance.now() - t1) / 1000;
  expect(local.code, local.err).toBe(0);
  expect(rec.summary).toEqual(JSON.parse(local.out));
  expect(rec.summary).toMatchObject({ responses: ITEMS * MODELS, newRows: ITEMS * MODELS, errorCount: 0 });
  const db = openDatabase(app.databaseFile);
  try {
    expect((await db.select({ n: count() }).from(schema.responses))[0].n).toBe(ITEMS * MODELS);
  } finally {
    db.$client.close();
  }
  console.log(
    `100,000 responses (${(body.length / 1024 / 1024).toFixed(1)} MB JSONL): API push ${apiSeconds.toFixed(2)} s, ` +
      `npm run import ${cliSeconds.toFixed(2)} s (ratio ${(apiSeconds / cliSeconds).toFixed(2)}); server RSS ${idle.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB during the push`,
  );
});
