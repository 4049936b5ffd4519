/** Writing quality, client part: a 1–5 score per response (the reference scores 4), a penalty reason below 3 — or the task's own scale (e.g. 1–10, reference 6, below 4). */
import { LabelText } from "~/components/annotate/Label";
import { ResponseCards } from "~/components/annotate/Responses";
import type { KindContext, KindModule } from "~/components/annotate/types";
import type { KindForm } from "../form-types";

const scaleOf = (c: KindContext) => c.rules.scale ?? { max: 5, reference: 4, penaltyBelow: 3 };

function Body(c: KindContext) {
  const { values, set, closed, err, rules } = c;
  const scale = scaleOf(c);
  return (
    <section aria-label="Responses">
      <ResponseCards
        c={c}
        noteLabel="Observations"
        controls={(L) => (
          <>
            <fieldset>
              <legend>Score for Response {L}</legend>
              <div className="scores">
                {Array.from({ length: scale.max }, (_, i) => String(i + 1)).map((s) => (
                  <label className="choice" key={s}>
                    <input
                      type="radio"
                      name={`score.${L}`}
                      value={s}
                      checked={values[`score.${L}`] === s}
                      onChange={() => set(`score.${L}`, s)}
                      disabled={closed}
                    />
                    {s}
                  </label>
                ))}
              </div>
            </fieldset>
            {err(`score.${L}`)}
            <label className="field">
              <LabelText hint="P">Penalty reason (needed below {scale.penaltyBelow})</LabelText>
              <select
                name={`reason.${L}`}
                value={values[`reason.${L}`] ?? ""}
                onChange={(e) => {
                  set(`reason.${L}`, e.target.value);
                  if (e.target.value === "safety") set(`score.${L}`, "1");
                }}
                disabled={closed}
              >
                <option value="">—</option>
                {rules.penaltyReasons.map((reason) => (
                  <option key={reason} value={reason}>
                    {reason}
                  </option>
                ))}
              </select>
            </label>
            {err(`reason.${L}`)}
          </>
        )}
      />
    </section>
  );
}

const annotate: KindModule = {
  multi: true,
  Body,
  onKey(key, c) {
    const L = c.unit.responses[c.focus]?.letter;
    if (!L) return false;
    // Keys 1–9 give those scores, 0 gives 10 (on a 1–10 scale).
    const max = scaleOf(c).max;
    const n = key === "0" ? 10 : /^[1-9]$/.test(key) ? Number(key) : NaN;
    if (n >= 1 && n <= max) c.set(`score.${L}`, String(n));
    else if (key === "p" || key === "P") {
      const list = ["", ...c.rules.penaltyReasons];
      const next = list[(list.indexOf(c.values[`reason.${L}`] ?? "") + 1) % list.length];
      c.set(`reason.${L}`, next);
      if (next === "safety") c.set(`score.${L}`, "1");
    } else return false;
    return true;
  },
  shortcuts: (c) => [
    [
      scaleOf(c).max === 10 ? (
        <>
          <kbd>1</kbd>–<kbd>9</kbd>, <kbd>0</kbd> (= 10)
        </>
      ) : (
        <>
          <kbd>1</kbd>–<kbd>{scaleOf(c).max}</kbd>
        </>
      ),
      "Score the focused response",
    ],
    [<kbd>P</kbd>, "Cycle the penalty reason of the focused response"],
  ],
  commentField: (c) => `note.${c.unit.responses[c.focus]?.letter ?? "A"}`,
};

export const writingQualityForm: KindForm = {
  id: "writing-quality",
  annotate,
  referenceHeading: (rules) => `Reference (scores ${rules.scale?.reference ?? 4})`,
};
