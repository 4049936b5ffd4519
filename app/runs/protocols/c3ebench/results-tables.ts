/** C3EBench results as a table: the judge's mean score per model and task type (Cloze, Edit, Expand, End2End) and overall. */
import { f2, modelTable, type ResultBlock } from "../result-tables";
import type { c3eBenchResults } from "./index";

type Results = ReturnType<typeof c3eBenchResults>;
type Row = Results["metrics"][number];

const TASKS = ["Cloze", "Edit", "Expand", "End2End"] as const;

export function c3eBenchTables(r: Results): ResultBlock[] {
  return [
    {
      kind: "table",
      table: {
        id: "scores",
        ...modelTable(r.metrics, [
          ...TASKS.map((t) => ({
            header: t,
            cell: (m: Row) => {
              const c = m.byTask[t];
              return c ? `${f2(c.mean)} (n=${c.n})` : "—";
            },
          })),
          { header: "Overall", cell: (m) => f2(m.overall) },
          { header: "n", cell: (m) => m.n },
          { header: "Failed", cell: (m) => m.failed },
          { header: "Unparsed", cell: (m) => m.unparsed },
        ]),
      },
    },
  ];
}
