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
import { dalOf, first, getDal, type Dal, type DalLike } from "~/dal.server";
import type { Db } from "~/db.server";
import { parseChecklistLines } from "~/runs/protocols/checklist-parse";
import { judgePrompt, userQuery } from "~/runs/protocols/refinebench";
import { providerFromRow } from "~/runs/runner.server";
import { requestJson } from "~/runs/jobs.server";
import { PgAdmissionLine } from "~/runs/pg/admission-line.server";
import { admitCallPg, endCallPg } from "~/runs/pg/queue.server";
import { heartbeatPg } from "~/runs/pg/workers.server";
import { heartbeat, HOST, oneOffLimits, sharedLimits } from "~/runs/providers/shared-limits.server";
import type { CallGate } from "~/runs/providers/shared-limits.server";
import type { ProviderRow } from "~/runs/providers/index.server";
import type { CallRecord, LlmProvider } from "~/runs/providers/types";
import type { PgDb } from "../../db/client-pg";
import { checklistDraftPrompt, CHECKLIST_PROMPT_VERSION, parseChecklistDraft, type DraftParse } from "./checklistDraft";
import type { BackCheckResult } from "./flags.server";
import { CurationError } from "./versions.server";

async function projectProvider(d: Dal, projectId: number, providerId: number): Promise<ProviderRow> {
  const p = d.t.providers;
  const row = first(
    await d.q
      .select()
      .from(p)
      .where(and(eq(p.id, providerId), eq(p.projectId, projectId)))
      .limit(1),
  );
  if (!row) throw new CurationError("No such provider in this project.", "providerId");
  return row;
}

/** How long the curation caller's registration stays valid without a renewal (it is renewed before every call). */
const CURATION_LEASE_MS = 10 * 60_000;

/**
 * The database connection under the layer, for the provider limits and worker
 * heartbeats of the run queue, which work on it directly (on SQLite in their
 * own synchronous transactions, on PostgreSQL in one statement each).
 */
const sqliteDbOf = (d: Dal): Db => (d as unknown as { db: Db }).db;
const pgDbOf = (d: Dal): PgDb => (d as unknown as { pg: PgDb }).pg;

/** This process's admission line per provider for curation calls on PostgreSQL (only its head asks the database). */
const pgLines = new Map<number, PgAdmissionLine>();

/**
 * The calls of one curation request: an HTTP provider's attempts go through the
 * shared limits (the caller registered as a live process, so its calls in flight
 * count until they end); a replay provider's calls are logged as they come back.
 * `options()` is asked before every call (it renews the registration); `settle()`
 * writes what is still pending, so every call's row is complete before the
 * summary is shown. No write here runs inside a transaction that waits for a call.
 */
