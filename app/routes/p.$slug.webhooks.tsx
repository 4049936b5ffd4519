/**
 * Webhooks: URLs that receive a signed POST when a run finishes, a task is complete or an import ends. Register
 * one (its signing secret shown once, with a button to copy it), send a test event, disable, enable or delete
 * it, and read each webhook's delivery log (event, status, attempts, last HTTP status or error, times) with
 * Redeliver. Researchers and admins, as the Providers page; the rules are app/webhooks/webhooks.server.ts's.
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, HeadersFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { useRef, useState } from "react";
import { requireProjectRole } from "~/auth/guards.server";
import { orDomainError } from "~/errors.server";
import type { DomainError } from "~/errors";
import { WebhookAction } from "~/forms/webhooks.server";
import { WEBHOOK_EVENTS } from "~/webhooks/events.server";
import {
  createWebhook,
  deleteWebhook,
  redeliver,
  sendTestEvent,
  setWebhookDisabled,
  webhooksPage,
  type WebhookInput,
} from "~/webhooks/webhooks.server";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";
import { ErrorSummary, FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";

export const meta: MetaFunction = () => [{ title: "Webhooks · Concord" }];

// The answer that carries a new secret must not be kept by any cache.
export const headers: HeadersFunction = () => ({ "Cache-Control": "no-store" });

/** A unix time as the page shows it, the same on the server and in the browser: "2026-12-06 14:03:05 UTC". */
const when = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString().slice(0, 19).replace("T", " ") + " UTC");

/** The latest deliveries shown per webhook. */
const LOG_ROWS = 20;

const EVENT_LABELS: Record<string, string> = {
  "run.finished": "A run finishes (completed, failed or cancelled)",
  "task.completed": "A task is complete (every assignment submitted or skipped)",
  "import.finished": "An import ends (not a dry run)",
};

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const hooks = await webhooksPage(project.id, LOG_ROWS);
  return json(
    {
      project: { name: project.name },
      events: WEBHOOK_EVENTS.map((e) => ({ id: e, label: EVENT_LABELS[e] ?? e })),
      hooks: hooks.map((h) => ({
        id: h.id,
        url: h.url,
        events: h.events,
        status: h.status,
        created: when(h.createdAt)!,
        createdBy: h.createdBy,
        deliveries: h.deliveries.map((d) => ({
          id: d.id,
          event: d.event,
          status: d.status,
          attempts: d.attempts,
          lastStatus: d.lastStatus,
          lastError: d.lastError,
          created: when(d.createdAt)!,
          delivered: when(d.deliveredAt),
          next: when(d.nextAttemptAt),
        })),
      })),
    },
    { headers: { "Cache-Control": "no-store" } },
  );
}

const refusal = (scope: string) => (err: DomainError) =>
  json(
    { form: scope, fieldErrors: { [err.field ?? "form"]: err.message.replace(/^(url|events): /, "") } as FieldErrors },
    { status: err.status },
  );

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const parsed = WebhookAction.safeParse({ ...Object.fromEntries(form), events: form.getAll("events") });
  if (!parsed.success) return json({ error: "This form is out of date: reload the page and try again." }, { status: 400 });
  const input = parsed.data;
  switch (input.intent) {
    case "create":
      return orDomainError(async () => {
        const { webhook, secret } = await createWebhook(project.id, user.id, {
          url: input.url,
          events: input.events as WebhookInput["events"],
        });
        return json({ created: { id: webhook.id, url: webhook.url, secret } }, { headers: { "Cache-Control": "no-store" } });
      }, refusal("create"));
    case "delete":
      return json({ ok: (await deleteWebhook(project.id, input.webhookId)) ? "Webhook deleted." : "That webhook was already deleted." });
    case "disable":
    case "enable":
      return orDomainError(async () => {
        await setWebhookDisabled(project.id, input.webhookId, input.intent === "disable");
        return json({ ok: input.intent === "disable" ? "Webhook disabled: it gets no new events." : "Webhook enabled." });
      });
    case "test":
      return orDomainError(async () => {
        await sendTestEvent(project.id, input.webhookId);
        return json({ ok: "Test event queued: it appears in the delivery log below (reload to see its outcome)." });
      });
    case "redeliver":
      return orDomainError(async () => {
        await redeliver(project.id, input.deliveryId);
        return json({ ok: "Delivery queued again." });
      });
  }
}

/** The new secret, once, with a button that copies it. */
function NewSecret({ created }: { created: { url: string; secret: string } }) {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no");
  const inputRef = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopied("yes");
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select the text for Ctrl+C instead.
      inputRef.current?.select();
      setCopied("failed");
    }
  };
  return (
    <div className="panel" data-testid="new-secret">
      <h2>Signing secret for {created.url}</h2>
      <p>
        Copy it now: it is shown only this once. Each delivery carries <code>Concord-Signature: sha256=…</code>, the HMAC-SHA256 of{" "}
        <code>&lt;Concord-Timestamp&gt;.&lt;body&gt;</code> with this secret; check it before trusting the body.
      </p>
      <p style={{ display: "flex", gap: "0.5rem" }}>
        <input
          ref={inputRef}
          readOnly
          value={created.secret}
          aria-label="Signing secret"
          style={{ flex: 1, fontFamily: "monospace" }}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </p>
      <p role="status" className="small">
        {copied === "yes"
          ? "Copied to the clipboard."
          : copied === "failed"
            ? "Could not reach the clipboard: the secret is selected, press Ctrl+C."
            : ""}
      </p>
    </div>
  );
}

