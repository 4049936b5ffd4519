/**
 * Provider calls of the worker: each provider is built once per worker from
 * its row, and one job's request goes out through it — for HTTP providers,
 * every attempt admitted and logged by the provider's shared limits
 * (providers/shared-limits.server.ts) before it is sent.
 */
import { eq } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { requestJson, type CallLogDetail, type ClaimedJob } from "./jobs.server";
import { providerFromRow } from "./providers/index.server";
import { sharedLimits } from "./providers/shared-limits.server";
import { ProviderError, type CallRecord, type LlmProvider } from "./providers/types";

/** A provider as the worker uses it: the client, its shared limits, and whether calls are gated (replays are not). */
export type ProviderEntry = { provider: LlmProvider; concurrency: number; requestsPerMinute: number | null; gated: boolean };

/** The providers a worker has used, built once each. */
export class ProviderCache {
  private entries = new Map<number, ProviderEntry>();
  constructor(private readonly db: Db) {}

  get(id: number): ProviderEntry {
    let p = this.entries.get(id);
    if (!p) {
      const row = this.db.select().from(schema.providers).where(eq(schema.providers.id, id)).get();
      if (!row) throw new ProviderError(`provider ${id} no longer exists`, false);
      p = {
        provider: providerFromRow(row, this.db.$client.name),
        concurrency: row.concurrency,
        requestsPerMinute: row.requestsPerMinute,
        gated: row.kind !== "replay",
      };
      this.entries.set(id, p);
    }
    return p;
  }
}

/**
 * Sends one job's request. `stop` ends waiting for a slot (pause or cancel);
 * `cancel` also aborts the request in flight. Ungated (replay) calls are
 * reported to `onCall`; gated ones are logged by the shared limits.
 */
export function callProvider(
  db: Db,
  p: ProviderEntry,
  job: ClaimedJob,
  o: { owner: string; callLog: CallLogDetail; onCall?: (c: CallRecord) => void; stop: AbortSignal; cancel: AbortSignal },
) {
  const gate = p.gated
    ? sharedLimits(db).gate({
        providerId: job.payload.providerId,
        concurrency: p.concurrency,
        requestsPerMinute: p.requestsPerMinute,
        owner: o.owner,
        runId: job.runId,
        jobId: job.id,
        requestJson: (r) => requestJson(r, o.callLog),
        signal: o.stop,
      })
    : undefined;
  return p.provider.call(job.payload.request, {
    onCall: gate ? undefined : o.onCall,
    gate,
    signal: o.cancel,
    stopSignal: o.stop,
  });
}
