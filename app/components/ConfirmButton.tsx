/**
 * A submit button for a destructive action: the browser asks `question` first
 * and nothing is sent unless the user agrees. (Without JavaScript the form
 * submits directly; the server's own rules, such as "not the last admin", still hold.)
 */
import type { ButtonHTMLAttributes } from "react";

export function ConfirmButton({ question, onClick, ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { question: string }) {
  return (
    <button
      type="submit"
      {...props}
      onClick={(e) => {
        if (!window.confirm(question)) {
          e.preventDefault();
          return;
        }
        onClick?.(e);
      }}
    />
  );
}
