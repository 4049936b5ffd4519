/**
 * A project's webhooks: registering one (its URL checked against the providers' egress rules, its signing secret
 * made here and shown once), listing, disabling, deleting, and the delivery log (with Redeliver and a test
 * event). One path for the Webhooks page (app/routes/p.$slug.webhooks.tsx) and the HTTP API
 * (app/routes/api.v1.projects.$slug.webhooks*.tsx); who may call them (researchers and admins of the project,
 * as for providers) is the routes' guard.
 *
 * The secret is kept encrypted at rest like providers' API keys (AES-256-GCM, ../runs/providers/secrets.server.ts)
 * and never read back out by a listing.
 */
import { and, desc, eq, inArray, lt, sql } from "drizzle-orm";
import { z } from "zod";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../db/schema";
import { dalOf, first, getDal, type DalLike } from "../dal.server";
import { DomainError } from "../errors";
import { literalHostAllowed, nonGlobalReason, normalHost, type EgressPolicy } from "../runs/providers/egress.server";
import { egressPolicy } from "../runs/providers/node-fetch.server";
import { encryptionKey, encryptSecret } from "../runs/providers/secrets.server";
import { emitWebhookEvent, PING_EVENT } from "./events.server";
import { newWebhookSecret } from "./signing.server";

/** The most webhooks one project may have (disabled ones included). */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** The longest URL accepted (characters). */
export const MAX_URL_CHARS = 2000;

/** A webhook cannot be registered or changed as asked; `field` names the input ("url", "events"). */
export class WebhookInputError extends DomainError {}

export const WebhookEventSchema = z.enum(WEBHOOK_EVENTS);
/** What registering a webhook takes (the page's form and the API's body both come down to this). */
export const WebhookInput = z.strictObject({
  url: z.string().trim().min(1, "the URL is required").max(MAX_URL_CHARS, `the URL is longer than ${MAX_URL_CHARS} characters`),
  events: z
    .array(WebhookEventSchema)
    .min(1, "choose at least one event")
    .max(WEBHOOK_EVENTS.length * 2),
});
export type WebhookInput = z.input<typeof WebhookInput>;

export type WebhookView = {
  id: number;
  url: string;
  events: WebhookEvent[];
  status: "active" | "disabled";
  createdAt: number;
  disabledAt: number | null;
  createdBy: string | null;
};

export type DeliveryView = {
  id: number;
  webhookId: number;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
};

const notFound = () => new WebhookInputError("No such webhook in this project.", { status: 404 });

/**
 * The URL as registered: http or https, no user name or password in it, and — when its host is a literal
 * address — an address the egress policy allows (a host name is checked at each delivery, after DNS).
 */
export function checkWebhookUrl(raw: string, policy: EgressPolicy = egressPolicy()): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new WebhookInputError("url: an http(s) URL is required (e.g. https://ci.example.org/concord-hook)", { field: "url" });
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new WebhookInputError(`url: only http and https URLs are accepted, not ${u.protocol.replace(/:$/, "")}`, { field: "url" });
  if (u.username || u.password)
    throw new WebhookInputError("url: a user name or password in the URL is not accepted (the signature authenticates Concord)", {
      field: "url",
    });
  if (!literalHostAllowed(policy, u)) {
    const why = nonGlobalReason(normalHost(u.hostname)) ?? "not global";
    throw new WebhookInputError(
      `url: ${normalHost(u.hostname)} is a ${why} address; webhooks may reach it only if the operator lists it in CONCORD_EGRESS_ALLOW`,
      { field: "url" },
    );
  }
  return u.href;
}

function inputError(error: z.ZodError): WebhookInputError {
  const i = error.issues[0];
  const field = String(i.path[0] ?? "form");
  const message =
    i.code === "invalid_value" && field === "events" ? `unknown event; the events are ${WEBHOOK_EVENTS.join(", ")}` : i.message;
  return new WebhookInputError(`${field}: ${message}`, { field });
}

