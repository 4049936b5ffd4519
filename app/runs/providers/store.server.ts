/**
 * Adding, listing and removing a project's providers — one path for the
 * providers page and `npm run providers`. Settings are checked strictly
 * (settings.ts), the API key is stored encrypted (secrets.server.ts) and never
 * read back out by a listing.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, type DalLike } from "../../dal.server";
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

export async function addProvider(db: DalLike, projectId: number, input: ProviderInput): Promise<{ id: number; name: string }> {
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
  const dal = dalOf(db);
  const { providers } = dal.t;
  const apiKey = d.apiKey ? encryptSecret(d.apiKey, encryptionKey(dal.location)) : null;
  return dal.tx(async (q) => {
    const exists = first(
      await q
        .select({ id: providers.id })
        .from(providers)
        .where(and(eq(providers.projectId, projectId), eq(providers.name, d.name))),
    );
    if (exists) throw new ProviderInputError(`name: a provider named "${d.name}" exists`);
    const [row] = await q
      .insert(providers)
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
      .returning({ id: providers.id, name: providers.name });
    return row;
  });
}

/** A project's providers, without their keys (only whether one is set). Migrates plaintext keys first. */
export async function listProviders(db: DalLike, projectId: number) {
  const d = dalOf(db);
  const { providers } = d.t;
  await encryptPlaintextKeys(d);
  const rows = await d.q
    .select({
      id: providers.id,
      name: providers.name,
      kind: providers.kind,
      baseUrl: providers.baseUrl,
      model: providers.model,
      settings: providers.settings,
      concurrency: providers.concurrency,
      requestsPerMinute: providers.requestsPerMinute,
      apiKey: providers.apiKey,
    })
    .from(providers)
    .where(eq(providers.projectId, projectId))
    .orderBy(asc(providers.name));
  return rows.map(({ apiKey, ...p }) => ({ ...p, hasKey: Boolean(apiKey) }));
}

/** Removes a provider; refuses while a run still uses it (jobs queued or in flight). */
export async function removeProvider(db: DalLike, projectId: number, ref: { id?: number; name?: string }): Promise<boolean> {
  const d = dalOf(db);
  const { providers } = d.t;
  return d.tx(async (q) => {
    const row = first(
      await q
        .select({ id: providers.id })
        .from(providers)
        .where(
          and(eq(providers.projectId, projectId), ref.id !== undefined ? eq(providers.id, ref.id) : eq(providers.name, ref.name ?? "")),
        ),
    );
    if (!row) return false;
    // A job's provider is in its JSON payload (JSON text on SQLite, jsonb on PostgreSQL).
    const providerOfJob = d.dialect === "postgres" ? sql`(j.payload->>'providerId')::bigint` : sql`json_extract(j.payload, '$.providerId')`;
    const [busy] = await d.rows<{ name: string }>(
      sql`SELECT r.name FROM jobs j JOIN runs r ON r.id = j.run_id
          WHERE j.status IN ('queued', 'leased') AND r.status IN ('queued', 'running', 'paused') AND ${providerOfJob} = ${row.id} LIMIT 1`,
      q,
    );
    if (busy) throw new ProviderInputError(`the run "${busy.name}" still has jobs for this provider; cancel or finish it first`);
    const removed = await q.delete(providers).where(eq(providers.id, row.id)).returning({ id: providers.id });
    return removed.length > 0;
  });
}
