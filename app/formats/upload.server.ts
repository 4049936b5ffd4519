/**
 * The import page's server side, in steps:
 *
 * 1. upload: the multipart body streams to a file in a folder beside the
 *    database (`concord-uploads/<token>/`, a name we generate; size-limited,
 *    413 beyond). The file's columns are read from its first line.
 * 2. preview: with the chosen mapping, a dry run starts as a job in a child
 *    process (import-jobs.server.ts); the page polls its progress.
 * 3. confirm: the same options, for real; the write is one short transaction.
 *
 * An upload folder is deleted when its confirmed import ends (the page keeps
 * showing the outcome from memory), when abandoned (UPLOAD_TTL after its last
 * use; also when the body never arrived whole), and when the server starts
 * after dying while the folder's job ran (import-jobs.server.ts).
 */
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import {
  json,
  redirect,
  MaxPartSizeExceededError,
  unstable_composeUploadHandlers,
  unstable_createFileUploadHandler,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
} from "@remix-run/node";
import { z } from "zod";
import { asc, eq, sql } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { databasePathFromEnv } from "../../db/client";
import { isPostgresUrl } from "../../db/client-pg";
import { getPreset, type ImportSummary } from "./import.server";
import {
  forgetJob,
  getJob,
  isBusy,
  JOB_STAGE,
  startJob,
  sweepJobs,
  UPLOAD_TOKEN as TOKEN,
  uploadRoot,
  type JobState,
} from "./import-jobs.server";
import { LABEL_LEVELS, parseScale } from "./labels";
import { PRESETS } from "./presets/index.server";
import { formatProblem, ImportRefusal, type Problem } from "./problems";
import { decodedChunks, formatFromName, readCsvHeader, readJsonArray, sniffFile, type FileFormat } from "./source.server";
import type { SampleRow } from "./writer.server";

/** Uploads larger than this are refused (413); the command line has no limit. */
export const MAX_UPLOAD_BYTES = 200 * 1024 * 1024;

/** An upload not used for this long is deleted (CONCORD_UPLOAD_TTL_MINUTES, default 60). */
export function uploadTtlMs(): number {
  const m = Number(process.env.CONCORD_UPLOAD_TTL_MINUTES);
  return (Number.isFinite(m) && m > 0 ? m : 60) * 60_000;
}

export { uploadRoot };

type UploadMeta = {
  project: string;
  preset: string;
  fileName: string;
  stored: string;
  size: number;
  format: FileFormat;
  columns: string[];
  createdAt: number;
  options?: { dataset?: string; level?: string; mapping: Record<string, string>; annotators?: string[]; categories?: string[] };
};

function dirOf(token: string): string {
  if (!TOKEN.test(token)) throw new Error("bad upload token");
  return path.join(uploadRoot(), token);
}

function readMeta(token: string): UploadMeta | undefined {
  if (!TOKEN.test(token)) return undefined;
  try {
    return JSON.parse(fs.readFileSync(path.join(dirOf(token), "meta.json"), "utf8")) as UploadMeta;
  } catch {
    return undefined;
  }
}

/**
 * Uploads whose confirmed import has ended: their folder is deleted at once, and what the page shows of the
 * upload (name, size, options) is kept here, in memory, as the job's outcome is, until the upload sweep.
 */
const imported = new Map<string, { meta: UploadMeta; at: number }>();

function writeMeta(token: string, meta: UploadMeta): void {
  fs.writeFileSync(path.join(dirOf(token), "meta.json"), JSON.stringify(meta));
}

/** Marks an upload as used now (the TTL counts from here). */
function touch(token: string): void {
  const now = new Date();
  try {
    fs.utimesSync(path.join(dirOf(token), "meta.json"), now, now);
  } catch {
    // gone
  }
}

let lastSweep = 0;

/**
 * Deletes upload folders not used for the TTL (abandoned previews, bodies
 * that never arrived whole), except while their job runs. Returns how many.
 */
