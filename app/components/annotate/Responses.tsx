/** Responses side by side (writing quality, best-of-N), each with its own controls. */
import type { ReactNode } from "react";
import { Markdown } from "../Markdown";
import { LabelText } from "./Label";
import type { KindContext } from "./types";

export function ResponseCards({
  c,
  controls,
  noteLabel,
}: {
  c: KindContext;
  controls: (letter: string, i: number) => ReactNode;
  noteLabel: string;
}) {
  const { unit, values, set, focus, setFocus, closed, err } = c;
  return (
    <div className={`compare n${unit.responses.length}`}>
      {unit.responses.map((r, i) => {
        const L = r.letter;
        return (
          // Clicking a card, or tabbing into one of its controls, makes it the focused response; from the keyboard,
          // H/L and the number keys do too (the page's key handler).
          // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-noninteractive-element-interactions
          <article
            key={L}
            id={`response-${L}`}
            className={`response-card${i === focus ? " focused" : ""}`}
            onClick={() => setFocus(i)}
            onFocus={() => setFocus(i)}
            aria-label={`Response ${L}`}
          >
            <h3>
              Response {L} <span className="muted small">({i + 1})</span>
            </h3>
            <div className="response-text">
              <Markdown>{r.text}</Markdown>
            </div>
            {controls(L, i)}
            <label className="field">
              <LabelText hint="C">{noteLabel}</LabelText>
              <textarea
                name={`note.${L}`}
                rows={2}
                value={values[`note.${L}`] ?? ""}
                onChange={(e) => set(`note.${L}`, e.target.value)}
                disabled={closed}
              />
            </label>
            {err(`note.${L}`)}
          </article>
        );
      })}
    </div>
  );
}
