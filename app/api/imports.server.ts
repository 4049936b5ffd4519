/**
 * Imports through the HTTP API (POST /api/v1/projects/{slug}/imports): the body is the file. It runs the way the
 * Import page runs a confirmed import, with the same pieces:
 *
 * 1. The body streams to a file in a folder of its own beside the database (`concord-uploads/<token>/`, a name
 *    we generate, as the page's uploads: app/formats/upload.server.ts), counted (413 past MAX_UPLOAD_BYTES) and
 *    hashed (for Idempotency-Key) as it passes; it is never buffered nor parsed on the way (scripts/server.ts
 *    hands a bearer request's body to this route unread).
 * 2. Idempotency-Key (app/api/idempotency.server.ts): the key is looked up once the body has arrived, before
 *    anything else happens, so a replay starts nothing and writes nothing.
 * 3. The import runs in a child process (app/formats/import-jobs.server.ts startJob, the page's job machinery,
 *    one job at a time): the same runImport, presets, checks, messages, all-or-nothing write and refusal of
 *    conflicting re-imports as `npm run import` and the page; when the server dies, the child stops and
 *    nothing is written.
 * 4. Each import is recorded in api_imports (./import-records.server.ts): queued → running (with its progress)
 *    → succeeded (its summary) | failed (a refused file's problems, or why it failed). A body of up to
 *    SYNC_MAX_BYTES is answered when the import ends (201, 200 for a dry run, 422 for a refused file, 400 for
 *    options the import refuses); a larger one, or `async=1`, at once with 202 and the record's Location.
 */
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { databasePathFromEnv } from "../../db/client";
import { isPostgresUrl } from "../../db/client-pg";
import { describeSummary, type ImportOptions, type ImportSummary } from "~/formats/import.server";
import { forgetJob, JOB_STAGE, startJob, uploadRoot, type JobState } from "~/formats/import-jobs.server";
import type { LabelLevel } from "~/formats/labels";
import { PRESETS } from "~/formats/presets/index.server";
import type { Problem } from "~/formats/problems";
import type { FileFormat } from "~/formats/source.server";
import { MAX_UPLOAD_BYTES } from "~/formats/upload.server";
import {
  createApiImport,
  finishApiImport,
  getApiImport,
  listApiImports,
  recordApiImportProgress,
  type ApiImportView,
  type FileProblemView,
} from "./import-records.server";
import { idempotent } from "./idempotency.server";
import { IMPORT_CONTENT_TYPES, IMPORT_REPEATED_PARAMS, ImportIdPathParams, ImportQuery, type ImportQueryInput } from "./operations/imports";
import { pageOf, pageRequest } from "./pagination.server";
import { apiJson, problem, PROBLEM_TYPES, zodProblemErrors } from "./problem.server";
import { z } from "zod";

/** Bodies up to this size are answered when their import has ended (unless async=1); larger ones at once (202). */
export const SYNC_MAX_BYTES = 1024 * 1024;
/** The longest a request waits for its import (one queued behind a large one, say) before it is answered 202. */
export const SYNC_WAIT_MS = 60_000;
/** At most one progress write a second per import. */
const PROGRESS_EVERY_MS = 1000;
/** Problems kept with a refused import and listed in its 422 (the import job passes the first 200). */
const MAX_PROBLEMS = 200;
/** The name of a body sent without `filename` (the dataset is then "api-import", unless `dataset` names it). */
const DEFAULT_NAME = "api-import";

const invalid = (detail: string, errors: FileProblemView[]) => problem(400, detail, { type: PROBLEM_TYPES.invalidRequest, errors });
/** A name from the request, shown back: printable, short. */
const shown = (s: string) => s.replace(/[^\x20-\x7E]/g, "?").slice(0, 60);

/**
 * The query of POST …/imports, validated with the operation's schema (./operations/imports.ts): parameters it does
 * not know are refused by name (400), as are those given twice but `map` and `variant_of`, which repeat.
 */
