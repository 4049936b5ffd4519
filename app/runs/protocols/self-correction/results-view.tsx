/** Self-Correction Bench results: accuracy per model, dataset and condition with Wilson intervals, the blind spot (Eq. 2), correction markers. */
import { f3, type ResultsViewProps } from "../views/tables";

const CONDITIONS = ["internal", "external", "internal-wait"] as const;

export function SelfCorrectionResults({ r }: ResultsViewProps<"self-correction">) {
  return (
    <table>
      <thead>
        <tr>
          <th>Model</th>
          <th>Dataset</th>
          <th className="num">Internal [95% Wilson CI]</th>
          <th className="num">External [95% Wilson CI]</th>
          <th className="num">Internal + Wait [95% Wilson CI]</th>
          <th className="num">Blind spot [95% CI, delta method, upper end clipped at 1]</th>
        </tr>
      </thead>
      <tbody>
        {r.metrics.flatMap((m) => [
          ...m.datasets.map((d) => (
            <tr key={m.model + d.dataset}>
              <td>{m.model}</td>
              <td>{d.dataset}</td>
              {CONDITIONS.map((c) => {
                const a = d.byCondition[c];
                return (
                  <td key={c} className="num">
                    {a ? `${f3(a.mean)} [${f3(a.ci[0])}, ${f3(a.ci[1])}]` : "—"}
                    {a ? (
                      <div className="small muted">
                        n={a.n}, failed={a.failed}, unparsed={a.unparsed}
                      </div>
                    ) : null}
                  </td>
                );
              })}
              <td className="num">
                {d.blindSpot ? `${f3(d.blindSpot.value)} [${f3(d.blindSpot.ci[0])}, ${f3(d.blindSpot.ci[1])}]` : "—"}
                {d.blindSpot?.clipped ? <div className="small muted">clipped at 1</div> : null}
              </td>
            </tr>
          )),
          <tr key={m.model + "macro"}>
            <td>{m.model}</td>
            <td>
              <b>macro average</b>
            </td>
            <td className="num">{f3(m.macro.internal)}</td>
            <td className="num">{f3(m.macro.external)}</td>
            <td className="num">{f3(m.macro["internal-wait"])}</td>
            <td className="num">{f3(m.macro.blindSpot)}</td>
          </tr>,
          <tr key={m.model + "markers"}>
            <td colSpan={6} className="small">
              Correction markers —{" "}
              {Object.entries(m.markers)
                .map(
                  ([c, counts]) =>
                    `${c}: ${
                      Object.entries(counts)
                        .filter(([, n]) => n > 0)
                        .map(([k, n]) => `${k} ${n}`)
                        .join(", ") || "none"
                    }`,
                )
                .join(" · ")}
            </td>
          </tr>,
        ])}
      </tbody>
    </table>
  );
}
