/**
 * `npm run import` and `npm run export` against a remote Concord server: `--server URL --token TOKEN` (or the
 * CONCORD_URL and CONCORD_TOKEN environment variables) send the same request to the server's HTTP API
 * (docs/api.md) instead of opening the database:
 *
 *   - import: POST /api/v1/projects/{slug}/imports?preset=NAME&<the flags without dashes>, the file streamed
 *     from disk as the body (text/csv, application/x-ndjson or application/json, by the file's extension or else
 *     the preset's format); a large file is answered 202 and its import polled until it ends. The summary is
 *     printed as the local command prints it (scripts/import-summary.ts); a refused file's problems as the
 *     local command prints its refusals (row, field, message). Exit codes as the local command: 0 imported
 *     (or a valid dry run), 1 the file has problems (nothing written), 2 bad command line, or the server
 *     refused the request (no token, no access, unknown project or preset) or could not be reached.
 *   - export: GET /api/v1/projects/{slug}/exports/{what}?format=csv|jsonl&<options>, streamed to --out FILE or
 *     stdout as it arrives: the same bytes as the local command writes. Exit codes: 0 written, 2 otherwise.
 *
 * A token on the command line is visible to other users of the machine (ps); CONCORD_TOKEN is not.
 * The token is sent only to URL: redirects are not followed.
 */
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { formatProblem } from "../app/formats/problems";
import type { ImportSummary } from "../app/formats/import.server";
import { printImportSummary } from "./import-summary";

export type RemoteTarget = { server: string; token: string };

type Fail = (message: string, code?: number) => never;

