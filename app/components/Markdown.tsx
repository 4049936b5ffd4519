/**
 * Safe markdown for texts written by models and benchmark authors, shown as
 * written: GitHub-flavoured markdown, every single line break kept (remark-breaks),
 * runs of spaces kept (white-space: pre-wrap on paragraphs), code blocks verbatim,
 * text laid out with spaces outside a fence (an ASCII chart, a hand-aligned table)
 * shown verbatim in a monospace font (`fenceLayoutBlocks`, ./layout-blocks.ts),
 * and `$…$` / `$$…$$` math typeset by KaTeX (remark-math + rehype-katex; KaTeX's
 * stylesheet and fonts are served from our own build, see `markdownLinks`).
 * Raw HTML is never parsed; javascript: links are dropped by react-markdown's URL
 * filter; KaTeX runs untrusted (no \href, \url or \html commands).
 *
 * Inside a <RawTextProvider raw> every Markdown shows the exact characters instead.
 */
import type { LinkDescriptor } from "@remix-run/node";
import katexStyles from "katex/dist/katex.min.css";
import { createContext, useContext, type ReactNode } from "react";
import ReactMarkdown from "react-markdown";
import rehypeKatex from "rehype-katex";
import remarkBreaks from "remark-breaks";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import { fenceLayoutBlocks } from "./layout-blocks";

/** The stylesheets a page that renders Markdown must link (KaTeX's, served locally). */
export const markdownLinks: LinkDescriptor[] = [{ rel: "stylesheet", href: katexStyles }];

const RawText = createContext(false);

export function RawTextProvider({ raw, children }: { raw: boolean; children: ReactNode }) {
  return <RawText.Provider value={raw}>{children}</RawText.Provider>;
}

type HastNode = { type: string; tagName?: string; value?: string; children?: HastNode[] };

/**
 * remark-rehype writes a line break as <br> followed by a "\n" text node; with
 * white-space: pre-wrap that newline would show as a second break. Drop it.
 */
function rehypeTightBreaks() {
  const walk = (node: HastNode) => {
    const kids = node.children;
    if (!kids) return;
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.type === "element" && k.tagName === "br") {
        const next = kids[i + 1];
        if (next?.type === "text" && next.value?.startsWith("\n")) next.value = next.value.slice(1);
      } else walk(k);
    }
  };
  return (tree: HastNode) => walk(tree);
}

type MdNode = {
  type: string;
  value?: string;
  position?: { start: { offset?: number }; end: { offset?: number } };
  children?: MdNode[];
  data?: unknown;
};

/**
 * Dollar amounts are not math: like pandoc, an inline `$…$` whose content starts or
 * ends with a space, or whose closing `$` is followed by a digit ("costs $5 and $10"),
 * is put back as the text it was written as. A paragraph holding only `$$…$$` is
 * display math.
 */
function remarkDollarsAsText() {
  return (tree: MdNode, file: { value: unknown }) => {
    const src = String(file.value ?? "");
    const walk = (node: MdNode) => {
      const kids = node.children;
      if (!kids) return;
      for (let i = 0; i < kids.length; i++) {
        const k = kids[i];
        const only = k.type === "paragraph" && k.children?.length === 1 ? k.children[0] : null;
        if (only?.type === "inlineMath" && src.slice(only.position?.start.offset ?? 0, (only.position?.start.offset ?? 0) + 2) === "$$") {
          // A paragraph that is only `$$…$$` is display math, as its author meant.
          const value = only.value ?? "";
          kids[i] = {
            type: "math",
            value,
            data: {
              hName: "pre",
              hChildren: [
                {
                  type: "element",
                  tagName: "code",
                  properties: { className: ["language-math", "math-display"] },
                  children: [{ type: "text", value }],
                },
              ],
            },
          } as MdNode;
          continue;
        }
        if (k.type === "inlineMath") {
          const a = k.position?.start.offset;
          const b = k.position?.end.offset;
          if (a == null || b == null) continue;
          const rawText = src.slice(a, b);
          const v = k.value ?? "";
          if (!rawText.startsWith("$$") && (/^\s|\s$/.test(v) || /^[0-9]/.test(src.slice(b, b + 1))))
            kids[i] = { type: "text", value: rawText };
        } else walk(k);
      }
    };
    walk(tree);
  };
}

const KATEX_OPTIONS = { throwOnError: false, strict: "ignore", trust: false, maxExpand: 200, maxSize: 50 } as const;

export function Markdown({ children, className }: { children: string | null | undefined; className?: string }) {
  const raw = useContext(RawText);
  const text = children ?? "";
  if (raw) {
    return (
      <pre className={className ? `raw-text ${className}` : "raw-text"} data-raw="true">
        {text}
      </pre>
    );
  }
  return (
    <div className={className ? `md ${className}` : "md"}>
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkMath, remarkDollarsAsText, remarkBreaks]}
        rehypePlugins={[[rehypeKatex, KATEX_OPTIONS], rehypeTightBreaks]}
      >
        {fenceLayoutBlocks(text)}
      </ReactMarkdown>
    </div>
  );
}
