/** C3EBench results: the judge's mean score per model and task type (Cloze, Edit, Expand, End2End) and overall. */
import { ModelTable, type ResultsViewProps } from "../views/tables";

const TASKS = ["Cloze", "Edit", "Expand", "End2End"] as const;

export function C3eBenchResults({ r }: ResultsViewProps<"c3ebench">) {
  return (
    <ModelTable
      rows={r.metrics}
      columns={[
        ...TASKS.map((t) => ({
          key: t,
          header: t,
          cell: (m: (typeof r.metrics)[number]) => {
            const c = m.byTask[t];
            return c ? `${c.mean.toFixed(2)} (n=${c.n})` : "—";
          },
        })),
        { header: "Overall", cell: (m) => (typeof m.overall === "number" && Number.isFinite(m.overall) ? m.overall.toFixed(2) : "—") },
        { header: "n", cell: (m) => m.n },
        { header: "Failed", cell: (m) => m.failed },
        { header: "Unparsed", cell: (m) => m.unparsed },
      ]}
    />
  );
}
