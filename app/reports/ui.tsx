/** Shared report UI: a figure table with its CSV link, and the report tabs. */
import { Link, NavLink } from "@remix-run/react";
import type { ReactNode } from "react";
import { formatCell } from "./format";
import type { ReportTable, StaleMode } from "./types";

/**
 * The note on labels and verdicts marked stale by curation edits, and the choice
 * to count them or leave them out (a `stale` select for the page's GET form).
 * Renders nothing when nothing is stale and they are counted.
 */
export function StaleNote({ counts, mode }: { counts: { labels: number; verdicts: number }; mode: StaleMode }) {
  if (counts.labels === 0 && counts.verdicts === 0 && mode === "include") return null;
  const parts = [
    counts.labels > 0 ? `${counts.labels} submitted label${counts.labels === 1 ? "" : "s"}` : "",
    counts.verdicts > 0 ? `${counts.verdicts} judge verdict${counts.verdicts === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  return (
    <div className="alert info" role="status" data-testid="stale-note">
      {parts.length ? `${parts.join(" and ")} judged an older version of what they rate (the item, checklist item or reference was edited in curation since). ` : "Nothing is stale now. "}
      {mode === "exclude"
        ? "They are left out of every figure on this page."
        : "They are still counted here; relabel the units, or re-run the judges, to bring them up to date — or leave them out."}
    </div>
  );
}

export function StaleSelect({ counts, mode }: { counts: { labels: number; verdicts: number }; mode: StaleMode }) {
  if (counts.labels === 0 && counts.verdicts === 0 && mode === "include") return null;
  return (
    <label>
      Stale labels and verdicts
      <select name="stale" defaultValue={mode}>
        <option value="include">Count them</option>
        <option value="exclude">Leave them out</option>
      </select>
    </label>
  );
}

/** The query every report link carries: the final-label rule, and the stale choice when it is not the default. */
export function reportQuery(rule: string, stale: StaleMode, extra: Record<string, string> = {}): Record<string, string> {
  return { rule, ...(stale === "exclude" ? { stale } : {}), ...extra };
}

export function csvHref(slug: string, taskId: number, table: string, extra: Record<string, string> = {}) {
  return `/p/${slug}/reports/${taskId}/csv?${new URLSearchParams({ table, ...extra })}`;
}

export function FigureTable({ table, csv, caption }: { table: ReportTable | undefined; csv?: string; caption?: ReactNode }) {
  if (!table) return null;
  return (
    <div className="figure-table" data-table={table.id}>
      <h3>
        {table.title}{" "}
        {csv ? (
          <>
            <a href={csv} className="small" download>
              CSV
            </a>{" "}
            <a href={`${csv}&format=latex`} className="small" download title="This table as LaTeX (booktabs), at the precision shown">
              LaTeX
            </a>
          </>
        ) : null}
      </h3>
      {caption}
      {table.note ? <p className="muted small">{table.note}</p> : null}
      {table.rows.length === 0 ? (
        <p className="muted">No rows.</p>
      ) : (
        <table>
          <thead>
            <tr>
              {table.columns.map((c) => (
                <th key={c.key} className={c.kind === "text" || c.kind === "link" ? undefined : "num"}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row, i) => (
              <tr key={i}>
                {table.columns.map((c, j) => (
                  <td key={c.key} className={c.kind === "text" || c.kind === "link" ? undefined : "num"} data-col={c.key}>
                    {c.kind === "link" && typeof row[c.key] === "string" ? <Link to={String(row[c.key])}>Fix item</Link> : formatCell(table.columns, j, row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A chart with its numbers beside it. */
export function Figure({ chart, table, csv }: { chart: ReactNode; table: ReportTable | undefined; csv?: string }) {
  return (
    <div className="figure" style={{ display: "flex", gap: "1.5rem", flexWrap: "wrap", alignItems: "flex-start" }}>
      <div>{chart}</div>
      <div style={{ flex: "1 1 320px", minWidth: 0 }}>
        <FigureTable table={table} csv={csv} />
      </div>
    </div>
  );
}

export function ReportTabs({ slug, taskId, query }: { slug: string; taskId: number; query: string }) {
  const q = query ? `?${query}` : "";
  return (
    <nav className="toolbar" aria-label="Report pages">
      <NavLink to={`/p/${slug}/reports`} end>
        All tasks
      </NavLink>
      <NavLink to={`/p/${slug}/reports/${taskId}${q}`} end>
        Annotator agreement
      </NavLink>
      <NavLink to={`/p/${slug}/reports/${taskId}/judges${q}`}>Judge–human agreement</NavLink>
      <NavLink to={`/p/${slug}/reports/${taskId}/disagreements${q}`}>Disagreements</NavLink>
    </nav>
  );
}
