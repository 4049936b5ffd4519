/**
 * Researcher downloads in real Chromium: every link of the Export page downloads
 * a file (CSV read the way pandas.read_csv reads it: a header row and the same
 * number of fields on every row; JSONL one object per line), and the release
 * links of the curation page download the dataset's JSONL and its markdown
 * changelog. Each CSV is also loaded with pandas.read_csv itself, by the first
 * of $PANDAS_PYTHON, python3 on PATH and /usr/bin/python3 that has pandas; with
 * none, that check is skipped with a loud warning — and fails when CI is set
 * (.ci/run installs python3-pandas).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../db/client";
import * as schema from "../../db/schema";
import { COLUMNS, EXPORT_KINDS } from "../../app/formats/export.server";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";
import { tempDir } from "../support/db";

let app: RunningApp;
let browser: Browser;
let benchId: number;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const PYTHONS = [...new Set([process.env.PANDAS_PYTHON, "python3", "/usr/bin/python3"].filter((p): p is string => !!p))];
/** The first python with pandas, or null. */
const pandasPython = PYTHONS.find((py) => spawnSync(py, ["-c", "import pandas"], { encoding: "utf8" }).status === 0) ?? null;
const inCI = !!process.env.CI && !["0", "false"].includes(process.env.CI.toLowerCase());
const NO_PANDAS = `pandas.read_csv check NOT RUN: none of ${PYTHONS.join(", ")} can import pandas (install python3-pandas, or set PANDAS_PYTHON)`;
if (!pandasPython && !inCI) console.warn(`\n*** ${NO_PANDAS} ***\n`);

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    db.$client.close();
  });
  const db = openDatabase(app.databaseFile);
  benchId = db.select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
  db.$client.close();
  browser = await launchBrowser();
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** Clicks a link and returns the downloaded file's name and text. */
async function download(link: ReturnType<Browser["page"]["locator"]>): Promise<{ name: string; text: string; file: string }> {
  const [d] = await Promise.all([browser.page.waitForEvent("download"), link.click()]);
  const dir = tempDir("concord-download-");
  const file = path.join(dir, d.suggestedFilename());
  await d.saveAs(file);
  return { name: d.suggestedFilename(), text: fs.readFileSync(file, "utf8"), file };
}

describe("Export page", () => {
  it("every CSV and JSONL link downloads a file that loads", async () => {
    const { page } = browser;
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/p/demo/export`);
    const links = page.locator("table a[download]");
    expect(await links.count()).toBe(EXPORT_KINDS.length * 2);
    for (const what of EXPORT_KINDS) {
      const row = page.locator("tbody tr").filter({ has: page.locator("td:first-child", { hasText: new RegExp(`^${what}$`) }) });
      // CSV: a header row with the documented columns, every row with as many fields.
      const csv = await download(row.getByRole("link", { name: "CSV" }));
      expect(csv.name).toBe(`demo-${what}.csv`);
      const parsed = Papa.parse<string[]>(csv.text, { skipEmptyLines: true });
      expect(parsed.errors, `${what}.csv: ${JSON.stringify(parsed.errors.slice(0, 2))}`).toEqual([]);
      expect(parsed.data[0]).toEqual(COLUMNS[what]);
      for (const [i, r] of parsed.data.entries()) expect(r.length, `${what}.csv row ${i + 1}`).toBe(COLUMNS[what].length);
      if (what === "annotations") expect(parsed.data.length - 1).toBeGreaterThan(100); // the demo's labels, not an empty file
      if (what === "runs") expect(parsed.data.length - 1).toBeGreaterThan(100);
      if (!pandasPython && inCI) throw new Error(`${NO_PANDAS}; CI is set, so this is a failure`);
      if (pandasPython) {
        const py = spawnSync(
          pandasPython,
          ["-c", "import sys, pandas as pd; df = pd.read_csv(sys.argv[1]); print(len(df), len(df.columns))", csv.file],
          { encoding: "utf8" },
        );
        expect(py.status, py.stderr).toBe(0);
        expect(py.stdout.trim()).toBe(`${parsed.data.length - 1} ${COLUMNS[what].length}`);
      }
      // JSONL: one object per line with the same keys.
      const jsonl = await download(row.getByRole("link", { name: "JSONL" }));
      expect(jsonl.name).toBe(`demo-${what}.jsonl`);
      const lines = jsonl.text.split("\n").filter(Boolean);
      expect(lines.length).toBe(parsed.data.length - 1);
      for (const line of lines.slice(0, 50)) expect(Object.keys(JSON.parse(line))).toEqual(COLUMNS[what]);
    }
    expect(errors).toEqual([]);
  });

  it("an old ?what= link still downloads", async () => {
    const res = await browser.page.request.get(`${app.url}/p/demo/export?what=agreement&format=csv`);
    expect(res.status()).toBe(200);
    expect(res.headers()["content-type"]).toContain("text/csv");
    expect((await res.text()).split("\n")[0]).toBe(COLUMNS.agreement.join(","));
    const bad = await browser.page.request.get(`${app.url}/p/demo/export/nothing.csv`);
    expect(bad.status()).toBe(404);
  });
});

describe("curation release links", () => {
  it("download the dataset JSONL and the markdown changelog", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/curation/${benchId}`);
    const jsonl = await download(page.getByRole("link", { name: /^Download Concord Demo Bench v1 \(JSONL\)$/ }));
    expect(jsonl.name).toBe("concord-demo-bench-v1.jsonl");
    const records = jsonl.text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(records.length).toBe(12); // the demo bench's 12 items
    expect(records.every((r) => typeof r === "object" && r !== null)).toBe(true);
    const changelog = await download(page.getByRole("link", { name: "Changelog (markdown)" }));
    expect(changelog.name).toBe("concord-demo-bench-v1-CHANGELOG.md");
    expect(changelog.text).toMatch(/^# /);
    expect(changelog.text).toContain("Concord Demo Bench");
  });
});
