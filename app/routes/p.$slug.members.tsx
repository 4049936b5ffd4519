/**
 * A project's Members page (project admins): change a member's role, remove one, add a
 * user. A refusal ("You cannot lower your own role; ask another admin.") is shown beside
 * the control of the row (or the add form) it is about, which takes focus.
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useRef } from "react";
import { asc, eq } from "drizzle-orm";
import { orDomainError } from "~/errors.server";
import type { DomainError } from "~/errors";
import { MemberAction } from "~/forms/accounts.server";
import { besideField, fieldErrorsOf, humanErrors } from "~/forms/messages";
import { FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";
import { changeMemberRole, removeMember } from "~/projects/members.server";
import { requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { ROLES } from "../../db/schema";
import { ActionMessage } from "~/components/ActionMessage";
import { ConfirmButton } from "~/components/ConfirmButton";

export const meta: MetaFunction = () => [{ title: "Members · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "admin");
  const d = getDal();
  const { users, memberships } = d.t;
  const members = await d.q
    .select({ userId: users.id, name: users.name, email: users.email, role: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.projectId, project.id))
    .orderBy(asc(users.name));
  const memberIds = new Set(members.map((m) => m.userId));
  const others = (
    await d.q
      .select({ id: users.id, name: users.name, email: users.email })
      .from(users)
      .where(eq(users.disabled, false))
      .orderBy(asc(users.email))
  ).filter((u) => !memberIds.has(u.id));
  return json({ project: { name: project.name }, members, others });
}

const LABELS: Record<string, string> = { userId: "User", role: "Role" };

/**
 * Which form an answer is about: the add form ("add"), or a member's row
 * ("set-role-7", "remove-7"). The add form sends `adding` beside its intent.
 */
const scopeOf = (form: FormData) =>
  form.get("adding") === "1" ? "add" : `${String(form.get("intent") ?? "")}-${String(form.get("userId") ?? "")}`;

/** A refusal of the domain, beside its field of the form it answers. */
const refusal = (scope: string) => (err: DomainError) =>
  json({ form: scope, fieldErrors: { [err.field ?? "form"]: besideField(err.field, err.message) } as FieldErrors }, { status: err.status });

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "admin");
  const form = await request.formData();
  const scope = scopeOf(form);
  const { adding: _adding, ...fields } = Object.fromEntries(form);
  const parsed = MemberAction.safeParse(fields, { error: humanErrors(LABELS) });
  if (!parsed.success) {
    const fieldErrors = fieldErrorsOf(parsed.error);
    if (fieldErrors.intent) fieldErrors.form = "This form is out of date: reload the page and try again.";
    delete fieldErrors.intent;
    return json({ form: scope, fieldErrors }, { status: 400 });
  }
  const input = parsed.data;
  if (input.intent === "set-role") {
    return orDomainError(async () => {
      await changeMemberRole(project.id, user, input.userId, input.role);
      return json({ ok: scope === "add" ? "Member added." : "Role saved." });
    }, refusal(scope));
  }
  return orDomainError(async () => {
    await removeMember(project.id, user, input.userId);
    return json({ ok: "Member removed." });
  }, refusal(scope));
}

export default function Members() {
  const { project, members, others } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const pageRef = useRef<HTMLDivElement>(null);
  const formErrorRef = useRef<HTMLParagraphElement>(null);
  // The first field in error of the form that was answered (only that form shows errors), else its message.
  useFocusFirstError(pageRef, fieldErrorsFrom(data), data, formErrorRef);
  const add = fieldErrorsFrom(data, "add");
  /** A form's message about the whole form, or about a field it does not show. */
  const formError = (errors: FieldErrors, shown: string[]) => {
    const other = Object.entries(errors).find(([k]) => !shown.includes(k));
    return other ? (
      <p className="field-error" data-field={other[0]} role="alert" tabIndex={-1} ref={formErrorRef}>
        {other[1]}
      </p>
    ) : null;
  };
  return (
    <div ref={pageRef}>
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
          {members.map((m) => {
            const setting = fieldErrorsFrom(data, `set-role-${m.userId}`);
            const removing = fieldErrorsFrom(data, `remove-${m.userId}`);
            const rs = `role-${m.userId}-`;
            // A refused change names the role beside the select (the page keeps showing the stored one).
            const roleError = setting.role ?? setting.form;
            return (
              <tr key={m.userId}>
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>
                  <Form method="post" className="inline">
                    <CsrfField />
                    <input type="hidden" name="intent" value="set-role" />
                    <input type="hidden" name="userId" value={m.userId} />
                    <select
                      name="role"
                      defaultValue={m.role}
                      aria-label={`Role of ${m.name}`}
                      {...invalidProps(roleError ? { role: roleError } : {}, "role", rs)}
                    >
                      {ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                    <button type="submit" className="secondary">
                      Save
                    </button>
                    <FieldError errors={roleError ? { role: roleError } : {}} name="role" scope={rs} />
                    {formError(setting, ["role", "form"])}
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
                    {formError(removing, [])}
                  </Form>
                </td>
              </tr>
            );
          })}
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
            <input type="hidden" name="adding" value="1" />
            <select name="userId" aria-label="User" {...invalidProps(add, "userId", "add-")}>
              {others.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name} ({u.email})
                </option>
              ))}
            </select>
            <select name="role" defaultValue="annotator" aria-label="Role" {...invalidProps(add, "role", "add-")}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
            <button type="submit">Add</button>
            <FieldError errors={add} name="userId" scope="add-" />
            <FieldError errors={add} name="role" scope="add-" />
            {formError(add, ["userId", "role"])}
          </Form>
        )}
      </div>
    </div>
  );
}
