/** The Yes/No kinds' annotate controls: one Yes/No answer and a comment. */
import { LabelText } from "~/components/annotate/Label";
import type { KindContext, KindModule } from "~/components/annotate/types";
import { Markdown } from "~/components/Markdown";
import type { KindForm } from "../form-types";

function annotate(question: string, showResponse: boolean): KindModule {
  function Body({ unit, values, set, closed, err }: KindContext) {
    return (
      <>
        {showResponse && unit.responses[0] ? (
          <section className="panel" aria-label="Response">
            <h2>Response</h2>
            <div className="response-text">
              <Markdown>{unit.responses[0].text}</Markdown>
            </div>
          </section>
        ) : null}
        <section className="panel">
          <h2>Checklist item</h2>
          <Markdown className="question">{unit.checklistItem ?? ""}</Markdown>
          <p>{question}</p>
          <div className="choice-row" role="radiogroup" aria-label="Answer">
            {(["Yes", "No"] as const).map((v) => (
              <label className="choice" key={v}>
                <input
                  type="radio"
                  name="answer"
                  value={v}
                  checked={values.answer === v}
                  onChange={() => set("answer", v)}
                  disabled={closed}
                />
                {v} <kbd>{v[0]}</kbd>
              </label>
            ))}
          </div>
          {err("answer")}
          <label className="field">
            <LabelText hint="C">Comment (optional)</LabelText>
            <textarea
              name="comment"
              rows={2}
              value={values.comment ?? ""}
              onChange={(e) => set("comment", e.target.value)}
              disabled={closed}
            />
          </label>
          {err("comment")}
        </section>
      </>
    );
  }
  return {
    multi: false,
    Body,
    onKey(key, c) {
      if (key === "y" || key === "Y") c.set("answer", "Yes");
      else if (key === "n" || key === "N") c.set("answer", "No");
      else return false;
      return true;
    },
    shortcuts: () => [
      [
        <>
          <kbd>Y</kbd> / <kbd>N</kbd>
        </>,
        "Answer Yes / No",
      ],
    ],
    commentField: () => "comment",
  };
}

/** A Yes/No kind's annotate controls: `question` under the checklist item; `showResponse` shows the unit's one response. */
export function yesNoForm(id: string, question: string, showResponse: boolean): KindForm {
  return { id, annotate: annotate(question, showResponse) };
}
