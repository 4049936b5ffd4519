/**
 * Form errors beside their fields. An action answers `{ fieldErrors: { name: sentence } }`
 * (see app/forms/messages.ts); the page puts <FieldError> under each field, marks the
 * field with `invalidProps` (aria-invalid, aria-describedby), lists every problem in an
 * <ErrorSummary> (so an error of a field the form does not show is never lost), and
 * `useFocusFirstError` moves focus to the first field in error.
 */
import { useEffect, type RefObject } from "react";
import type { FieldErrors } from "~/forms/messages";

export type { FieldErrors };

const errorId = (scope: string, name: string) => `${scope}${name.replace(/[^A-Za-z0-9_-]/g, "_")}-error`;

/**
 * The field errors in an action's answer: `{ fieldErrors }`, or the older
 * `{ error, field }` shape (the message under that field). With `scope`, only an
 * answer to that form (its `form` key) counts.
 */
export function fieldErrorsFrom(data: unknown, scope?: string): FieldErrors {
  if (!data || typeof data !== "object") return {};
  const d = data as { fieldErrors?: unknown; error?: unknown; field?: unknown; form?: unknown };
  if (scope !== undefined && d.form !== scope) return {};
  if (d.fieldErrors && typeof d.fieldErrors === "object") return d.fieldErrors as FieldErrors;
  if (typeof d.error === "string") {
    const field = typeof d.field === "string" && d.field ? d.field : "form";
    // "field: reason" → "reason" beside the field.
    const message = field !== "form" && d.error.startsWith(`${field}: `) ? d.error.slice(field.length + 2) : d.error;
    return { [field]: message };
  }
  return {};
}

/** aria-invalid and aria-describedby for a field, when it has an error. */
export function invalidProps(errors: FieldErrors, name: string, scope = "") {
  return errors[name] ? { "aria-invalid": true as const, "aria-describedby": errorId(scope, name) } : {};
}

export function FieldError({ errors, name, scope = "" }: { errors: FieldErrors; name: string; scope?: string }) {
  const message = errors[name];
  if (!message) return null;
  return (
    <p className="field-error" id={errorId(scope, name)} data-field={name}>
      {message}
    </p>
  );
}

/**
 * Every problem at the top of the form, as one alert: the ones shown beside a field
 * (listed again, so a screen-reader user hears them all) and any other. The
 * messages name their field (app/forms/messages.ts).
 */
export function ErrorSummary({ errors, summaryRef }: { errors: FieldErrors; summaryRef?: RefObject<HTMLDivElement> }) {
  const entries = Object.entries(errors);
  if (entries.length === 0) return null;
  return (
    <div className="alert error error-summary" role="alert" tabIndex={-1} ref={summaryRef} data-testid="error-summary">
      {entries.length === 1 ? (
        <span>{entries[0][1]}</span>
      ) : (
        <>
          <strong>Fix {entries.length} problems:</strong>
          <ul>
            {entries.map(([name, message]) => (
              <li key={name}>{message}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/**
 * After each answer (`answer`: the action data, a new object per submission) with
 * errors, focus the first field marked aria-invalid inside `formRef` (document
 * order), or else the summary.
 */
export function useFocusFirstError(
  formRef: RefObject<HTMLElement>,
  errors: FieldErrors,
  answer: unknown,
  summaryRef?: RefObject<HTMLElement>,
) {
  const any = Object.keys(errors).length > 0;
  useEffect(() => {
    if (!any) return;
    const field = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    const target = field ?? summaryRef?.current ?? null;
    if (target) {
      target.focus();
      target.scrollIntoView({ block: "center" });
    }
    // Once per answer: `answer` is a new object each time the action replies.
  }, [answer, any, formRef, summaryRef]);
}