export function sweepUploads(now = Date.now()): number {
  const root = uploadRoot();
  let removed = 0;
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return 0;
  }
  const ttl = uploadTtlMs();
  for (const name of names) {
    if (!TOKEN.test(name) || isBusy(name)) continue;
    const dir = path.join(root, name);
    let mtime: number;
    try {
      const meta = path.join(dir, "meta.json");
      mtime = fs.existsSync(meta) ? fs.statSync(meta).mtimeMs : fs.statSync(dir).mtimeMs;
    } catch {
      continue;
    }
    if (now - mtime > ttl) {
      fs.rmSync(dir, { recursive: true, force: true });
      forgetJob(name);
      removed++;
    }
  }
  for (const [token, e] of imported) if (now - e.at > ttl) imported.delete(token);
  sweepJobs(ttl);
  return removed;
}

function sweepNowAndThen(): void {
  const now = Date.now();
  if (now - lastSweep < 60_000) return;
  lastSweep = now;
  sweepUploads(now);
}

// Also on a timer, so that an upload abandoned on an idle server goes too.
setInterval(() => sweepNowAndThen(), 10 * 60_000).unref();

/** Command-line wording → the page's wording (the page has selects, not flags). */
export function webMessage(text: string): string {
  return text
    .replace(
      /import with --level (\w+) \(the Label level select on the Import page\)/g,
      'choose "$1" under "Label level" and preview again',
    )
    .replace(/given with --level/g, 'chosen under "Label level"')
    .replace(/import with --level (\w+)/g, 'choose "$1" under "Label level"')
    .replace(/;? ?map it with --map ([^=\s]+)=COLUMN/g, '; choose its column for "$1" in the mapping')
    .replace(/name one with --dataset/g, 'choose the dataset under "Items from dataset"')
    .replace(/--dataset/g, '"Items from dataset"')
    .replace(/--level/g, '"Label level"')
    .replace(/name the annotator columns with --annotators/g, "tick the annotator columns")
    .replace(/give --annotators COL,COL \(or --annotators all to take every one of them\)/g, 'tick them under "Annotator columns"')
    .replace(/--annotators/g, '"Annotator columns"')
    .replace(/the declared scale \(--categories\)/g, 'the declared scale ("Scale")')
    .replace(/--categories/g, '"Scale"')
    .replace(/--map/g, "the mapping");
}

const webProblem = (p: Problem) => webMessage(formatProblem(p));

/** The keys of the first JSON object of a JSONL file (reads only as far as the first line). */
async function jsonlKeys(file: string): Promise<string[]> {
  let text = "";
  for await (const chunk of decodedChunks(file)) {
    text += chunk;
    const lines = text.split("\n");
    const first = lines.find((l, i) => l.trim() && i < lines.length - 1);
    if (first !== undefined) {
      try {
        const v = JSON.parse(first);
        return v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v) : [];
      } catch {
        return [];
      }
    }
    if (text.length > 16 * 1024 * 1024) return [];
  }
  try {
    const v = JSON.parse(text.trim().split("\n")[0] ?? "");
    return v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v) : [];
  } catch {
    return [];
  }
}

/** The keys of the first record of a JSON array (reads only that record); none for other JSON documents. */
async function jsonArrayKeys(file: string): Promise<string[]> {
  let keys: string[] = [];
  try {
    await readJsonArray(
      file,
      {
        element: (v) => {
          keys = v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v) : [];
          return false;
        },
        problem: () => undefined,
      },
      "not an array",
    );
  } catch (err) {
    if (!(err instanceof ImportRefusal) || /not UTF-8/.test(err.message)) throw err;
  }
  return keys;
}

/** Columns of the uploaded file (CSV header, keys of the first JSONL or JSON-array record; none for other JSON layouts). */
async function detectColumns(file: string, format: FileFormat): Promise<string[]> {
  if (format === "csv") return (await readCsvHeader(file)).filter((c) => c !== "");
  if (format === "jsonl") return jsonlKeys(file);
  return jsonArrayKeys(file);
}