export function parseImportQuery(url: URL): ImportQueryInput {
  const known = Object.keys(ImportQuery.shape);
  const unknown = [...new Set([...url.searchParams.keys()].filter((k) => !known.includes(k)))];
  if (unknown.length) {
    const names = unknown.map(shown);
    throw invalid(
      `Unknown query parameter${names.length === 1 ? "" : "s"}: ${names.join(", ")}. This endpoint takes ${known.join(", ")}.`,
      names.map((field) => ({ field, message: "not a parameter of this endpoint" })),
    );
  }
  const raw: Record<string, string | string[]> = {};
  for (const key of known) {
    const all = url.searchParams.getAll(key);
    if (!all.length) continue;
    if ((IMPORT_REPEATED_PARAMS as readonly string[]).includes(key)) raw[key] = all;
    else if (all.length > 1)
      throw invalid(`${key}: given ${all.length} times; give it once.`, [{ field: key, message: "given more than once" }]);
    else raw[key] = all[0];
  }
  const parsed = ImportQuery.safeParse(raw);
  if (!parsed.success) throw invalid("The query parameters are not valid.", zodProblemErrors(parsed.error));
  return parsed.data;
}

const yes = (v: string | undefined) => v === "1" || v === "true";

/** The file format a Content-Type names (its parameters, such as charset, aside), or 415. */
export function formatOfContentType(contentType: string | null, presetName: string): FileFormat {
  const media = (contentType ?? "").split(";")[0].trim().toLowerCase();
  const accepted = Object.keys(IMPORT_CONTENT_TYPES);
  const format = (IMPORT_CONTENT_TYPES as Record<string, FileFormat>)[media];
  if (!format) {
    throw problem(
      415,
      `${media ? `Content-Type ${shown(media)} is not a file this endpoint reads` : "The request has no Content-Type"}: send ${accepted.join(", ")}.`,
    );
  }
  const preset = PRESETS[presetName];
  if (!preset.formats.includes(format)) {
    const types = accepted.filter((t) => preset.formats.includes((IMPORT_CONTENT_TYPES as Record<string, FileFormat>)[t]));
    throw problem(415, `The ${preset.name} preset reads ${preset.formats.join(" or ")} files, not ${format}: send ${types.join(", ")}.`);
  }
  return format;
}

/**
 * The command's wording of its flags (`--level ordinal`, `--map item=COLUMN`) → the query parameters' (`level=ordinal`,
 * `map=item=COLUMN`), in the messages of runImport and the presets, which are otherwise the command's own.
 */
export function apiMessage(text: string): string {
  return text
    .replace(/--map ([^=\s]+)=COLUMN/g, "map=$1=COLUMN")
    .replace(/--level (nominal|ordinal|interval)\b/g, "level=$1")
    .replace(/--annotators (COL,COL|all)/g, "annotators=$1")
    .replace(/--variant-of JUDGE=BASE/g, "variant_of=JUDGE=BASE")
    .replace(/--(dataset|map|level|annotators|categories)\b/g, "$1")
    .replace(/--variant-of\b/g, "variant_of")
    .replace(/--dry-run\b/g, "dry_run");
}

const apiProblem = (p: Problem): FileProblemView => ({
  ...(p.row > 0 ? { row: p.row } : {}),
  ...(p.field !== undefined ? { field: p.field } : {}),
  message: apiMessage(p.message),
});

/** The summary of an import as `npm run import -- --format json` prints it (scripts/import.ts), the same fields and limits. */
export function summaryJson(s: ImportSummary): Record<string, unknown> {
  const limit = s.dryRun ? 20 : 1000;
  const msg = (p: Problem) => ({ ...p, message: apiMessage(p.message) });
  return {
    items: s.items,
    checklistItems: s.checklistItems,
    references: s.references,
    responses: s.responses,
    verdicts: s.verdicts,
    annotations: s.annotations,
    warnings: s.warnings.slice(0, limit).map(msg),
    errors: s.errors.slice(0, limit).map(msg),
    warningCount: s.warningCount,
    errorCount: s.errorCount,
    dryRun: s.dryRun,
    unchanged: s.unchanged,
    conflictCount: s.conflictCount,
    alreadyPresent: s.alreadyPresent,
    newRows: s.newRows,
    committed: s.committed,
    dataset: s.dataset,
    level: s.level ? { ...s.level, reason: apiMessage(s.level.reason) } : null,
  };
}

