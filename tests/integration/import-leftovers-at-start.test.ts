/**
 * Issue 18 (imports never leave a mess): an import killed midway (kill -9)
 * leaves its chunks invisible, and the server deletes them when it starts —
 * not only at the next import — without touching anyone else's rows; and the
 * stage file the killed import left in the OS temp folder is removed too.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { runImport } from "../../app/formats/import.server";
import { STAGED_TABLES } from "../../app/formats/stage.server";
import { startApp, type RunningApp } from "../support/app-server";
import { tempDir } from "../support/db";
import { killImportMidway } from "../support/killed-import";

const dir = tempDir("concord-leftovers-");
let app: RunningApp | undefined;

afterAll(async () => {
  await app?.stop();
});

function labelsFile(name: string, units: number): string {
  const out = path.join(dir, name);
  const lines = ["unit,annotator,label"];
  for (let u = 1; u <= units; u++) for (const a of ["ann-a", "ann-b"]) lines.push(`u${u},${a},${u % 3 === 0 ? "No" : "Yes"}`);
  fs.writeFileSync(out, lines.join("\n") + "\n");
  return out;
}

const counts = (file: string) => {
  const c = new Database(file, { readonly: true });
  try {
    const n = (t: string) => (c.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n;
    return { rows: Object.fromEntries(STAGED_TABLES.map((t) => [t, n(t)])), pending: n("pending_imports") };
  } finally {
    c.close();
  }
};

describe("an import killed midway", () => {
  it("is cleaned up when the server starts; rows of earlier imports stay", async () => {
    let before: ReturnType<typeof counts> | undefined;
    let left: ReturnType<typeof counts> | undefined;
    let stageFiles: () => string[] = () => [];
    let stageLeft: string[] = [];
    app = await startApp(async (file) => {
      openDatabase(file).$client.close();
      // Someone's earlier, finished import: it must survive the cleanup.
      const earlier = await runImport({
        databaseFile: file,
        projectSlug: "lab",
        preset: "labels-long",
        file: labelsFile("earlier.csv", 20),
      });
      expect(earlier.committed).toBe(true);
      before = counts(file);
      // An import paused after its fifth chunk, then killed.
      const pid = await killImportMidway({ databaseFile: file, projectSlug: "lab", file: labelsFile("killed.csv", 3000), scratchDir: dir });
      left = counts(file);
      stageFiles = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(`concord-stage-${pid}-`));
      stageLeft = stageFiles();
    });
    // Its stage (every row it had checked) was left in the temp folder, and the server's start removed it.
    expect(stageLeft).toHaveLength(1);
    expect(stageFiles()).toEqual([]);
    // The killed import had written rows (invisible) and its reservation.
    expect(left!.pending).toBe(1);
    const total = (c: ReturnType<typeof counts>) => Object.values(c.rows).reduce((a, b) => a + b, 0);
    expect(total(left!)).toBeGreaterThan(total(before!));
    // The server has started: what the killed import wrote is gone, the earlier import is whole.
    const after = counts(app.databaseFile);
    expect(after).toEqual(before);
    expect((await fetch(`${app.url}/login`)).status).toBe(200);
  }, 180_000);
});
