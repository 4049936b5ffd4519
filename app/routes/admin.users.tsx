/**
 * The site admin's Users page: create a user (optionally into a project), set a password,
 * disable or enable. Every refusal is shown beside its field — in the create form, or in
 * the row of the user it is about — which takes focus; never zod's raw wording.
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useRef } from "react";
import { asc, eq } from "drizzle-orm";
import { listUsers, setPassword } from "~/auth/accounts.server";
import { createAccount, setUserDisabled } from "~/auth/users.server";
import { orDomainError } from "~/errors.server";
import type { DomainError } from "~/errors";
import { UserAction } from "~/forms/accounts.server";
import { besideField, fieldErrorsOf, humanErrors } from "~/forms/messages";
import { requireSiteAdmin } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { ROLES } from "../../db/schema";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";
import { ErrorSummary, FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";

export const meta: MetaFunction = () => [{ title: "Users · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireSiteAdmin(request);
  const d = getDal();
  const { projects: p, memberships: m } = d.t;
  const projects = await d.q.select({ id: p.id, name: p.name }).from(p).orderBy(asc(p.name));
  const memberships = await d.q.select({ userId: m.userId, project: p.name, role: m.role }).from(m).innerJoin(p, eq(p.id, m.projectId));
  const users = (await listUsers()).map((u) => ({
    ...u,
    memberships: memberships.filter((m) => m.userId === u.id).map((m) => `${m.project} (${m.role})`),
  }));
  return json({ users, projects });
}

/** The forms' labels, also used to word their errors ("Password needs at least 10 characters."). */
const LABELS: Record<string, string> = {
  name: "Name",
  email: "Email",
  password: "Password",
  isSiteAdmin: "Site admin",
  projectId: "Project",
  role: "Role in that project",
  userId: "User",
  disabled: "Status",
};

/** Which form an answer is about: the create form, or one user's row ("reset-password-7", "set-disabled-7"). */
const scopeOf = (intent: string, userId: string) => (intent === "create" ? "create" : `${intent}-${userId}`);

/** A refusal of the domain, beside its field of the form it answers. */
const refusal = (scope: string) => (err: DomainError) =>
  json({ form: scope, fieldErrors: { [err.field ?? "form"]: besideField(err.field, err.message) } as FieldErrors }, { status: err.status });

export async function action({ request }: ActionFunctionArgs) {
  const admin = await requireSiteAdmin(request);
  const form = await request.formData();
  const scope = scopeOf(String(form.get("intent") ?? ""), String(form.get("userId") ?? ""));
  const parsed = UserAction.safeParse(Object.fromEntries(form), { error: humanErrors(LABELS) });
  if (!parsed.success) {
    const fieldErrors = fieldErrorsOf(parsed.error);
    if (fieldErrors.intent) fieldErrors.form = "This form is out of date: reload the page and try again.";
    delete fieldErrors.intent;
    return json({ form: scope, fieldErrors }, { status: 400 });
  }
  const input = parsed.data;
  if (input.intent === "create") {
    return orDomainError(async () => {
      await createAccount({ ...input, isSiteAdmin: input.isSiteAdmin === "on" });
      return json({ ok: `Created ${input.email}.` });
    }, refusal(scope));
  }
  if (input.intent === "reset-password") {
    await setPassword(input.userId, input.password);
    return json({ ok: "Password changed; the user was signed out everywhere." });
  }
  return orDomainError(async () => {
    await setUserDisabled(admin.id, input.userId, input.disabled === "1");
    return json({ ok: input.disabled === "1" ? "User disabled." : "User enabled." });
  }, refusal(scope));
}

