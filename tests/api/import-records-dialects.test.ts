/**
 * The records of API imports (app/api/import-records.server.ts, table api_imports), the same scenario on SQLite and
 * on PostgreSQL: a record is created queued with its options and size; progress makes it running (and is kept out
 * of a finished record); its end is succeeded with the summary or failed with the problems and the reason; it is
 * read only under its own project; the list is newest first after a cursor's id; and at a server's start the
 * records a dead process of this machine left queued or running are failed, while another machine's and a live
 * process's are left. Expected values follow from the rules stated in the module's header.
 */
import os from "node:os";
import path from "node:path";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { createUser } from "../../app/auth/accounts.server";
import { createProject } from "../../app/projects/projects.server";
import {
  createApiImport,
  failInterruptedApiImports,
  finishApiImport,
  getApiImport,
  INTERRUPTED,
  listApiImports,
  recordApiImportProgress,
} from "../../app/api/import-records.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

const base = { preset: "responses", options: { dataset: "d" }, format: "csv" as const, size: 120, dryRun: false };

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`API import records on ${dialect}`, () => {
    let law: number;
    let art: number;
    let ada: number;

    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "imports.db");
      else {
        testPg ??= await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("import_records_dialects");
      }
      await initDal();
      law = (await createProject({ name: "Law", slug: "law", description: "" })).id;
      art = (await createProject({ name: "Art", slug: "art", description: "" })).id;
      ada = (await createUser({ email: "ada@lab.test", name: "Ada", password: "correct horse battery" })).id;
    });

    it("queued → running with progress → succeeded or failed; read only under its own project", async () => {
      const rec = await createApiImport({ ...base, projectId: law, userId: ada });
      expect(rec).toMatchObject({
        status: "queued",
        preset: "responses",
        options: { dataset: "d" },
        format: "csv",
        size: 120,
        dry_run: false,
        progress: { phase: "waiting", bytes: 0, totalBytes: 120 },
        summary: null,
        problems: null,
        error: null,
        finished_at: null,
      });
      expect(rec.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      await recordApiImportProgress(rec.id, { phase: "checking", bytes: 60, totalBytes: 120 });
      expect(await getApiImport(law, rec.id)).toMatchObject({
        status: "running",
        progress: { phase: "checking", bytes: 60, totalBytes: 120 },
      });
      // Another project's id: nothing.
      expect(await getApiImport(art, rec.id)).toBeNull();

      const done = await finishApiImport(rec.id, { status: "succeeded", summary: { responses: 2 } });
      expect(done).toMatchObject({ status: "succeeded", summary: { responses: 2 }, progress: null, problems: null, error: null });
      expect(done.finished_at).not.toBeNull();
      // A late progress report does not reopen a finished record.
      await recordApiImportProgress(rec.id, { phase: "writing", bytes: 120, totalBytes: 120 });
      expect((await getApiImport(law, rec.id))?.status).toBe("succeeded");

      const bad = await createApiImport({ ...base, projectId: law, userId: ada });
      const refused = await finishApiImport(bad.id, {
        status: "failed",
        summary: { errorCount: 1 },
        problems: [{ row: 3, field: "turn", message: "must be a whole number" }, { message: "The file is empty (0 bytes)." }],
        error: "Import refused (1 problem); nothing was written.",
      });
      expect(refused).toMatchObject({
        status: "failed",
        problems: [{ row: 3, field: "turn", message: "must be a whole number" }, { message: "The file is empty (0 bytes)." }],
        error: "Import refused (1 problem); nothing was written.",
      });
    });

    it("lists newest first, after a cursor's id, per project", async () => {
      const made: number[] = [];
      for (let i = 0; i < 3; i++) made.push((await createApiImport({ ...base, projectId: art, userId: ada })).id);
      expect((await listApiImports(art, { limit: 10, before: null })).map((r) => r.id)).toEqual([...made].reverse());
      expect((await listApiImports(art, { limit: 1, before: made[2] })).map((r) => r.id)).toEqual([made[1]]);
      expect((await listApiImports(law, { limit: 100, before: null })).every((r) => !made.includes(r.id))).toBe(true);
    });

    it("at start, fails what a dead process of this machine left queued or running; leaves another machine's and a live process's", async () => {
      const d = getDal();
      const t = d.t.apiImports;
      const mk = async (status: "queued" | "running", runner: { host: string; pid: number } | undefined) => {
        const [row] = await d.tx((q) =>
          q
            .insert(t)
            .values({ ...base, projectId: law, userId: ada, status, progress: { phase: "checking", bytes: 1, totalBytes: 120, runner } })
            .returning({ id: t.id }),
        );
        return row.id;
      };
      // The records the tests above left open were made by this very process: at a start, a predecessor's (see below).
      await d.tx((q) =>
        q
          .update(t)
          .set({ status: "succeeded" })
          .where(inArray(t.status, ["queued", "running"])),
      );
      const host = os.hostname();
      const dead = await mk("running", { host, pid: 2 ** 22 + 17 });
      // A record naming the starting process itself was left by an earlier process with the same id (a container's PID 1).
      const samePid = await mk("running", { host, pid: process.pid });
      const deadQueued = await mk("queued", { host, pid: 2 ** 22 + 19 });
      const elsewhere = await mk("running", { host: "another-machine", pid: 2 ** 22 + 17 });
      // A live process of this machine: the test runner's parent (this process's id would read as a predecessor's).
      const live = await mk("running", { host, pid: process.ppid });
      const failedBefore = (await d.q.select({ id: t.id }).from(t).where(eq(t.status, "failed"))).length;
      expect(await failInterruptedApiImports()).toBe(3);
      const status = async (id: number) => (await getApiImport(law, id))!;
      expect(await status(dead)).toMatchObject({ status: "failed", error: INTERRUPTED, progress: null });
      expect((await status(dead)).finished_at).not.toBeNull();
      expect((await status(deadQueued)).status).toBe("failed");
      expect((await status(samePid)).status).toBe("failed");
      expect((await status(elsewhere)).status).toBe("running");
      expect((await status(live)).status).toBe("running");
      expect((await d.q.select({ id: t.id }).from(t).where(eq(t.status, "failed"))).length).toBe(failedBefore + 3);
    });
  });
}
