/**
 * The labelling form for one unit. A plain POST form that works without
 * JavaScript; with JavaScript it adds keyboard shortcuts, auto-saved drafts
 * and time tracking. Responses are only ever named by their shown letter.
 */
import { CsrfField, useCsrfToken } from "~/components/CsrfField";
import { Form, useFetcher, useNavigate, useNavigation } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { Markdown } from "./Markdown";

export type BlindUnitProps = {
  unitId: number;
  kind: "checklist-appropriateness" | "response-satisfaction" | "writing-quality" | "best-of-n";
  query: string;
  passage: string | null;
  reference: string | null;
  checklistItem: string | null;
  responses: { letter: string; text: string }[];
};

type Props = {
  unit: BlindUnitProps;
  initialValues: Record<string, string>;
  fieldErrors: Record<string, string>;
  rules: { penaltyReasons: string[]; allowTies: boolean };
  status: string;
  skipReason: string | null;
  clientToken: string;
  openedAt: number;
  baseDurationMs: number;
  guidelines: string;
  closed: boolean;
  prevHref: string | null;
  nextHref: string | null;
};

const QUESTION: Record<string, string> = {
  "checklist-appropriateness": "Is this a valid criterion for grading answers to this question?",
  "response-satisfaction": "Does the response satisfy the checklist item?",
};

