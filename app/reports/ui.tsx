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
      {parts.length
        ? `${parts.join(" and ")} judged an older version of what they rate (the item, checklist item or reference was edited in curation since). `
        : "Nothing is stale now. "}
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

/** Why a cell has no number: "—" (nothing to compute from) or "n/a" (the formula is undefined, 0/0). */
const EMPTY_WHY = "nothing to compute for this row (no data of this kind, e.g. gold accuracy without gold units, or no pairs)";
const UNDEFINED_WHY =
  "undefined here: the formula divides by zero (e.g. kappa when every label is the same so chance agreement is 1, precision when the judge never gives the label)";

/**
 * The legend under a table for its empty and undefined cells, unless the table's
 * own note already explains them: a figure without a number always says why.
 */
function missingLegend(table: ReportTable, shown: string[][]): string | null {
  const note = table.note ?? "";
  const flat = shown.flat();
  const parts: string[] = [];
  if (flat.some((c) => c === "—" || c.includes("[—") || c.includes("—]")) && !note.includes("—")) parts.push(`“—”: ${EMPTY_WHY}.`);
  if (flat.some((c) => c.includes("n/a")) && !note.includes("n/a")) parts.push(`“n/a”: ${UNDEFINED_WHY}.`);
  return parts.length ? parts.join(" ") : null;
}

export function FigureTable({ table, csv, caption }: { table: ReportTable | undefined; csv?: string; caption?: ReactNode }) {
  if (!table) return null;
  const shown = table.rows.map((row) => table.columns.map((c, j) => (c.kind === "link" ? "" : formatCell(table.columns, j, row))));
  const legend = missingLegend(table, shown);
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
                    {c.kind === "link" && typeof row[c.key] === "string" ? (
                      <Link to={String(row[c.key])}>Fix item</Link>
                    ) : shown[i][j] === "—" ? (
                      <span title={`No value: ${EMPTY_WHY}`}>—</span>
                    ) : shown[i][j] === "n/a" ? (
                      <span title={`Undefined: ${UNDEFINED_WHY}`}>n/a</span>
                    ) : (
                      shown[i][j]
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {legend ? (
        <p className="muted small" data-testid="missing-legend">
          {legend}
        </p>
      ) : null}
    </div>
  );
}

/** A chart with its numbers beside it. */
export function Figure({ chart, table, csv }: { chart: ReactNode; table: ReportTable | undefined; csv?: string }) {
  return (
    <div className="figure">
      <div className="figure-chart">{chart}</div>
      <div className="figure-side">
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
