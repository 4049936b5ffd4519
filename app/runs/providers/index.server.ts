/** Builds a provider client from its database row (settings checked, API key decrypted). */
import type { schema } from "../../../db/client";
import { OpenAIProvider } from "./openai.server";
import { ReplayProvider } from "./replay.server";
import { decryptSecret, encryptionKey } from "./secrets.server";
import { parseProviderSettings, ProviderSettingsError } from "./settings";
import { ProviderError, type LlmProvider } from "./types";

export type ProviderRow = typeof schema.providers.$inferSelect;

/**
 * @param databaseFile the database the row came from (its encryption key sits beside it); default DATABASE_URL.
 * Throws a ProviderError (not retryable) naming the bad setting, or saying the key cannot be decrypted.
 */
export function providerFromRow(row: ProviderRow, databaseFile?: string): LlmProvider {
  let s: Record<string, unknown>;
  try {
    s = parseProviderSettings(row.kind, row.settings ?? {});
  } catch (err) {
    throw new ProviderError(`provider ${row.name}: ${err instanceof ProviderSettingsError ? err.message : "invalid settings"}`, false);
  }
  if (row.kind === "replay") return new ReplayProvider(String(s.file), row.model);
  let apiKey: string | null;
  try {
    apiKey = decryptSecret(row.apiKey, row.apiKey ? encryptionKey(databaseFile) : undefined);
  } catch (err) {
    throw new ProviderError(`provider ${row.name}: ${(err as Error).message}`, false);
  }
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : undefined);
  return new OpenAIProvider({
    baseUrl: row.baseUrl ?? "",
    apiKey,
    model: row.model,
    label: row.name,
    concurrency: row.concurrency,
    requestsPerMinute: row.requestsPerMinute,
    defaults: { temperature: num("temperature"), top_p: num("top_p"), max_tokens: num("max_tokens") },
    timeoutMs: num("timeoutMs"),
    maxRetries: num("maxRetries"),
    backoffBaseMs: num("backoffBaseMs"),
    backoffMaxMs: num("backoffMaxMs"),
    continueMode: s.continueMode === "template" ? "template" : "vllm",
    chatTemplate: typeof s.chatTemplate === "string" ? s.chatTemplate : undefined,
    bosToken: typeof s.bosToken === "string" ? s.bosToken : undefined,
    eosToken: typeof s.eosToken === "string" ? s.eosToken : undefined,
  });
}
