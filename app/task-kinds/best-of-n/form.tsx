/** Best-of-N / pairwise, client part: pick the best response (or a tie, when allowed). */
import { ResponseCards } from "~/components/annotate/Responses";
import type { KindContext, KindModule } from "~/components/annotate/types";
import type { KindForm } from "../form-types";

function Body(c: KindContext) {
  const { values, set, closed, err, rules } = c;
  return (
    <section aria-label="Responses">
      <ResponseCards
        c={c}
        noteLabel="Notes"
        controls={(L, i) => (
          <label className="choice">
            <input type="radio" name="best" value={L} checked={values.best === L} onChange={() => set("best", L)} disabled={closed} />
            Best <kbd>{i + 1}</kbd>
          </label>
        )}
      />
      <div className="panel" style={{ marginTop: "0.75rem" }}>
        <p>Which response is best?</p>
        {rules.allowTies ? (
          <label className="choice">
            <input
              type="radio"
              name="best"
              value="tie"
              checked={values.best === "tie"}
              onChange={() => set("best", "tie")}
              disabled={closed}
            />
            Tie <kbd>T</kbd>
          </label>
        ) : null}
        {err("best")}
      </div>
    </section>
  );
}

const annotate: KindModule = {
  multi: true,
  Body,
  onKey(key, c) {
    const n = c.unit.responses.length;
    const L = c.unit.responses[c.focus]?.letter;
    if (/^[1-9]$/.test(key) && Number(key) <= n) {
      c.set("best", c.unit.responses[Number(key) - 1].letter);
      c.setFocus(Number(key) - 1);
    } else if ((key === "b" || key === "B") && L) c.set("best", L);
    else if (c.rules.allowTies && (key === "t" || key === "T")) c.set("best", "tie");
    else return false;
    return true;
  },
  shortcuts: (c) => [
    [
      <>
        <kbd>1</kbd>–<kbd>{c.unit.responses.length}</kbd>, <kbd>B</kbd>
        {c.rules.allowTies ? (
          <>
            , <kbd>T</kbd>
          </>
        ) : null}
      </>,
      `Pick the best response (B: the focused one)${c.rules.allowTies ? "; T: a tie" : ""}`,
    ],
  ],
  commentField: (c) => `note.${c.unit.responses[c.focus]?.letter ?? "A"}`,
};

export const bestOfNForm: KindForm = { id: "best-of-n", annotate };
