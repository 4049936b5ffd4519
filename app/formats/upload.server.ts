/**
 * The import page's server side: multipart upload streamed to a temporary
 * file (size-limited), a dry run for the preview, and the confirmed import
 * with exactly the options the preview used (stored next to the upload).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import {
  json,
  MaxPartSizeExceededError,
  unstable_composeUploadHandlers,
  unstable_createFileUploadHandler,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
} from "@remix-run/node";
import { z } from "zod";
import { databasePathFromEnv } from "../../db/client";
import { runImport, ImportUsageError, type ImportSummary } from "./import.server";
import { LABEL_LEVELS, type LabelLevel } from "./labels";
import { PRESETS } from "./presets.server";
import { formatProblem } from "./problems";

/** Uploads larger than this are refused; the command line has no limit. */
const MAX_UPLOAD_BYTES = 200 * 1024 * 1024;
const UPLOAD_ROOT = path.join(os.tmpdir(), "concord-uploads");

export function importPageData(project: { slug: string; name: string }) {
  return {
    project: { slug: project.slug, name: project.name },
    presets: Object.values(PRESETS).map((p) => ({
      name: p.name,
      summary: p.summary,
      kind: p.kind,
      formats: p.formats,
      fields: (p.fields ?? []).map((f) => ({ name: f.name, help: f.help, required: f.required })),
    })),
    levels: LABEL_LEVELS,
    maxUploadMb: MAX_UPLOAD_BYTES / 1024 / 1024,
  };
}

const OptionsSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("preview"),
    preset: z.string().refine((p) => p in PRESETS, "Choose a preset."),
    dataset: z.string().trim().max(200).optional(),
    level: z.enum(["", ...LABEL_LEVELS]).optional(),
  }),
  z.object({ intent: z.literal("confirm"), token: z.string().regex(/^[0-9a-f]{32}$/, "Upload the file again.") }),
]);
type StoredOptions = { preset: string; dataset?: string; level?: string; mapping: Record<string, string>; fileName: string };

export type ActionResult =
  | { ok: false; message: string }
  | { ok: true; intent: "preview" | "confirm"; token: string | null; fileName: string; summary: ImportSummary; problems: string[]; warnings: string[] };

export async function handleImportAction(request: Request, project: { slug: string }) {
  const isMultipart = (request.headers.get("Content-Type") ?? "").startsWith("multipart/form-data");
  let token: string | null = null;
  let originalName = "";
  let form: FormData;
  if (isMultipart) {
    token = crypto.randomBytes(16).toString("hex");
    const dir = path.join(UPLOAD_ROOT, token);
    fs.mkdirSync(dir, { recursive: true });
    try {
      form = await unstable_parseMultipartFormData(
        request,
        unstable_composeUploadHandlers(
          unstable_createFileUploadHandler({
            directory: dir,
            maxPartSize: MAX_UPLOAD_BYTES,
            avoidFileConflicts: false,
            file: ({ filename }) => {
              originalName = path.basename(filename);
              return "upload" + (path.extname(filename).toLowerCase().match(/^\.[a-z0-9]{1,8}$/)?.[0] ?? "");
            },
          }),
          unstable_createMemoryUploadHandler({ maxPartSize: 64 * 1024 }),
        ),
      );
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      if (err instanceof MaxPartSizeExceededError) {
        return json<ActionResult>({ ok: false, message: `The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB; use npm run import for big files.` }, 413);
      }
      throw err;
    }
  } else {
    form = await request.formData();
  }
  const parsed = OptionsSchema.safeParse(Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === "string")));
  if (!parsed.success) return json<ActionResult>({ ok: false, message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") }, 400);
  const o = parsed.data;
  if (o.intent === "confirm") token = o.token;
  if (!token) return json<ActionResult>({ ok: false, message: "Upload a file first." }, 400);
  const dir = path.join(UPLOAD_ROOT, token);
  const stored = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.startsWith("upload")) : undefined;
  if (!stored) {
    return json<ActionResult>(
      { ok: false, message: o.intent === "confirm" ? "The uploaded file has expired; upload it again." : "Choose a file to upload." },
      400,
    );
  }
  // The preview stores its options next to the file; the confirm imports with exactly those.
  const optionsFile = path.join(dir, "options.json");
  let opts: StoredOptions;
  if (o.intent === "preview") {
    const mapping: Record<string, string> = {};
    for (const [k, v] of form.entries()) {
      if (k.startsWith("map.") && typeof v === "string" && v.trim()) mapping[k.slice(4)] = v.trim();
    }
    opts = { preset: o.preset, dataset: o.dataset || undefined, level: o.level || undefined, mapping, fileName: originalName || stored };
    fs.writeFileSync(optionsFile, JSON.stringify(opts));
  } else {
    if (!fs.existsSync(optionsFile)) return json<ActionResult>({ ok: false, message: "Preview the file before confirming." }, 400);
    opts = JSON.parse(fs.readFileSync(optionsFile, "utf8")) as StoredOptions;
  }
  const fileName = opts.fileName;
  let summary: ImportSummary;
  try {
    summary = await runImport({
      databaseFile: databasePathFromEnv(),
      projectSlug: project.slug,
      preset: opts.preset,
      file: path.join(dir, stored),
      fileName,
      dryRun: o.intent === "preview",
      mapping: opts.mapping,
      datasetName: opts.dataset,
      level: opts.level as LabelLevel | undefined,
    });
  } catch (err) {
    if (err instanceof ImportUsageError) return json<ActionResult>({ ok: false, message: err.message }, 400);
    throw err;
  }
  if (o.intent === "confirm" && summary.committed) fs.rmSync(dir, { recursive: true, force: true });
  if (summary.errorCount > 0 && o.intent === "preview") fs.rmSync(dir, { recursive: true, force: true });
  return json<ActionResult>({
    ok: true,
    intent: o.intent,
    token: summary.errorCount > 0 ? null : token,
    fileName,
    summary,
    problems: summary.errors.slice(0, 20).map(formatProblem),
    warnings: summary.warnings.slice(0, 20).map(formatProblem),
  });
}