/** Registers a webhook; returns it and its signing secret (the only time the secret is shown). */
export async function createWebhook(
  projectId: number,
  userId: number | null,
  input: WebhookInput,
  db: DalLike = getDal(),
  opts: { egress?: EgressPolicy } = {},
): Promise<{ webhook: WebhookView; secret: string }> {
  const parsed = WebhookInput.safeParse(input);
  if (!parsed.success) throw inputError(parsed.error);
  const url = checkWebhookUrl(parsed.data.url, opts.egress);
  const events = WEBHOOK_EVENTS.filter((e) => parsed.data.events.includes(e));
  const d = dalOf(db);
  const { webhooks } = d.t;
  const secret = newWebhookSecret();
  const stored = encryptSecret(secret, encryptionKey(d.location));
  const id = await d.tx(async (q) => {
    const [{ n }] = await q
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(webhooks)
      .where(eq(webhooks.projectId, projectId));
    if (n >= MAX_WEBHOOKS_PER_PROJECT)
      throw new WebhookInputError(`A project may have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first.`, { status: 409 });
    const [row] = await q
      .insert(webhooks)
      .values({ projectId, url, secret: stored, events, createdBy: userId })
      .returning({ id: webhooks.id });
    return row.id;
  });
  return { webhook: (await getWebhook(projectId, id, d))!, secret };
}

async function selectWebhooks(projectId: number, db: DalLike, id?: number): Promise<WebhookView[]> {
  const d = dalOf(db);
  const { webhooks, users } = d.t;
  const rows = await d.q
    .select({
      id: webhooks.id,
      url: webhooks.url,
      events: webhooks.events,
      createdAt: webhooks.createdAt,
      disabledAt: webhooks.disabledAt,
      createdBy: users.name,
    })
    .from(webhooks)
    .leftJoin(users, eq(users.id, webhooks.createdBy))
    .where(and(eq(webhooks.projectId, projectId), ...(id !== undefined ? [eq(webhooks.id, id)] : [])))
    .orderBy(webhooks.id);
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    events: r.events as WebhookEvent[],
    status: r.disabledAt === null ? "active" : "disabled",
    createdAt: r.createdAt,
    disabledAt: r.disabledAt,
    createdBy: r.createdBy ?? null,
  }));
}

/** The project's webhooks, oldest first, without their secrets. */
export function listWebhooks(projectId: number, db: DalLike = getDal()): Promise<WebhookView[]> {
  return selectWebhooks(projectId, db);
}

/** One webhook of the project, or undefined. */
export async function getWebhook(projectId: number, id: number, db: DalLike = getDal()): Promise<WebhookView | undefined> {
  return first(await selectWebhooks(projectId, db, id));
}

/** Deletes a webhook and its delivery log; false when it was not there (already deleted). */
export async function deleteWebhook(projectId: number, id: number, db: DalLike = getDal()): Promise<boolean> {
  const d = dalOf(db);
  const { webhooks, webhookDeliveries } = d.t;
  return d.tx(async (q) => {
    const hook = first(
      await q
        .select({ id: webhooks.id })
        .from(webhooks)
        .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id))),
    );
    if (!hook) return false;
    await q.delete(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id));
    await q.delete(webhooks).where(eq(webhooks.id, id));
    return true;
  });
}

/** Disables a webhook (no new deliveries; pending ones wait) or enables it again (pending ones go out). */
export async function setWebhookDisabled(projectId: number, id: number, disabled: boolean, db: DalLike = getDal()): Promise<WebhookView> {
  const d = dalOf(db);
  const { webhooks } = d.t;
  const changed = await d.tx((q) =>
    q
      .update(webhooks)
      .set({ disabledAt: disabled ? sql`coalesce(${webhooks.disabledAt}, ${Math.floor(Date.now() / 1000)})` : null })
      .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id)))
      .returning({ id: webhooks.id }),
  );
  if (changed.length === 0) throw notFound();
  return (await getWebhook(projectId, id, d))!;
}

/**
 * A page of a webhook's delivery log, newest first: `limit` deliveries with ids below `beforeId` (all when
 * null). Fetch limit + 1 to learn whether there are more. A webhook not of the project: 404.
 */
