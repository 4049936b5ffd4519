/**
 * Issue 36, item 4: heavy reads without limits. One researcher's 40 exports and report pages at once
 * took the sign-in page's p95 to 9.7 s for everyone and the server's memory from 0.3 GB to 1.34 GB.
 *
 * Against the real server on a project of 500 items with two 9,000-character responses each, two
 * judges and three annotators (an 18 MB runs.csv), imported through the real presets:
 *  - a user's heavy reads (exports, report pages and their CSV/LaTeX tables, the judges and
 *    disagreements pages) beyond CONCORD_HEAVY_READS_PER_USER (default 4) at once are answered 429 with
 *    Retry-After and a sentence saying so, before any work; another user is not held back; a download
 *    holds its slot until it has been read or dropped (the export streams: a client that stops reading
 *    stops the reading of the database);
 *  - a burst of 40 heavy reads at once after a label changed, half of them runs exports, downloaded by a
 *    slow client (nothing read for the first seconds, as over a slow network): the sign-in page keeps
 *    answering (p95 under 3 s; today's code made it wait 14 s here, the issue measured 9.7 s; one heavy
 *    computation, the report page after the change, blocks it about 0.8 s on a quiet machine), and the
 *    server's resident memory, at its peak and 2 s after, stays within 1.5x of before (today's code:
 *    2.3x at the peak, 2.1x after, every body built whole and held until sent).
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";

const PASSWORD = "heavy-but-fair-2026";
const RHEA = "rhea@heavy.test";
const SAM = "sam@heavy.test";
const ITEMS = 500;
const MODELS = ["m1", "m2"];
/** Rows of runs.csv: one per verdict (two judges on each response). */
const RUN_ROWS = ITEMS * MODELS.length * 2;
const LIMIT = 4;

let app: RunningApp;
let taskId = 0;

/** A seeded generator (mulberry32), so the data is the same on every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writeFixtures(dir: string) {
  const r = rng(36);
  const words = "the of and to in is was that for on with as by at from this be or an are it not have has which".split(" ");
  const text = (n: number) => {
    const out: string[] = [];
    for (let len = 0; len < n;) {
      const w = words[Math.floor(r() * words.length)];
      out.push(w);
      len += w.length + 1;
    }
    return out.join(" ");
  };
  const yesNo = () => (r() < 0.5 ? "Yes" : "No");
  const items = Array.from({ length: ITEMS }, (_, i) => `i${i}`);
  fs.writeFileSync(
    path.join(dir, "bench.jsonl"),
    items.map((id, i) => JSON.stringify({ id, prompt: `Question ${i}?`, checklist: ["Is it right?"] })).join("\n") + "\n",
  );
  const responses = ["item,model,turn,text"];
  const verdicts = ["judge,item,response,value,raw"];
  const labels = ["unit,annotator,label,response"];
  for (const id of items)
    for (const m of MODELS) {
      responses.push(`${id},${m},1,${text(9000)}`);
      for (const j of ["judge-a", "judge-b"]) verdicts.push(`${j},${id},${m},${yesNo()},because ${text(200)}`);
      for (const a of ["Ada", "Grace", "Alan"]) labels.push(`${id},${a},${yesNo()},${m}`);
    }
  fs.writeFileSync(path.join(dir, "responses.csv"), responses.join("\n") + "\n");
  fs.writeFileSync(path.join(dir, "verdicts.csv"), verdicts.join("\n") + "\n");
  fs.writeFileSync(path.join(dir, "labels.csv"), labels.join("\n") + "\n");
}

beforeAll(async () => {
  const files = tempDir("concord-heavy-");
  writeFixtures(files);
  app = await startApp(async (file) => {
    for (const [preset, name, datasetName] of [
      ["items-jsonl", "bench.jsonl", undefined],
      ["responses", "responses.csv", "bench"],
      ["verdicts", "verdicts.csv", "bench"],
      ["labels-long", "labels.csv", "bench"],
    ] as const) {
      const r = await runImport({ databaseFile: file, projectSlug: "heavy", preset, file: path.join(files, name), datasetName });
      if (!r.committed) throw new Error(`${preset}: ${JSON.stringify(r.errors).slice(0, 300)}`);
    }
    const db = openDatabase(file);
    const project = db.$client.prepare("select id from projects where slug = 'heavy'").get() as { id: number };
    for (const [email, name] of [
      [RHEA, "Rhea"],
      [SAM, "Sam"],
    ]) {
      const user = await createUser({ email, name, password: PASSWORD }, db);
      await setMembership(project.id, user.id, "researcher", db);
    }
    taskId = (db.$client.prepare("select id from tasks where project_id = ?").get(project.id) as { id: number }).id;
    db.$client.close();
  });
}, 180_000);

afterAll(async () => {
  await app?.stop();
});

/** The server's resident memory now and at its peak (kB), from /proc. */
function memoryKb(): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${app.pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** A GET whose body is not read until `read()` is called (the socket's buffers then fill and the server must wait). */
function held(c: AppClient, pathname: string) {
  const url = new URL(app.url + pathname);
  let res: http.IncomingMessage | undefined;
  const req = http.request({
    host: "127.0.0.1",
    port: url.port,
    path: url.pathname + url.search,
    agent: false,
    headers: { Cookie: c.cookieHeader() },
  });
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on("response", (r) => {
      r.pause();
      res = r;
      resolve(r);
    });
    req.on("error", reject);
  });
  req.end();
  return {
    response,
    read: async (): Promise<string> => {
      const r = await response;
      const chunks: Buffer[] = [];
      r.on("data", (b: Buffer) => chunks.push(b));
      const done = new Promise<void>((resolve, reject) => {
        r.on("end", resolve);
        r.on("error", reject);
      });
      r.resume();
      await done;
      return Buffer.concat(chunks).toString("utf8");
    },
    drop: () => {
      res?.destroy();
      req.destroy();
    },
  };
}

