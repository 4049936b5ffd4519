import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { formError } from "~/forms.server";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { asc, eq } from "drizzle-orm";
import { orDomainError } from "~/errors.server";
import { MemberAction } from "~/forms/accounts.server";
import { changeMemberRole, removeMember } from "~/projects/members.server";
import { requireProjectRole } from "~/auth/guards.server";
import { getDb, schema } from "~/db.server";
import { ROLES } from "../../db/schema";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";

export const meta: MetaFunction = () => [{ title: "Members · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "admin");
  const db = getDb();
  const members = db
    .select({
      userId: schema.users.id,
      name: schema.users.name,
      email: schema.users.email,
      role: schema.memberships.role,
    })
    .from(schema.memberships)
    .innerJoin(schema.users, eq(schema.users.id, schema.memberships.userId))
    .where(eq(schema.memberships.projectId, project.id))
    .orderBy(asc(schema.users.name))
    .all();
  const memberIds = new Set(members.map((m) => m.userId));
  const others = db
    .select({ id: schema.users.id, name: schema.users.name, email: schema.users.email })
    .from(schema.users)
    .where(eq(schema.users.disabled, false))
    .orderBy(asc(schema.users.email))
    .all()
    .filter((u) => !memberIds.has(u.id));
  return json({ project: { name: project.name }, members, others });
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "admin");
  const parsed = MemberAction.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return formError(parsed.error);
  const input = parsed.data;
  if (input.intent === "set-role") {
    return orDomainError(() => {
      changeMemberRole(project.id, user, input.userId, input.role);
      return json({ ok: "Role saved." });
    });
  }
  return orDomainError(() => {
    removeMember(project.id, user, input.userId);
    return json({ ok: "Member removed." });
  });
}

export default function Members() {
  const { project, members, others } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  return (
    <div>
      <h1>Members of {project.name}</h1>
      <ActionMessage data={data} />
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.userId}>
              <td>{m.name}</td>
              <td>{m.email}</td>
              <td>
                <Form method="post" className="inline">
                  <CsrfField />
                  <input type="hidden" name="intent" value="set-role" />
                  <input type="hidden" name="userId" value={m.userId} />
                  <select name="role" defaultValue={m.role} aria-label={`Role of ${m.name}`}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                  <button type="submit" className="secondary">
                    Save
                  </button>
                </Form>
              </td>
              <td>
                <Form method="post" className="inline">
                  <CsrfField />
                  <input type="hidden" name="intent" value="remove" />
                  <input type="hidden" name="userId" value={m.userId} />
                  <ConfirmButton
                    className="danger"
                    question={`Remove ${m.name} from ${project.name}? Their labels stay; they lose access.`}
                  >
                    Remove
                  </ConfirmButton>
                </Form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="panel" style={{ marginTop: "1rem" }}>
        <h2>Add a member</h2>
        {others.length === 0 ? (
          <p className="muted">Every user is already a member. A site admin can create more users.</p>
        ) : (
          <Form method="post" className="inline">
            <CsrfField />
            <input type="hidden" name="intent" value="set-role" />
            <select name="userId" aria-label="User">
              {others.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name} ({u.email})
                </option>
              ))}
            </select>
            <select name="role" defaultValue="annotator" aria-label="Role">
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
            <button type="submit">Add</button>
          </Form>
        )}
      </div>
    </div>
  );
}
