/**
 * Safe markdown: GitHub-flavoured, raw HTML is shown as text (never parsed),
 * javascript: links are dropped by react-markdown's URL filter.
 */
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";

export function Markdown({ children, className }: { children: string | null | undefined; className?: string }) {
  return (
    <div className={className ? `md ${className}` : "md"}>
      <ReactMarkdown remarkPlugins={[remarkGfm]}>{children ?? ""}</ReactMarkdown>
    </div>
  );
}