/** Every kind of heavy read a researcher can ask for, `n` of them (cycling). */
function heavyPaths(n: number): string[] {
  const t = `/p/heavy/reports/${taskId}`;
  const kinds = [
    "/p/heavy/export/runs.csv",
    `${t}`,
    "/p/heavy/export/annotations.csv",
    `${t}/judges`,
    "/p/heavy/export/runs.jsonl",
    `${t}/disagreements`,
    "/p/heavy/export/judge-agreement.csv",
    `${t}/csv?table=iaa`,
    "/p/heavy/export/agreement.csv",
    `${t}/csv?table=judges`,
    "/p/heavy/export/judge-confusion.jsonl",
    `${t}/csv?table=agreement-judges`,
    `${t}/csv?table=iaa&format=latex`,
    `${t}/csv?table=disagreements`,
    `${t}?_data=${encodeURIComponent("routes/p.$slug.reports.$taskId._index")}`,
  ];
  return Array.from({ length: n }, (_, i) => kinds[i % kinds.length]);
}

const lines = (text: string) => text.split("\n").filter(Boolean).length;

describe("heavy reads", () => {
  it(`beyond ${LIMIT} at once a user gets 429 with Retry-After; a download holds its slot until read or dropped; others are not held back`, async () => {
    const rhea = new AppClient(app.url);
    await rhea.signIn(RHEA, PASSWORD);
    // Four runs.csv downloads that are not read: each stays in progress, its stream waiting for the client.
    const downloads = Array.from({ length: LIMIT }, () => held(rhea, "/p/heavy/export/runs.csv"));
    for (const d of downloads) expect((await d.response).statusCode).toBe(200);

    // Every other heavy read of hers is refused at once: 429, Retry-After, a sentence for the page.
    const refused = await Promise.all(heavyPaths(36).map((p) => rhea.get(p)));
    for (const [i, res] of refused.entries()) {
      const p = heavyPaths(36)[i];
      expect(res.status, p).toBe(429);
      expect(Number(res.headers["retry-after"]), `${p}: Retry-After`).toBeGreaterThanOrEqual(1);
      expect(res.text, p).toMatch(
        /You already have 4 exports or reports being prepared, the most one account may have at once\. Try again in \d+ seconds/,
      );
    }
    // A page says so in the page (the root error boundary), a client-side navigation gets the same answer as data.
    expect(refused[1].headers["content-type"]).toContain("text/html");
    expect(refused[14].headers["x-remix-catch"]).toBe("yes");

    // Light pages answer, and another researcher's downloads are not held back by hers.
    expect((await rhea.get("/p/heavy/export")).status).toBe(200);
    const sam = new AppClient(app.url);
    await sam.signIn(SAM, PASSWORD);
    const samRuns = await sam.get("/p/heavy/export/runs.csv");
    expect(samRuns.status).toBe(200);
    expect(lines(samRuns.text)).toBe(RUN_ROWS + 1);

    // A dropped download gives its slot back.
    downloads[0].drop();
    await expect.poll(async () => (await rhea.get("/p/heavy/export/agreement.csv")).status, { timeout: 10_000 }).toBe(200);

    // The three held downloads, read now, are whole.
    for (const d of downloads.slice(1)) expect(lines(await d.read())).toBe(RUN_ROWS + 1);
    // All four slots are free again.
    const after = await Promise.all(heavyPaths(LIMIT).map((p) => rhea.get(p)));
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(app.output()).not.toMatch(/Error|Something went wrong/);
  });

  it("a burst of 40 heavy reads after a change: the sign-in page keeps answering and peak memory stays within 1.5x of before", async () => {
    const rhea = new AppClient(app.url);
    await rhea.signIn(RHEA, PASSWORD);
    // Before: a server that has served each kind of heavy read once (code loaded, caches made).
    for (const p of heavyPaths(15)) expect((await rhea.get(p)).status, p).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    const before = memoryKb().rss;

    // A change: one label revised, so every report is computed again.
    const db = openDatabase(app.databaseFile);
    db.$client
      .prepare(
        `update annotations set label = case label when '"Yes"' then '"No"' else '"Yes"' end
         where id = (select min(an.id) from annotations an join assignments a on a.id = an.assignment_id join units u on u.id = a.unit_id where u.task_id = ?)`,
      )
      .run(taskId);
    db.$client.close();

    // The peak from here on (writing 5 to clear_refs resets VmHWM, Linux 4.0+).
    fs.writeFileSync(`/proc/${app.pid}/clear_refs`, "5");
    const login = new AppClient(app.url);
    const waits: number[] = [];
    let bursting = true;
    const probe = (async () => {
      while (bursting) {
        const t0 = performance.now();
        const res = await login.get("/login");
        waits.push(performance.now() - t0);
        expect(res.status).toBe(200);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Half of the burst downloads the runs (CSV and JSONL, 18 MB each), half asks for report pages and tables.
    const paths = heavyPaths(20).flatMap((p, i) => [i % 2 === 0 ? "/p/heavy/export/runs.csv" : "/p/heavy/export/runs.jsonl", p]);
    const t0 = performance.now();
    const requests = paths.map((p) => held(rhea, p));
    const statuses = await Promise.all(requests.map(async (r) => (await r.response).statusCode));
    await new Promise((r) => setTimeout(r, 1500));
    const texts = await Promise.all(requests.map((r) => r.read()));
    const burstMs = performance.now() - t0;
    const burst = statuses.map((status, i) => ({ status, text: texts[i], path: paths[i], request: requests[i] }));
    bursting = false;
    await probe;
    const peak = memoryKb().peak;
    await new Promise((r) => setTimeout(r, 2000));
    const settled = memoryKb().rss;

    const ok = burst.filter((r) => r.status === 200);
    const tooMany = burst.filter((r) => r.status === 429);
    waits.sort((a, b) => a - b);
    const p95 = waits[Math.ceil(0.95 * waits.length) - 1];
    console.log(
      `heavy-reads burst: ${ok.length} answered, ${tooMany.length} refused (429) in ${Math.round(burstMs)} ms; ` +
        `sign-in page ${waits.length} probes, p95 ${Math.round(p95)} ms, max ${Math.round(waits[waits.length - 1])} ms; ` +
        `RSS before ${Math.round(before / 1024)} MB, peak ${Math.round(peak / 1024)} MB, 2 s after ${Math.round(settled / 1024)} MB`,
    );
    expect(ok.length + tooMany.length).toBe(40);
    expect(ok.length).toBeGreaterThanOrEqual(LIMIT);
    expect(tooMany.length).toBeGreaterThan(0);
    for (const r of tooMany) expect(Number((await r.request.response).headers["retry-after"]), r.path).toBeGreaterThanOrEqual(1);
    // The downloads that were answered are whole.
    for (const r of ok)
      if (r.path.startsWith("/p/heavy/export/runs.")) expect(lines(r.text), r.path).toBe(RUN_ROWS + (r.path.endsWith(".csv") ? 1 : 0));
    expect(waits.length).toBeGreaterThan(0);
    expect(p95).toBeLessThan(3000);
    expect(peak).toBeLessThanOrEqual(1.5 * before);
    expect(settled).toBeLessThanOrEqual(1.5 * before);
  });
});
