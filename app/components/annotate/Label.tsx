import type { ReactNode } from "react";

/** A label's text with its key hint inline (the label's control goes on the next line). */
export function LabelText({ children, hint }: { children: ReactNode; hint?: string }) {
  return (
    <span className="label-text">
      {children}
      {hint ? (
        <>
          {" "}
          <kbd>{hint}</kbd>
        </>
      ) : null}
    </span>
  );
}
