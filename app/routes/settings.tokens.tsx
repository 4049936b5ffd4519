/**
 * Settings → API tokens: a user's personal access tokens for the HTTP API (`/api/v1/`). Create one (name,
 * read or write, all of one's projects or some, expiry in days), see it once with a button to copy it, list
 * them (prefix, scope, projects, created, expires, last used and from where, status) and revoke them. A site
 * admin sees and may revoke every user's. The rules are app/auth/tokens.server.ts's; this page only asks.
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, HeadersFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { useRef, useState } from "react";
import { requireUser } from "~/auth/guards.server";
import { createApiToken, DEFAULT_EXPIRY_DAYS, listApiTokensFor, MAX_EXPIRY_DAYS, revokeApiToken } from "~/auth/tokens.server";
import { orDomainError } from "~/errors.server";
import type { DomainError } from "~/errors";
import { TokenAction } from "~/forms/tokens.server";
import { fieldErrorsOf, humanErrors } from "~/forms/messages";
import { listProjectsFor } from "~/projects/projects.server";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";
import { ErrorSummary, FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";

export const meta: MetaFunction = () => [{ title: "API tokens · Concord" }];

// The answer that carries a new token must not be kept by any cache.
export const headers: HeadersFunction = () => ({ "Cache-Control": "no-store" });

/** A unix time as the page shows it, the same on the server and in the browser: "2026-12-06 14:03 UTC". */
const when = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC");

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const [tokens, projects] = await Promise.all([listApiTokensFor(user), listProjectsFor(user)]);
  return json(
    {
      isSiteAdmin: user.isSiteAdmin,
      me: user.id,
      expiry: { defaultDays: DEFAULT_EXPIRY_DAYS, maxDays: MAX_EXPIRY_DAYS },
      projects: projects.map((p) => ({ id: p.id, name: p.name, slug: p.slug })),
      tokens: tokens.map((t) => ({
        id: t.id,
        name: t.name,
        scope: t.scope,
        prefix: t.prefix,
        owner: t.owner,
        projects: t.projects?.map((p) => p.name) ?? null,
        created: when(t.createdAt)!,
        expires: when(t.expiresAt)!,
        lastUsed: when(t.lastUsedAt),
        lastUsedFrom: t.lastUsedFrom,
        status: t.status,
      })),
    },
    { headers: { "Cache-Control": "no-store" } },
  );
}

const LABELS: Record<string, string> = {
  name: "Name",
  scope: "Scope",
  projects: "Projects",
  expiresDays: "Expires in (days)",
  tokenId: "Token",
};

const refusal = (scope: string) => (err: DomainError) =>
  json({ form: scope, fieldErrors: { [err.field ?? "form"]: err.message } as FieldErrors }, { status: err.status });

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const form = await request.formData();
  const scope = String(form.get("intent") ?? "") === "create" ? "create" : "revoke";
  const parsed = TokenAction.safeParse(
    { ...Object.fromEntries(form), projectId: form.getAll("projectId") },
    { error: humanErrors(LABELS) },
  );
  if (!parsed.success && scope === "revoke")
    return json({ error: "This form is out of date: reload the page and try again." }, { status: 400 });
  if (!parsed.success) {
    const fieldErrors = fieldErrorsOf(parsed.error);
    if (fieldErrors.intent) fieldErrors.form = "This form is out of date: reload the page and try again.";
    delete fieldErrors.intent;
    return json({ form: scope, fieldErrors }, { status: 400 });
  }
  const input = parsed.data;
  if (input.intent === "create") {
    return orDomainError(async () => {
      const made = await createApiToken(user.id, {
        name: input.name,
        scope: input.scope as "read" | "write",
        projects: input.coverage === "all" ? "all" : input.projectId.map(Number),
        expiresDays: input.expiresDays,
      } as Parameters<typeof createApiToken>[1]);
      return json(
        { created: { token: made.token, name: made.name, prefix: made.prefix, expires: when(made.expiresAt)! } },
        { headers: { "Cache-Control": "no-store" } },
      );
    }, refusal(scope));
  }
  // A refusal of a revoke ("No such token.") is shown above the page: the row it is about may not be listed.
  return orDomainError(async () => {
    const { alreadyRevoked } = await revokeApiToken(user, input.tokenId);
    return json({ ok: alreadyRevoked ? "That token was already revoked." : "Token revoked: it no longer opens the API." });
  });
}

/** The new token, once, with a button that copies it. */
function NewToken({ created }: { created: { token: string; name: string; expires: string } }) {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no");
  const inputRef = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied("yes");
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select the text for Ctrl+C instead.
      inputRef.current?.select();
      setCopied("failed");
    }
  };
  return (
    <div className="panel" data-testid="new-token">
      <h2>Your new token “{created.name}”</h2>
      <p>
        Copy it now: it is shown only this once, and Concord keeps only a hash of it. It expires on {created.expires}. Send it as{" "}
        <code>Authorization: Bearer …</code>.
      </p>
      <p style={{ display: "flex", gap: "0.5rem" }}>
        <input
          ref={inputRef}
          readOnly
          value={created.token}
          aria-label="New token"
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
            ? "Could not reach the clipboard: the token is selected, press Ctrl+C."
            : ""}
      </p>
    </div>
  );
}

