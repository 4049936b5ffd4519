/**
 * WAL checkpoints off the event loop (db/checkpointer.ts): while a
 * checkpointer runs, the pages the owner commits reach the database file
 * through the thread, not through the owner's commits (its own automatic
 * checkpoint is raised to the backstop); stopping puts SQLite's default back;
 * the thread never keeps a process alive.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BACKSTOP_PAGES, startCheckpointer } from "../../db/checkpointer";
import { openDatabase } from "../../db/client";
import { tempDir } from "../support/db";

const pageSize = 4096;

/** Commits `n` transactions of `rows` rows of ~3.5 KB each (about one page per row). */
function write(db: ReturnType<typeof openDatabase>, n: number, rows: number) {
  const ins = db.$client.prepare("INSERT INTO cp_probe (v) VALUES (?)");
  const tx = db.$client.transaction((k: number) => {
    for (let j = 0; j < rows; j++) ins.run(`${k}:${j}:`.padEnd(3500, "x"));
  });
  for (let k = 0; k < n; k++) tx.immediate(k);
}

async function until(test: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("background checkpointer", () => {
  it("copies the owner's commits into the database file while the owner's own checkpoint waits for the backstop", async () => {
    const file = path.join(tempDir(), "cp.db");
    const db = openDatabase(file);
    db.$client.exec("CREATE TABLE cp_probe (id INTEGER PRIMARY KEY, v TEXT)");
    const cp = startCheckpointer(db, { intervalMs: 20 });
    expect(cp).not.toBeNull();
    expect(db.$client.pragma("wal_autocheckpoint", { simple: true })).toBe(BACKSTOP_PAGES);
    const before = fs.statSync(file).size;
    // 2,000 pages: more than SQLite's default of 1,000 (the owner would have checkpointed), far below the backstop.
    write(db, 200, 10);
    await until(async () => (await cp!.frames()) >= 2000);
    // The rows are in the database file itself, not only in the log: the thread copied them.
    await until(() => fs.statSync(file).size - before >= 2000 * pageSize);
    expect((db.$client.prepare("SELECT COUNT(*) AS n FROM cp_probe").get() as { n: number }).n).toBe(2000);
    await cp!.stop();
    expect(db.$client.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    db.$client.close();
  });

  it("is shared by the users of one connection and ends with the last", async () => {
    const file = path.join(tempDir(), "cp.db");
    const db = openDatabase(file);
    const a = startCheckpointer(db)!;
    const b = startCheckpointer(db)!;
    await a.stop();
    expect(db.$client.pragma("wal_autocheckpoint", { simple: true })).toBe(BACKSTOP_PAGES);
    await b.stop();
    expect(db.$client.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    db.$client.close();
  });

  it("has nothing to do for an in-memory database", () => {
    const db = openDatabase(":memory:");
    expect(startCheckpointer(db)).toBeNull();
    db.$client.close();
  });

  it("never keeps a process alive", () => {
    const file = path.join(tempDir(), "cp.db");
    openDatabase(file).$client.close();
    const code = `import { openDatabase } from "./db/client.ts"; import { startCheckpointer } from "./db/checkpointer.ts"; const db = openDatabase(${JSON.stringify(file)}); startCheckpointer(db); console.log("started");`;
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stdout).toContain("started");
    expect(r.status).toBe(0);
    // Exits as soon as its own work is done (module loading aside), not after a timer or never.
    expect(Date.now() - t0).toBeLessThan(25_000);
  });
});
