/**
 * A provider's settings, validated strictly: an unknown or mistyped key is an
 * error that names the key (a silently ignored "temprature" would run a whole
 * benchmark at the wrong temperature).
 */
import { z } from "zod";
import { RecordingError, validateRecordingName } from "./replay.server";

const common = {
  /** Free text shown on the providers page. */
  note: z.string().max(2000).optional(),
  /** Prices per million tokens, for the cost shown on run pages. */
  pricePerMillionInput: z.number().min(0).max(1e6).optional(),
  pricePerMillionOutput: z.number().min(0).max(1e6).optional(),
};

export const OpenAISettingsSchema = z.strictObject({
  ...common,
  /** Default sampling settings; a run's protocol settings override them per request. */
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  max_tokens: z.number().int().positive().max(1_000_000).optional(),
  timeoutMs: z.number().int().min(100).max(3_600_000).optional(),
  maxRetries: z.number().int().min(0).max(20).optional(),
  backoffBaseMs: z.number().int().min(0).max(600_000).optional(),
  backoffMaxMs: z.number().int().min(0).max(3_600_000).optional(),
  /** How a prefilled assistant reply is continued: vLLM's chat extension, or /v1/completions with a chat template. */
  continueMode: z.enum(["vllm", "template"]).optional(),
  chatTemplate: z.string().max(200_000).optional(),
  bosToken: z.string().max(200).optional(),
  eosToken: z.string().max(200).optional(),
});
export type OpenAISettings = z.infer<typeof OpenAISettingsSchema>;

export const ReplaySettingsSchema = z.strictObject({
  ...common,
  /** The recording's name in the recordings folder (never a path). */
  file: z.string().max(300),
});

export const OPENAI_SETTING_KEYS = Object.keys(OpenAISettingsSchema.shape);
export const REPLAY_SETTING_KEYS = Object.keys(ReplaySettingsSchema.shape);

export class ProviderSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProviderSettingsError";
  }
}

/** Settings of a provider kind, checked; throws ProviderSettingsError naming the key ("settings.temprature: unknown setting …"). */
export function parseProviderSettings(kind: "openai-compatible" | "replay", settings: unknown): Record<string, unknown> {
  if (settings === null || typeof settings !== "object" || Array.isArray(settings))
    throw new ProviderSettingsError("settings: must be a JSON object");
  if (JSON.stringify(settings).length > 300_000) throw new ProviderSettingsError("settings: too large");
  const schema = kind === "replay" ? ReplaySettingsSchema : OpenAISettingsSchema;
  const parsed = schema.safeParse(settings);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    if (i.code === "unrecognized_keys") {
      const known = kind === "replay" ? REPLAY_SETTING_KEYS : OPENAI_SETTING_KEYS;
      const key = String(i.keys[0]);
      throw new ProviderSettingsError(`settings.${key}: unknown setting for a ${kind} provider (known: ${known.join(", ")})`);
    }
    throw new ProviderSettingsError(`settings.${i.path.join(".")}: ${i.message}`);
  }
  const out = parsed.data as Record<string, unknown>;
  if (kind === "replay") {
    try {
      out.file = validateRecordingName(out.file);
    } catch (err) {
      throw new ProviderSettingsError(`settings.file: ${err instanceof RecordingError ? err.message : "invalid recording name"}`);
    }
  }
  return out;
}