/** The column each field would read without a mapping (its name or an alias, any case). */
function defaultMapping(presetName: string, columns: string[]): Record<string, string> {
  const lower = new Map(columns.map((c) => [c.toLowerCase(), c]));
  const out: Record<string, string> = {};
  for (const f of PRESETS[presetName]?.fields ?? []) {
    const hit = [f.name, ...f.aliases].map((a) => lower.get(a.toLowerCase())).find(Boolean);
    if (hit) out[f.name] = hit;
  }
  return out;
}

export type JobView =
  | {
      state: "queued" | "running";
      kind: "preview" | "confirm";
      phase: "waiting" | "checking" | "writing";
      percent: number;
      bytes: number;
      totalBytes: number;
    }
  | { state: "failed"; kind: "preview" | "confirm"; message: string }
  | {
      state: "done";
      kind: "preview" | "confirm";
      seconds: number;
      summary: Omit<ImportSummary, "errors" | "warnings" | "sample">;
      problems: string[];
      warnings: string[];
      sample: SampleRow[];
    };

function viewJob(job: JobState | undefined): JobView | null {
  if (!job) return null;
  if (job.state === "queued") return { state: "queued", kind: job.kind, phase: "waiting", percent: 0, bytes: 0, totalBytes: 0 };
  if (job.state === "running") {
    const p = job.progress;
    return {
      state: "running",
      kind: job.kind,
      phase: p?.phase ?? "checking",
      percent: p && p.totalBytes ? Math.min(100, Math.round((100 * p.bytes) / p.totalBytes)) : 0,
      bytes: p?.bytes ?? 0,
      totalBytes: p?.totalBytes ?? 0,
    };
  }
  if (job.state === "failed") return { state: "failed", kind: job.kind, message: webMessage(job.message) };
  const { errors, warnings, sample, ...summary } = job.summary;
  return {
    state: "done",
    kind: job.kind,
    seconds: (job.finishedAt - job.startedAt) / 1000,
    summary: { ...summary, level: summary.level ? { ...summary.level, reason: webMessage(summary.level.reason) } : null },
    problems: errors.slice(0, 20).map(webProblem),
    warnings: warnings.slice(0, 20).map(webProblem),
    sample,
  };
}

export async function importPageData(project: { id: number; slug: string; name: string }, url: URL, db: DalLike = getDal()) {
  sweepNowAndThen();
  const d = dalOf(db);
  const ds = d.t.datasets;
  // By code point on both dialects (PostgreSQL's default collation would order by locale).
  const name = d.dialect === "postgres" ? sql`${ds.name} collate "C"` : ds.name;
  const datasets = (
    await d.q.select({ name: ds.name }).from(ds).where(eq(ds.projectId, project.id)).groupBy(ds.name).orderBy(asc(name))
  ).map((r) => r.name);
  const base = {
    project: { slug: project.slug, name: project.name },
    presets: Object.values(PRESETS).map((p) => ({
      name: p.name,
      summary: webMessage(p.summary),
      kind: p.kind,
      formats: p.formats,
      fields: (p.fields ?? []).map((f) => ({ name: f.name, help: f.help, required: f.required })),
    })),
    levels: LABEL_LEVELS,
    datasets,
    maxUploadMb: MAX_UPLOAD_BYTES / 1024 / 1024,
  };
  const token = url.searchParams.get("upload") ?? "";
  if (!token) return { ...base, upload: null, uploadGone: false };
  const meta = readMeta(token) ?? imported.get(token)?.meta;
  if (!meta || meta.project !== project.slug) return { ...base, upload: null, uploadGone: true };
  touch(token);
  return {
    ...base,
    uploadGone: false,
    upload: {
      token,
      fileName: meta.fileName,
      size: meta.size,
      preset: meta.preset,
      format: meta.format,
      columns: meta.columns,
      detected: defaultMapping(meta.preset, meta.columns),
      options: meta.options ?? null,
      job: viewJob(getJob(token)),
    },
  };
}

export type ActionResult = { error: string; field?: string };

