/**
 * The web server's import jobs. A preview or a confirmed import of an
 * uploaded file runs in a child process (scripts/import-job.ts): the server
 * only spawns it, reads its progress lines and keeps the outcome, so a large
 * file costs the server neither CPU on its event loop nor memory. One job
 * runs at a time; later ones wait their turn (state "queued"). A job that
 * dies midway (killed, out of memory) leaves nothing visible; what it had
 * copied is deleted by the next import (stage.server.ts).
 *
 * Jobs are kept in memory by upload token and forgotten with the upload
 * (UPLOAD_TTL_MS after the last activity).
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { repoPath } from "../../db/repo-path";
import type { ImportOptions, ImportProgress, ImportSummary } from "./import.server";

export type JobKind = "preview" | "confirm";
export type JobState =
  | { state: "queued"; kind: JobKind; startedAt: number }
  | { state: "running"; kind: JobKind; startedAt: number; progress: ImportProgress | null }
  | { state: "done"; kind: JobKind; startedAt: number; finishedAt: number; summary: ImportSummary }
  | { state: "failed"; kind: JobKind; startedAt: number; finishedAt: number; message: string };

type Entry = { job: JobState; child?: ChildProcess; touched: number };

const jobs = new Map<string, Entry>();
const queue: { token: string; run: () => void }[] = [];
let running = 0;
const MAX_RUNNING = 1;

/** The repository root (holds scripts/), from this module in app/formats/, the server build in build/ or a bundle. */
const repoRoot = () => path.dirname(path.dirname(repoPath("scripts/import-job.ts", import.meta.url)));

export function getJob(token: string): JobState | undefined {
  const e = jobs.get(token);
  if (e) e.touched = Date.now();
  return e?.job;
}

export function forgetJob(token: string): void {
  const e = jobs.get(token);
  if (e?.child && e.child.exitCode === null) e.child.kill("SIGTERM");
  jobs.delete(token);
  const i = queue.findIndex((q) => q.token === token);
  if (i >= 0) queue.splice(i, 1);
}

/** Jobs not looked at for `maxAgeMs` (their uploads are gone or abandoned). */
export function sweepJobs(maxAgeMs: number): void {
  const now = Date.now();
  for (const [token, e] of jobs) if (now - e.touched > maxAgeMs && e.job.state !== "running") jobs.delete(token);
}

export function isBusy(token: string): boolean {
  const s = jobs.get(token)?.job.state;
  return s === "queued" || s === "running";
}

/**
 * Starts (or queues) an import of an uploaded file. `opts.file` must be the
 * server's own upload path. Returns at once; poll getJob(token).
 */
export function startJob(
  token: string,
  kind: JobKind,
  databaseFile: string,
  opts: Omit<ImportOptions, "databaseFile" | "onProgress">,
  onDone?: (job: JobState) => void,
): void {
  if (isBusy(token)) return;
  const entry: Entry = { job: { state: "queued", kind, startedAt: Date.now() }, touched: Date.now() };
  jobs.set(token, entry);
  const run = () => {
    running++;
    entry.job = { state: "running", kind, startedAt: entry.job.startedAt, progress: null };
    const child = spawn(
      process.execPath,
      // The job's cached bundle (scripts/cli.mjs): no tsx loader to start before every import.
      ["--max-old-space-size=1024", path.join("scripts", "cli.mjs"), "import-job", JSON.stringify(opts)],
      {
        cwd: repoRoot(),
        env: { ...process.env, DATABASE_URL: databaseFile },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    entry.child = child;
    // Background work: the child checks the file on a thread at nice 10, so the web server (annotators' submits) gets
    // the CPU first, and writes at normal priority, so it never keeps the write lock waiting for the CPU (scripts/import-job.ts).
    let buf = "";
    let result: JobState | undefined;
    let stderr = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: { progress?: ImportProgress; summary?: ImportSummary; failure?: string };
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.progress && entry.job.state === "running") entry.job = { ...entry.job, progress: msg.progress };
        if (msg.summary) result = { state: "done", kind, startedAt: entry.job.startedAt, finishedAt: Date.now(), summary: msg.summary };
        if (msg.failure) result = { state: "failed", kind, startedAt: entry.job.startedAt, finishedAt: Date.now(), message: msg.failure };
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      if (stderr.length < 20_000) stderr += d;
    });
    child.on("close", (code) => {
      running--;
      entry.child = undefined;
      if (!result) {
        // Logged for the operator; the page gets a plain message (no paths, no file content).
        if (stderr) console.error(`import job ${token} exited with ${code}:\n${stderr}`);
        result = {
          state: "failed",
          kind,
          startedAt: entry.job.startedAt,
          finishedAt: Date.now(),
          message: "The import stopped unexpectedly; nothing was written.",
        };
      } else if (stderr && result.state === "failed") console.error(`import job ${token}:\n${stderr}`);
      if (jobs.get(token) === entry) {
        entry.job = result;
        entry.touched = Date.now();
        onDone?.(result);
      }
      next();
    });
  };
  queue.push({ token, run });
  next();
}

function next(): void {
  while (running < MAX_RUNNING && queue.length) queue.shift()!.run();
}
