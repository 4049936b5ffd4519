/**
 * Adding, listing and removing a project's providers — one path for the
 * providers page and `npm run providers`. Settings are checked strictly
 * (settings.ts), the API key is stored encrypted (secrets.server.ts) and never
 * read back out by a listing.
 */
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { schema, type Db } from "../../../db/client";
import { DomainError } from "../../errors";
import { encryptionKey, encryptPlaintextKeys, encryptSecret } from "./secrets.server";
import { parseProviderSettings, ProviderSettingsError } from "./settings";

/**
 * A provider cannot be added or removed as asked (400). Its message starts with the input it
 * is about ("baseUrl: an http(s) URL is required"), as `npm run providers` prints it; the
 * providers page words it beside that field.
 */
export class ProviderInputError extends DomainError {}

export const ProviderInput = z.strictObject({
  name: z.string().trim().min(1).max(100),
  kind: z.enum(["openai-compatible", "replay"]).default("openai-compatible"),
  baseUrl: z.string().trim().max(500).optional(),
  apiKey: z.string().max(1000).optional(),
  model: z.string().trim().min(1).max(200),
  concurrency: z.number().int().min(1).max(512).default(4),
  requestsPerMinute: z.number().int().positive().max(1_000_000).nullable().default(null),
  settings: z.record(z.string(), z.unknown()).default({}),
});
export type ProviderInput = z.input<typeof ProviderInput>;

export function addProvider(db: Db, projectId: number, input: ProviderInput) {
  const parsed = ProviderInput.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new ProviderInputError(`${i.path.join(".") || "provider"}: ${i.message}`);
  }
  const d = parsed.data;
  if (d.kind === "openai-compatible") {
    let ok = false;
    try {
      const u = new URL(d.baseUrl ?? "");
      ok = u.protocol === "http:" || u.protocol === "https:";
    } catch {
      /* below */
    }
    if (!ok) throw new ProviderInputError("baseUrl: an http(s) URL is required (e.g. http://localhost:8000/v1)");
  }
  let settings: Record<string, unknown>;
  try {
    settings = parseProviderSettings(d.kind, d.settings);
  } catch (err) {
    throw new ProviderInputError(err instanceof ProviderSettingsError ? err.message : "settings: invalid");
  }
  const exists = db
    .select({ id: schema.providers.id })
    .from(schema.providers)
    .where(and(eq(schema.providers.projectId, projectId), eq(schema.providers.name, d.name)))
    .get();
  if (exists) throw new ProviderInputError(`name: a provider named "${d.name}" exists`);
  const apiKey = d.apiKey ? encryptSecret(d.apiKey, encryptionKey(db.$client.name)) : null;
  return db
    .insert(schema.providers)
    .values({
      projectId,
      name: d.name,
      kind: d.kind,
      baseUrl: d.kind === "replay" ? null : (d.baseUrl ?? null),
      apiKey,
      model: d.model,
      concurrency: d.concurrency,
      requestsPerMinute: d.requestsPerMinute,
      settings,
    })
    .returning({ id: schema.providers.id, name: schema.providers.name })
    .get();
}

/** A project's providers, without their keys (only whether one is set). Migrates plaintext keys first. */
export function listProviders(db: Db, projectId: number) {
  encryptPlaintextKeys(db);
  return db
    .select({
      id: schema.providers.id,
      name: schema.providers.name,
      kind: schema.providers.kind,
      baseUrl: schema.providers.baseUrl,
      model: schema.providers.model,
      settings: schema.providers.settings,
      concurrency: schema.providers.concurrency,
      requestsPerMinute: schema.providers.requestsPerMinute,
      apiKey: schema.providers.apiKey,
    })
    .from(schema.providers)
    .where(eq(schema.providers.projectId, projectId))
    .orderBy(asc(schema.providers.name))
    .all()
    .map(({ apiKey, ...p }) => ({ ...p, hasKey: Boolean(apiKey) }));
}

/** Removes a provider; refuses while a run still uses it (jobs queued or in flight). */
export function removeProvider(db: Db, projectId: number, ref: { id?: number; name?: string }): boolean {
  const row = db
    .select({ id: schema.providers.id })
    .from(schema.providers)
    .where(
      and(
        eq(schema.providers.projectId, projectId),
        ref.id !== undefined ? eq(schema.providers.id, ref.id) : eq(schema.providers.name, ref.name ?? ""),
      ),
    )
    .get();
  if (!row) return false;
  const busy = db.$client
    .prepare(
      `SELECT r.name FROM jobs j JOIN runs r ON r.id = j.run_id
       WHERE j.status IN ('queued','leased') AND r.status IN ('queued','running','paused') AND json_extract(j.payload, '$.providerId') = ? LIMIT 1`,
    )
    .pluck()
    .get(row.id) as string | undefined;
  if (busy) throw new ProviderInputError(`the run "${busy}" still has jobs for this provider; cancel or finish it first`);
  return db.delete(schema.providers).where(eq(schema.providers.id, row.id)).run().changes > 0;
}
