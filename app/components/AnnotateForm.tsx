/**
 * The labelling form for one unit. Plain POST forms that work without JavaScript
 * (label, skip with a reason, guidelines in a <details>); with JavaScript it adds
 * keyboard shortcuts, auto-saved drafts (flushed before any navigation), a guard
 * on a changed submitted answer, a raw-text view and time tracking. Responses are
 * only ever named by their shown letter. The kind-specific controls live in
 * app/task-kinds/<kind>/form.tsx (loaded before the page renders: app/task-kinds/form-registry.ts).
 *
 * Keys never surprise, and mean the same on every kind: Enter activates the focused
 * control (a button, a link) and submits only when no control is focused; J/K and
 * ←/→ move between units and ↑/↓ scroll the page, also on a focused radio button
 * (whose native arrows would silently change the answer; choices are made with the
 * kind's keys, Space or a click); where several responses are shown, H/L move
 * between them. Inside a text field or a menu every key is the field's (Esc leaves it).
 */
import { Form, useActionData, useBlocker, useFetcher, useNavigate, useNavigation } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { kindForm } from "~/task-kinds/form-registry";
import type { BlindUnitProps, KindContext, Rules } from "./annotate";
import { LabelText } from "./annotate/Label";
import { CSRF_FIELD, CsrfField, useCsrfToken } from "./CsrfField";
import { Markdown, RawTextProvider } from "./Markdown";

export type { BlindUnitProps } from "./annotate";

type Props = {
  unit: BlindUnitProps;
  initialValues: Record<string, string>;
  fieldErrors: Record<string, string>;
  rules: Rules;
  status: string;
  skipReason: string | null;
  clientToken: string;
  openedAt: number;
  baseDurationMs: number;
  guidelines: string;
  closed: boolean;
  prevHref: string | null;
  nextHref: string | null;
  /** The unit's text changed after the annotator submitted a label for it. */
  stale?: boolean;
};

const DRAFT_DELAY_MS = 500;

/** Text entry: every key belongs to the field. */
function isTextEntry(t: HTMLElement | null): boolean {
  if (!t) return false;
  if (t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
  if (t.tagName !== "INPUT") return false;
  const type = (t as HTMLInputElement).type;
  return !["radio", "checkbox", "button", "submit", "reset", "range", "color", "file", "image"].includes(type);
}

/** A radio button or checkbox: its native arrow keys would change the answer, so the page owns them. */
function isChoice(t: HTMLElement | null): boolean {
  return t?.tagName === "INPUT" && ["radio", "checkbox"].includes((t as HTMLInputElement).type);
}

/** How far one ↑/↓ scrolls (Chromium's own arrow step). */
const ARROW_SCROLL_PX = 40;

/** A control whose own Enter means something (follow the link, press the button, open the summary). */
function ownsEnter(t: HTMLElement | null): boolean {
  if (!t || t === document.body || t === document.documentElement) return false;
  if (t.tagName === "INPUT" && ["radio", "checkbox"].includes((t as HTMLInputElement).type)) return false;
  return t.closest("a[href], button, summary, [role='button'], [role='link'], input, select, textarea") != null;
}

const sameValues = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? "") !== (b[k] ?? "")) return false;
  return true;
};

