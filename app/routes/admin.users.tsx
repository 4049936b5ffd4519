import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { formError } from "~/forms.server";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { asc, eq } from "drizzle-orm";
import { listUsers, setPassword } from "~/auth/accounts.server";
import { createAccount, setUserDisabled } from "~/auth/users.server";
import { orDomainError } from "~/errors.server";
import { UserAction } from "~/forms/accounts.server";
import { requireSiteAdmin } from "~/auth/guards.server";
import { getDb, schema } from "~/db.server";
import { ROLES } from "../../db/schema";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";

export const meta: MetaFunction = () => [{ title: "Users · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireSiteAdmin(request);
  const db = getDb();
  const projects = db
    .select({ id: schema.projects.id, name: schema.projects.name })
    .from(schema.projects)
    .orderBy(asc(schema.projects.name))
    .all();
  const memberships = db
    .select({ userId: schema.memberships.userId, project: schema.projects.name, role: schema.memberships.role })
    .from(schema.memberships)
    .innerJoin(schema.projects, eq(schema.projects.id, schema.memberships.projectId))
    .all();
  const users = listUsers().map((u) => ({
    ...u,
    memberships: memberships.filter((m) => m.userId === u.id).map((m) => `${m.project} (${m.role})`),
  }));
  return json({ users, projects });
}

export async function action({ request }: ActionFunctionArgs) {
  const admin = await requireSiteAdmin(request);
  const parsed = UserAction.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return formError(parsed.error);
  const input = parsed.data;
  if (input.intent === "create") {
    return orDomainError(async () => {
      await createAccount({ ...input, isSiteAdmin: input.isSiteAdmin === "on" });
      return json({ ok: `Created ${input.email}.` });
    });
  }
  if (input.intent === "reset-password") {
    await setPassword(input.userId, input.password);
    return json({ ok: "Password changed; the user was signed out everywhere." });
  }
  return orDomainError(() => {
    setUserDisabled(admin.id, input.userId, input.disabled === "1");
    return json({ ok: input.disabled === "1" ? "User disabled." : "User enabled." });
  });
}

export default function Users() {
  const { users, projects } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  return (
    <div>
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
          {users.map((u) => (
            <tr key={u.id}>
              <td>
                {u.name} {u.isSiteAdmin ? <span className="badge">site admin</span> : null}
              </td>
              <td>{u.email}</td>
              <td className="small">{u.memberships.join(", ") || <span className="muted">none</span>}</td>
              <td>
                <Form method="post" className="inline">
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
                </Form>
              </td>
              <td>
                <Form method="post" className="inline">
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
                  />
                  <ConfirmButton
                    className="secondary"
                    aria-label={`Set password for ${u.email}`}
                    question={`Set a new password for ${u.email}? They are signed out everywhere and must sign in with the new password.`}
                  >
                    Set password
                  </ConfirmButton>
                </Form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="panel" style={{ marginTop: "1rem" }}>
        <h2>Create a user</h2>
        <Form method="post" className="stack">
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <label>
            Name
            <input name="name" required />
          </label>
          <label>
            Email
            <input name="email" type="email" required />
          </label>
          <label>
            Initial password (10+ characters)
            <input name="password" type="password" minLength={10} required autoComplete="new-password" />
          </label>
          <label style={{ display: "flex", gap: "0.5rem" }}>
            <input type="checkbox" name="isSiteAdmin" /> Site admin
          </label>
          <label>
            Add to project
            <select name="projectId" defaultValue="">
              <option value="">— none —</option>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Role in that project
            <select name="role" defaultValue="annotator">
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit">Create user</button>
        </Form>
      </div>
    </div>
  );
}
