import { z } from "zod";
import { parseLabel } from "../labels";
import { CSV_MISSING_TOKENS } from "~/reports/judgeAgreementLabels";
import { ImportRefusal, ImportUsageError } from "../problems";
import { RESPONSE_LINK, check, notFiniteReason, optId, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import type { Preset } from "./types";

export const labelsWide: Preset = {
  name: "labels-wide",
  summary:
    "Labels from another tool, wide form: a unit column and one column per annotator, named with --annotators COL,COL (or --annotators all); other columns are ignored (blank, and in CSV NA or N/A = not labelled)",
  kind: "labels",
  formats: ["csv", "jsonl", "json"],
  fields: [{ name: "unit", aliases: ["unit_id", "item", "item_id", "id"], required: true, help: "what was labelled" }, RESPONSE_LINK],
  datasetName: baseName,
  async run(ctx) {
    const unitSchema = z.object({ unit: reqId, response: optId });
    let named = ctx.annotators?.map((a) => a.trim()).filter(Boolean) ?? [];
    /** `--annotators all`: every column but the unit (and response) is an annotator, asked for explicitly. */
    let all = false;
    let checked = false;
    const used = new Set<string>();
    const ignored = new Set<string>();
    await eachRow(ctx, this.fields!, (m, row, rec, cols) => {
      if (!checked) {
        checked = true;
        const others = Object.keys(rec).filter((k) => k !== cols.unit && k !== cols.response);
        if (named.length === 1 && named[0].toLowerCase() === "all" && !(named[0] in rec)) {
          all = true;
          named = [];
        } else if (!named.length) {
          // Never guessed: a stray column (a prompt, a note) would otherwise become an annotator unnoticed.
          throw new ImportUsageError(
            `labels-wide needs its annotator columns named: the file's columns besides the unit are ${others.map((x) => `"${x}"`).join(", ") || "none"}; ` +
              "give --annotators COL,COL (or --annotators all to take every one of them).",
          );
        }
        // CSV: every row has every column; JSON(L): a named column may be absent from a record (not labelled).
        const missing = ctx.format === "csv" ? named.filter((a) => !(a in rec)) : [];
        if (missing.length) {
          throw new ImportRefusal(
            `--annotators names ${missing.map((x) => `"${x}"`).join(", ")}, not a column of the file; its columns are: ${Object.keys(rec).join(", ")}.`,
            {
              row: 1,
              field: missing[0],
              message: `annotator column ${missing.map((x) => `"${x}"`).join(", ")} is not in the header (${Object.keys(rec).join(", ")})`,
            },
          );
        }
      }
      const d = check(unitSchema, m, row, ctx.sink, cols);
      if (!d) return;
      for (const col of all ? Object.keys(rec) : named) {
        if (col === cols.unit || col === cols.response) continue;
        used.add(col);
        const infinite = notFiniteReason(rec[col]);
        if (infinite) {
          ctx.sink.error({ row, field: col, message: infinite });
          continue;
        }
        const label = parseLabel(rec[col]);
        // Not labelled: a blank cell, and in CSV NA or N/A (as `npm run judge-agreement` reads the file).
        if (label === null || (ctx.format === "csv" && typeof label === "string" && CSV_MISSING_TOKENS.includes(label))) continue;
        ctx.sink.label({ unit: d.unit.trim(), annotator: col, label, ...(d.response ? { response: d.response.trim() } : {}) }, row, col);
      }
      if (!all)
        for (const col of Object.keys(rec)) if (col !== cols.unit && col !== cols.response && !named.includes(col)) ignored.add(col);
    });
    // Which columns became annotators is always said.
    if (all) {
      if (used.size)
        ctx.sink.warn({
          row: 1,
          message: `--annotators all: every column other than the unit became an annotator (${[...used].join(", ")})`,
        });
    } else if (ignored.size) ctx.sink.warn({ row: 1, message: `columns ignored (not among --annotators): ${[...ignored].join(", ")}` });
  },
};
