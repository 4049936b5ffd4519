/** FB-Bench results: error correction, response maintenance and overall per model (under the run's maintenance rule), and breakdowns. */
import { f1, ModelTable, type ResultsViewProps } from "../views/tables";

const BREAKDOWNS = [
  ["byTask", "By task"],
  ["byFeedbackType", "By feedback type"],
  ["byDeficiencyType", "By deficiency type (error correction)"],
] as const;

export function FbBenchResults({ r }: ResultsViewProps<"fb-bench">) {
  return (
    <>
      <ModelTable
        rows={r.metrics}
        columns={[
          { header: "Error correction", cell: (m) => f1(m.errorCorrection.mean) },
          {
            header: `Response maintenance (rule: ${r.rule})`,
            cell: (m) => (
              <>
                {f1(m.responseMaintenance.mean)} <span className="small">(rule: {m.rule})</span>
              </>
            ),
          },
          {
            header: `Overall (rule: ${r.rule})`,
            cell: (m) => (
              <>
                {f1(m.overall)} <span className="small">(rule: {m.rule})</span>
              </>
            ),
          },
          { header: "n (EC / RM)", cell: (m) => `${m.errorCorrection.n} / ${m.responseMaintenance.n}` },
          { header: "Failed", cell: (m) => m.failed },
          { header: "Unparsed", cell: (m) => m.unparsed },
        ]}
      />
      {BREAKDOWNS.map(([k, title]) => (
        <div key={k}>
          <h3>
            {title} (rule: {r.rule})
          </h3>
          <table>
            <tbody>
              {r.metrics.flatMap((m) =>
                Object.entries(m[k]).map(([g, c]) => (
                  <tr key={m.model + g}>
                    <td>{m.model}</td>
                    <td>{g}</td>
                    <td className="num">{f1(c.mean)}</td>
                    <td className="num small">n={c.n}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}
