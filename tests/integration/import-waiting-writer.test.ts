/**
 * Issue 16 (benchmarks unchanged): an import copies in chunks and lets the
 * write lock go between them; it leaves the lock free for long (at least
 * CHUNK_GAP_MS, twice the hold) only when a writer found it held since the
 * last chunk, and otherwise for IDLE_GAP_MS, so an import nobody waits for
 * is not slowed by pauses (it was 3.1× its floor in bench:import with a
 * 10 ms pause after every chunk).
 *
 * The writer leaves its mark through the real paths (writeWithoutBusyWait,
 * as the annotate route submits; the run workers' withoutBusyWait); the
 * import is the real runImport with the labels-long preset, in its own
 * process as the app runs it.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { lastWriteWaiter, markWriteWaiter, openDatabase, waitMarkPath, writeWithoutBusyWait } from "../../db/client";
import { runImport, type ImportSummary } from "../../app/formats/import.server";
import { CHUNK_GAP_MS, ChunkGaps, IDLE_GAP_MS, LONG_GAP_EVERY_MS } from "../../app/formats/stage-lock.server";
import { withoutBusyWait } from "../../app/runs/providers/shared-limits.server";
import { tempDir } from "../support/db";
import { exited } from "../support/worker-process";

const dir = tempDir("concord-waiting-writer-");
const ANNOTATORS = ["ann-a", "ann-b", "ann-c", "ann-d"];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function labelsFile(name: string, units: number): string {
  const out = path.join(dir, name);
  const lines = ["unit,annotator,label,text"];
  for (let u = 1; u <= units; u++)
    for (let a = 0; a < ANNOTATORS.length; a++) lines.push(`u${u},${ANNOTATORS[a]},${(u + a) % 3 ? "Yes" : "No"},text of unit ${u}`);
  fs.writeFileSync(out, lines.join("\n") + "\n");
  return out;
}

/** A migrated database whose four annotators already exist (an earlier small import), so the big one's rows all go in chunks. */
async function database(name: string): Promise<string> {
  const file = path.join(dir, name);
  openDatabase(file).$client.close();
  const first = await runImport({
    databaseFile: file,
    projectSlug: "gaps",
    preset: "labels-long",
    file: labelsFile(`${name}-first.csv`, 20),
  });
  expect(first.errorCount).toBe(0);
  return file;
}

