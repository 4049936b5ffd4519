/**
 * Text laid out with spaces — an ASCII chart, a table aligned by hand, a box drawing —
 * written outside a code fence. Markdown would collapse its runs of spaces, strip its
 * indentation, read `-----` under a line as a heading, `***` as a rule and `**` as
 * bold, and a proportional font would break its columns anyway. Such a block is
 * fenced (as a code block, shown verbatim in a monospace font) before the markdown is
 * parsed, so it shows exactly as written.
 *
 * A block (lines between blank lines, outside fences and `$$` math) is laid out when at
 * least two of its lines are: a line with box-drawing or block characters; a line with a
 * run of two or more spaces (or a tab) between two characters — not the two spaces some
 * writers put after a full stop; or a line with a run of three or more of one of
 * `- = # + | ~` (four or more of `*` or `_`, which also mark emphasis) beside other
 * characters (`+-----+`, `Q1 | ####`); or a line of two or more symbols and no letter or
 * digit (` ***`, `/  \`). Left to markdown: GFM tables (a `|---|` delimiter
 * row), lists, quotes, indented code blocks (already verbatim) and blocks with LaTeX math
 * (KaTeX typesets them).
 * Pure: the same on the server and in the browser.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+\S/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$|^\s*\|\s*:?-+:?\s*\|\s*$/;
const BOX = /[\u2500-\u259F]/;
const SYMBOL_RUN = /([-=#+|~])\1{2,}|([*_])\2{3,}/;
/** Inline or display math with LaTeX in it: `$\sqrt{2}$`, `$x^2$`, `\(…\)`, `$$`. */
const MATH = /\$\$|\\\(|\\\[|\$[^$\n]*[\\^_{}][^$\n]*\$/;

/** A run of 2+ spaces or a tab between two characters, not the two spaces after a sentence's full stop. */
function hasInnerGap(line: string): boolean {
  for (const m of line.matchAll(/(\S)( {2,}|\t+)(?=\S)/g)) {
    if (m[2] === "  " && /[.!?]/.test(m[1])) continue;
    return true;
  }
  return false;
}

function isLayoutLine(line: string): boolean {
  if (BOX.test(line) || hasInnerGap(line)) return true;
  const t = line.trim();
  const run = SYMBOL_RUN.exec(t);
  // A rule alone (`-----`, `***`) is markdown's; beside other characters it draws.
  if (
    run != null &&
    t
      .split(run[1] ?? run[2])
      .join("")
      .trim() !== ""
  )
    return true;
  // A line drawn with symbols only (` ***`, `/  \`): two of them make a drawing.
  return /^[^\p{L}\p{N}]*$/u.test(t) && t.replace(/\s/g, "").length >= 2;
}

/** Whether a block of non-blank lines is laid out with spaces and should be shown verbatim. */
export function isLayoutBlock(lines: string[]): boolean {
  if (lines.length < 2) return false;
  if (lines.some((l) => TABLE_DELIMITER.test(l) && l.includes("|"))) return false;
  if (lines.some((l) => MATH.test(l))) return false;
  if (lines.every((l) => /^( {4,}|\t)/.test(l))) return false;
  if (lines.filter((l) => LIST_ITEM.test(l)).length * 2 >= lines.length) return false;
  if (/^\s*>/.test(lines[0])) return false;
  return lines.filter(isLayoutLine).length >= 2;
}

/** The text with each laid-out block fenced as a code block (`layout`), everything else as written. */
export function fenceLayoutBlocks(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let block: string[] = [];
  const flush = () => {
    if (block.length === 0) return;
    if (isLayoutBlock(block)) {
      const longest = Math.max(0, ...block.map((l) => Math.max(0, ...[...l.matchAll(/`+/g)].map((m) => m[0].length))));
      const fence = "`".repeat(Math.max(3, longest + 1));
      out.push(`${fence}layout`, ...block, fence);
    } else out.push(...block);
    block = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const open = FENCE.exec(line);
    if (open) {
      // A fenced code block: copied as written up to its closing fence (or the end).
      flush();
      const ch = open[1][0];
      const len = open[1].length;
      out.push(line);
      for (i++; i < lines.length; i++) {
        out.push(lines[i]);
        const close = new RegExp(`^ {0,3}\\${ch}{${len},}\\s*$`).exec(lines[i]);
        if (close) break;
      }
      continue;
    }
    if (line.trim().startsWith("$$") && (line.match(/\$\$/g)?.length ?? 0) % 2 === 1) {
      // Display math over several lines: copied as written up to its closing `$$`.
      flush();
      out.push(line);
      for (i++; i < lines.length; i++) {
        out.push(lines[i]);
        if (lines[i].includes("$$")) break;
      }
      continue;
    }
    if (line.trim() === "") {
      flush();
      out.push(line);
    } else block.push(line);
  }
  flush();
  return out.join("\n");
}
