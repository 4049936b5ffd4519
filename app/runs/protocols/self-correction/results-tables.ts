/** Self-Correction Bench results as a table: accuracy per model, dataset and condition with Wilson intervals, the blind spot (Eq. 2), correction markers. */
import { f3, type Cell, type ResultBlock } from "../result-tables";
import type { selfCorrectionResults } from "./index";

type Results = ReturnType<typeof selfCorrectionResults>;

const CONDITIONS = ["internal", "external", "internal-wait"] as const;

const withCi = (value: number, ci: readonly [number, number] | number[]) => `${f3(value)} [${f3(ci[0])}, ${f3(ci[1])}]`;

export function selfCorrectionTables(r: Results): ResultBlock[] {
  const num = { className: "num" };
  return [
    {
      kind: "table",
      table: {
        id: "accuracy",
        columns: [
          { header: "Model" },
          { header: "Dataset" },
          { header: "Internal [95% Wilson CI]", ...num },
          { header: "External [95% Wilson CI]", ...num },
          { header: "Internal + Wait [95% Wilson CI]", ...num },
          { header: "Blind spot [95% CI, delta method, upper end clipped at 1]", ...num },
        ],
        rows: r.metrics.flatMap((m) => [
          ...m.datasets.map((d) => ({
            key: m.model + d.dataset,
            cells: [
              m.model,
              d.dataset,
              ...CONDITIONS.map((c): Cell => {
                const a = d.byCondition[c];
                return a
                  ? {
                      text: withCi(a.mean, a.ci),
                      below: { text: `n=${a.n}, failed=${a.failed}, unparsed=${a.unparsed}`, className: "small muted" },
                    }
                  : "—";
              }),
              d.blindSpot
                ? {
                    text: withCi(d.blindSpot.value, d.blindSpot.ci),
                    below: d.blindSpot.clipped ? { text: "clipped at 1", className: "small muted" } : undefined,
                  }
                : "—",
            ],
          })),
          {
            key: m.model + "macro",
            cells: [
              m.model,
              { text: "macro average", bold: true },
              f3(m.macro.internal),
              f3(m.macro.external),
              f3(m.macro["internal-wait"]),
              f3(m.macro.blindSpot),
            ],
          },
          {
            key: m.model + "markers",
            cells: [
              {
                colSpan: 6,
                className: "small",
                text: `Correction markers — ${Object.entries(m.markers)
                  .map(
                    ([c, counts]) =>
                      `${c}: ${
                        Object.entries(counts)
                          .filter(([, n]) => n > 0)
                          .map(([k, n]) => `${k} ${n}`)
                          .join(", ") || "none"
                      }`,
                  )
                  .join(" · ")}`,
              },
            ],
          },
        ]),
      },
    },
  ];
}