export function AnnotateForm(p: Props) {
  const { unit, rules } = p;
  const yesNo = unit.kind === "checklist-appropriateness" || unit.kind === "response-satisfaction";
  const multi = !yesNo;
  const [values, setValues] = useState<Record<string, string>>(p.initialValues);
  const [focus, setFocus] = useState(0);
  const [sheet, setSheet] = useState(false);
  const [showGuidelines, setShowGuidelines] = useState(false);
  const [skipping, setSkipping] = useState(p.fieldErrors.skipReason != null);
  const [saveState, setSaveState] = useState<"idle" | "pending" | "saved" | "error">("idle");
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  const formRef = useRef<HTMLFormElement>(null);
  const mounted = useRef(Date.now());
  const dirty = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const fetcher = useFetcher<{ ok?: boolean }>();
  const csrf = useCsrfToken();
  const navigate = useNavigate();
  const navigation = useNavigation();
  const submitting = navigation.state === "submitting";
  const revising = p.status === "submitted";

  const set = useCallback((name: string, value: string) => {
    dirty.current = true;
    setValues((v) => ({ ...v, [name]: value }));
  }, []);
  const elapsed = () => p.baseDurationMs + (Date.now() - mounted.current);

  // Auto-save drafts (not when revising a submitted label: that is saved by submitting).
  useEffect(() => {
    if (!dirty.current || revising || p.closed) return;
    setSaveState("pending");
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      fetcher.submit({ ...values, _csrf: csrf, intent: "draft", unitId: String(unit.unitId), durationMs: String(elapsed()) }, { method: "post" });
    }, 500);
    return () => clearTimeout(timer.current);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [values]);
  useEffect(() => {
    if (fetcher.state === "idle" && fetcher.data) setSaveState(fetcher.data.ok ? "saved" : "error");
  }, [fetcher.state, fetcher.data]);

  const submit = () => {
    clearTimeout(timer.current);
    const button = formRef.current?.querySelector<HTMLButtonElement>('button[value="submit"]');
    if (button && !button.disabled) formRef.current?.requestSubmit(button);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      const typing = t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && (t as HTMLInputElement).type === "text"));
      if (typing) {
        if (e.key === "Escape") (t as HTMLElement).blur();
        return;
      }
      const key = e.key;
      const n = unit.responses.length;
      const L = unit.responses[focus]?.letter;
      const go = (href: string | null) => href && navigate(href);
      let handled = true;
      if (key === "?") setSheet((s) => !s);
      else if (key === "Escape") {
        setSheet(false);
        setShowGuidelines(false);
      } else if (key === "g" || key === "G") setShowGuidelines((s) => !s);
      else if (key === "Enter") submit();
      else if (key === "ArrowRight") go(p.nextHref);
      else if (key === "ArrowLeft") go(p.prevHref);
      else if (key === "j" || key === "J" || key === "ArrowDown") multi ? setFocus((f) => Math.min(n - 1, f + 1)) : go(p.nextHref);
      else if (key === "k" || key === "K" || key === "ArrowUp") multi ? setFocus((f) => Math.max(0, f - 1)) : go(p.prevHref);
      else if (yesNo && (key === "y" || key === "Y")) set("answer", "Yes");
      else if (yesNo && (key === "n" || key === "N")) set("answer", "No");
      else if (unit.kind === "writing-quality" && /^[1-5]$/.test(key) && L) set(`score.${L}`, key);
      else if (unit.kind === "writing-quality" && (key === "p" || key === "P") && L) {
        const list = ["", ...rules.penaltyReasons];
        const next = list[(list.indexOf(values[`reason.${L}`] ?? "") + 1) % list.length];
        set(`reason.${L}`, next);
        if (next === "safety") set(`score.${L}`, "1");
      } else if (unit.kind === "best-of-n" && /^[1-4]$/.test(key) && Number(key) <= n) {
        set("best", unit.responses[Number(key) - 1].letter);
        setFocus(Number(key) - 1);
      } else if (unit.kind === "best-of-n" && (key === "b" || key === "B") && L) set("best", L);
      else if (unit.kind === "best-of-n" && rules.allowTies && (key === "t" || key === "T")) set("best", "tie");
      else if (key === "c" || key === "C") {
        const field = document.querySelector<HTMLTextAreaElement>(yesNo ? 'textarea[name="comment"]' : `textarea[name="note.${L}"]`);
        field?.focus();
      } else if (key === "s" || key === "S") {
        setSkipping(true);
        setTimeout(() => document.querySelector<HTMLInputElement>('input[name="skipReason"]')?.focus(), 0);
      } else handled = false;
      if (handled) e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  useEffect(() => {
    if (multi) document.getElementById(`response-${unit.responses[focus]?.letter}`)?.scrollIntoView({ block: "nearest" });
  }, [focus, multi, unit.responses]);

  const err = (name: string) =>
    p.fieldErrors[name] ? (
      <div className="field-error" role="alert" data-field={name}>
        {p.fieldErrors[name]}
      </div>
    ) : null;

  return (
    <div className="annotate-grid" data-ready={ready ? "true" : "false"}>
      {showGuidelines ? (
        <div className="panel guidelines-panel" data-testid="guidelines">
          <h2>Guidelines</h2>
          <Markdown>{p.guidelines || "_No guidelines for this task._"}</Markdown>
          <p className="small muted">
            Press <kbd>G</kbd> or <kbd>Esc</kbd> to close.
          </p>
        </div>
      ) : null}
      <section className="panel" aria-label="Problem">
        <h2>Problem</h2>
        <Markdown>{unit.query}</Markdown>
        {unit.passage ? (
          <>
            <h3>Passage</h3>
            <Markdown>{unit.passage}</Markdown>
          </>
        ) : null}
        {unit.reference ? (
          <>
            <h3>{unit.kind === "writing-quality" ? "Reference (scores 4)" : "Reference answer"}</h3>
            <div className="reference-box">
              <Markdown>{unit.reference}</Markdown>
            </div>
          </>
        ) : null}
      </section>

      <Form
        method="post"
        ref={formRef}
        replace
        onSubmit={(e) => {
          clearTimeout(timer.current);
          const d = e.currentTarget.elements.namedItem("durationMs") as HTMLInputElement | null;
          if (d) d.value = String(elapsed());
        }}
      >
        <CsrfField />
        <input type="hidden" name="unitId" value={unit.unitId} />
        <input type="hidden" name="clientToken" value={p.clientToken} />
        <input type="hidden" name="openedAt" value={p.openedAt} />
        <input type="hidden" name="durationMs" defaultValue="" />
        {p.fieldErrors.form ? <div className="alert error">{p.fieldErrors.form}</div> : null}
        {p.fieldErrors.unitId ? <div className="alert error">{p.fieldErrors.unitId}</div> : null}

        {unit.kind === "response-satisfaction" && unit.responses[0] ? (
          <section className="panel" aria-label="Response">
            <h2>Response</h2>
            <div className="response-text">
              <Markdown>{unit.responses[0].text}</Markdown>
            </div>
          </section>
        ) : null}

        {yesNo ? (
          <section className="panel">
            <h2>Checklist item</h2>
            <Markdown className="question">{unit.checklistItem ?? ""}</Markdown>
            <p>{QUESTION[unit.kind]}</p>
            <div className="choice-row" role="radiogroup" aria-label="Answer">
              {(["Yes", "No"] as const).map((v) => (
                <label className="choice" key={v}>
                  <input type="radio" name="answer" value={v} checked={values.answer === v} onChange={() => set("answer", v)} disabled={p.closed} />
                  {v} <kbd>{v[0]}</kbd>
                </label>
              ))}
            </div>
            {err("answer")}
            <label style={{ marginTop: "0.75rem" }}>
              Comment (optional) <kbd>C</kbd>
              <textarea name="comment" rows={2} value={values.comment ?? ""} onChange={(e) => set("comment", e.target.value)} disabled={p.closed} />
            </label>
            {err("comment")}
          </section>
        ) : (
          <section aria-label="Responses">
            <div className={`compare n${unit.responses.length}`}>
              {unit.responses.map((r, i) => {
                const L = r.letter;
                return (
                  <article
                    key={L}
                    id={`response-${L}`}
                    className={`response-card${i === focus ? " focused" : ""}`}
                    onClick={() => setFocus(i)}
                    aria-label={`Response ${L}`}
                  >
                    <h3>
                      Response {L} <span className="muted small">({i + 1})</span>
                    </h3>
                    <div className="response-text">
                      <Markdown>{r.text}</Markdown>
                    </div>
                    {unit.kind === "writing-quality" ? (
                      <>
                        <fieldset>
                          <legend>Score for Response {L}</legend>
                          <div className="scores">
                            {["1", "2", "3", "4", "5"].map((s) => (
                              <label className="choice" key={s}>
                                <input type="radio" name={`score.${L}`} value={s} checked={values[`score.${L}`] === s} onChange={() => set(`score.${L}`, s)} disabled={p.closed} />
                                {s}
                              </label>
                            ))}
                          </div>
                        </fieldset>
                        {err(`score.${L}`)}
                        <label>
                          Penalty reason (needed below 3) <kbd>P</kbd>
                          <select
                            name={`reason.${L}`}
                            value={values[`reason.${L}`] ?? ""}
                            onChange={(e) => {
                              set(`reason.${L}`, e.target.value);
                              if (e.target.value === "safety") set(`score.${L}`, "1");
                            }}
                            disabled={p.closed}
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
                    ) : (
                      <label className="choice">
                        <input type="radio" name="best" value={L} checked={values.best === L} onChange={() => set("best", L)} disabled={p.closed} />
                        Best <kbd>{i + 1}</kbd>
                      </label>
                    )}
                    <label>
                      {unit.kind === "writing-quality" ? "Observations" : "Notes"} <kbd>C</kbd>
                      <textarea name={`note.${L}`} rows={2} value={values[`note.${L}`] ?? ""} onChange={(e) => set(`note.${L}`, e.target.value)} disabled={p.closed} />
                    </label>
                    {err(`note.${L}`)}
                  </article>
                );
              })}
            </div>
            {unit.kind === "best-of-n" ? (
              <div className="panel" style={{ marginTop: "0.75rem" }}>
                <p>Which response is best?</p>
                {rules.allowTies ? (
                  <label className="choice">
                    <input type="radio" name="best" value="tie" checked={values.best === "tie"} onChange={() => set("best", "tie")} disabled={p.closed} />
                    Tie <kbd>T</kbd>
                  </label>
                ) : null}
                {err("best")}
              </div>
            ) : null}
          </section>
        )}

        {skipping || p.status === "skipped" ? (
          <div className="panel">
            <label>
              Reason for skipping
              <input
                type="text"
                name="skipReason"
                defaultValue={p.skipReason ?? ""}
                onKeyDown={(e) => {
                  if (e.key !== "Enter") return;
                  e.preventDefault();
                  const button = formRef.current?.querySelector<HTMLButtonElement>('button[value="skip"]');
                  if (button) formRef.current?.requestSubmit(button);
                }}
              />
            </label>
            {err("skipReason")}
          </div>
        ) : null}

        <div className="actions">
          <button type="submit" name="intent" value="submit" disabled={p.closed || submitting}>
            {revising ? "Submit revision" : "Submit"} <kbd>Enter</kbd>
          </button>
          <button type="submit" name="intent" value="draft" className="secondary" disabled={p.closed}>
            Save draft
          </button>
          {skipping || p.status === "skipped" ? (
            <button type="submit" name="intent" value="skip" className="secondary" disabled={p.closed}>
              Skip
            </button>
          ) : (
            <button type="button" className="secondary" onClick={() => setSkipping(true)} disabled={p.closed}>
              Skip… <kbd>S</kbd>
            </button>
          )}
          <button type="button" className="link-button" onClick={() => setSheet(true)}>
            Shortcuts <kbd>?</kbd>
          </button>
          <button type="button" className="link-button" onClick={() => setShowGuidelines((s) => !s)}>
            Guidelines <kbd>G</kbd>
          </button>
          <span className="save-state" data-testid="save-state" aria-live="polite">
            {p.closed ? "Task closed: read only." : saveState === "pending" ? "Saving…" : saveState === "saved" ? "Draft saved." : saveState === "error" ? "Draft not saved." : revising ? "Submitted; you may revise." : ""}
          </span>
        </div>
      </Form>

      {sheet ? (
        <div className="sheet" role="dialog" aria-label="Keyboard shortcuts" onClick={() => setSheet(false)}>
          <div className="panel" onClick={(e) => e.stopPropagation()}>
            <h2>Keyboard shortcuts</h2>
            <table>
              <tbody>
                {yesNo ? (
                  <tr>
                    <td><kbd>Y</kbd> / <kbd>N</kbd></td>
                    <td>Answer Yes / No</td>
                  </tr>
                ) : null}
                {unit.kind === "writing-quality" ? (
                  <>
                    <tr>
                      <td><kbd>1</kbd>–<kbd>5</kbd></td>
                      <td>Score the focused response</td>
                    </tr>
                    <tr>
                      <td><kbd>P</kbd></td>
                      <td>Cycle the penalty reason of the focused response</td>
                    </tr>
                  </>
                ) : null}
                {unit.kind === "best-of-n" ? (
                  <tr>
                    <td><kbd>1</kbd>–<kbd>{unit.responses.length}</kbd>, <kbd>B</kbd>{rules.allowTies ? <>, <kbd>T</kbd></> : null}</td>
                    <td>Pick the best response (B: the focused one){rules.allowTies ? "; T: a tie" : ""}</td>
                  </tr>
                ) : null}
                <tr>
                  <td><kbd>J</kbd> / <kbd>K</kbd>, <kbd>↓</kbd> / <kbd>↑</kbd></td>
                  <td>{multi ? "Next / previous response" : "Next / previous unit"}</td>
                </tr>
                <tr>
                  <td><kbd>→</kbd> / <kbd>←</kbd></td>
                  <td>Next / previous unit</td>
                </tr>
                <tr>
                  <td><kbd>C</kbd></td>
                  <td>Write a {yesNo ? "comment" : "note on the focused response"} (<kbd>Esc</kbd> leaves the field)</td>
                </tr>
                <tr>
                  <td><kbd>Enter</kbd></td>
                  <td>Submit</td>
                </tr>
                <tr>
                  <td><kbd>S</kbd></td>
                  <td>Skip (with a reason)</td>
                </tr>
                <tr>
                  <td><kbd>G</kbd></td>
                  <td>Show or hide the guidelines</td>
                </tr>
                <tr>
                  <td><kbd>?</kbd></td>
                  <td>This sheet</td>
                </tr>
              </tbody>
            </table>
          </div>
        </div>
      ) : null}
    </div>
  );
}
