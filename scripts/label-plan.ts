/**
 * npm run label-plan -- --judge FILE --budget B --sampler uniform|stratified|proportional|neyman|active|auto
 *     [--uncertainty COL] [--stratum COL] [--labels FILE] --seed S [--unit COL] [--score COL]
 *     [--label COL | --annotators A,B,C] [--values A=1,B=0] [--mix 0.5] [--format csv|json]
 *
 * Which units to label next, and each unit's inclusion probability (app/stats/labelPlan.ts via
 * app/reports/correctedScore.ts labelPlanFromTables): prints `unit,pi,selected` for every unit of the judge file
 * (CSV; or JSON with --format json). Seeded and reproducible; the π sum to the budget and exactly B units are
 * selected (every plan is of fixed size). `--labels` is the burn-in so far: without it `auto` falls back to uniform
 * (proportional with --stratum) and says so. Notes go to stderr, so stdout is the plan alone.
 * Exit codes: 0 printed, 2 bad command line or bad input (one line on stderr).
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { toCsv } from "../app/formats/csv";
import { JudgeFileError, readTable } from "../app/formats/judgeFiles.server";
import {
  CorrectedScoreError,
  labelPlanFromTables,
  parseValueMap,
  PLAN_SAMPLERS,
  type PlanSamplerChoice,
} from "../app/reports/correctedScore";

const USAGE =
  "usage: npm run label-plan -- --judge FILE --budget B --sampler uniform|stratified|proportional|neyman|active|auto [--uncertainty COL] [--stratum COL] [--labels FILE] --seed S [--unit COL] [--score COL] [--label COL | --annotators A,B,C] [--values A=1,B=0] [--mix 0.5] [--format csv|json]";

function fail(message: string): never {
  console.error(`label-plan: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      judge: { type: "string" },
      labels: { type: "string" },
      budget: { type: "string" },
      sampler: { type: "string" },
      uncertainty: { type: "string" },
      stratum: { type: "string" },
      seed: { type: "string" },
      unit: { type: "string", default: "unit" },
      score: { type: "string", default: "score" },
      label: { type: "string" },
      annotators: { type: "string" },
      values: { type: "string" },
      mix: { type: "string", default: "0.5" },
      format: { type: "string", default: "csv" },
      help: { type: "boolean", default: false },
    },
  }));
} catch (err) {
  fail(`${(err as Error).message.split("\n")[0]} (${USAGE})`);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.judge) fail(`--judge is required (${USAGE})`);
const budget = Number(values.budget);
if (!Number.isInteger(budget) || budget < 1) fail(`--budget must be a whole number of at least 1, not "${values.budget ?? ""}".`);
if (!values.sampler || !(PLAN_SAMPLERS as readonly string[]).includes(values.sampler))
  fail(`--sampler must be one of ${PLAN_SAMPLERS.join(", ")}${values.sampler ? `, not "${values.sampler}"` : ""}.`);
if (values.seed === undefined || !Number.isInteger(Number(values.seed)))
  fail(`--seed must be a whole number (the plan is reproducible from it).`);
const mix = Number(values.mix);
if (!(mix > 0 && mix <= 1)) fail(`--mix must be in (0, 1], not "${values.mix}".`);
if (values.format !== "csv" && values.format !== "json") fail(`--format must be "csv" or "json", not "${values.format}".`);

try {
  const [judge, labels] = await Promise.all([
    readTable(values.judge, "judge file"),
    values.labels ? readTable(values.labels, "labels file") : null,
  ]);
  const r = labelPlanFromTables(judge, labels, {
    judgeName: `judge file ${path.basename(values.judge)}`,
    labelsName: values.labels ? `labels file ${path.basename(values.labels)}` : undefined,
    budget,
    sampler: values.sampler as PlanSamplerChoice,
    uncertainty: values.uncertainty,
    stratum: values.stratum,
    seed: Number(values.seed),
    unit: values.unit,
    score: values.score,
    label: values.label,
    annotators: values.annotators
      ?.split(",")
      .map((a) => a.trim())
      .filter(Boolean),
    values: values.values === undefined ? undefined : parseValueMap(values.values),
    mix,
  });
  const selected = r.rows.filter((x) => x.selected).length;
  if (values.format === "json") {
    console.log(JSON.stringify({ sampler: r.plan.sampler, budget, selected, exact: true, notes: r.plan.notes, units: r.rows }, null, 2));
  } else {
    process.stdout.write(toCsv([["unit", "pi", "selected"], ...r.rows.map((x) => [x.unit, x.pi, x.selected ? 1 : 0])]) + "\n");
    console.error(
      `label-plan: ${r.plan.sampler}, ${selected} of ${r.rows.length} units selected (exactly the budget: a fixed-size plan); the π sum to ${budget}.`,
    );
    for (const n of r.plan.notes) console.error(`label-plan: ${n}`);
  }
} catch (err) {
  if (err instanceof JudgeFileError || err instanceof CorrectedScoreError) fail(err.message);
  throw err;
}