const Fields = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("upload"), preset: z.string().refine((p) => p in PRESETS, "Choose a preset.") }),
  z.object({
    intent: z.literal("preview"),
    token: z.string().regex(TOKEN),
    dataset: z.string().trim().max(200).optional(),
    level: z.enum(["", ...LABEL_LEVELS]).optional(),
    categories: z.string().trim().max(4000).optional(),
  }),
  z.object({ intent: z.literal("confirm"), token: z.string().regex(TOKEN) }),
  z.object({ intent: z.literal("discard"), token: z.string().regex(TOKEN) }),
]);

const fail = (message: string, status = 400, field?: string) => json<ActionResult>({ error: message, field }, status);

export async function handleImportAction(request: Request, project: { slug: string }) {
  sweepNowAndThen();
  const here = new URL(request.url).pathname;
  const isMultipart = (request.headers.get("Content-Type") ?? "").startsWith("multipart/form-data");
  if (isMultipart) return receiveUpload(request, project, here);
  const form = await request.formData();
  const parsed = Fields.safeParse(Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === "string")));
  if (!parsed.success) return fail("This form is out of date; upload the file again.");
  const o = parsed.data;
  if (o.intent === "upload") return fail("Choose a file to upload.", 400, "file");
  const done = imported.get(o.token);
  if (o.intent === "discard" && done?.meta.project === project.slug) {
    // "Import another file" after a confirmed import: its folder is already gone.
    imported.delete(o.token);
    forgetJob(o.token);
    return redirect(here);
  }
  const meta = readMeta(o.token);
  if (!meta || meta.project !== project.slug)
    return fail(
      "This upload is no longer here: it expired, it was imported, or the server restarted while it was being imported (an import cut short writes nothing). Upload the file again.",
    );
  const dir = dirOf(o.token);
  const back = `${here}?upload=${o.token}`;
  if (o.intent === "discard") {
    forgetJob(o.token);
    fs.rmSync(dir, { recursive: true, force: true });
    return redirect(here);
  }
  if (isBusy(o.token)) return redirect(back);
  if (o.intent === "preview") {
    const preset = PRESETS[meta.preset];
    const mapping: Record<string, string> = {};
    for (const f of preset.fields ?? []) {
      const v = form.get(`map.${f.name}`);
      if (typeof v !== "string" || !v) continue;
      if (!meta.columns.includes(v)) return fail(`"${v}" is not a column of ${meta.fileName}.`, 400, `map.${f.name}`);
      mapping[f.name] = v;
    }
    // labels-wide: the annotator columns picked (checkboxes); other columns are ignored and listed in the preview.
    const annotators = form.getAll("annotators").filter((v): v is string => typeof v === "string");
    const unknown = annotators.find((a) => !meta.columns.includes(a));
    if (unknown !== undefined) return fail(`"${unknown}" is not a column of ${meta.fileName}.`, 400, "annotators");
    // Never every column by default: with none ticked there is nothing to import, and guessing would turn a prompt or a note into an annotator.
    if (preset.name === "labels-wide" && meta.columns.length && annotators.length === 0) {
      return fail("Tick the columns that hold annotators' labels (at least one); the other columns are ignored.", 400, "annotators");
    }
    // The scale, its categories in order, separated by commas.
    let categories: string[] | undefined;
    if (preset.kind === "labels" && o.categories) {
      categories = o.categories.split(",").map((c) => c.trim());
      const scale = parseScale(categories);
      if ("error" in scale) return fail(`Scale: ${scale.error}.`, 400, "categories");
      if ((o.level === "ordinal" || o.level === "interval") && scale.values.some((v) => typeof v !== "number")) {
        return fail(`Scale: the categories must all be numbers for the ${o.level} level.`, 400, "categories");
      }
    }
    meta.options = {
      dataset: o.dataset || undefined,
      level: o.level || undefined,
      mapping,
      ...(annotators.length ? { annotators } : {}),
      ...(categories ? { categories } : {}),
    };
    writeMeta(o.token, meta);
  } else if (!meta.options) return fail("Preview the file before confirming.");
  else {
    const job = getJob(o.token);
    if (!(job?.state === "done" && job.kind === "preview" && job.summary.errorCount === 0))
      return fail("Preview the file before confirming.");
  }
  const opts = meta.options!;
  startJob(
    o.token,
    o.intent,
    isPostgresUrl(databasePathFromEnv()) ? databasePathFromEnv() : path.resolve(databasePathFromEnv()),
    {
      projectSlug: project.slug,
      preset: meta.preset,
      file: path.join(dir, meta.stored),
      fileName: meta.fileName,
      format: meta.format,
      dryRun: o.intent === "preview",
      mapping: opts.mapping,
      datasetName: opts.dataset,
      level: opts.level as (typeof LABEL_LEVELS)[number] | undefined,
      annotators: opts.annotators,
      categories: opts.categories,
      stageFile: path.join(dir, JOB_STAGE),
    },
    {
      dir,
      onDone: (job) => {
        // A confirm that ran to its end (imported, or refused with its problems listed) leaves nothing to do with the
        // upload: its folder goes now, and the outcome stays on the page (from memory) until the upload would expire.
        // A confirm that failed keeps the upload, to preview and confirm again.
        if (o.intent === "confirm" && job.state === "done") {
          imported.set(o.token, { meta, at: Date.now() });
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    },
  );
  return redirect(back);
}

async function receiveUpload(request: Request, project: { slug: string }, here: string) {
  const token = crypto.randomBytes(16).toString("hex");
  const dir = dirOf(token);
  fs.mkdirSync(dir, { recursive: true });
  let originalName = "";
  let stored = "";
  let form: FormData;
  try {
    form = await unstable_parseMultipartFormData(
      request,
      unstable_composeUploadHandlers(
        unstable_createFileUploadHandler({
          directory: dir,
          maxPartSize: MAX_UPLOAD_BYTES,
          avoidFileConflicts: false,
          file: ({ filename }) => {
            originalName = path.basename(filename).slice(0, 200);
            stored =
              "upload" +
              (path
                .extname(filename)
                .toLowerCase()
                .match(/^\.[a-z0-9]{1,8}$/)?.[0] ?? "");
            return stored;
          },
        }),
        unstable_createMemoryUploadHandler({ maxPartSize: 64 * 1024 }),
      ),
    );
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    if (err instanceof MaxPartSizeExceededError) {
      return fail(`The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB, the limit for uploads.`, 413, "file");
    }
    return fail("The upload did not arrive whole; try again.", 400, "file");
  }
  const presetName = form.get("preset");
  const parsed = Fields.safeParse({ intent: form.get("intent"), preset: presetName });
  if (!parsed.success || parsed.data.intent !== "upload") {
    fs.rmSync(dir, { recursive: true, force: true });
    return fail("Choose a preset.", 400, "preset");
  }
  const preset = getPreset(parsed.data.preset);
  const file = stored ? path.join(dir, stored) : "";
  if (!file || !fs.existsSync(file)) {
    fs.rmSync(dir, { recursive: true, force: true });
    return fail("Choose a file to upload.", 400, "file");
  }
  let size: number;
  let columns: string[];
  let format = formatFromName(originalName) ?? preset.formats[0];
  if (!preset.formats.includes(format)) {
    if (preset.formats.length === 1) format = preset.formats[0];
    else {
      fs.rmSync(dir, { recursive: true, force: true });
      return fail(
        `The ${preset.name} preset reads ${preset.formats.join(" or ")} files; ${originalName} looks like ${format}.`,
        400,
        "file",
      );
    }
  }
  try {
    size = sniffFile(file);
    columns = await detectColumns(file, format);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    if (err instanceof ImportRefusal)
      return fail(`${originalName}: ${webMessage(err.message.replace(/Cannot read the file .*/, "Cannot read the file."))}`, 400, "file");
    throw err;
  }
  writeMeta(token, {
    project: project.slug,
    preset: preset.name,
    fileName: originalName,
    stored,
    size,
    format,
    columns,
    createdAt: Date.now(),
  });
  return redirect(`${here}?upload=${token}`);
}
