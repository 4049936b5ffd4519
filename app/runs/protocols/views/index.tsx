/**
 * The results page's rendering of any protocol's result tables (../result-tables.ts):
 * tables, notes, and the table beside the protocol's figure. The protocols build
 * these blocks on the server (Protocol.tables), so this page's JavaScript holds no
 * protocol code and a new protocol needs nothing here.
 */
import { Fragment } from "react";
import type { Cell, ResultBlock, ResultColumn, ResultTable } from "../result-tables";
import type { ResultsFigure } from "../types";
import { Figure } from "./tables";

function CellView({ cell, column }: { cell: Cell; column: ResultColumn | undefined }) {
  if (typeof cell !== "object") return <td className={column?.className}>{cell}</td>;
  return (
    <td className={cell.className ?? column?.className} colSpan={cell.colSpan}>
      {cell.bold ? <b>{cell.text}</b> : cell.text}
      {cell.aside ? (
        <>
          {" "}
          <span className={cell.aside.className}>{cell.aside.text}</span>
        </>
      ) : null}
      {cell.below ? <div className={cell.below.className}>{cell.below.text}</div> : null}
    </td>
  );
}

export function TableView({ table }: { table: ResultTable }) {
  const body = (
    <table>
      {table.columns ? (
        <thead>
          <tr>
            {table.columns.map((c, i) => (
              <th key={i} className={c.className}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
      ) : null}
      <tbody>
        {table.rows.map((r) => (
          <tr key={r.key}>
            {r.cells.map((c, i) => (
              <CellView key={i} cell={c} column={table.columns?.[i]} />
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return table.title ? (
    <div>
      <h3>{table.title}</h3>
      {body}
    </div>
  ) : (
    body
  );
}

/** The CSV and LaTeX links under a results table (the route p.$slug.runs.$runId.results.csv: `base` + `&format=latex`). */
export function TableDownloads({ base, title }: { base: string; title: string }) {
  return (
    <p className="small table-downloads">
      Download {title}:{" "}
      <a href={base} download>
        CSV
      </a>{" "}
      ·{" "}
      <a href={`${base}&format=latex`} download>
        LaTeX
      </a>
    </p>
  );
}

/**
 * One judge's results as its protocol laid them out ("No tables" for a protocol without any). With `downloads`
 * (the address of the run's table downloads and the judge's id), a CSV and a LaTeX link under each table.
 */
export function ResultsView({
  blocks,
  figure,
  downloads,
}: {
  blocks: ResultBlock[] | null;
  figure: ResultsFigure | null;
  downloads?: { base: string; judgeId: number };
}) {
  if (!blocks) return <p className="muted">No tables for this protocol.</p>;
  const links = (table: ResultTable) =>
    downloads && table.id ? (
      <TableDownloads
        base={`${downloads.base}?table=${encodeURIComponent(table.id)}&judge=${downloads.judgeId}`}
        title={table.title ?? "this table"}
      />
    ) : null;
  return (
    <>
      {blocks.map((b, i) =>
        b.kind === "note" ? (
          <p key={i} className={b.className}>
            {b.text}
          </p>
        ) : b.kind === "figure" ? (
          figure ? (
            <Fragment key={i}>
              <Figure figure={figure}>
                <TableView table={b.table} />
              </Figure>
              {links(b.table)}
            </Fragment>
          ) : null
        ) : (
          <Fragment key={i}>
            <TableView table={b.table} />
            {links(b.table)}
          </Fragment>
        ),
      )}
    </>
  );
}
