/**
 * Rename a task and edit its guidelines (both are shown to annotators). A text
 * naming a model, judge or provider of the project comes back with a warning
 * next to the field and a "Save anyway" button; nothing is saved until then.
 */
import { Form } from "@remix-run/react";
import { CsrfField } from "./CsrfField";

export type TaskNameOutcome =
  | { intent?: string; fieldErrors?: Record<string, string>; warning?: { names: string[] }; values?: { name: string; guidelines: string } }
  | undefined;

export function TaskNameForm({ name, guidelines, outcome }: { name: string; guidelines: string; outcome: TaskNameOutcome }) {
  const mine = outcome?.intent === "rename" ? outcome : undefined;
  const errors = mine?.fieldErrors ?? {};
  const values = mine?.values ?? { name, guidelines };
  const key = mine ? JSON.stringify(values) : `${name}\n${guidelines}`;
  return (
    <details className="panel" open={mine != null} data-testid="task-name-form">
      <summary>Rename the task, edit its guidelines</summary>
      <Form method="post" className="stack" key={key} style={{ maxWidth: "720px", marginTop: "0.75rem" }}>
        <CsrfField />
        <input type="hidden" name="intent" value="rename" />
        <label>
          Name (annotators see it)
          <input
            name="name"
            defaultValue={values.name}
            maxLength={200}
            required
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={errors.name ? "task-name-error" : undefined}
            autoFocus={errors.name != null}
          />
        </label>
        {errors.name ? (
          <div className="field-error" role="alert" id="task-name-error">
            {errors.name}
          </div>
        ) : null}
        <label>
          Guidelines (markdown; annotators see them)
          <textarea
            name="guidelines"
            rows={6}
            defaultValue={values.guidelines}
            aria-invalid={errors.guidelines ? true : undefined}
            aria-describedby={errors.guidelines ? "task-guidelines-error" : undefined}
            autoFocus={errors.guidelines != null && errors.name == null}
          />
        </label>
        {errors.guidelines ? (
          <div className="field-error" role="alert" id="task-guidelines-error">
            {errors.guidelines}
          </div>
        ) : null}
        <div className="actions">
          <button type="submit" name="confirmNames" value="no">
            Save name and guidelines
          </button>
          {mine?.warning ? (
            <button type="submit" name="confirmNames" value="yes" className="danger">
              Save anyway
            </button>
          ) : null}
        </div>
      </Form>
    </details>
  );
}
