/**
 * The protocols' result tables as data (Protocol.tables) and the results page's one
 * renderer of them (app/runs/protocols/views): each protocol's blocks render its
 * metrics, breakdowns and notes, cell by cell, with no protocol code on the page.
 * Expected cells are the inputs formatted as the page formats them (one decimal for
 * percentages, two for 1–10 means, three for accuracies; "—" for a value that
 * cannot be computed).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { PROTOCOLS } from "~/runs/protocols";
import { ResultsView } from "~/runs/protocols/views";
import type { ResultBlock } from "~/runs/protocols/result-tables";

/** The page's HTML for one judge's results, and its table cells as text, row by row. */
function render(protocol: string, results: { metrics: unknown }, figure = false) {
  const p = PROTOCOLS[protocol]!;
  const blocks: ResultBlock[] = p.tables!(results, "judge-1");
  const html = renderToStaticMarkup(
    <ResultsView blocks={blocks} figure={figure ? { svg: "<svg></svg>", legend: [], testId: "pass-figure" } : null} />,
  ).replace(/<!-- -->/g, "");
  const rows = [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) =>
    [...m[1].matchAll(/<t[dh][^>]*>(.*?)<\/t[dh]>/g)].map((c) => c[1].replace(/<[^>]+>/g, "|")),
  );
  return { html, rows, blocks };
}

describe("result tables as data", () => {
  it("RefineBench: Pass_t beside the figure, Acc_t / Pass_t with counts, Δ, termination and transitions; the setting in a note", () => {
    const turn = (t: number) => ({ turn: t, acc: 50 + t, pass: 40 + t, n: 10, failed: 1, unparsed: t, pending: t === 2 ? 3 : 0 });
    const results = {
      setting: "guided",
      maxTurns: 2,
      metrics: ["A", "B"].map((model, i) => ({
        model,
        turns: [turn(1), turn(2)],
        delta: i ? Number.NaN : 2,
        termination: { mean: i ? null : 1.5 },
        transitions: { correctToCorrect: 1, correctToIncorrect: 2, incorrectToCorrect: 3, incorrectToIncorrect: 4 },
      })),
    };
    const { html, rows, blocks } = render("refinebench", results, true);
    expect(blocks.map((b) => b.kind)).toEqual(["figure", "note", "table", "table"]);
    expect(html).toContain('data-testid="pass-figure"');
    expect(rows[0]).toEqual(["Model", "Pass_1", "Pass_2"]);
    expect(rows[1]).toEqual(["A", "41.0", "42.0"]);
    expect(html).toContain("Setting: guided; judge: judge-1.");
    expect(rows[3]).toEqual(["Model", "Acc_1 / Pass_1", "Acc_2 / Pass_2", "Δ", "Mean termination turn"]);
    expect(rows[4]).toEqual([
      "A",
      "51.0 / 41.0 |n=10, failed=1, unparsed=1|",
      "52.0 / 42.0 |n=10, failed=1, unparsed=2, 3 not finished|",
      "2.0",
      "1.50",
    ]);
    expect(rows[5].slice(3)).toEqual(["—", "—"]);
    expect(html).toContain("<h3>Turn-to-turn transitions (Pass)</h3>");
    expect(rows[7]).toEqual(["A", "1", "2", "3", "4"]);
    // Without a figure, the table beside it is left out.
    expect(render("refinebench", results).rows[0]).toEqual(["Model", "Acc_1 / Pass_1", "Acc_2 / Pass_2", "Δ", "Mean termination turn"]);
  });

  it("FB-Bench: the metrics under the run's rule, then one breakdown table per grouping", () => {
    const results = {
      rule: "strict",
      metrics: [
        {
          model: "A",
          rule: "strict",
          errorCorrection: { mean: 50, n: 3 },
          responseMaintenance: { mean: Number.NaN, n: 0 },
          overall: 25,
          failed: 0,
          unparsed: 1,
          byTask: { math: { mean: 50, n: 2 } },
          byFeedbackType: { hint: { mean: 100, n: 1 } },
          byDeficiencyType: {},
        },
      ],
    };
    const { html, rows } = render("fb-bench", results);
    expect(rows[0]).toEqual([
      "Model",
      "Error correction",
      "Response maintenance (rule: strict)",
      "Overall (rule: strict)",
      "n (EC / RM)",
      "Failed",
      "Unparsed",
    ]);
    expect(rows[1]).toEqual(["A", "50.0", "— |(rule: strict)|", "25.0 |(rule: strict)|", "3 / 0", "0", "1"]);
    expect(html).toContain("<h3>By task (rule: strict)</h3>");
    expect(rows[2]).toEqual(["A", "math", "50.0", "n=2"]);
    expect(rows[3]).toEqual(["A", "hint", "100.0", "n=1"]);
    expect(html).toContain("<h3>By deficiency type (error correction) (rule: strict)</h3>");
  });

  it("Self-Correction Bench: accuracy with Wilson intervals per dataset and condition, the macro average and the correction markers", () => {
    const results = {
      metrics: [
        {
          model: "A",
          datasets: [
            {
              dataset: "d1",
              byCondition: { internal: { mean: 0.5, ci: [0.25, 0.75], n: 4, failed: 0, unparsed: 1 } },
              blindSpot: { value: 0.25, ci: [0, 1], clipped: true },
            },
          ],
          macro: { internal: 0.5, external: null, "internal-wait": null, blindSpot: 0.25 },
          markers: { internal: { Wait: 2, But: 0 }, external: { Wait: 0 } },
        },
      ],
    };
    const { html, rows } = render("self-correction", results);
    expect(rows[1]).toEqual(["A", "d1", "0.500 [0.250, 0.750]|n=4, failed=0, unparsed=1|", "—", "—", "0.250 [0.000, 1.000]|clipped at 1|"]);
    expect(rows[2]).toEqual(["A", "|macro average|", "0.500", "—", "—", "0.250"]);
    expect(rows[3]).toEqual(["Correction markers — internal: Wait 2 · external: none"]);
    expect(html).toContain('colSpan="6"');
  });

  it("C3EBench: the mean score per task type with its n, overall, counts", () => {
    const results = {
      metrics: [
        { model: "A", byTask: { Cloze: { mean: 7, n: 1 }, End2End: { mean: 6.25, n: 4 } }, overall: 6.5, n: 5, failed: 1, unparsed: 0 },
      ],
    };
    const { rows } = render("c3ebench", results);
    expect(rows[0]).toEqual(["Model", "Cloze", "Edit", "Expand", "End2End", "Overall", "n", "Failed", "Unparsed"]);
    expect(rows[1]).toEqual(["A", "7.00 (n=1)", "—", "—", "6.25 (n=4)", "6.50", "5", "1", "0"]);
  });

  it("every protocol lays out its results as tables", () => {
    for (const p of Object.values(PROTOCOLS)) expect(typeof p.tables, p.id).toBe("function");
  });
});
