/**
 * npm run corrected-score -- --judge FILE --labels FILE [--unit COL] [--score COL]
 *     [--label COL | --annotators A,B,C] [--values A=1,tie=0.5,B=0] [--pi COL] [--stratum COL]
 *     [--estimator auto|classical|ppi|ppi++|stratified|active] [--alpha 0.05] [--range LOW,HIGH]
 *     [--format table|json]
 *
 * A benchmark score corrected by a sample of human labels, from two files and no database
 * (app/reports/correctedScore.ts): the judge file lists every unit of the population with its judge score
 * (and optionally its inclusion probability and stratum); the labels file the labelled units with a human
 * value, or several annotators' (reduced to their strict majority). Columns default to `unit`, `score` and
 * `value`. JSON output: estimator, estimate, ci_low, ci_high, se, lambda, n_labeled, n_total, notes.
 * Exit codes: 0 printed, 2 bad command line or bad input (one line on stderr naming file, row and column).
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { JudgeFileError, readTable } from "../app/formats/judgeFiles.server";
import {
  CORRECTED_ESTIMATORS,
  CorrectedScoreError,
  correctedScoreFromTables,
  parseValueMap,
  type CorrectedEstimatorChoice,
} from "../app/reports/correctedScore";

const USAGE =
  "usage: npm run corrected-score -- --judge FILE --labels FILE [--unit COL] [--score COL] [--label COL | --annotators A,B,C] [--values A=1,tie=0.5,B=0] [--pi COL] [--stratum COL] [--estimator auto|classical|ppi|ppi++|stratified|active] [--alpha 0.05] [--range LOW,HIGH] [--format table|json]";

function fail(message: string): never {
  console.error(`corrected-score: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      judge: { type: "string" },
      labels: { type: "string" },
      unit: { type: "string", default: "unit" },
      score: { type: "string", default: "score" },
      label: { type: "string" },
      annotators: { type: "string" },
      values: { type: "string" },
      pi: { type: "string" },
      stratum: { type: "string" },
      estimator: { type: "string", default: "auto" },
      alpha: { type: "string", default: "0.05" },
      range: { type: "string", default: "0,1" },
      format: { type: "string", default: "table" },
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
if (!values.labels) fail(`--labels is required (${USAGE})`);
if (values.label && values.annotators) fail("give --label (one value column) or --annotators (several), not both.");
if (!(CORRECTED_ESTIMATORS as readonly string[]).includes(values.estimator))
  fail(`--estimator must be one of ${CORRECTED_ESTIMATORS.join(", ")}, not "${values.estimator}".`);
if (values.format !== "json" && values.format !== "table") fail(`--format must be "json" or "table", not "${values.format}".`);
const alpha = Number(values.alpha);
if (!(alpha > 0 && alpha < 1)) fail(`--alpha must be a number between 0 and 1, not "${values.alpha}".`);
const range = values.range.split(",").map((x) => Number(x.trim()));
if (range.length !== 2 || !range.every(Number.isFinite) || !(range[0] < range[1]))
  fail(`--range takes LOW,HIGH with LOW < HIGH, not "${values.range}".`);

try {
  const [judge, labels] = await Promise.all([readTable(values.judge, "judge file"), readTable(values.labels, "labels file")]);
  const r = correctedScoreFromTables(judge, labels, {
    judgeName: `judge file ${path.basename(values.judge)}`,
    labelsName: `labels file ${path.basename(values.labels)}`,
    unit: values.unit,
    score: values.score,
    label: values.label,
    annotators: values.annotators
      ?.split(",")
      .map((a) => a.trim())
      .filter(Boolean),
    values: values.values === undefined ? undefined : parseValueMap(values.values),
    pi: values.pi,
    stratum: values.stratum,
    estimator: values.estimator as CorrectedEstimatorChoice,
    alpha,
    range: [range[0], range[1]],
  });
  const out = {
    estimator: r.estimator,
    estimate: r.estimate,
    ci_low: r.ci?.[0] ?? null,
    ci_high: r.ci?.[1] ?? null,
    se: r.se,
    lambda: r.lambda,
    ...(r.lambdas ? { lambdas: r.lambdas } : {}),
    n_labeled: r.nLabeled,
    n_total: r.nTotal,
    judge_mean: r.judgeMean,
    exact: r.exact,
    notes: r.notes,
  };
  if (values.format === "json") {
    console.log(JSON.stringify(out, null, 2));
  } else {
    const f = (v: number | null) => (v === null || !Number.isFinite(v) ? "—" : v.toFixed(4));
    const level = `${+(100 * (1 - alpha)).toFixed(2)}%`;
    console.log(`estimator   ${r.estimator}${r.lambda !== null ? ` (λ = ${f(r.lambda)})` : ""}`);
    console.log(`estimate    ${f(r.estimate)}   ${level} interval [${f(out.ci_low)}, ${f(out.ci_high)}]   Wald SE ${f(r.se)}`);
    console.log(`judge only  ${f(r.judgeMean)} (uncorrected)`);
    console.log(`units       ${r.nLabeled} labelled of ${r.nTotal}`);
    for (const n of r.notes) console.log(`note        ${n}`);
  }
} catch (err) {
  if (err instanceof JudgeFileError || err instanceof CorrectedScoreError) fail(err.message);
  throw err;
}