describe("the gap an import leaves between its chunks", () => {
  it("is long only after a writer of the same database marked that it waited, or after LONG_GAP_EVERY_MS of holds", async () => {
    const file = await database("marks.db");
    const importer = new Database(file);
    const writer = new Database(file);
    const elsewhere = new Database(path.join(dir, "other.db"));
    const gaps = new ChunkGaps(importer);
    // Nobody waited: the lock is let go for a moment only.
    expect(gaps.after(5)).toBe(IDLE_GAP_MS);
    // A writer of another database file waited: not this import's concern.
    await pause(3);
    markWriteWaiter(elsewhere);
    expect(gaps.after(5)).toBe(IDLE_GAP_MS);
    // A writer of this file waited (another connection, as the server's is): at least CHUNK_GAP_MS, and twice a longer hold.
    await pause(3);
    markWriteWaiter(writer);
    expect(waitMarkPath(writer)).toBe(path.resolve(file) + "-wait");
    expect(lastWriteWaiter(importer)).toBeGreaterThan(Date.now() - 1000);
    expect(gaps.after(4)).toBe(CHUNK_GAP_MS);
    await pause(3);
    markWriteWaiter(writer);
    expect(gaps.after(8)).toBe(16);
    // A mark already answered does not make the next gap long.
    await pause(3);
    expect(gaps.after(5)).toBe(IDLE_GAP_MS);
    // Holds that add up to LONG_GAP_EVERY_MS give one long gap even with no mark (a writer sleeping in SQLite's own busy handler leaves none).
    const few = Math.ceil(LONG_GAP_EVERY_MS / 10);
    const seen = Array.from({ length: few }, () => gaps.after(10));
    expect(seen.slice(0, -1).every((g) => g === IDLE_GAP_MS)).toBe(true);
    expect(seen.at(-1)).toBe(Math.max(CHUNK_GAP_MS, 20));
    expect(gaps.long).toEqual({ waited: 2, periodic: 1 });
    for (const c of [importer, writer, elsewhere]) c.close();
  });

  it("a writer that finds the lock held marks it, through both ways of writing without the busy handler", async () => {
    const file = await database("both.db");
    const db = openDatabase(file);
    db.$client.exec("create table busy_probe (id integer primary key, value text not null)");
    const holder = new Database(file);
    const mark = waitMarkPath(db.$client)!;
    fs.rmSync(mark, { force: true });
    holder.exec("begin immediate");
    const write = (v: string) =>
      db.transaction((tx) => tx.run(sql`insert into busy_probe (value) values (${v})`), { behavior: "immediate" });
    setTimeout(() => holder.exec("commit"), 30);
    await writeWithoutBusyWait(db, () => write("submit"));
    const first = lastWriteWaiter(db.$client);
    expect(first).toBeGreaterThan(0);
    await pause(3);
    holder.exec("begin immediate");
    expect(() => withoutBusyWait(db, () => write("worker"))).toThrow(/busy|locked/i);
    expect(lastWriteWaiter(db.$client)).toBeGreaterThan(first);
    holder.exec("commit");
    // The mark holds nothing: the probe table has the one write that went in.
    expect(fs.statSync(mark).size).toBe(0);
    expect(db.$client.prepare("select value from busy_probe").all()).toEqual([{ value: "submit" }]);
    holder.close();
    db.$client.close();
  });

  it("an import nobody waits for pauses only periodically; one with a writer waiting lets every write in", async () => {
    const UNITS = 6_000; // 24,000 labels: about 24 chunks of at most 1,000 rows
    // Alone: no writer marked anything, so every gap but the periodic ones was IDLE_GAP_MS.
    const alone = await runImport({
      databaseFile: await database("alone.db"),
      projectSlug: "gaps",
      preset: "labels-long",
      file: labelsFile("alone.csv", UNITS),
    });
    expect(alone.errorCount).toBe(0);
    expect(alone.annotations).toBe(UNITS * ANNOTATORS.length);
    expect(alone.lockHolds).toBeGreaterThan(20);
    expect(alone.lockLongGaps.waited).toBe(0);
    // One periodic long gap per LONG_GAP_EVERY_MS of holds, at most.
    expect(alone.lockLongGaps.periodic).toBeLessThanOrEqual(Math.floor(alone.lockTotalMs / LONG_GAP_EVERY_MS));

    // With a writer: the import in its own process (as the app runs it), this process writing every 3 ms meanwhile.
    const file = await database("busy.db");
    const db = openDatabase(file);
    db.$client.exec("create table busy_probe (id integer primary key, value text not null)");
    const script = path.join(dir, "import-child.mts");
    fs.writeFileSync(
      script,
      `import { runImport } from ${JSON.stringify(path.resolve("app/formats/import.server.ts"))};
const s = await runImport({ databaseFile: ${JSON.stringify(file)}, projectSlug: "gaps", preset: "labels-long", file: ${JSON.stringify(labelsFile("busy.csv", UNITS))} });
process.stdout.write(JSON.stringify(s) + "\\n");
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    const done = exited(child);
    let running = true;
    void done.then(() => (running = false));
    let acknowledged = 0;
    while (running) {
      await writeWithoutBusyWait(db, () =>
        db.transaction((tx) => tx.run(sql`insert into busy_probe (value) values (${`w${acknowledged}`})`), { behavior: "immediate" }),
      );
      acknowledged++;
      await pause(3);
    }
    expect(await done).toBe(0);
    const busy = JSON.parse(out.trim().split("\n").at(-1)!) as ImportSummary;
    expect(busy.errorCount).toBe(0);
    expect(busy.annotations).toBe(UNITS * ANNOTATORS.length);
    // The import saw the writer's marks and left it the lock...
    expect(busy.lockLongGaps.waited).toBeGreaterThan(0);
    // ...and every acknowledged write is stored, once.
    expect(acknowledged).toBeGreaterThan(0);
    expect(db.$client.prepare("select count(*) as n, count(distinct value) as d from busy_probe").get()).toEqual({
      n: acknowledged,
      d: acknowledged,
    });
    db.$client.close();
  }, 120_000);
});
