/** RefineBench results as tables: Pass_t by turn (beside the figure), Acc_t / Pass_t with counts per turn, Δ, termination, transitions. */
import { f1, f2, modelTable, type Cell, type ModelColumn, type ResultBlock } from "../result-tables";
import type { refineBenchResults } from "./index";

type Results = ReturnType<typeof refineBenchResults>;
type Row = Results["metrics"][number];
type Turn = Row["turns"][number];

/** One column per turn of the run (the turns of the first model). */
const turnColumns = (rows: Row[], header: (turn: number) => string, cell: (t: Turn) => Cell) =>
  (rows[0]?.turns ?? []).map((t0, i): ModelColumn<Row> => ({
    header: header(t0.turn),
    cell: (m) => (m.turns[i] ? cell(m.turns[i]) : "—"),
  }));

const TRANSITIONS = [
  ["correctToCorrect", "correct→correct"],
  ["correctToIncorrect", "correct→incorrect"],
  ["incorrectToCorrect", "incorrect→correct"],
  ["incorrectToIncorrect", "incorrect→incorrect"],
] as const;

export function refineBenchTables(r: Results, judge: string): ResultBlock[] {
  const rows = r.metrics;
  return [
    {
      kind: "figure",
      table: {
        id: "pass-by-turn",
        ...modelTable(
          rows,
          turnColumns(
            rows,
            (turn) => `Pass_${turn}`,
            (t) => f1(t.pass),
          ),
        ),
      },
    },
    {
      kind: "note",
      className: "muted",
      text:
        `Setting: ${r.setting}; judge: ${judge}. Metrics are over the instances scored at each turn (n). An instance whose generation or ` +
        "judge call failed is counted as failed at that turn — and at the later turns it made impossible — never given an earlier turn's " +
        "verdicts; an unparseable verdict is counted as unparsed. Only a [TERMINATE] reply, or a guided conversation with nothing left to " +
        "refine, carries the last answer forward.",
    },
    {
      kind: "table",
      table: {
        id: "acc-pass",
        ...modelTable(rows, [
          ...turnColumns(
            rows,
            (turn) => `Acc_${turn} / Pass_${turn}`,
            (t) => ({
              text: `${f1(t.acc)} / ${f1(t.pass)}`,
              aside: {
                text: `n=${t.n}, failed=${t.failed}, unparsed=${t.unparsed}${t.pending ? `, ${t.pending} not finished` : ""}`,
                className: "small muted",
              },
              below:
                t.accKnown !== undefined
                  ? { text: `known ${f1(t.accKnown)} · unknown ${f1(t.accUnknown)}`, className: "small" }
                  : undefined,
            }),
          ),
          { header: "Δ", cell: (m) => f1(m.delta) },
          { header: "Mean termination turn", cell: (m) => f2(m.termination.mean) },
        ]),
      },
    },
    {
      kind: "table",
      table: {
        id: "transitions",
        ...modelTable(
          rows,
          TRANSITIONS.map(([k, header]) => ({ header, cell: (m: Row) => m.transitions[k] })),
          "Turn-to-turn transitions (Pass)",
        ),
      },
    },
  ];
}