export default function Users() {
  const { users, projects } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const pageRef = useRef<HTMLDivElement>(null);
  const formErrorRef = useRef<HTMLParagraphElement>(null);
  const answered = fieldErrorsFrom(data);
  // The first field in error of the form that was answered (only that form shows errors), else its message.
  useFocusFirstError(pageRef, answered, data, formErrorRef);
  const create = fieldErrorsFrom(data, "create");
  const err = (errors: FieldErrors, name: string, scope = "") => <FieldError errors={errors} name={name} scope={scope} />;
  /** A row form's message about the whole form (e.g. "You cannot disable your own account."). */
  const rowError = (errors: FieldErrors) =>
    errors.form ? (
      <p className="field-error" data-field="form" role="alert" tabIndex={-1} ref={formErrorRef}>
        {errors.form}
      </p>
    ) : null;
  return (
    <div ref={pageRef}>
      <h1>Users</h1>
      <ActionMessage data={data} />
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Projects</th>
            <th>Status</th>
            <th>Password</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => {
            const disabling = fieldErrorsFrom(data, `set-disabled-${u.id}`);
            const resetting = fieldErrorsFrom(data, `reset-password-${u.id}`);
            const rs = `reset-${u.id}-`;
            return (
              <tr key={u.id}>
                <td>
                  {u.name} {u.isSiteAdmin ? <span className="badge">site admin</span> : null}
                </td>
                <td>{u.email}</td>
                <td className="small">{u.memberships.join(", ") || <span className="muted">none</span>}</td>
                <td>
                  <Form method="post" className="inline" noValidate>
                    <CsrfField />
                    <input type="hidden" name="intent" value="set-disabled" />
                    <input type="hidden" name="userId" value={u.id} />
                    <input type="hidden" name="disabled" value={u.disabled ? "0" : "1"} />
                    {u.disabled ? <span className="badge no">disabled</span> : <span className="badge yes">active</span>}
                    {u.disabled ? (
                      <button type="submit" className="secondary">
                        Enable
                      </button>
                    ) : (
                      <ConfirmButton
                        className="secondary"
                        question={`Disable ${u.email}? They are signed out everywhere and cannot sign in until enabled again.`}
                      >
                        Disable
                      </ConfirmButton>
                    )}
                    {rowError(disabling)}
                  </Form>
                </td>
                <td>
                  <Form method="post" className="inline" noValidate>
                    <CsrfField />
                    <input type="hidden" name="intent" value="reset-password" />
                    <input type="hidden" name="userId" value={u.id} />
                    <input
                      type="password"
                      name="password"
                      placeholder="New password"
                      minLength={10}
                      aria-label={`New password for ${u.email}`}
                      autoComplete="new-password"
                      {...invalidProps(resetting, "password", rs)}
                    />
                    <ConfirmButton
                      className="secondary"
                      aria-label={`Set password for ${u.email}`}
                      question={`Set a new password for ${u.email}? They are signed out everywhere and must sign in with the new password.`}
                    >
                      Set password
                    </ConfirmButton>
                    {err(resetting, "password", rs)}
                    {rowError(resetting)}
                  </Form>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="panel" style={{ marginTop: "1rem" }}>
        <h2>Create a user</h2>
        <ErrorSummary errors={create} />
        <Form method="post" className="stack" noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <label>
            Name
            <input name="name" required {...invalidProps(create, "name")} />
          </label>
          {err(create, "name")}
          <label>
            Email
            <input name="email" type="email" required {...invalidProps(create, "email")} />
          </label>
          {err(create, "email")}
          <label>
            Initial password (10+ characters)
            <input
              name="password"
              type="password"
              minLength={10}
              required
              autoComplete="new-password"
              {...invalidProps(create, "password")}
            />
          </label>
          {err(create, "password")}
          <label style={{ display: "flex", gap: "0.5rem" }}>
            <input type="checkbox" name="isSiteAdmin" /> Site admin
          </label>
          <label>
            Add to project
            <select name="projectId" defaultValue="" {...invalidProps(create, "projectId")}>
              <option value="">— none —</option>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          {err(create, "projectId")}
          <label>
            Role in that project
            <select name="role" defaultValue="annotator" {...invalidProps(create, "role")}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          {err(create, "role")}
          <button type="submit">Create user</button>
        </Form>
      </div>
    </div>
  );
}