/** The import's options for runImport, from the query, read as `npm run import` reads its flags. */
function importOptions(
  q: ImportQueryInput,
): Pick<ImportOptions, "preset" | "dryRun" | "mapping" | "datasetName" | "level" | "annotators" | "categories" | "variantOf" | "fileName"> {
  const mapping: Record<string, string> = {};
  for (const m of q.map ?? []) {
    const eq = m.indexOf("=");
    mapping[m.slice(0, eq).trim()] = m.slice(eq + 1).trim();
  }
  const variantOf: Record<string, string> = {};
  for (const m of q.variant_of ?? []) {
    const eq = m.indexOf("=");
    const judge = m.slice(0, eq).trim();
    if (judge in variantOf)
      throw invalid(`variant_of names judge "${shown(judge)}" twice.`, [{ field: "variant_of", message: "names a judge twice" }]);
    variantOf[judge] = m.slice(eq + 1).trim();
  }
  return {
    preset: q.preset,
    dryRun: yes(q.dry_run),
    mapping,
    datasetName: q.dataset,
    level: q.level as LabelLevel | undefined,
    annotators: q.annotators
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    categories: q.categories?.split(","),
    variantOf,
  };
}

class BodyTooLarge extends Error {}

/** Streams the request's body to `file`, hashing `format` and the bytes; returns the size and the hash (hex). */
async function receiveBody(request: Request, file: string, format: FileFormat): Promise<{ size: number; hash: string }> {
  const hash = createHash("sha256").update(`${format}\n`);
  const out = fs.createWriteStream(file, { flags: "wx", mode: 0o600 });
  let size = 0;
  try {
    if (request.body) {
      for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > MAX_UPLOAD_BYTES) throw new BodyTooLarge();
        hash.update(chunk);
        if (!out.write(chunk)) await once(out, "drain");
      }
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  } catch (err) {
    out.destroy();
    throw err;
  }
  return { size, hash: hash.digest("hex") };
}

const databaseFile = () => (isPostgresUrl(databasePathFromEnv()) ? databasePathFromEnv() : path.resolve(databasePathFromEnv()));
const locationOf = (slug: string, id: number) => `/api/v1/projects/${encodeURIComponent(slug)}/imports/${id}`;
const UNEXPECTED = /unexpectedly; nothing was written\.$/;

/** How an ended job is recorded. */
function outcomeOf(job: JobState): Parameters<typeof finishApiImport>[1] {
  if (job.state === "done") {
    const s = job.summary;
    if (s.errorCount === 0) return { status: "succeeded", summary: summaryJson(s) };
    // The command's report without its list of problems (they are `problems`): the refusal, and why (conflicts).
    const error = apiMessage(
      describeSummary(s, 0)
        .split("\n")
        .filter((l) => !l.startsWith("  "))
        .join(" "),
    );
    return { status: "failed", summary: summaryJson(s), problems: s.errors.slice(0, MAX_PROBLEMS).map(apiProblem), error };
  }
  const message = job.state === "failed" ? job.message : "The import stopped unexpectedly; nothing was written.";
  return { status: "failed", error: apiMessage(message) };
}

/** The answer of an import that has ended (the POST's, when it waited for it). */
function endedAnswer(v: ApiImportView, location: string): Response {
  if (v.status === "succeeded") return apiJson(v, { status: v.dry_run ? 200 : 201, headers: { Location: location } });
  if (v.problems !== null)
    return problem(422, v.error ?? "The file is refused; nothing was written.", { errors: v.problems, headers: { Location: location } });
  if (v.error && UNEXPECTED.test(v.error)) return problem(500, v.error, { headers: { Location: location } });
  // runImport refused the options (a scale that does not parse, labels-wide without annotators, …): the request's fault.
  return problem(400, v.error ?? "The import was refused.", { type: PROBLEM_TYPES.invalidRequest, headers: { Location: location } });
}

/**
 * POST /api/v1/projects/{slug}/imports, once the route has checked the token and the role: see the module's comment.
 */