/** The remote server named by --server/--token or CONCORD_URL/CONCORD_TOKEN; null for the local database. */
export function remoteTarget(values: { server?: string; token?: string }, fail: Fail): RemoteTarget | null {
  const server = values.server ?? process.env.CONCORD_URL;
  const token = values.token ?? process.env.CONCORD_TOKEN;
  if (!server) {
    if (values.token) fail("--token is for a remote server: give --server URL too (or set CONCORD_URL).");
    return null;
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    fail(`--server must be the server's address (http://host:port), not "${server}".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail(`--server must be an http or https address, not "${server}".`);
  if (!token)
    fail("--server needs a token: --token TOKEN or CONCORD_TOKEN (create one with npm run tokens -- create, or on Settings → API tokens).");
  return { server: url.href.replace(/\/+$/, ""), token };
}

/** A problem details document (RFC 9457) as the API answers errors. */
type ProblemDoc = {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: { row?: number; field?: string; message: string }[];
  summary?: ImportSummary;
};

const CONTENT_TYPES: Record<string, string> = {
  csv: "text/csv",
  jsonl: "application/x-ndjson",
  json: "application/json",
};

function formatOf(file: string): string | null {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".csv") return "csv";
  if (ext === ".jsonl" || ext === ".ndjson") return "jsonl";
  if (ext === ".json") return "json";
  return null;
}

const userAgent = "concord-cli";

async function call(
  target: RemoteTarget,
  method: string,
  pathAndQuery: string,
  fail: Fail,
  init: { body?: ReadableStream | Buffer; headers?: Record<string, string> } = {},
): Promise<Response> {
  try {
    return await fetch(target.server + pathAndQuery, {
      method,
      redirect: "manual",
      headers: { Authorization: `Bearer ${target.token}`, "User-Agent": userAgent, ...init.headers },
      body: init.body,
      ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    fail(`cannot reach ${target.server}: ${cause?.code ?? cause?.message ?? (err as Error).message}.`);
  }
}

async function problemOf(res: Response): Promise<ProblemDoc> {
  const text = await res.text().catch(() => "");
  try {
    const doc = JSON.parse(text) as ProblemDoc;
    if (doc && typeof doc === "object") return doc;
  } catch {
    // not JSON: the text is the detail
  }
  return { status: res.status, title: res.statusText, detail: text.trim().slice(0, 500) || res.statusText };
}

/**
 * The server words its messages for the API (`map=item_id=COLUMN`, `dry_run`: app/api/imports.server.ts apiMessage);
 * the command says its own flags where that wording is unambiguous (`--map item_id=COLUMN`, `--dry-run`).
 */
export function cliMessage(text: string): string {
  return text
    .replace(/\bmap=([^=\s]+)=COLUMN/g, "--map $1=COLUMN")
    .replace(/\blevel=(nominal|ordinal|interval)\b/g, "--level $1")
    .replace(/\bannotators=(COL,COL|all)/g, "--annotators $1")
    .replace(/\bvariant_of=JUDGE=BASE/g, "--variant-of JUDGE=BASE")
    .replace(/\bvariant_of\b/g, "--variant-of")
    .replace(/\bdry_run\b/g, "--dry-run")
    .replace(/\bgiven with (level|categories|annotators)\b/g, "given with --$1");
}

/** A summary from the server as the local command has it: its project's slug, and messages in the command's words. */
function localSummary(s: ImportSummary, project: string): ImportSummary {
  const words = (ps: ImportSummary["errors"]) => ps.map((p) => ({ ...p, message: cliMessage(p.message) }));
  const level = s.level ? { ...s.level, reason: cliMessage(s.level.reason) } : s.level;
  return { ...s, project: s.project ?? project, errors: words(s.errors ?? []), warnings: words(s.warnings ?? []), level };
}

/** A refusal of the server: its detail, and each error by row and field as the local command names them. */
function describeProblem(p: ProblemDoc, status: number): string {
  const lines = [cliMessage(p.detail || p.title || `the server answered ${status}`)];
  const errors = p.errors ?? [];
  for (const e of errors.slice(0, 20))
    lines.push(`  error: ${formatProblem({ row: e.row ?? 0, field: e.field, message: cliMessage(e.message) })}`);
  if (errors.length > 20) lines.push(`  … and ${errors.length - 20} more errors`);
  return lines.join("\n");
}

export type RemoteImportOptions = {
  preset?: string;
  project?: string;
  file: string;
  "dry-run"?: boolean;
  format: string;
  dataset?: string;
  mapping: Record<string, string>;
  level?: string;
  annotators?: string;
  categories?: string;
  variantOf: Record<string, string>;
};

/**
 * The file's name as the server is told it (`filename`: it names the dataset, as the file's name does locally):
 * the base name, or for LLMBar's files the path from its first "LLMBar" or "Processed" folder on, where the llmbar
 * preset reads the subset and the judge (…/LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json). The folders above
 * stay on this machine.
 */
export function nameToSend(file: string): string {
  const parts = path.resolve(file).split(path.sep).filter(Boolean);
  const top = parts.findIndex((p) => p === "LLMBar" || p === "Processed");
  return top >= 0 && top < parts.length - 1 ? parts.slice(top).join("/") : path.basename(file);
}

/** The import's query: the command's flags without dashes (app/api/operations/imports.ts). */
export function importQuery(o: RemoteImportOptions): URLSearchParams {
  const q = new URLSearchParams({ preset: o.preset!, filename: nameToSend(o.file) });
  if (o.dataset !== undefined) q.set("dataset", o.dataset);
  if (o.level !== undefined) q.set("level", o.level);
  if (o.annotators !== undefined) q.set("annotators", o.annotators);
  if (o.categories !== undefined) q.set("categories", o.categories);
  for (const [field, column] of Object.entries(o.mapping)) q.append("map", `${field}=${column}`);
  for (const [judge, base] of Object.entries(o.variantOf)) q.append("variant_of", `${judge}=${base}`);
  if (o["dry-run"]) q.set("dry_run", "true");
  return q;
}

/** `npm run import -- --server … FILE`: returns the exit code. */
export async function remoteImport(target: RemoteTarget, o: RemoteImportOptions, fail: Fail): Promise<number> {
  const project = encodeURIComponent(o.project!);
  let size: number;
  try {
    const st = fs.statSync(o.file);
    if (!st.isFile()) fail(`${o.file} is not a file.`);
    size = st.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") fail(`${o.file}: no such file.`);
    throw err;
  }
  const format = formatOf(o.file);
  if (!format) fail(`${path.basename(o.file)}: name the file .csv, .jsonl or .json so that the server knows how to read it.`);
  const query = importQuery(o);
  // Sent on the request; a retry by hand with the same command is a new request (a new key).
  const headers = {
    "Content-Type": CONTENT_TYPES[format],
    "Content-Length": String(size),
    "Idempotency-Key": randomUUID(),
    Accept: "application/json",
  };
  const body = Readable.toWeb(fs.createReadStream(o.file)) as ReadableStream;
  const res = await call(target, "POST", `/api/v1/projects/${project}/imports?${query}`, fail, { body, headers });
  const out: Output = { format: o.format === "json" ? "json" : "text", project: o.project! };
  if (res.status === 200 || res.status === 201) {
    const done = (await res.json()) as ImportResource;
    if (done.summary) return show(done.summary, out);
  }
  const location = res.headers.get("Location");
  // Accepted (a large file): the import runs on the server; a refused file (422): its import holds the summary.
  if (location && (res.status === 202 || res.status === 422)) {
    const refusal = res.status === 422 ? await problemOf(res) : null;
    const statusPath = new URL(location, target.server).pathname;
    return pollImport(target, statusPath, out, fail, refusal);
  }
  return refuse("import", await problemOf(res), res.status, out);
}

/** How the command prints: its --format, and the project's slug (the server's summary does not repeat it). */
type Output = { format: "text" | "json"; project: string };

const show = (s: ImportSummary, out: Output) => printImportSummary(localSummary(s, out.project), out.format);

/** Exit code and output for a refused request: 1 with the problems when the file was refused (422), else 2. */
function refuse(command: string, p: ProblemDoc, status: number, out: Output): number {
  if (status === 422 && p.summary) return show(p.summary, out);
  if (status === 422) {
    if (out.format === "json")
      console.log(JSON.stringify({ errorCount: p.errors?.length ?? 0, errors: p.errors ?? [], detail: p.detail }, null, 2));
    else console.error(describeProblem(p, status));
    return 1;
  }
  console.error(`${command}: ${describeProblem(p, status)}`);
  return 2;
}

type ImportResource = {
  status: "queued" | "running" | "succeeded" | "failed";
  summary?: ImportSummary | null;
  problems?: { row?: number; field?: string; message: string }[] | null;
  error?: string | null;
};

async function pollImport(target: RemoteTarget, statusPath: string, out: Output, fail: Fail, refusal: ProblemDoc | null): Promise<number> {
  for (let wait = 100; ; wait = Math.min(1000, wait * 1.5)) {
    const res = await call(target, "GET", statusPath, fail, { headers: { Accept: "application/json" } });
    if (res.status === 429) {
      await sleep(1000 * Number(res.headers.get("Retry-After") ?? 1));
      continue;
    }
    if (!res.ok) return refuse("import", refusal ?? (await problemOf(res)), refusal ? 422 : res.status, out);
    const r = (await res.json()) as ImportResource;
    if (r.status === "succeeded" && r.summary) return show(r.summary, out);
    if (r.status === "failed") {
      if (r.summary) return show(r.summary, out);
      return refuse("import", { detail: r.error ?? "The import failed; nothing was written.", errors: r.problems ?? [] }, 422, out);
    }
    await sleep(wait);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type RemoteExportOptions = {
  project?: string;
  what?: string;
  format?: string;
  out?: string;
  /** The export's options as the command's flags (reference, unparsed, missing-as, task, run …). */
  options: Record<string, string | undefined>;
};

/** The export's query: the command's options under the API's names (app/api/operations/exports.ts). */
export function exportQuery(o: RemoteExportOptions): URLSearchParams {
  const q = new URLSearchParams({ format: o.format ?? "csv" });
  for (const [flag, value] of Object.entries(o.options)) {
    if (value === undefined) continue;
    q.set(flag === "missing-as" ? "missing" : flag.replace(/-/g, "_"), value);
  }
  return q;
}

/**
 * Counts the records of a CSV or JSONL stream as it passes (line ends outside quoted CSV fields), to say
 * "wrote N rows" as the local command does.
 */
export class RowCounter {
  private inQuotes = false;
  lines = 0;
  constructor(private readonly csv: boolean) {}
  add(chunk: Uint8Array) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 0x22 && this.csv) this.inQuotes = !this.inQuotes;
      else if (c === 0x0a && !this.inQuotes) this.lines++;
    }
  }
  rows() {
    return this.csv ? Math.max(0, this.lines - 1) : this.lines;
  }
}

/** `npm run export -- --server …`: writes the export to --out or stdout; returns the exit code. */
export async function remoteExport(target: RemoteTarget, o: RemoteExportOptions, fail: Fail): Promise<number> {
  const url = `/api/v1/projects/${encodeURIComponent(o.project!)}/exports/${encodeURIComponent(o.what!)}?${exportQuery(o)}`;
  const res = await call(target, "GET", url, fail);
  if (!res.ok || !res.body)
    return refuse("export", await problemOf(res), res.status === 422 ? 400 : res.status, { format: "text", project: o.project! });
  const counter = new RowCounter((o.format ?? "csv") === "csv");
  if (o.out) {
    // Written beside, then renamed: a failed transfer leaves no half file under the name asked for.
    const part = `${o.out}.part-${process.pid}`;
    const fd = fs.openSync(part, "w");
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        counter.add(chunk);
        fs.writeSync(fd, chunk);
      }
      fs.closeSync(fd);
      fs.renameSync(part, o.out);
    } catch (err) {
      fs.closeSync(fd);
      fs.rmSync(part, { force: true });
      fail(`the transfer from ${target.server} broke off: ${(err as Error).message}`);
    }
    console.error(`export: wrote ${counter.rows()} rows to ${o.out}`);
  } else {
    process.stdout.on("error", (err: NodeJS.ErrnoException) => process.exit(err.code === "EPIPE" ? 0 : 1));
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      if (!process.stdout.write(chunk)) await once(process.stdout, "drain");
  }
  return 0;
}