export function AnnotateForm(p: Props) {
  const { unit, rules } = p;
  const kindUi = kindForm(unit.kind);
  const kind = kindUi.annotate;
  const [values, setValues] = useState<Record<string, string>>(p.initialValues);
  const [focus, setFocus] = useState(0);
  const [sheet, setSheet] = useState(false);
  const [showGuidelines, setShowGuidelines] = useState(false);
  const [raw, setRaw] = useState(false);
  const [skipping, setSkipping] = useState(p.fieldErrors.skipReason != null || p.status === "skipped");
  const [saveState, setSaveState] = useState<"idle" | "pending" | "saved" | "error">("idle");
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  const formRef = useRef<HTMLFormElement>(null);
  const nextRef = useRef<HTMLInputElement>(null);
  const mounted = useRef(Date.now());
  const dirty = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  /** A draft is waiting for its timer: it must be sent before leaving. */
  const pendingDraft = useRef(false);
  /** Our own submission is under way: let its navigation through. */
  const leaving = useRef(false);
  const lastIntent = useRef<string | null>(null);
  const valuesRef = useRef(values);
  valuesRef.current = values;
  const fetcher = useFetcher<{ ok?: boolean }>();
  const csrf = useCsrfToken();
  const actionData = useActionData() as { ok?: boolean } | undefined;
  const navigate = useNavigate();
  const navigation = useNavigation();
  const submitting = navigation.state === "submitting";
  const revising = p.status === "submitted";

  const set = useCallback((name: string, value: string) => {
    dirty.current = true;
    setValues((v) => ({ ...v, [name]: value }));
  }, []);
  const elapsed = () => p.baseDurationMs + (Date.now() - mounted.current);
  const revisionChanged = () => revising && !p.closed && !sameValues(valuesRef.current, p.initialValues);

  const draftFields = () => ({
    ...valuesRef.current,
    intent: "draft",
    unitId: String(unit.unitId),
    durationMs: String(elapsed()),
    [CSRF_FIELD]: csrf,
  });
  const flushDraft = () => {
    if (!pendingDraft.current) return;
    clearTimeout(timer.current);
    pendingDraft.current = false;
    fetcher.submit(draftFields(), { method: "post" });
  };

  // Auto-save drafts (not when revising a submitted label: that is saved by submitting).
  useEffect(() => {
    if (!dirty.current || revising || p.closed) return;
    setSaveState("pending");
    pendingDraft.current = true;
    clearTimeout(timer.current);
    timer.current = setTimeout(flushDraft, DRAFT_DELAY_MS);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [values]);
  useEffect(() => {
    if (fetcher.state === "idle" && fetcher.data) setSaveState(fetcher.data.ok ? "saved" : "error");
  }, [fetcher.state, fetcher.data]);
  // "Save draft" pressed (a normal form submission that stays on the page).
  useEffect(() => {
    if (navigation.state !== "idle") return;
    leaving.current = false;
    if (lastIntent.current === "draft") setSaveState(actionData?.ok ? "saved" : "error");
    lastIntent.current = null;
  }, [navigation.state, actionData]);

  // Leaving the page: a pending draft is sent first; a changed submitted answer asks.
  const blocker = useBlocker(({ currentLocation, nextLocation }) => {
    if (leaving.current) return false;
    if (currentLocation.pathname === nextLocation.pathname && currentLocation.search === nextLocation.search) return false;
    return pendingDraft.current || revisionChanged();
  });
  /**
   * Leaving the unit: the pending draft goes out in a request that outlives this form
   * (a fetcher's request is aborted when its component unmounts, which the next unit does).
   */
  const sendDraftOnLeave = () => {
    if (!pendingDraft.current) return;
    clearTimeout(timer.current);
    pendingDraft.current = false;
    const body = new FormData();
    for (const [k, v] of Object.entries(draftFields())) body.append(k, v);
    void fetch(window.location.href, { method: "POST", body, keepalive: true, credentials: "same-origin" }).catch(() => undefined);
  };
  useEffect(() => {
    if (blocker.state !== "blocked") return;
    sendDraftOnLeave();
    if (!revisionChanged()) blocker.proceed();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [blocker.state]);
  useEffect(() => {
    const onHide = sendDraftOnLeave;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (revisionChanged() && !leaving.current) {
        e.preventDefault();
        e.returnValue = "";
      }
    };
    window.addEventListener("pagehide", onHide);
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => {
      window.removeEventListener("pagehide", onHide);
      window.removeEventListener("beforeunload", onBeforeUnload);
    };
  });
  const asking = blocker.state === "blocked" && revisionChanged();
  // Read by the key handler: set while rendering, so a key pressed once the dialog has closed (Esc) sees it closed
  // even before the effect below has registered the handler of this render.
  const askingRef = useRef(asking);
  askingRef.current = asking;

  const submit = () => {
    const button = formRef.current?.querySelector<HTMLButtonElement>('button[value="submit"]');
    if (button && !button.disabled) formRef.current?.requestSubmit(button);
  };
  const submitRevisionThenGo = () => {
    if (blocker.state !== "blocked") return;
    const to = blocker.location;
    if (nextRef.current) nextRef.current.value = `${to.pathname}${to.search}`;
    leaving.current = true;
    blocker.reset();
    submit();
  };

  const c: KindContext = {
    unit,
    rules,
    values,
    set,
    focus,
    setFocus,
    closed: p.closed,
    err: (name: string) =>
      p.fieldErrors[name] ? (
        <div className="field-error" role="alert" data-field={name} id={`error-${name}`}>
          {p.fieldErrors[name]}
        </div>
      ) : null,
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (isTextEntry(t)) {
        if (e.key === "Escape") t!.blur();
        return;
      }
      if (askingRef.current) {
        // The leave dialog has the keyboard; Esc stays on this unit.
        if (e.key === "Escape" && blocker.state === "blocked") blocker.reset();
        return;
      }
      const key = e.key;
      const n = unit.responses.length;
      const go = (href: string | null) => href && navigate(href);
      let handled = true;
      if (key === "Enter") {
        if (ownsEnter(t)) return; // the focused button or link does what it says
        submit();
      } else if (key === "?") setSheet((s) => !s);
      else if (key === "Escape") {
        setSheet(false);
        setShowGuidelines(false);
      } else if (key === "g" || key === "G") setShowGuidelines((s) => !s);
      else if (key === "r" || key === "R") setRaw((r) => !r);
      else if (key === "ArrowRight" || key === "ArrowLeft" || key === "j" || key === "J" || key === "k" || key === "K")
        // Units, on every kind and also from a focused radio button (its native arrows would change the answer).
        go(key === "ArrowRight" || key === "j" || key === "J" ? p.nextHref : p.prevHref);
      else if (key === "ArrowDown" || key === "ArrowUp") {
        // Nothing or a button focused: the browser scrolls. A focused radio button would change
        // the answer instead, so the page scrolls itself.
        if (!isChoice(t)) return;
        window.scrollBy({ top: key === "ArrowDown" ? ARROW_SCROLL_PX : -ARROW_SCROLL_PX });
      } else if (kind.multi && (key === "l" || key === "L")) setFocus((f) => Math.min(n - 1, f + 1));
      else if (kind.multi && (key === "h" || key === "H")) setFocus((f) => Math.max(0, f - 1));
      else if (p.closed) handled = false;
      else if (kind.onKey(key, c)) handled = true;
      else if (key === "c" || key === "C") document.querySelector<HTMLTextAreaElement>(`textarea[name="${kind.commentField(c)}"]`)?.focus();
      else if (key === "s" || key === "S") {
        setSkipping(true);
        setTimeout(() => document.querySelector<HTMLInputElement>('input[name="skipReason"]')?.focus(), 0);
      } else handled = false;
      if (handled) e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const firstRender = useRef(true);
  // The focused response stays in view (not on the first render: the page opens at the top).
  const firstFocus = useRef(true);
  useEffect(() => {
    if (firstFocus.current) {
      firstFocus.current = false;
      return;
    }
    // A card the keyboard or the mouse is already in (a click, a Tab) is where the user
    // looks: scrolling it then would move the control away from under a pressed mouse button.
    const card = kind.multi ? document.getElementById(`response-${unit.responses[focus]?.letter}`) : null;
    if (card && !card.contains(document.activeElement)) card.scrollIntoView({ block: "nearest" });
  }, [focus, kind.multi, unit.responses]);

  // After a refused save, the keyboard goes to the (first) field in error. On a new
  // unit, nothing keeps the focus of the last page (a "Next" link that Enter would follow).
  useEffect(() => {
    const names = Object.keys(p.fieldErrors);
    if (names.length === 0) {
      const active = document.activeElement as HTMLElement | null;
      if (firstRender.current && active && active !== document.body) active.blur();
      firstRender.current = false;
      return;
    }
    firstRender.current = false;
    if (p.fieldErrors.skipReason) setSkipping(true);
    setTimeout(() => {
      const first = document.querySelector<HTMLElement>(".annotate-grid .field-error[data-field]");
      const name = first?.dataset.field;
      const field = name
        ? (document.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]:checked`) ??
          document.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`))
        : document.querySelector<HTMLElement>(".annotate-grid .form-error");
      field?.focus();
      field?.scrollIntoView({ block: "center" });
    }, 0);
  }, [p.fieldErrors]);

  const saveText = p.closed
    ? "Task closed: read only."
    : saveState === "pending"
      ? "Saving…"
      : saveState === "saved"
        ? "Draft saved."
        : saveState === "error"
          ? "Draft not saved."
          : revising
            ? "Submitted; a changed answer is saved as a new revision when you submit it."
            : "";

  const rows: [ReactNode, string][] = [
    ...kind.shortcuts(c),
    ...(kind.multi
      ? ([
          [
            <>
              <kbd>L</kbd> / <kbd>H</kbd>
            </>,
            "Next / previous response (the focused one gets the keys above)",
          ],
        ] as [ReactNode, string][])
      : []),
    [
      <>
        <kbd>J</kbd> / <kbd>K</kbd>, <kbd>→</kbd> / <kbd>←</kbd>
      </>,
      "Next / previous unit",
    ],
    [
      <>
        <kbd>↓</kbd> / <kbd>↑</kbd>
      </>,
      "Scroll the page",
    ],
    [
      <>
        <kbd>Space</kbd>
      </>,
      "On a focused choice: choose it (arrows there still move between units and scroll; they never change an answer)",
    ],
    [<kbd>C</kbd>, `Write a ${kind.multi ? "note on the focused response" : "comment"} (Esc leaves the field)`],
    [<kbd>Esc</kbd>, "Leave a text field or menu (inside one, every key types or chooses there)"],
    [<kbd>Enter</kbd>, "Submit (on a focused button or link: press it)"],
    [<kbd>S</kbd>, "Skip (with a reason)"],
    [<kbd>R</kbd>, "Show the raw text (exact characters) or the formatted text"],
    [<kbd>G</kbd>, "Show or hide the guidelines"],
    [<kbd>?</kbd>, "This sheet"],
  ];

  const hasReference = unit.reference != null;
  return (
    <RawTextProvider raw={raw}>
      <div
        className={`annotate-grid${hasReference ? " has-reference" : ""}`}
        data-ready={ready ? "true" : "false"}
        data-raw={raw ? "true" : "false"}
      >
        <section className="panel problem-column" aria-label="Problem">
          {p.stale ? (
            <p className="alert stale-note" role="status" data-testid="stale-notice">
              <span className="badge stale">stale</span> This text changed since you labelled it: read it again and check your label (submit
              it again, changed or not).
            </p>
          ) : null}
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
              <h3>{kindUi.referenceHeading?.(rules) ?? "Reference answer"}</h3>
              <div className="reference-box" data-testid="reference">
                <Markdown>{unit.reference}</Markdown>
              </div>
            </>
          ) : null}
        </section>

        <div className="work-column">
          <Form
            method="post"
            ref={formRef}
            replace
            onSubmit={(e) => {
              clearTimeout(timer.current);
              pendingDraft.current = false;
              leaving.current = true;
              const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
              lastIntent.current = submitter?.value ?? "submit";
              const d = e.currentTarget.elements.namedItem("durationMs") as HTMLInputElement | null;
              if (d) d.value = String(elapsed());
            }}
          >
            <CsrfField />
            <input type="hidden" name="unitId" value={unit.unitId} />
            <input type="hidden" name="clientToken" value={p.clientToken} />
            <input type="hidden" name="openedAt" value={p.openedAt} />
            <input type="hidden" name="durationMs" defaultValue="" />
            <input type="hidden" name="next" defaultValue="" ref={nextRef} />
            {p.fieldErrors.form ? (
              <div className="alert error form-error" role="alert" tabIndex={-1}>
                {p.fieldErrors.form}
              </div>
            ) : null}
            {p.fieldErrors.unitId ? (
              <div className="alert error form-error" role="alert" tabIndex={-1}>
                {p.fieldErrors.unitId}
              </div>
            ) : null}

            {kind.Body(c)}

            <div className="actions">
              <button type="submit" name="intent" value="submit" disabled={p.closed || submitting}>
                {revising ? "Submit revision" : "Submit"} <kbd>Enter</kbd>
              </button>
              {revising ? null : (
                <button type="submit" name="intent" value="draft" className="secondary" disabled={p.closed}>
                  Save draft
                </button>
              )}
              {ready ? (
                <>
                  <button type="button" className="link-button" onClick={() => setSheet(true)}>
                    Shortcuts <kbd>?</kbd>
                  </button>
                  <button type="button" className="link-button" onClick={() => setShowGuidelines((s) => !s)} aria-expanded={showGuidelines}>
                    Guidelines <kbd>G</kbd>
                  </button>
                  <button
                    type="button"
                    className="link-button"
                    onClick={() => setRaw((r) => !r)}
                    aria-pressed={raw}
                    data-testid="raw-toggle"
                  >
                    Raw text <kbd>R</kbd>
                  </button>
                </>
              ) : null}
              <span className="save-state" data-testid="save-state" aria-live="polite">
                {saveText}
              </span>
            </div>
          </Form>

          {p.closed ? null : (
            <details
              className="panel skip-panel"
              open={skipping}
              onToggle={(e) => setSkipping((e.currentTarget as HTMLDetailsElement).open)}
              data-testid="skip"
            >
              <summary>
                Skip this unit… <kbd>S</kbd>
              </summary>
              <Form method="post" replace className="skip-form">
                <CsrfField />
                <input type="hidden" name="unitId" value={unit.unitId} />
                <label className="field">
                  <LabelText>Reason for skipping</LabelText>
                  <input
                    type="text"
                    name="skipReason"
                    defaultValue={p.skipReason ?? ""}
                    aria-invalid={p.fieldErrors.skipReason ? true : undefined}
                    aria-describedby={p.fieldErrors.skipReason ? "error-skipReason" : undefined}
                  />
                </label>
                {c.err("skipReason")}
                <button type="submit" name="intent" value="skip" className="secondary">
                  Skip
                </button>
              </Form>
            </details>
          )}
        </div>

        {showGuidelines ? (
          <aside className="drawer guidelines-panel" role="dialog" aria-label="Guidelines" data-testid="guidelines">
            <h2>Guidelines</h2>
            <Markdown>{p.guidelines || "_No guidelines for this task._"}</Markdown>
            <p className="small muted">
              Press <kbd>G</kbd> or <kbd>Esc</kbd> to close.
            </p>
          </aside>
        ) : null}

        {asking ? (
          <div className="sheet" role="dialog" aria-modal="true" aria-label="Unsaved revision">
            <div className="panel">
              <h2>Your changed answer is not saved</h2>
              <p>
                This unit was submitted. Save the changed answer as a new revision before leaving, or leave the submitted answer as it was?
              </p>
              <div className="actions">
                <button type="button" autoFocus onClick={submitRevisionThenGo}>
                  Submit revision and continue
                </button>
                <button type="button" className="secondary" onClick={() => blocker.state === "blocked" && blocker.proceed()}>
                  Discard the change
                </button>
                <button type="button" className="link-button" onClick={() => blocker.state === "blocked" && blocker.reset()}>
                  Stay here
                </button>
              </div>
            </div>
          </div>
        ) : null}

        {sheet ? (
          // A click on the backdrop closes the sheet; from the keyboard, Esc or ? closes it (the page's key handler).
          // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-noninteractive-element-interactions
          <div className="sheet" role="dialog" aria-label="Keyboard shortcuts" onClick={() => setSheet(false)}>
            {/* eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-static-element-interactions -- only stops the backdrop's click */}
            <div className="panel" onClick={(e) => e.stopPropagation()}>
              <h2>Keyboard shortcuts</h2>
              <table>
                <tbody>
                  {rows.map(([keys, what], i) => (
                    <tr key={i}>
                      <td>{keys}</td>
                      <td>{what}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
        ) : null}
      </div>
    </RawTextProvider>
  );
}
