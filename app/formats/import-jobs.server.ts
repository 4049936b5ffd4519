/**
 * The web server's import jobs. A preview or a confirmed import of an
 * uploaded file runs in a child process (scripts/import-job.ts): the server
 * only spawns it, reads its progress lines and keeps the outcome, so a large
 * file costs the server neither CPU on its event loop nor memory. One job
 * runs at a time; later ones wait their turn (state "queued"). A job that
 * dies midway (killed, out of memory) leaves nothing visible; what it had
 * copied is deleted by the next import or server start (stage.server.ts).
 *
 * A job lives no longer than its server. The child holds a pipe from the
 * server (its stdin) and watches its parent process: when the server dies
 * (kill -9, a crash, a stop) the child stops where it is, deletes what it had
 * copied (an import is all or nothing), removes its folder and exits, so no
 * import the restarted server knows nothing of commits later. While a job
 * runs, its folder holds a marker (JOB_MARKER) naming the server; at start,
 * the server removes the folders of jobs whose server is gone and of imports
 * that had finished (removeDeadJobFolders).
 *
 * Jobs are kept in memory by upload token and forgotten with the upload
 * (UPLOAD_TTL_MS after the last activity).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { databasePathFromEnv, stateDirFor } from "../../db/client";
import { repoPath } from "../../db/repo-path";
import type { ImportOptions, ImportProgress, ImportSummary } from "./import.server";
import { processGone } from "./stage-file.server";

/** The uploads folder, beside the database (with PostgreSQL, in CONCORD_STATE_DIR); one folder per upload, named by its token. */
export function uploadRoot(): string {
  return path.join(stateDirFor(databasePathFromEnv()), "concord-uploads");
}

/** An upload's folder name: the token we generated (32 hex digits), never a name from a request. */
export const UPLOAD_TOKEN = /^[0-9a-f]{32}$/;

/** The file in a job's folder while the job runs: which server (host, process) started which child. */
export const JOB_MARKER = "job.json";
/** The stage file a job writes in its folder (ImportOptions.stageFile). */
export const JOB_STAGE = "stage.db";

type JobMarker = { host: string; server: number; child: number; kind: JobKind; startedAt: number };

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
  job: {
    /** The job's folder (the upload's): it holds the marker while the job runs, and the child removes it if the server dies. */
    dir: string;
    onDone?: (job: JobState) => void;
    /** Each progress report of the child (about every 100 ms while the file is read, and when the write starts). */
    onProgress?: (progress: ImportProgress) => void;
  },
): void {
  const { dir, onDone, onProgress } = job;
  if (isBusy(token)) return;
  const entry: Entry = { job: { state: "queued", kind, startedAt: Date.now() }, touched: Date.now() };
  jobs.set(token, entry);
  const run = () => {
    running++;
    entry.job = { state: "running", kind, startedAt: entry.job.startedAt, progress: null };
    const child = spawn(
      process.execPath,
      // The job's cached bundle (scripts/cli.mjs): no tsx loader to start before every import.
      ["--max-old-space-size=1024", path.join("scripts", "cli.mjs"), "import-job", JSON.stringify(opts), dir],
      {
        cwd: repoRoot(),
        env: { ...process.env, DATABASE_URL: databaseFile },
        // stdin: a pipe the server never writes to; the child stops when it closes (the server is gone).
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    entry.child = child;
    child.stdin!.on("error", () => {
      // the child has exited; its close is handled below
    });
    writeMarker(dir, { host: os.hostname(), server: process.pid, child: child.pid ?? 0, kind, startedAt: entry.job.startedAt });
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
        if (msg.progress && entry.job.state === "running") {
          entry.job = { ...entry.job, progress: msg.progress };
          onProgress?.(msg.progress);
        }
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
      // The job's own files (its stage, left by a child that was killed; the marker); the upload stays for the page.
      for (const name of [JOB_MARKER, JOB_STAGE]) fs.rmSync(path.join(dir, name), { force: true });
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

function writeMarker(dir: string, marker: JobMarker): void {
  try {
    fs.writeFileSync(path.join(dir, JOB_MARKER), JSON.stringify(marker));
  } catch {
    // the folder was removed meanwhile (discarded): the child finds no upload and fails
  }
}

/** Whether the server that wrote a job's marker is gone. Only at start: any marker naming this process is then a predecessor's. */
function markerServerGone(m: JobMarker): boolean {
  if (m.host !== os.hostname()) return false; // another machine's job: left to the upload sweep
  if (m.server === process.pid) return true; // a predecessor with our process ID (a container's PID 1)
  return processGone(m.server);
}

/**
 * Removes, when the server starts, the upload folders of import jobs whose
 * server died while they ran (their marker names a process that is gone) and
 * of imports that had finished (the uploaded file named in the folder's
 * meta.json is gone). Such a folder's job can no longer be shown or resumed;
 * its files (the upload, up to 200 MB, and the stage) would otherwise wait
 * for the upload sweep (CONCORD_UPLOAD_TTL_MINUTES). Only folders named as
 * upload tokens are touched (never what a link points to). Call before the server takes requests: a marker
 * naming this very process is taken for a predecessor's. Returns how many.
 */
export function removeDeadJobFolders(root: string = uploadRoot()): number {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    if (!UPLOAD_TOKEN.test(name)) continue;
    const dir = path.join(root, name);
    try {
      // A link with a token's name is not ours to follow.
      if (!fs.lstatSync(dir).isDirectory()) continue;
    } catch {
      continue;
    }
    let dead = false;
    try {
      const marker = JSON.parse(fs.readFileSync(path.join(dir, JOB_MARKER), "utf8")) as JobMarker;
      dead = markerServerGone(marker);
    } catch {
      // no marker (no job ran, or it ended): a finished import when its uploaded file is gone
      try {
        const meta = JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8")) as { stored?: unknown };
        dead = typeof meta.stored === "string" && !fs.existsSync(path.join(dir, path.basename(meta.stored)));
      } catch {
        // no metadata: an upload still arriving, or one the sweep removes
      }
    }
    if (!dead) continue;
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      n++;
    } catch {
      // removed by someone else first
    }
  }
  return n;
}
