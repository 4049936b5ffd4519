/**
 * Which blocks of a model's text are laid out with spaces (shown verbatim) and which are
 * markdown: each case is a text a model writes, and the expected output is written out.
 */
import { describe, expect, it } from "vitest";
import { fenceLayoutBlocks, isLayoutBlock } from "../../../app/components/layout-blocks";

const CHART = ["Sales by quarter", "Q1 | ####", "Q2 | ########", "Q3 | ######"];
const TABLE = ["Name     Score   Rank", "Alice    90      1", "Bob      85      2"];
const BOXED = ["+-------+-----+", "| model | win |", "+-------+-----+", "| A     | 3   |", "+-------+-----+"];

describe("layout blocks", () => {
  it("finds charts, hand-aligned tables and box drawings", () => {
    expect(isLayoutBlock(CHART)).toBe(true);
    expect(isLayoutBlock(TABLE)).toBe(true);
    expect(isLayoutBlock(BOXED)).toBe(true);
    expect(isLayoutBlock(["┌──┐", "│ab│", "└──┘"])).toBe(true);
    // A pyramid: markdown would read " ***" and "*****" as rules.
    expect(isLayoutBlock(["  *", " ***", "*****", "-----"])).toBe(true);
  });

  it("leaves markdown alone: prose, lists, GFM tables, rules, headings, quotes, math, indented code", () => {
    expect(isLayoutBlock(["One sentence.  Two spaces after it.", "Another line.  And more."])).toBe(false);
    expect(isLayoutBlock(["- Name:    Alice", "- Age:     30"])).toBe(false);
    expect(isLayoutBlock(["1. Step one", "   detail line", "   another detail"])).toBe(false);
    expect(isLayoutBlock(["| a | b |", "|---|---|", "| 1  | 2  |", "| 10 | 20 |"])).toBe(false);
    expect(isLayoutBlock(["Wait... what?", "Hmm... yes."])).toBe(false);
    expect(isLayoutBlock(["***bold italic*** here", "and ***more***"])).toBe(false);
    expect(isLayoutBlock(["Title", "-----"])).toBe(false);
    expect(isLayoutBlock(["> quoted   text", ">   more    text"])).toBe(false);
    expect(isLayoutBlock(["x  =  $\\sqrt{2}$", "y  =  $x^2$"])).toBe(false);
    expect(isLayoutBlock(["    code   here", "    more   code"])).toBe(false);
    expect(isLayoutBlock(["just  one  line"])).toBe(false);
  });

  it("fences a laid-out block as written, outside code fences and $$ math, and nothing else", () => {
    const text = [
      "Here is the chart:",
      "",
      ...CHART,
      "",
      "```",
      "a    b",
      "c    d",
      "```",
      "",
      "$$",
      "x  &  y \\\\",
      "z  &  w",
      "$$",
      "",
      "Done.",
    ].join("\n");
    expect(fenceLayoutBlocks(text)).toBe(
      [
        "Here is the chart:",
        "",
        "```layout",
        ...CHART,
        "```",
        "",
        "```",
        "a    b",
        "c    d",
        "```",
        "",
        "$$",
        "x  &  y \\\\",
        "z  &  w",
        "$$",
        "",
        "Done.",
      ].join("\n"),
    );
    // A block holding backticks gets a longer fence; Windows line ends become \n.
    expect(fenceLayoutBlocks("a    ```b\r\nc    d")).toBe("````layout\na    ```b\nc    d\n````");
    expect(fenceLayoutBlocks("plain text\n\n- a\n- b")).toBe("plain text\n\n- a\n- b");
  });
});
