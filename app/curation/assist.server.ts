/**
 * Model-assisted curation against a project's provider (OpenAI-compatible or replay):
 * - the back-check (RefineBench step 3): the checklist judge answers every item on
 *   the reference answer; items it answers "No" (or that it leaves unparsed) are flagged;
 * - checklist drafting (RefineBench G.3): a draft the maintainer edits before it is added.
 * Every HTTP attempt is admitted by the provider's shared limits (concurrency and
 * requests per minute across every process, as run calls are) and logged in
 * provider_calls before it is sent (never with the API key).
 */
import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";
import { parseChecklistLines } from "~/runs/protocols/checklist-parse";
import { judgePrompt, userQuery } from "~/runs/protocols/refinebench";
import { providerFromRow } from "~/runs/runner.server";
import { heartbeat, HOST, sharedLimits } from "~/runs/providers/shared-limits.server";
import type { CallGate } from "~/runs/providers/shared-limits.server";
import type { ProviderRow } from "~/runs/providers/index.server";
import type { CallRecord, LlmProvider } from "~/runs/providers/types";
import { checklistDraftPrompt, CHECKLIST_PROMPT_VERSION, parseChecklistDraft, type DraftParse } from "./checklistDraft";
import type { BackCheckResult } from "./flags.server";
import { CurationError } from "./versions.server";

function projectProvider(projectId: number, providerId: number, db: Db) {
  const row = db
    .select()
    .from(schema.providers)
    .where(and(eq(schema.providers.id, providerId), eq(schema.providers.projectId, projectId)))
    .get();
  if (!row) throw new CurationError("No such provider in this project.", "providerId");
  return row;
}

function logCalls(db: Db, providerId: number) {
  return (c: CallRecord) => {
    db.insert(schema.providerCalls)
      .values({
        providerId,
        request: c.request,
        reply: c.reply,
        status: c.status,
        latencyMs: c.latencyMs,
        promptTokens: c.promptTokens,
        completionTokens: c.completionTokens,
        error: c.error,
      })
      .run();
  };
}

/** How long the curation caller's registration stays valid without a renewal (it is renewed before every call). */
const CURATION_LEASE_MS = 10 * 60_000;

/**
 * The call options of one curation request: an HTTP provider's attempts go through the
 * shared limits (the caller registered as a live process, so its calls in flight count
 * until they end); a replay provider's calls are logged as they come back.
 */
function callOptions(db: Db, row: ProviderRow): { gate?: CallGate; onCall?: (c: CallRecord) => void } {
  if (row.kind === "replay") return { onCall: logCalls(db, row.id) };
  const owner = `curation-${HOST}-${process.pid}`;
  heartbeat(db, owner, CURATION_LEASE_MS);
  return {
    gate: sharedLimits(db).gate({
      providerId: row.id,
      concurrency: row.concurrency,
      requestsPerMinute: row.requestsPerMinute,
      owner,
      runId: null,
      jobId: null,
    }),
  };
}

export type BackCheckSummary = {
  items: number;
  checked: number;
  flagged: number;
  unparsed: number;
  failedCalls: { sourceId: string; error: string }[];
};

/** The evaluator's sampling for checklist judging (RefineBench: temperature 0, top_p 1). */
const JUDGE_PARAMS = { temperature: 0, top_p: 1 };

