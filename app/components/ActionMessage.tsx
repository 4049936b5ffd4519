/**
 * The outcome of a form action, shown above the page: `{ error }` as an alert,
 * `{ ok }` as a status message (announced by screen readers either way).
 */
export function ActionMessage({ data }: { data: unknown }) {
  if (!data || typeof data !== "object") return null;
  const d = data as { error?: unknown; ok?: unknown };
  if (typeof d.error === "string") {
    return (
      <div className="alert error" role="alert">
        {d.error}
      </div>
    );
  }
  if (typeof d.ok === "string") {
    return (
      <div className="alert ok" role="status">
        {d.ok}
      </div>
    );
  }
  return null;
}