export async function importFromRequest(
  request: Request,
  access: { project: { id: number; slug: string }; userId: number },
): Promise<Response> {
  const url = new URL(request.url);
  const query = parseImportQuery(url);
  const format = formatOfContentType(request.headers.get("Content-Type"), query.preset);
  const declared = Number(request.headers.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > MAX_UPLOAD_BYTES) throw tooLarge();
  const options = importOptions(query);

  const token = randomBytes(16).toString("hex");
  const dir = path.join(uploadRoot(), token);
  const file = path.join(dir, `upload.${format}`);
  fs.mkdirSync(dir, { recursive: true });
  let started = false;
  try {
    let body: { size: number; hash: string };
    try {
      body = await receiveBody(request, file, format);
    } catch (err) {
      if (err instanceof BodyTooLarge) throw tooLarge();
      throw problem(400, "The body did not arrive whole; send it again.");
    }
    return await idempotent(request, access.userId, body.hash, async () => {
      const { async: _async, preset: _preset, ...given } = query;
      const record = await createApiImport({
        projectId: access.project.id,
        userId: access.userId,
        preset: query.preset,
        options: given,
        format,
        size: body.size,
        dryRun: options.dryRun ?? false,
      });
      const location = locationOf(access.project.slug, record.id);
      const ended = runInBackground(token, dir, record.id, {
        ...options,
        projectSlug: access.project.slug,
        file,
        fileName: query.filename ?? `${DEFAULT_NAME}.${format}`,
        format,
        stageFile: path.join(dir, JOB_STAGE),
      });
      started = true;
      // Nobody waits for an import answered 202: its end is only recorded (or, failing that, logged).
      ended.catch((err: unknown) => console.error(`API import ${record.id}:`, err));
      const wait = body.size <= SYNC_MAX_BYTES && !yes(query.async);
      if (wait) {
        let timer: NodeJS.Timeout | undefined;
        const v = await Promise.race([
          ended,
          new Promise<null>((resolve) => {
            timer = setTimeout(() => resolve(null), SYNC_WAIT_MS);
            timer.unref();
          }),
        ]);
        clearTimeout(timer);
        if (v) return endedAnswer(v, location);
      }
      const now = (await getApiImport(access.project.id, record.id)) ?? record;
      return apiJson(now, { status: 202, headers: { Location: location } });
    });
  } finally {
    if (!started) fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tooLarge = () => problem(413, `The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB, the limit for imports.`);

/**
 * Starts the import job (queued behind any other import of this server) and records its progress and its end.
 * Resolves with the ended record (rejects when the end could not be recorded).
 */
function runInBackground(
  token: string,
  dir: string,
  id: number,
  opts: Omit<ImportOptions, "databaseFile" | "onProgress">,
): Promise<ApiImportView> {
  let lastProgress = 0;
  let writing: Promise<void> = Promise.resolve();
  const logged = (err: unknown) => console.error(`API import ${id}:`, err);
  return new Promise((resolve, reject) => {
    startJob(token, opts.dryRun ? "preview" : "confirm", databaseFile(), opts, {
      dir,
      onProgress: (p) => {
        const at = Date.now();
        if (at - lastProgress < PROGRESS_EVERY_MS && p.phase !== "writing") return;
        lastProgress = at;
        writing = writing.then(() => recordApiImportProgress(id, p).catch(logged));
      },
      onDone: (job) => {
        // The job's folder goes with its end (the upload is not kept for another try, as the page keeps it), and so does the job.
        forgetJob(token);
        fs.rmSync(dir, { recursive: true, force: true });
        const outcome = outcomeOf(job);
        void writing.then(() => finishApiImport(id, outcome)).then(resolve, reject);
      },
    });
  });
}

/** GET …/imports/{id}: the project's import, or 404. */
export async function importOfProject(projectId: number, params: unknown): Promise<ApiImportView> {
  const parsed = ImportIdPathParams.safeParse(params);
  const found = parsed.success ? await getApiImport(projectId, Number(parsed.data.id)) : null;
  if (!found) throw problem(404, "No such import in this project.");
  return found;
}

const IdCursor = z.tuple([z.number().int().positive()]);

/** GET …/imports: a cursor page of the project's imports, newest first. */
export async function importsPage(request: Request, projectId: number) {
  const { limit, after } = pageRequest(request, IdCursor);
  const rows = await listApiImports(projectId, { limit: limit + 1, before: after ? after[0] : null });
  return pageOf(request, rows, limit, (r) => [r.id]);
}
