/**
 * The figure a protocol's results show its first table beside: an SVG the server drew
 * (our own chart code, no user markup) with its legend. Client code.
 */
import type { ReactNode } from "react";
import type { ResultsFigure } from "../types";

export { f1, f3 } from "../result-tables";

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
