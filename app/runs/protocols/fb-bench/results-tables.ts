/** FB-Bench results as tables: error correction, response maintenance and overall per model (under the run's maintenance rule), and breakdowns. */
import { f1, modelTable, type ResultBlock } from "../result-tables";
import type { fbBenchResults } from "./index";

type Results = ReturnType<typeof fbBenchResults>;

const BREAKDOWNS = [
  ["byTask", "By task", "by-task"],
  ["byFeedbackType", "By feedback type", "by-feedback-type"],
  ["byDeficiencyType", "By deficiency type (error correction)", "by-deficiency-type"],
] as const;

export function fbBenchTables(r: Results): ResultBlock[] {
  const withRule = (value: number | null | undefined, rule: string) => ({
    text: f1(value),
    aside: { text: `(rule: ${rule})`, className: "small" },
  });
  return [
    {
      kind: "table",
      table: {
        id: "scores",
        ...modelTable(r.metrics, [
          { header: "Error correction", cell: (m) => f1(m.errorCorrection.mean) },
          { header: `Response maintenance (rule: ${r.rule})`, cell: (m) => withRule(m.responseMaintenance.mean, m.rule) },
          { header: `Overall (rule: ${r.rule})`, cell: (m) => withRule(m.overall, m.rule) },
          { header: "n (EC / RM)", cell: (m) => `${m.errorCorrection.n} / ${m.responseMaintenance.n}` },
          { header: "Failed", cell: (m) => m.failed },
          { header: "Unparsed", cell: (m) => m.unparsed },
        ]),
      },
    },
    // One row per model and group: the group's mean and its n.
    ...BREAKDOWNS.map(([k, title, id]): ResultBlock => ({
      kind: "table",
      table: {
        id,
        title: `${title} (rule: ${r.rule})`,
        columns: null,
        rows: r.metrics.flatMap((m) =>
          Object.entries(m[k]).map(([g, c]) => ({
            key: m.model + g,
            cells: [m.model, g, { text: f1(c.mean), className: "num" }, { text: `n=${c.n}`, className: "num small" }],
          })),
        ),
      },
    })),
  ];
}
