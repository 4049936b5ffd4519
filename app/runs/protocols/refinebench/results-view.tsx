/** RefineBench results: Pass_t by turn (figure and table), Acc_t / Pass_t with counts per turn, Δ, termination, transitions. */
import { Figure, f1, ModelTable, type Column, type ResultsOf, type ResultsViewProps } from "../views/tables";

type Row = ResultsOf<"refinebench">["metrics"][number];
type Turn = Row["turns"][number];

/** One column per turn of the run (the turns of the first model). */
const turnColumns = (rows: Row[], header: (turn: number) => string, cell: (t: Turn) => React.ReactNode): Column<Row>[] =>
  (rows[0]?.turns ?? []).map((t0, i) => ({
    key: `turn-${t0.turn}`,
    header: header(t0.turn),
    cell: (m) => (m.turns[i] ? cell(m.turns[i]) : "—"),
  }));

const TRANSITIONS = [
  ["correctToCorrect", "correct→correct"],
  ["correctToIncorrect", "correct→incorrect"],
  ["incorrectToCorrect", "incorrect→correct"],
  ["incorrectToIncorrect", "incorrect→incorrect"],
] as const;

export function RefineBenchResults({ r, figure }: ResultsViewProps<"refinebench">) {
  const rows = r.metrics;
  return (
    <>
      {figure ? (
        <Figure figure={figure}>
          <ModelTable
            rows={rows}
            columns={turnColumns(
              rows,
              (turn) => `Pass_${turn}`,
              (t) => f1(t.pass),
            )}
          />
        </Figure>
      ) : null}
      <p className="muted">
        Setting: {r.setting}; judge: {r.judge}. Metrics are over the instances scored at each turn (n). An instance whose generation or
        judge call failed is counted as failed at that turn — and at the later turns it made impossible — never given an earlier turn&apos;s
        verdicts; an unparseable verdict is counted as unparsed. Only a [TERMINATE] reply, or a guided conversation with nothing left to
        refine, carries the last answer forward.
      </p>
      <ModelTable
        rows={rows}
        columns={[
          ...turnColumns(
            rows,
            (turn) => `Acc_${turn} / Pass_${turn}`,
            (t) => (
              <>
                {f1(t.acc)} / {f1(t.pass)}{" "}
                <span className="small muted">
                  n={t.n}, failed={t.failed}, unparsed={t.unparsed}
                  {t.pending ? `, ${t.pending} not finished` : ""}
                </span>
                {t.accKnown !== undefined ? (
                  <div className="small">
                    known {f1(t.accKnown)} · unknown {f1(t.accUnknown)}
                  </div>
                ) : null}
              </>
            ),
          ),
          { header: "Δ", cell: (m) => f1(m.delta) },
          { header: "Mean termination turn", cell: (m) => (m.termination.mean == null ? "—" : m.termination.mean.toFixed(2)) },
        ]}
      />
      <h3>Turn-to-turn transitions (Pass)</h3>
      <ModelTable rows={rows} columns={TRANSITIONS.map(([k, header]) => ({ key: k, header, cell: (m: Row) => m.transitions[k] }))} />
    </>
  );
}
