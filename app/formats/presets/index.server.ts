/**
 * Import presets: each one reads one file layout and hands normalised records
 * to the ImportWriter. Generic presets take a column mapping (`--map
 * field=column`); the public-benchmark presets know their layout.
 *
 * | preset              | file                        | becomes                                                   |
 * |---------------------|-----------------------------|-----------------------------------------------------------|
 * | items-jsonl         | JSONL, nested checklist     | items, checklist items (weighted or not), references      |
 * | items-csv           | CSV, one row per checklist item | the same                                              |
 * | responses           | CSV/JSONL item,model,turn,text | responses (origin "import")                            |
 * | verdicts            | CSV/JSONL judge,item,response,checklist_item,value,raw | judges + verdicts (unparsed kept on labelled responses) |
 * | labels-long         | CSV/JSONL unit,annotator,label | an "imported-labels" task with placeholder annotators  |
 * | labels-wide         | CSV/JSONL/JSON, unit + the annotator columns (--annotators COL,COL or all) | the same   |
 * | unit-verdicts       | CSV/JSONL/JSON unit,judge,verdict[,raw] | verdicts on imported-label units (unparsed kept) |
 * | refinebench         | refinebench_samples.json    | items (domain = field), checklist, reference answers       |
 * | fb-bench            | fb_bench_dataset_v3.json    | items, weighted (error correction) or plain checklists     |
 * | fb-bench-judgments  | model_judgment/JUDGE/MODEL.jsonl (or a JSON array) | the follow-up response + 是/否 verdicts |
 * | c3ebench            | RAVEL english_dataset/TASK/*.jsonl (or a JSON array) | writing items, grounding, reference   |
 * | llmbar              | LLMBar dataset.json / evaluators/.../result.json | pairwise items, both outputs, judge picks |
 */
import { c3ebench } from "./c3ebench.server";
import { fbBenchJudgments } from "./fb-bench-judgments.server";
import { fbBench } from "./fb-bench.server";
import { itemsCsv } from "./items-csv.server";
import { itemsJsonl } from "./items-jsonl.server";
import { labelsLong } from "./labels-long.server";
import { labelsWide } from "./labels-wide.server";
import { llmbar } from "./llmbar.server";
import { refinebench } from "./refinebench.server";
import { responsesPreset } from "./responses.server";
import type { Preset } from "./types";
import { unitVerdicts } from "./unit-verdicts.server";
import { verdictsPreset } from "./verdicts.server";

export type { FieldSpec, Preset, PresetContext } from "./types";
export { resolveColumns, tuning } from "./rows.server";
export { fbBenchId } from "./fb-bench.server";
export { llmbarId } from "./llmbar.server";

export const PRESETS: Record<string, Preset> = Object.fromEntries(
  [
    itemsJsonl,
    itemsCsv,
    responsesPreset,
    verdictsPreset,
    labelsLong,
    labelsWide,
    unitVerdicts,
    refinebench,
    fbBench,
    fbBenchJudgments,
    c3ebench,
    llmbar,
  ].map((p) => [p.name, p]),
);