function curationCalls(d: Dal, row: ProviderRow) {
  const pending: Promise<unknown>[] = [];
  const owner = `curation-${HOST}-${process.pid}`;
  const limits = oneOffLimits(row, owner);
  const logCall = (c: CallRecord) => {
    pending.push(
      d.tx((q) =>
        q.insert(d.t.providerCalls).values({
          providerId: row.id,
          request: c.request,
          reply: c.reply,
          status: c.status,
          latencyMs: c.latencyMs,
          promptTokens: c.promptTokens,
          completionTokens: c.completionTokens,
          error: c.error,
        }),
      ),
    );
  };
  const pgGate = (pg: PgDb): CallGate => {
    let line = pgLines.get(row.id);
    if (!line) pgLines.set(row.id, (line = new PgAdmissionLine()));
    const l = line;
    return {
      async begin(request, estimatedPromptTokens) {
        const id = await l.admit(() => admitCallPg(pg, { ...limits, requestJson: requestJson(request, "full"), estimatedPromptTokens }));
        return {
          id,
          end: (o) => {
            // The slot is free in the database once the row is complete: the head of the line asks again at once.
            pending.push(
              endCallPg(pg, id, o).then(
                () => l.wake(),
                () => {
                  /* the row stays 'sent' until the dead-worker sweep interrupts it; the slot is then freed */
                },
              ),
            );
          },
        };
      },
    };
  };
  return {
    async options(): Promise<{ gate?: CallGate; onCall?: (c: CallRecord) => void }> {
      if (row.kind === "replay") return { onCall: logCall };
      if (d.dialect === "postgres") {
        const pg = pgDbOf(d);
        await heartbeatPg(pg, owner, CURATION_LEASE_MS);
        return { gate: pgGate(pg) };
      }
      const db = sqliteDbOf(d);
      heartbeat(db, owner, CURATION_LEASE_MS);
      return { gate: sharedLimits(db).gate(limits) };
    },
    async settle(): Promise<void> {
      while (pending.length) await Promise.all(pending.splice(0));
      if (d.dialect === "sqlite" && row.kind !== "replay") sharedLimits(sqliteDbOf(d)).flushEnds();
    },
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
  db: DalLike = getDal(),
): Promise<BackCheckSummary> {
  const d = dalOf(db);
  const { datasets, items: it, checklistItems: c, references: r, curationEvents } = d.t;
  const row = await projectProvider(d, args.projectId, args.providerId);
  const dataset = first(
    await d.q
      .select()
      .from(datasets)
      .where(and(eq(datasets.id, args.datasetId), eq(datasets.projectId, args.projectId)))
      .limit(1),
  );
  if (!dataset) throw new CurationError("No such dataset.", "datasetId");
  if (dataset.frozenAt) throw new CurationError(`Version ${dataset.version} is frozen; back-check the next version.`);
  const provider = args.provider ?? providerFromRow(row);
  const calls = curationCalls(d, row);
  const items = await d.q
    .select({ id: it.id, sourceId: it.sourceId, query: it.query, passage: it.passage })
    .from(it)
    .where(and(eq(it.datasetId, dataset.id), args.itemIds?.length ? inArray(it.id, args.itemIds) : undefined))
    .orderBy(asc(it.sourceId));
  const summary: BackCheckSummary = { items: items.length, checked: 0, flagged: 0, unparsed: 0, failedCalls: [] };
  try {
    await Promise.all(
      items.map(async (item) => {
        const checklist = await d.q
          .select({ id: c.id, text: c.text })
          .from(c)
          .where(and(eq(c.itemId, item.id), isNull(c.retiredAt)))
          .orderBy(asc(c.position));
        const ref = first(
          await d.q
            .select({ text: r.text, version: r.version })
            .from(r)
            .where(and(eq(r.itemId, item.id), eq(r.isCurrent, true)))
            .limit(1),
        );
        if (checklist.length === 0 || !ref) return;
        let text: string;
        try {
          // The call happens outside any transaction; its result is written in one of its own below.
          const reply = await provider.call(
            {
              kind: "chat",
              messages: [
                {
                  role: "user",
                  content: judgePrompt(
                    userQuery(item),
                    ref.text,
                    checklist.map((x) => x.text),
                  ),
                },
              ],
              params: JUDGE_PARAMS,
            },
            await calls.options(),
          );
          text = reply.text;
        } catch (err) {
          summary.failedCalls.push({ sourceId: item.sourceId, error: (err as Error).message });
          return;
        }
        const parsed = parseChecklistLines(text, checklist.length, "Q");
        const answers: BackCheckResult["answers"] = {};
        checklist.forEach((x, i) => {
          const p = parsed[i];
          answers[String(x.id)] = p && p.status !== "failed" && p.value ? p.value : "unparsed";
        });
        const no = Object.values(answers).filter((a) => a === "No").length;
        const unparsed = Object.values(answers).filter((a) => a === "unparsed").length;
        summary.checked++;
        summary.flagged += no;
        summary.unparsed += unparsed;
        const result: BackCheckResult = { judge: `${row.name} (${row.model})`, referenceVersion: ref.version, answers, rawOutput: text };
        await d.tx((q) =>
          q.insert(curationEvents).values({
            datasetId: dataset.id,
            itemId: item.id,
            entity: "checklist-item",
            action: "back-check",
            after: result,
            reason: `Back-check of reference v${ref.version}: ${no} item(s) answered No${unparsed ? `, ${unparsed} unparsed` : ""}`,
            userId: args.userId,
          }),
        );
      }),
    );
  } finally {
    await calls.settle(); // every call's row is complete before the summary is shown
  }
  return summary;
}

export type Draft = DraftParse & { raw: string; promptVersion: string };

export async function draftChecklist(
  args: { projectId: number; itemId: number; providerId: number; provider?: LlmProvider },
  db: DalLike = getDal(),
): Promise<Draft> {
  const d = dalOf(db);
  const { items, references: r } = d.t;
  const row = await projectProvider(d, args.projectId, args.providerId);
  const item = first(await d.q.select().from(items).where(eq(items.id, args.itemId)).limit(1));
  if (!item) throw new CurationError("No such item.", "itemId");
  const ref = first(
    await d.q
      .select({ text: r.text })
      .from(r)
      .where(and(eq(r.itemId, item.id), eq(r.isCurrent, true)))
      .limit(1),
  );
  if (!ref) throw new CurationError("This item has no reference answer to draft from.", "itemId");
  const provider = args.provider ?? providerFromRow(row);
  const calls = curationCalls(d, row);
  let reply: Awaited<ReturnType<LlmProvider["call"]>>;
  try {
    reply = await provider.call(
      { kind: "chat", messages: [{ role: "user", content: checklistDraftPrompt(userQuery(item), ref.text) }], params: { temperature: 0 } },
      await calls.options(),
    );
  } finally {
    await calls.settle();
  }
  return { ...parseChecklistDraft(reply.text), raw: reply.text, promptVersion: CHECKLIST_PROMPT_VERSION };
}
