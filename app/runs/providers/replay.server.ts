/**
 * The replay provider: serves recorded outputs from a JSON file instead of a
 * live model (the demo has no network). Every reply it gives is marked
 * `recorded`, and the UI labels such providers "recorded outputs".
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
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ProviderError, type CallRecord, type LlmProvider, type LlmReply, type LlmRequest } from "./types";

export const ReplayFileSchema = z.object({
  recorded: z.literal(true),
  description: z.string().default(""),
  entries: z.array(z.object({ key: z.string(), text: z.string(), model: z.string().optional(), note: z.string().optional() })),
});
export type ReplayFile = z.infer<typeof ReplayFileSchema>;

export function requestKey(req: LlmRequest): string {
  const canonical = JSON.stringify({ kind: req.kind, messages: req.messages.map((m) => [m.role, m.content]) });
  return crypto.createHash("sha256").update(canonical).digest("hex");
}

const cache = new Map<string, { mtimeMs: number; byKey: Map<string, string> }>();

const resolved = new Map<string, string>();

/**
 * Resolves a replay file path: absolute, or relative to the working directory,
 * or else to the checkout this module lives in (so the demo's
 * "seeds/recorded/…" works wherever the server was started from).
 */
export function resolveReplayPath(file: string): string {
  if (path.isAbsolute(file)) return file;
  const hit = resolved.get(file);
  if (hit) return hit;
  let found = path.resolve(process.cwd(), file);
  if (!fs.existsSync(found)) {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    for (let i = 0; i < 5; i++, dir = path.dirname(dir))
      if (fs.existsSync(path.join(dir, file))) {
        found = path.join(dir, file);
        break;
      }
  }
  if (fs.existsSync(found)) resolved.set(file, found);
  return found;
}

export function loadReplay(file: string): Map<string, string> {
  const full = resolveReplayPath(file);
  const stat = fs.statSync(full);
  const hit = cache.get(full);
  if (hit && hit.mtimeMs === stat.mtimeMs) return hit.byKey;
  const parsed = ReplayFileSchema.safeParse(JSON.parse(fs.readFileSync(full, "utf8")));
  if (!parsed.success) throw new Error(`replay file ${file}: ${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message}`);
  const byKey = new Map<string, string>();
  for (const e of parsed.data.entries) byKey.set(e.model ? `${e.model}\u0000${e.key}` : e.key, e.text);
  cache.set(full, { mtimeMs: stat.mtimeMs, byKey });
  return byKey;
}

export class ReplayProvider implements LlmProvider {
  readonly label: string;
  constructor(
    private readonly file: string,
    private readonly model: string,
  ) {
    this.label = `${model} (recorded)`;
  }
  async call(req: LlmRequest, opts: { onCall?: (c: CallRecord) => void } = {}): Promise<LlmReply> {
    const t0 = Date.now();
    const key = requestKey(req);
    const recorded = loadReplay(this.file);
    const text = recorded.get(`${this.model}\u0000${key}`) ?? recorded.get(key);
    const request = { replay: true, model: this.model, key, kind: req.kind, messages: req.messages };
    if (text === undefined) {
      opts.onCall?.({ request, reply: null, status: 404, latencyMs: 0, promptTokens: null, completionTokens: null, error: "no recorded output for this request" });
      throw new ProviderError(`no recorded output for this request (key ${key.slice(0, 12)}) in ${this.file}`, false, 404);
    }
    opts.onCall?.({ request, reply: { recorded: true, text }, status: 200, latencyMs: Date.now() - t0, promptTokens: null, completionTokens: null, error: null });
    return { text, promptTokens: null, completionTokens: null, latencyMs: Date.now() - t0, attempts: 1, recorded: true };
  }
}