export default function ApiTokens() {
  const { tokens, projects, isSiteAdmin, me, expiry } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const navigation = useNavigation();
  const pageRef = useRef<HTMLDivElement>(null);
  const [coverage, setCoverage] = useState<"all" | "some">("all");
  const create = fieldErrorsFrom(data, "create");
  useFocusFirstError(pageRef, create, data);
  const created = data && "created" in data ? data.created : null;
  const err = (name: string) => <FieldError errors={create} name={name} />;
  return (
    <div ref={pageRef}>
      <h1>API tokens</h1>
      <p className="muted">
        Personal access tokens open Concord&apos;s HTTP API (<code>/api/v1/</code>) to scripts and evaluation harnesses. A token acts as
        you, never with more than your current role in a project, and only in the projects it covers.
      </p>
      {created ? <NewToken key={created.prefix} created={created} /> : null}
      <ActionMessage data={data} />
      <h2>{isSiteAdmin ? "Every user's tokens" : "Your tokens"}</h2>
      {tokens.length === 0 ? (
        <p className="muted">No tokens yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              {isSiteAdmin ? <th>Owner</th> : null}
              <th>Token</th>
              <th>Scope</th>
              <th>Projects</th>
              <th>Created</th>
              <th>Expires</th>
              <th>Last used</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id} data-testid={`token-${t.id}`}>
                <td>{t.name}</td>
                {isSiteAdmin ? <td className="small">{t.owner.id === me ? "you" : t.owner.email}</td> : null}
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>{t.scope}</td>
                <td className="small">{t.projects === null ? "all" : t.projects.join(", ") || <span className="muted">none left</span>}</td>
                <td className="small">{t.created}</td>
                <td className="small">{t.expires}</td>
                <td className="small">
                  {t.lastUsed ? `${t.lastUsed} from ${t.lastUsedFrom ?? "?"}` : <span className="muted">never</span>}
                </td>
                <td>
                  <span className={`badge ${t.status === "active" ? "yes" : "no"}`}>{t.status}</span>
                </td>
                <td>
                  {t.status === "revoked" ? null : (
                    <Form method="post" className="inline" noValidate>
                      <CsrfField />
                      <input type="hidden" name="intent" value="revoke" />
                      <input type="hidden" name="tokenId" value={t.id} />
                      <ConfirmButton
                        className="secondary"
                        aria-label={`Revoke ${t.name}`}
                        question={`Revoke the token “${t.name}” (${t.prefix}…)? Scripts using it are refused from their next request.`}
                      >
                        Revoke
                      </ConfirmButton>
                    </Form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="panel" style={{ marginTop: "1rem" }}>
        <h2>Create a token</h2>
        <ErrorSummary errors={create} />
        <Form method="post" className="stack" noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <label>
            Name
            <input
              name="name"
              required
              maxLength={100}
              placeholder="e.g. lm-eval harness on the GPU box"
              {...invalidProps(create, "name")}
            />
          </label>
          {err("name")}
          <fieldset {...invalidProps(create, "scope")}>
            <legend>Scope</legend>
            <label style={{ display: "flex", gap: "0.5rem" }}>
              <input type="radio" name="scope" value="read" defaultChecked /> Read: download data, labels and figures
            </label>
            <label style={{ display: "flex", gap: "0.5rem" }}>
              <input type="radio" name="scope" value="write" /> Write: also import, create tasks and start runs
            </label>
          </fieldset>
          {err("scope")}
          <fieldset {...invalidProps(create, "projects")}>
            <legend>Projects</legend>
            <label style={{ display: "flex", gap: "0.5rem" }}>
              <input type="radio" name="coverage" value="all" checked={coverage === "all"} onChange={() => setCoverage("all")} /> All my
              projects, including those I join later
            </label>
            <label style={{ display: "flex", gap: "0.5rem" }}>
              <input type="radio" name="coverage" value="some" checked={coverage === "some"} onChange={() => setCoverage("some")} /> Only
              these:
            </label>
            {projects.length === 0 ? <p className="muted small">You are not a member of any project yet.</p> : null}
            {projects.map((p) => (
              <label key={p.id} style={{ display: "flex", gap: "0.5rem", marginLeft: "1.5rem" }}>
                <input type="checkbox" name="projectId" value={p.id} onChange={(e) => e.currentTarget.checked && setCoverage("some")} />{" "}
                {p.name} <span className="muted small">({p.slug})</span>
              </label>
            ))}
          </fieldset>
          {err("projects")}
          <label>
            Expires in (days, at most {expiry.maxDays})
            <input
              name="expiresDays"
              type="number"
              min={1}
              max={expiry.maxDays}
              step={1}
              defaultValue={expiry.defaultDays}
              {...invalidProps(create, "expiresDays")}
            />
          </label>
          {err("expiresDays")}
          {create.form ? <p className="field-error">{create.form}</p> : null}
          <button type="submit" disabled={navigation.state === "submitting"}>
            Create token
          </button>
        </Form>
      </div>
    </div>
  );
}
