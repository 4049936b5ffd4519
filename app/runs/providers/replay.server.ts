/**
 * The replay provider: serves recorded outputs from a JSON file instead of a
 * live model (the demo has no network). Every reply it gives is marked
 * `recorded`, and the UI labels such providers "recorded outputs".
 *
 * Recordings come only from the project's recordings folder — seeds/recorded
 * in the checkout, or the one folder named by CONCORD_RECORDINGS_DIR — and a
 * provider names one BY NAME (`settings.file: "demo-refinebench.json"`),
 * never by path: a name with a slash, "..", or anything not listed in that
 * folder is refused before any file is opened. Symbolic links in the folder
 * are not listed, and a database file is never opened (see app/files.server.ts
 * for why even reading it would lose data). Errors name the recording and the
 * field, never the file's content.
 *
 * File shape (seeds/recorded/*.json):
 *   { "recorded": true, "description": "...", "entries": [ { "key": "<sha256>", "text": "...", "model"?: "...", "note"?: "..." } ] }
 * The key is requestKey(request): a hash of the request kind and messages, so
 * the same prompt always finds the same recorded output. An entry that names a
 * `model` answers only the provider serving that model (two recorded models
 * given the same first prompt answer differently); an entry without one
 * answers any model.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { repoPath } from "../../../db/repo-path";
import { isDatabaseFile } from "../../files.server";
import { ProviderError, type CallRecord, type LlmProvider, type LlmReply, type LlmRequest } from "./types";

export const ReplayFileSchema = z.object({
  recorded: z.literal(true),
  description: z.string().default(""),
  entries: z.array(z.object({ key: z.string(), text: z.string(), model: z.string().optional(), note: z.string().optional() })),
});
export type ReplayFile = z.infer<typeof ReplayFileSchema>;

/** A recording larger than this is refused (the demo's are a few hundred kB). */
export const MAX_RECORDING_BYTES = 64 * 1024 * 1024;

export function requestKey(req: LlmRequest): string {
  const canonical = JSON.stringify({ kind: req.kind, messages: req.messages.map((m) => [m.role, m.content]) });
  return crypto.createHash("sha256").update(canonical).digest("hex");
}

export class RecordingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RecordingError";
  }
}

let defaultDir: string | undefined;

/** The recordings folder: CONCORD_RECORDINGS_DIR, or seeds/recorded of the checkout this module lives in. */
export function recordingsDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.CONCORD_RECORDINGS_DIR?.trim();
  if (fromEnv) return path.resolve(fromEnv);
  if (defaultDir) return defaultDir;
  return (defaultDir = repoPath("seeds/recorded", import.meta.url));
}

/** The recordings a provider may name: regular *.json files directly in the folder (no links, no subfolders). */
export function listRecordings(dir = recordingsDir()): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith(".json"))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
/** Rows written before recordings were chosen by name stored the checkout-relative path of one. */
const LEGACY_PREFIX = "seeds/recorded/";

/**
 * Checks a recording name without touching the file: a bare file name
 * (no slash, no "..", not absolute), listed in the recordings folder.
 * Returns the name (a stored legacy "seeds/recorded/NAME" becomes NAME).
 */
export function validateRecordingName(value: unknown, dir = recordingsDir()): string {
  if (typeof value !== "string" || value.trim() === "")
    throw new RecordingError("a recording name is required (a file in the recordings folder)");
  let name = value.trim();
  if (name.startsWith(LEGACY_PREFIX) && !name.slice(LEGACY_PREFIX.length).includes("/")) name = name.slice(LEGACY_PREFIX.length);
  if (path.isAbsolute(name) || name.includes("/") || name.includes("\\") || name.includes("..") || name.includes("\0") || !NAME.test(name))
    throw new RecordingError("a recording is chosen by its name in the recordings folder, not by a path");
  if (!listRecordings(dir).includes(name))
    throw new RecordingError(`no recording named "${name}" in the recordings folder (${listRecordings(dir).join(", ") || "it is empty"})`);
  // A hard link to the database is a regular file of the folder too (checked by stat, which opens nothing).
  if (isDatabaseFile(path.join(dir, name))) throw new RecordingError(`recording ${name}: is a database file, not a recording`);
  return name;
}

const cache = new Map<string, { mtimeMs: number; size: number; byKey: Map<string, string> }>();

/** Loads a recording by name (validated again here: nothing else reaches the file system). */
export function loadReplay(name: string): Map<string, string> {
  const dir = recordingsDir();
  const valid = validateRecordingName(name, dir);
  const full = path.join(dir, valid);
  const stat = fs.lstatSync(full);
  if (!stat.isFile()) throw new RecordingError(`recording ${valid}: not a regular file`);
  if (isDatabaseFile(full)) throw new RecordingError(`recording ${valid}: is a database file, not a recording`);
  if (stat.size > MAX_RECORDING_BYTES) throw new RecordingError(`recording ${valid}: too large (${stat.size} bytes)`);
  const hit = cache.get(full);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.byKey;
  let doc: unknown;
  try {
    doc = JSON.parse(fs.readFileSync(full, "utf8"));
  } catch {
    throw new RecordingError(`recording ${valid}: not valid JSON`); // never the parser's message: it quotes the text
  }
  const parsed = ReplayFileSchema.safeParse(doc);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new RecordingError(`recording ${valid}: ${i.path.join(".") || "the file"} does not have the recordings shape (${i.code})`);
  }
  const byKey = new Map<string, string>();
  for (const e of parsed.data.entries) byKey.set(e.model ? `${e.model}\u0000${e.key}` : e.key, e.text);
  cache.set(full, { mtimeMs: stat.mtimeMs, size: stat.size, byKey });
  return byKey;
}

export class ReplayProvider implements LlmProvider {
  readonly label: string;
  /** @param recording a recording's name in the recordings folder */
  constructor(
    private readonly recording: string,
    private readonly model: string,
  ) {
    this.label = `${model} (recorded)`;
  }
  async call(req: LlmRequest, opts: { onCall?: (c: CallRecord) => void } = {}): Promise<LlmReply> {
    const t0 = Date.now();
    const key = requestKey(req);
    let recorded: Map<string, string>;
    try {
      recorded = loadReplay(this.recording);
    } catch (err) {
      throw new ProviderError(err instanceof RecordingError ? err.message : "the recording cannot be read", false);
    }
    const text = recorded.get(`${this.model}\u0000${key}`) ?? recorded.get(key);
    const request = { replay: true, model: this.model, key, kind: req.kind, messages: req.messages };
    if (text === undefined) {
      opts.onCall?.({
        request,
        reply: null,
        status: 404,
        latencyMs: 0,
        promptTokens: null,
        completionTokens: null,
        error: "no recorded output for this request",
      });
      throw new ProviderError(`no recorded output for this request (key ${key.slice(0, 12)}) in recording ${this.recording}`, false, 404);
    }
    opts.onCall?.({
      request,
      reply: { recorded: true, text },
      status: 200,
      latencyMs: Date.now() - t0,
      promptTokens: null,
      completionTokens: null,
      error: null,
    });
    return { text, promptTokens: null, completionTokens: null, latencyMs: Date.now() - t0, attempts: 1, recorded: true };
  }
}
