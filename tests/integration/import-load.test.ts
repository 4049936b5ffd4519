/**
 * Issue 18, major 4: an import never stalls annotators. The real production
 * server (loopback only) with 50 annotators submitting labels while a
 * researcher imports a 100,000-row responses file through the import page
 * (upload, preview, confirm over HTTP, as the browser does). Bounded in
 * count (each annotator stops when the import is written, or when its queue
 * is empty) and in time (the test's timeout); nothing here depends on speed:
 * speed is `npm run bench:annotate -- --with-import`.
 *
 * Asserted: every submit answered 302 (no "database is locked", no reset
 * connection), every acknowledged submit is on disk exactly once, submits
 * happened while the import ran, and the import wrote all 100,000 rows.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";
import { openDatabase } from "../../db/client";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { csrfToken, importOverHttp, signInOverHttp, writeResponsesFile } from "../../scripts/import-http";

const ANNOTATORS = 50;
const ITEMS = 2000;
const ROWS = 100_000;
const PASSWORD = "import-load-2026";
const ROUTE = "routes/p.$slug.tasks.$taskId.annotate";

let app: RunningApp;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, {
      annotators: ANNOTATORS,
      items: ITEMS,
      overlap: 2,
      password: PASSWORD,
      kinds: ["checklist-appropriateness"],
    });
    db.$client.close();
  });
}, 180_000);

afterAll(async () => {
  await app?.stop();
});

const signIn = (base: string, email: string) => signInOverHttp(base, email, PASSWORD);

describe("50 annotators submit while a 100k-row import is previewed and confirmed", () => {
  it("0 errors, 0 lost, and the import is written whole", async () => {
    const base = app.url.replace("localhost", "127.0.0.1");
    const host = new URL(base).host;
    const file = path.join(tempDir("concord-import-load-"), "responses.csv");
    const rows = writeResponsesFile(file, ITEMS, ROWS / ITEMS);
    expect(rows).toBe(ROWS);

    const cookies: string[] = [];
    for (const a of scenario.annotators) cookies.push(await signIn(base, a.email)); // scrypt: one at a time
    const researcher = await signIn(base, "researcher@lab.test");
    const taskId = Object.values(scenario.tasks)[0];
    const pathName = `/p/${scenario.slug}/tasks/${taskId}/annotate`;

    let importDone = false;
    let importStartedAt = Infinity;
    let importEndedAt = Infinity;
    const answers: number[] = [];
    const acknowledged: number[] = [];
    const sentAt: number[] = [];
    const errors: string[] = [];

    async function annotator(cookie: string, index: number) {
      const csrf = await csrfToken(base, cookie);
      await new Promise((r) => setTimeout(r, (1000 * index) / ANNOTATORS));
      while (!importDone) {
        const res = await fetch(`${base}${pathName}?_data=${encodeURIComponent(ROUTE)}`, { headers: { Cookie: cookie } });
        if (res.status !== 200) {
          errors.push(`GET ${res.status}`);
          return;
        }
        const data = (await res.json()) as { page: null | { unit: { unitId: number } }; clientToken: string };
        if (!data.page) return; // queue empty
        const form = new URLSearchParams({
          intent: "submit",
          unitId: String(data.page.unit.unitId),
          clientToken: data.clientToken,
          durationMs: "1500",
          answer: index % 2 ? "Yes" : "No",
        });
        if (csrf) form.set("_csrf", csrf);
        // A person reads before submitting; 0.2–0.6 s keeps 50 of them busy without saturating the machine.
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 400));
        sentAt.push(performance.now());
        try {
          const r = await fetch(`${base}${pathName}`, {
            method: "POST",
            redirect: "manual",
            headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Host: host, Cookie: cookie },
            body: form,
          });
          const text = await r.text();
          answers.push(r.status);
          if (r.status === 302) acknowledged.push(data.page.unit.unitId);
          else errors.push(`POST ${r.status}: ${text.slice(0, 200)}`);
        } catch (err) {
          errors.push(`POST failed: ${(err as Error).message}`);
        }
      }
    }

    const importer = (async () => {
      await new Promise((r) => setTimeout(r, 1500));
      importStartedAt = performance.now();
      try {
        return await importOverHttp(base, researcher, { slug: scenario.slug, preset: "responses", file, fileName: "responses.csv" });
      } finally {
        importEndedAt = performance.now();
        importDone = true;
      }
    })();
    const [outcome] = await Promise.all([importer, ...cookies.map((c, i) => annotator(c, i))]);

    expect(errors).toEqual([]);
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((s) => s === 302)).toBe(true);
    // Submits were really sent while the import ran.
    expect(sentAt.filter((t) => t >= importStartedAt && t <= importEndedAt).length).toBeGreaterThan(0);
    expect(outcome.summary).toMatchObject({ errorCount: 0, committed: true, responses: ROWS, newRows: ROWS });

    const db = openDatabase(app.databaseFile);
    try {
      const q = (sql: string) => (db.$client.prepare(sql).get() as { n: number }).n;
      expect(q("select count(*) as n from responses where model like 'bench-model-%'")).toBe(ROWS);
      // Every acknowledged submit is on disk, once.
      expect(q("select count(*) as n from annotations where status = 'submitted'")).toBe(acknowledged.length);
      expect(q("select count(*) as n from assignments where status = 'submitted'")).toBe(acknowledged.length);
      expect(q("select count(*) as n from (select assignment_id from annotations group by assignment_id having count(*) > 1)")).toBe(0);
    } finally {
      db.$client.close();
    }
  }, 600_000);
});
