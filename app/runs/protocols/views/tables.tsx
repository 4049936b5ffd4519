/**
 * Pieces every protocol's results view uses: a table with one row per model,
 * number formatting, and the props a view receives. Client code: only types
 * come from the protocol modules (nothing of zod or the server reaches the page).
 */
import type { SerializeFrom } from "@remix-run/node";
import type { ReactNode } from "react";
import type { ProtocolResults } from "../index";
import type { ResultsFigure } from "../types";

/** One judge's results of a run of protocol P, as the page receives them. */
export type ResultsOf<P extends ProtocolResults["protocol"]> = SerializeFrom<Extract<ProtocolResults, { protocol: P }>> & {
  judge: string;
};

/** What a protocol's results view is given: one judge's results and the figure the protocol drew for them, if any. */
export type ResultsViewProps<P extends ProtocolResults["protocol"]> = { r: ResultsOf<P>; figure: ResultsFigure | null };

/** One decimal, "—" for a value that cannot be computed (no instance scored). */
export const f1 = (x: number | null | undefined) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(1) : "—");
/** Three decimals, "—" when absent. */
export const f3 = (x: number | null | undefined) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(3) : "—");

/** A column of a per-model table: its header and the cell for one model's row. */
export type Column<M> = { header: ReactNode; cell: (m: M) => ReactNode; key?: string; text?: boolean };

/** A results table with one row per model: the model's name, then one cell per column. */
export function ModelTable<M extends { model: string }>({ rows, columns }: { rows: M[]; columns: Column<M>[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Model</th>
          {columns.map((c, i) => (
            <th key={c.key ?? i} className={c.text ? undefined : "num"}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.model}>
            <td>{m.model}</td>
            {columns.map((c, i) => (
              <td key={c.key ?? i} className={c.text ? undefined : "num"}>
                {c.cell(m)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A figure drawn on the server (an SVG string of our own chart code) with its legend. */
export function Figure({ figure, children }: { figure: ResultsFigure; children?: ReactNode }) {
  return (
    <div className="panel figure" data-testid={figure.testId}>
      <figure className="figure-chart">
        <div dangerouslySetInnerHTML={{ __html: figure.svg }} />
        <figcaption>
          <ul className="chart-legend" data-testid="chart-legend" aria-label="Legend">
            {figure.legend.map((l) => (
              <li key={l.name}>
                <span className="swatch" style={{ background: l.color }} aria-hidden="true" /> {l.name}
              </li>
            ))}
          </ul>
        </figcaption>
      </figure>
      {children ? (
        <div className="figure-side">
          <div className="figure-table">{children}</div>
        </div>
      ) : null}
    </div>
  );
}