/** A one-button form about one webhook or delivery. */
function RowButton({
  intent,
  name,
  value,
  label,
  question,
}: {
  intent: string;
  name: string;
  value: number;
  label: string;
  question?: string;
}) {
  return (
    <Form method="post" className="inline">
      <CsrfField />
      <input type="hidden" name="intent" value={intent} />
      <input type="hidden" name={name} value={value} />
      {question ? (
        <ConfirmButton className="secondary" question={question}>
          {label}
        </ConfirmButton>
      ) : (
        <button type="submit" className="secondary">
          {label}
        </button>
      )}
    </Form>
  );
}

export default function Webhooks() {
  const { hooks, events, project } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const navigation = useNavigation();
  const pageRef = useRef<HTMLDivElement>(null);
  const create = fieldErrorsFrom(data, "create");
  useFocusFirstError(pageRef, create, data);
  const created = data && "created" in data ? data.created : null;
  return (
    <div ref={pageRef}>
      <h1>Webhooks</h1>
      <p className="muted">
        Concord POSTs a signed JSON event to each URL when a run finishes, a task is complete or an import ends, and tries again with
        growing waits (10 s, 1 min, 5 min, 30 min, 2 h, 6 h) until the receiver answers 2xx. The body holds names, ids and counts, never
        labels or model outputs. URLs follow the providers&apos; egress rules (CONCORD_EGRESS_ALLOW).
      </p>
      {created ? <NewSecret key={created.id} created={created} /> : null}
      <ActionMessage data={data} />
      {hooks.length === 0 ? <p className="muted">No webhooks yet.</p> : null}
      {hooks.map((h) => (
        <section key={h.id} className="panel" data-testid={`webhook-${h.id}`} style={{ marginTop: "1rem" }}>
          <h2 style={{ overflowWrap: "anywhere" }}>
            {h.url} <span className={`badge ${h.status === "active" ? "yes" : "no"}`}>{h.status}</span>
          </h2>
          <p className="small">
            Events: {h.events.join(", ")} · created {h.created}
            {h.createdBy ? ` by ${h.createdBy}` : ""}
          </p>
          <div style={{ display: "flex", gap: "0.5rem", flexWrap: "wrap" }}>
            {h.status === "active" ? <RowButton intent="test" name="webhookId" value={h.id} label="Send test event" /> : null}
            <RowButton
              intent={h.status === "active" ? "disable" : "enable"}
              name="webhookId"
              value={h.id}
              label={h.status === "active" ? "Disable" : "Enable"}
            />
            <RowButton
              intent="delete"
              name="webhookId"
              value={h.id}
              label="Delete"
              question={`Delete the webhook ${h.url} and its delivery log? Pending deliveries are dropped.`}
            />
          </div>
          <h3>Delivery log</h3>
          {h.deliveries.length === 0 ? (
            <p className="muted small">No deliveries yet.</p>
          ) : (
            <table data-testid={`deliveries-${h.id}`}>
              <thead>
                <tr>
                  <th>Delivery</th>
                  <th>Event</th>
                  <th>Status</th>
                  <th className="num">Attempts</th>
                  <th>Last answer</th>
                  <th>Created</th>
                  <th>Delivered / next attempt</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {h.deliveries.map((d) => (
                  <tr key={d.id}>
                    <td className="small">#{d.id}</td>
                    <td>{d.event}</td>
                    <td>
                      <span className={`badge ${d.status === "delivered" ? "yes" : d.status === "failed" ? "no" : ""}`}>{d.status}</span>
                    </td>
                    <td className="num">{d.attempts}</td>
                    <td className="small">
                      {d.lastStatus !== null ? `HTTP ${d.lastStatus}` : d.attempts === 0 ? "—" : "no answer"}
                      {d.lastError && d.lastError !== `HTTP ${d.lastStatus}` ? (
                        <span className="muted">
                          {" "}
                          ({d.status === "delivered" ? "earlier: " : ""}
                          {d.lastError})
                        </span>
                      ) : null}
                    </td>
                    <td className="small">{d.created}</td>
                    <td className="small">{d.delivered ?? (d.next ? `next ${d.next}` : "—")}</td>
                    <td>
                      {d.status === "pending" ? null : <RowButton intent="redeliver" name="deliveryId" value={d.id} label="Redeliver" />}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
      <div className="panel" style={{ marginTop: "1rem" }}>
        <h2>Add a webhook</h2>
        <ErrorSummary errors={create} />
        <Form method="post" className="stack" noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <label>
            URL
            <input
              name="url"
              required
              maxLength={2000}
              placeholder="https://ci.example.org/concord-hook"
              {...invalidProps(create, "url")}
            />
          </label>
          <FieldError errors={create} name="url" />
          <fieldset {...invalidProps(create, "events")}>
            <legend>Events</legend>
            {events.map((e) => (
              <label key={e.id} style={{ display: "flex", gap: "0.5rem" }}>
                <input type="checkbox" name="events" value={e.id} defaultChecked /> <code>{e.id}</code> {e.label}
              </label>
            ))}
          </fieldset>
          <FieldError errors={create} name="events" />
          {create.form ? <p className="field-error">{create.form}</p> : null}
          <button type="submit" disabled={navigation.state === "submitting"}>
            Add webhook
          </button>
        </Form>
      </div>
      <p className="small muted">Project: {project.name}</p>
    </div>
  );
}
