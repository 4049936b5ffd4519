/**
 * The zod schema of the Providers page's forms (add, delete), parsed once by
 * the route's action. Server-only, so zod stays out of the browser bundle.
 */
import { z } from "zod";

const SettingsJson = z
  .string()
  .max(300_000)
  .transform((s, ctx) => {
    if (!s.trim()) return {};
    try {
      const v = JSON.parse(s);
      if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* below */
    }
    ctx.addIssue({ code: "custom", message: 'Settings must be a JSON object, such as {"temperature": 0}.' });
    return z.NEVER;
  });

export const ProviderForm = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("create"),
    name: z.string().trim().min(1).max(100),
    kind: z.enum(["openai-compatible", "replay"]),
    baseUrl: z.string().trim().max(500).default(""),
    apiKey: z.string().max(500).default(""),
    model: z.string().trim().min(1).max(200),
    concurrency: z.coerce.number().int().min(1).max(512).default(4),
    requestsPerMinute: z
      .string()
      .default("")
      .transform((s) => (s.trim() ? Number(s) : null))
      .pipe(z.number().int().positive().nullable()),
    recording: z.string().max(300).default(""),
    settings: SettingsJson.default({}),
  }),
  z.object({ intent: z.literal("delete"), providerId: z.coerce.number().int().positive() }),
]);