export async function runBackCheck(
  args: { projectId: number; datasetId: number; providerId: number; userId: number | null; itemIds?: number[]; provider?: LlmProvider },
  db: Db = getDb(),
): Promise<BackCheckSummary> {
  const row = projectProvider(args.projectId, args.providerId, db);
  const dataset = db
    .select()
    .from(schema.datasets)
    .where(and(eq(schema.datasets.id, args.datasetId), eq(schema.datasets.projectId, args.projectId)))
    .get();
  if (!dataset) throw new CurationError("No such dataset.", "datasetId");
  if (dataset.frozenAt) throw new CurationError(`Version ${dataset.version} is frozen; back-check the next version.`);
  const provider = args.provider ?? providerFromRow(row);
  const items = db
    .select({ id: schema.items.id, sourceId: schema.items.sourceId, query: schema.items.query, passage: schema.items.passage })
    .from(schema.items)
    .where(and(eq(schema.items.datasetId, dataset.id), args.itemIds?.length ? inArray(schema.items.id, args.itemIds) : undefined))
    .orderBy(asc(schema.items.sourceId))
    .all();
  const summary: BackCheckSummary = { items: items.length, checked: 0, flagged: 0, unparsed: 0, failedCalls: [] };
  await Promise.all(
    items.map(async (item) => {
      const checklist = db
        .select({ id: schema.checklistItems.id, text: schema.checklistItems.text })
        .from(schema.checklistItems)
        .where(and(eq(schema.checklistItems.itemId, item.id), isNull(schema.checklistItems.retiredAt)))
        .orderBy(asc(schema.checklistItems.position))
        .all();
      const ref = db
        .select({ text: schema.references.text, version: schema.references.version })
        .from(schema.references)
        .where(and(eq(schema.references.itemId, item.id), eq(schema.references.isCurrent, true)))
        .get();
      if (checklist.length === 0 || !ref) return;
      let text: string;
      try {
        const reply = await provider.call(
          {
            kind: "chat",
            messages: [
              {
                role: "user",
                content: judgePrompt(
                  userQuery(item),
                  ref.text,
                  checklist.map((c) => c.text),
                ),
              },
            ],
            params: JUDGE_PARAMS,
          },
          callOptions(db, row),
        );
        text = reply.text;
      } catch (err) {
        summary.failedCalls.push({ sourceId: item.sourceId, error: (err as Error).message });
        return;
      }
      const parsed = parseChecklistLines(text, checklist.length, "Q");
      const answers: BackCheckResult["answers"] = {};
      checklist.forEach((c, i) => {
        const p = parsed[i];
        answers[String(c.id)] = p && p.status !== "failed" && p.value ? p.value : "unparsed";
      });
      const no = Object.values(answers).filter((a) => a === "No").length;
      const unparsed = Object.values(answers).filter((a) => a === "unparsed").length;
      summary.checked++;
      summary.flagged += no;
      summary.unparsed += unparsed;
      const result: BackCheckResult = { judge: `${row.name} (${row.model})`, referenceVersion: ref.version, answers, rawOutput: text };
      db.insert(schema.curationEvents)
        .values({
          datasetId: dataset.id,
          itemId: item.id,
          entity: "checklist-item",
          action: "back-check",
          after: result,
          reason: `Back-check of reference v${ref.version}: ${no} item(s) answered No${unparsed ? `, ${unparsed} unparsed` : ""}`,
          userId: args.userId,
        })
        .run();
    }),
  );
  sharedLimits(db).flushEnds(); // every call's row is complete before the summary is shown
  return summary;
}

export type Draft = DraftParse & { raw: string; promptVersion: string };

export async function draftChecklist(
  args: { projectId: number; itemId: number; providerId: number; provider?: LlmProvider },
  db: Db = getDb(),
): Promise<Draft> {
  const row = projectProvider(args.projectId, args.providerId, db);
  const item = db.select().from(schema.items).where(eq(schema.items.id, args.itemId)).get();
  if (!item) throw new CurationError("No such item.", "itemId");
  const ref = db
    .select({ text: schema.references.text })
    .from(schema.references)
    .where(and(eq(schema.references.itemId, item.id), eq(schema.references.isCurrent, true)))
    .get();
  if (!ref) throw new CurationError("This item has no reference answer to draft from.", "itemId");
  const provider = args.provider ?? providerFromRow(row);
  const reply = await provider.call(
    { kind: "chat", messages: [{ role: "user", content: checklistDraftPrompt(userQuery(item), ref.text) }], params: { temperature: 0 } },
    callOptions(db, row),
  );
  sharedLimits(db).flushEnds();
  return { ...parseChecklistDraft(reply.text), raw: reply.text, promptVersion: CHECKLIST_PROMPT_VERSION };
}
