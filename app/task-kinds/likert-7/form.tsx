/** Likert 1–7 with rationale, client part: the response, the question, seven points between two anchors, a rationale. */
import { LabelText } from "~/components/annotate/Label";
import type { KindContext, KindModule } from "~/components/annotate/types";
import { Markdown } from "~/components/Markdown";
import type { KindForm } from "../form-types";

const POINTS = ["1", "2", "3", "4", "5", "6", "7"];

function Body({ unit, rules, values, set, closed, err }: KindContext) {
  const s = rules.settings ?? {};
  return (
    <>
      {unit.responses[0] ? (
        <section className="panel" aria-label="Response">
          <h2>Response</h2>
          <div className="response-text">
            <Markdown>{unit.responses[0].text}</Markdown>
          </div>
        </section>
      ) : null}
      <section className="panel">
        <h2>Question</h2>
        <Markdown className="question">{s.question ?? ""}</Markdown>
        <fieldset>
          <legend>
            1 = {s.lowAnchor || "lowest"} · 7 = {s.highAnchor || "highest"}
          </legend>
          <div className="choice-row likert" role="radiogroup" aria-label="Point on the scale">
            {POINTS.map((v) => (
              <label className="choice" key={v}>
                <input
                  type="radio"
                  name="score"
                  value={v}
                  checked={values.score === v}
                  onChange={() => set("score", v)}
                  disabled={closed}
                />
                {v} <kbd>{v}</kbd>
                {v === "1" && s.lowAnchor ? <span className="small muted"> {s.lowAnchor}</span> : null}
                {v === "7" && s.highAnchor ? <span className="small muted"> {s.highAnchor}</span> : null}
              </label>
            ))}
          </div>
        </fieldset>
        {err("score")}
        <label className="field">
          <LabelText hint="C">Rationale (required)</LabelText>
          <textarea
            name="rationale"
            rows={3}
            value={values.rationale ?? ""}
            onChange={(e) => set("rationale", e.target.value)}
            disabled={closed}
          />
        </label>
        {err("rationale")}
      </section>
    </>
  );
}

const annotate: KindModule = {
  multi: false,
  Body,
  onKey(key, c) {
    if (!/^[1-7]$/.test(key)) return false;
    c.set("score", key);
    return true;
  },
  shortcuts: () => [
    [
      <>
        <kbd>1</kbd>–<kbd>7</kbd>
      </>,
      "Choose a point on the scale",
    ],
  ],
  commentField: () => "rationale",
};

export const likert7Form: KindForm = { id: "likert-7", annotate };