export async function listDeliveries(
  projectId: number,
  webhookId: number,
  page: { limit: number; beforeId?: number | null },
  db: DalLike = getDal(),
): Promise<DeliveryView[]> {
  const d = dalOf(db);
  if (!(await getWebhook(projectId, webhookId, d))) throw notFound();
  return recentDeliveries(d, [webhookId], page.limit, page.beforeId ?? null);
}

async function recentDeliveries(db: DalLike, webhookIds: number[], limit: number, beforeId: number | null): Promise<DeliveryView[]> {
  const d = dalOf(db);
  const { webhookDeliveries: wd } = d.t;
  if (webhookIds.length === 0) return [];
  const rows = await d.q
    .select({
      id: wd.id,
      webhookId: wd.webhookId,
      event: wd.event,
      status: wd.status,
      attempts: wd.attempts,
      nextAttemptAt: wd.nextAttemptAt,
      lastStatus: wd.lastStatus,
      lastError: wd.lastError,
      createdAt: wd.createdAt,
      deliveredAt: wd.deliveredAt,
    })
    .from(wd)
    .where(and(inArray(wd.webhookId, webhookIds), ...(beforeId !== null ? [lt(wd.id, beforeId)] : [])))
    .orderBy(desc(wd.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, nextAttemptAt: r.status === "pending" ? r.nextAttemptAt : null }));
}

/** The Webhooks page: every webhook of the project with its `perHook` latest deliveries. */
export async function webhooksPage(projectId: number, perHook = 20, db: DalLike = getDal()) {
  const hooks = await listWebhooks(projectId, db);
  const logs = await Promise.all(hooks.map((h) => recentDeliveries(db, [h.id], perHook, null)));
  return hooks.map((h, i) => ({ ...h, deliveries: logs[i] }));
}

/** Sends a delivery's stored body again, as a new delivery (a new Concord-Delivery id, the same event id). */
export async function redeliver(projectId: number, deliveryId: number, db: DalLike = getDal()): Promise<number> {
  const d = dalOf(db);
  const { webhookDeliveries: wd, webhooks } = d.t;
  return d.tx(async (q) => {
    const row = first(
      await q
        .select({ webhookId: wd.webhookId, event: wd.event, payload: wd.payload })
        .from(wd)
        .innerJoin(webhooks, eq(webhooks.id, wd.webhookId))
        .where(and(eq(wd.id, deliveryId), eq(webhooks.projectId, projectId))),
    );
    if (!row) throw new WebhookInputError("No such delivery in this project.", { status: 404 });
    const [made] = await q
      .insert(wd)
      .values({ webhookId: row.webhookId, event: row.event, payload: row.payload, nextAttemptAt: Math.floor(Date.now() / 1000) })
      .returning({ id: wd.id });
    return made.id;
  });
}

/** Queues a `ping` event for one webhook (whatever events it listens to); a disabled webhook is refused. */
export async function sendTestEvent(projectId: number, webhookId: number, db: DalLike = getDal()): Promise<void> {
  const hook = await getWebhook(projectId, webhookId, db);
  if (!hook) throw notFound();
  if (hook.status === "disabled") throw new WebhookInputError("This webhook is disabled: enable it to send a test event.", { status: 409 });
  await emitWebhookEvent(db, projectId, PING_EVENT, { webhook_id: webhookId, message: "A test event from Concord." }, { webhookId });
}

/** Unix seconds as RFC 3339 (UTC, whole seconds). */
export const rfc3339 = (t: number | null): string | null =>
  t === null ? null : new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A webhook as the HTTP API answers it. */
export function webhookJson(h: WebhookView) {
  return {
    id: h.id,
    url: h.url,
    events: h.events,
    status: h.status,
    created_at: rfc3339(h.createdAt)!,
    disabled_at: rfc3339(h.disabledAt),
    created_by: h.createdBy,
  };
}

/** A delivery as the HTTP API answers it. */
export function deliveryJson(x: DeliveryView) {
  return {
    id: x.id,
    webhook_id: x.webhookId,
    event: x.event,
    status: x.status,
    attempts: x.attempts,
    next_attempt_at: rfc3339(x.nextAttemptAt),
    last_status: x.lastStatus,
    last_error: x.lastError,
    created_at: rfc3339(x.createdAt)!,
    delivered_at: rfc3339(x.deliveredAt),
  };
}
