/**
 * npm run judge-agreement -- --labels LABELS.csv|.jsonl|.json [--annotators COL,COL,...]
 *     --verdicts VERDICTS.csv|.jsonl|.json [--reference majority|each]
 *     [--unparsed count-as-wrong|exclude|as:LABEL] [--missing-as missing|unparsed]
 *     [--format json|table] [--seed N] [--map field=column] [--labels-map field=column]
 *     [--verdicts-map field=column] [--level nominal|ordinal|interval] [--group COL]
 *
 * With --level interval or ordinal the labels and verdicts are scores, compared on their own scales
 * (app/reports/scoreJudgeAgreement.ts): --reference mean|median|each (default mean; one annotator
 * column is the reference itself), --group COL names the column that forms pairs (an instruction or
 * prompt, in the labels file or else the verdicts file); per judge n, outOfScale, Pearson, Spearman,
 * Kendall tau-b and the three pairwise consistencies with their pair counts, each with a seeded
 * bootstrap interval over the groups. --level ordinal adds the label-set figures (weighted kappa) as
 * labelAgreement in the JSON.
 *
 * --delta D (0 < D < 1) adds the sample-size planner (app/reports/agreement/planner.ts, as the judges
 * page): per judge the n for a 95% CI of about ±D on average and the n for ±D or narrower with
 * probability 0.8 — scores: Pearson r and the three consistencies (in groups); labels: accuracy and
 * Cohen's kappa.
 *
 * Judge–human agreement from two files, no database: per judge n, unparsed and missing verdicts,
 * accuracy (Wilson 95% CI), Cohen's kappa (asymptotic 95% CI), Gwet's AC1, macro
 * precision/recall/F1, per-label figures and the confusion matrix (app/reports/judgeAgreement.ts).
 * A verdict written as missing (CSV: an empty cell, NA or N/A; JSON: null) is left out of n and
 * counted as missing, or with `--missing-as unparsed` counted as unparsed; JSON "" is unparsed.
 * `--map` names a column in both files; `--labels-map` / `--verdicts-map` in one (and win).
 * Exit codes: 0 printed, 2 bad command line or bad input (one line on stderr).
 */
import { parseArgs } from "node:util";
import { JudgeFileError, readJudgeFiles } from "../app/formats/judgeFiles.server";
import { planAccuracy, planKappa, scorePlanRows, type PlanRow } from "../app/reports/agreement/planner";
import {
  CONSISTENCY_DEFINITIONS,
  parseScoreReference,
  SCORE_LABELS,
  SCORE_INTERVAL_METHOD,
  scoreInputFromText,
  scoreJudgeAgreement,
  type ScoreJudgeResult,
} from "../app/reports/scoreJudgeAgreement";
import {
  JudgeAgreementError,
  judgeAgreement,
  missingPolicyLabel,
  parseMissingPolicy,
  parseUnparsedPolicy,
  policyLabel,
  referenceLabel,
  UNPARSED,
  type JudgeAgreementResult,
} from "../app/reports/judgeAgreement";

const USAGE =
  "usage: npm run judge-agreement -- --labels FILE [--annotators COL,COL,...] --verdicts FILE [--reference majority|each] [--unparsed count-as-wrong|exclude|as:LABEL] [--missing-as missing|unparsed] [--format json|table] [--seed N] [--map field=column] [--labels-map field=column] [--verdicts-map field=column] [--level nominal|ordinal|interval] [--group COL] (interval, ordinal: --reference mean|median|each) [--delta D]";

function fail(message: string): never {
  console.error(`judge-agreement: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      labels: { type: "string" },
      verdicts: { type: "string" },
      annotators: { type: "string" },
      reference: { type: "string" },
      group: { type: "string" },
      delta: { type: "string" },
      unparsed: { type: "string", default: "count-as-wrong" },
      "missing-as": { type: "string", default: "missing" },
      format: { type: "string", default: "table" },
      seed: { type: "string", default: "1" },
      map: { type: "string", multiple: true, default: [] },
      "labels-map": { type: "string", multiple: true, default: [] },
      "verdicts-map": { type: "string", multiple: true, default: [] },
      level: { type: "string", default: "nominal" },
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
if (!values.labels) fail(`--labels is required (${USAGE})`);
if (!values.verdicts) fail(`--verdicts is required (${USAGE})`);
const scores = values.level === "interval" || values.level === "ordinal";
const scoreReference = scores ? parseScoreReference(values.reference ?? "mean") : null;
if (scores && !scoreReference)
  fail(`--reference must be "mean", "median" or "each" with --level ${values.level}, not "${values.reference}".`);
values.reference ??= "majority";
if (!scores && values.reference !== "majority" && values.reference !== "each")
  fail(`--reference must be "majority" or "each", not "${values.reference}".`);
if (!scores && values.group !== undefined) fail("--group forms pairs of scores: use it with --level interval or ordinal.");
const policy = parseUnparsedPolicy(values.unparsed);
if (!policy) fail(`--unparsed must be count-as-wrong, exclude or as:LABEL, not "${values.unparsed}".`);
const missingPolicy = parseMissingPolicy(values["missing-as"]);
if (!missingPolicy) fail(`--missing-as must be "missing" or "unparsed", not "${values["missing-as"]}".`);
if (values.format !== "json" && values.format !== "table") fail(`--format must be "json" or "table", not "${values.format}".`);
if (values.level !== "nominal" && values.level !== "ordinal" && values.level !== "interval")
  fail(`--level must be "nominal", "ordinal" or "interval", not "${values.level}".`);
const delta = values.delta === undefined ? null : Number(values.delta);
if (delta !== null && !(delta > 0 && delta < 1)) fail(`--delta must be a number between 0 and 1, not "${values.delta}".`);
const seed = Number(values.seed);
if (!Number.isInteger(seed)) fail(`--seed must be a whole number, not "${values.seed}".`);
/** `--map`-style flags: field=column, each field once per flag. */
function mappings(flag: string, list: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of list ?? []) {
    const eq = m.indexOf("=");
    if (eq <= 0 || eq === m.length - 1) fail(`${flag} takes field=column, not "${m}".`);
    const field = m.slice(0, eq).trim();
    if (field in out) fail(`${flag} maps ${field} twice.`);
    out[field] = m.slice(eq + 1).trim();
  }
  return out;
}
const mapping = mappings("--map", values.map);
const labelsMapping = mappings("--labels-map", values["labels-map"]);
const verdictsMapping = mappings("--verdicts-map", values["verdicts-map"]);
const annotators = values.annotators
  ?.split(",")
  .map((s) => s.trim())
  .filter(Boolean);
if (values.annotators !== undefined && !annotators?.length) fail("--annotators needs at least one column name.");

let result: JudgeAgreementResult;
let summary;
let scored: ScoreJudgeResult | null = null;
try {
  const read = await readJudgeFiles({
    labels: values.labels,
    verdicts: values.verdicts,
    annotators,
    mapping,
    labelsMapping,
    verdictsMapping,
    group: values.group,
  });
  summary = read.summary;
  if (scores) {
    // Scores: every judge on its own scale against the human scores (the judge page's figures).
    scored = scoreJudgeAgreement(scoreInputFromText(read.input, summary.units, summary.groups, missingPolicy), {
      reference: scoreReference!,
      seed,
    });
  }
  result = judgeAgreement(read.input, {
    reference: values.reference === "each" ? "each" : "majority",
    unparsed: policy,
    missing: missingPolicy,
    seed,
    ordinal: values.level === "ordinal",
    ...(values.level === "interval" ? { resamples: 0 } : {}),
  });
} catch (err) {
  if (err instanceof JudgeFileError || err instanceof JudgeAgreementError) fail(err.message);
  throw err;
}
process.stdout.on("error", (err: NodeJS.ErrnoException) => process.exit(err.code === "EPIPE" ? 0 : 1));
if (scored) {
  if (scored.units === 0) fail("LABELS has no labels (every label cell is empty).");
  if (scored.judges.length === 0) fail("VERDICTS has no verdicts.");
  const out = {
    level: values.level,
    reference: scored.reference,
    groupColumn: values.group ?? null,
    groupFrom: summary.groupFrom ?? null,
    units: scored.units,
    groups: scored.groups,
    scale: scored.scale,
    missingPolicy,
    intervalMethod: scored.intervalMethod,
    consistencyDefinitions: scored.consistencyDefinitions,
    // Ordinal: each judge's quadratic-weighted kappa beside its score figures (from labelAgreement, its label-set pairs).
    judges:
      values.level === "ordinal"
        ? scored.judges.map((j) => {
            const l = result.judges.find((x) => x.judge === j.judge);
            return { ...j, weightedKappa: l?.weightedKappa ?? null, weightedKappaCI: l?.weightedKappaCI ?? null };
          })
        : scored.judges,
    labelsLayout: summary.labelsLayout,
    annotatorColumns: summary.annotatorColumns,
    ignoredColumns: summary.ignoredColumns,
    verdictsWithoutLabels: summary.verdictsWithoutLabels,
    seed,
    // Ordinal: the label-set figures too (accuracy, kappa, weighted kappa), as `--level ordinal` gave them before.
    ...(values.level === "ordinal" ? { labelAgreement: result } : {}),
    ...(delta !== null ? { delta, planner: scored.judges.flatMap((j) => scorePlanRows(j, delta)) } : {}),
  };
  process.stdout.write((values.format === "json" ? JSON.stringify(out, null, 2) : scoreTable(out)) + "\n");
  process.exit(0);
}
if (result.units === 0) fail("LABELS has no labels (every label cell is empty).");
if (result.judges.length === 0) fail("VERDICTS has no verdicts.");

/** Labels: accuracy (Wilson) and Cohen's kappa (its SE from the asymptotic interval, (high − low)/(2·1.96)). */
const labelPlanner = (d: number): PlanRow[] =>
  result.judges.flatMap((j) => [
    ...(j.accuracy !== null && j.n > 0 ? [planAccuracy(`${j.judge} accuracy`, j.accuracy, j.n, d)] : []),
    ...(j.cohenKappa !== null && j.cohenKappaCI && j.n > 1 && !j.intervalNotes.cohenKappaCI
      ? [planKappa(`${j.judge} Cohen's kappa`, j.cohenKappa, (j.cohenKappaCI[1] - j.cohenKappaCI[0]) / (2 * 1.96), j.n, d)]
      : []),
  ]);
const out = {
  ...result,
  ...(delta !== null ? { delta, planner: labelPlanner(delta) } : {}),
  labelsLayout: summary.labelsLayout,
  annotatorColumns: summary.annotatorColumns,
  ignoredColumns: summary.ignoredColumns,
  verdictsWithoutLabels: summary.verdictsWithoutLabels,
  level: values.level,
  seed,
};
if (values.format === "json") {
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
} else {
  process.stdout.write(table(out) + "\n");
}

function table(r: typeof out): string {
  const f3 = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const ci = (c: [number, number] | null, f: (x: number) => string) => (c ? `[${f(c[0])}, ${f(c[1])}]` : "");
  const lines: string[] = [];
  lines.push(
    r.labelsLayout === "wide"
      ? `Labels: wide, annotator columns ${r.annotatorColumns.join(", ")}${r.ignoredColumns.length ? `; ignored columns: ${r.ignoredColumns.join(", ")}` : ""}`
      : `Labels: long, annotators ${r.annotatorColumns.join(", ")}${r.ignoredColumns.length ? `; ignored columns: ${r.ignoredColumns.join(", ")}` : ""}`,
  );
  lines.push(`Label set (${r.labels.length}): ${r.labels.join(", ")}`);
  lines.push(
    `Reference: ${referenceLabel(r.reference)}; ${r.units} labelled units` +
      (r.reference === "majority" ? `, ${r.unitsWithoutMajority} without a majority (left out)` : ""),
  );
  lines.push(
    `Unparsed verdicts (outside the label set): ${policyLabel(r.unparsedPolicy)}; "unparsed" counts them on every labelled unit, "compared" on the units with a reference` +
      (r.verdictsWithoutLabels ? `; ${r.verdictsWithoutLabels} verdicts on unlabelled units not compared` : ""),
  );
  lines.push(
    `Missing verdicts (CSV: an empty cell, NA or N/A; JSON: null): ${missingPolicyLabel(r.missingPolicy)}; "missing" counts the compared units without a verdict (written as missing, or none)` +
      (r.missingPolicy === "unparsed" ? "" : "; --missing-as unparsed counts them as unparsed"),
  );
  lines.push(`AC1: ${r.ac1Definition}`);
  if (r.reference === "each")
    lines.push("Intervals: accuracy and kappa by a percentile bootstrap over units (a unit's annotator pairs resampled together)");
  lines.push("");
  const head = [
    "judge",
    "n",
    "unparsed",
    "compared",
    "missing",
    "accuracy [95% CI]",
    "kappa [95% CI]",
    "AC1 [95% CI]",
    "macro P",
    "macro R",
    "macro F1 [95% CI]",
  ];
  const body = r.judges.map((j) => [
    j.judge,
    String(j.n),
    String(j.unparsed),
    String(j.unparsedCompared),
    String(j.missing),
    `${pct(j.accuracy)} ${ci(j.accuracyCI, (x) => `${(100 * x).toFixed(1)}%`)}`.trim(),
    `${f3(j.cohenKappa)} ${ci(j.cohenKappaCI, (x) => x.toFixed(3))}`.trim(),
    `${f3(j.ac1)} ${ci(j.ac1CI, (x) => x.toFixed(3))}`.trim(),
    f3(j.macroPrecision),
    f3(j.macroRecall),
    `${f3(j.macroF1)} ${ci(j.macroF1CI, (x) => x.toFixed(3))}`.trim(),
  ]);
  lines.push(...grid(head, body));
  if (r.humans) {
    const h = r.humans;
    lines.push(
      "",
      `Humans (${r.reference === "each" ? "every two annotators of a unit" : "each annotator against the majority of the others"}): n ${h.n}, accuracy ${pct(h.accuracy)} ${ci(h.accuracyCI, (x) => `${(100 * x).toFixed(1)}%`)}, kappa ${f3(h.cohenKappa)}`,
    );
  }
  for (const j of r.judges) {
    const labels = Object.keys(j.confusion);
    if (!labels.length) continue;
    lines.push("", `${j.judge}: confusion (rows human, columns judge)${j.missing ? `; ${j.missing} units without a verdict` : ""}`);
    lines.push(
      ...grid(
        ["human \\ judge", ...labels],
        labels.filter((h) => h !== UNPARSED).map((h) => [h, ...labels.map((l) => String(j.confusion[h][l]))]),
      ),
    );
  }
  if (r.planner) lines.push("", ...plannerLines(r.planner, r.delta!));
  return lines.join("\n");
}

function grid(head: string[], body: string[][]): string[] {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i])))
      .join("  ")
      .trimEnd();
  return [line(head), line(w.map((n) => "-".repeat(n))), ...body.map(line)];
}

function scoreTable(r: {
  level: string;
  reference: string;
  groupColumn: string | null;
  units: number;
  groups: number;
  scale: [number, number] | null;
  judges: ScoreJudgeResult["judges"];
  annotatorColumns: string[];
  verdictsWithoutLabels: number;
  planner?: PlanRow[];
  delta?: number;
}): string {
  const f3 = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const ci = (c: [number, number] | null, f: (x: number) => string) => (c ? ` [${f(c[0])}, ${f(c[1])}]` : "");
  const lines = [
    `Scores (--level ${r.level}): ${r.units} scored units${r.scale ? `, human scale ${r.scale[0]}–${r.scale[1]}` : ""}; annotators ${r.annotatorColumns.join(", ")}`,
    `Reference: ${r.reference === "each" ? "each annotator (every annotator × unit pair, pooled; pairs within one annotator)" : `the ${r.reference} of the unit's annotators`}`,
    r.groupColumn
      ? `Groups (--group ${r.groupColumn}): ${r.groups}; pairs form within a group`
      : "No --group: no pairs (consistency needs the column that forms pairs: an instruction or prompt)",
    CONSISTENCY_DEFINITIONS,
    `${SCORE_INTERVAL_METHOD}.` + (r.verdictsWithoutLabels ? ` ${r.verdictsWithoutLabels} verdicts on unscored units not compared.` : ""),
    "",
  ];
  const L = SCORE_LABELS;
  const head = [
    "judge",
    L.n,
    L.unparsed,
    L.outOfScale,
    `${L.pearson} [95% CI]`,
    `${L.spearman} [95% CI]`,
    `${L.kendallTauB} [95% CI]`,
    `${L.consistencyTiesCounted} [95% CI]`,
    L.pairs,
    `${L.consistencyTiesExcluded} [95% CI]`,
    L.pairsTiesExcluded,
    `${L.consistencyHumanDiffering} [95% CI]`,
    L.pairsHumanDiffering,
  ];
  const p1 = (x: number) => `${(100 * x).toFixed(1)}%`;
  const body = r.judges.map((j) => [
    j.judge,
    String(j.n),
    String(j.unparsed),
    String(j.outOfScale),
    f3(j.pearson) + ci(j.pearsonCI, (x) => x.toFixed(3)),
    f3(j.spearman) + ci(j.spearmanCI, (x) => x.toFixed(3)),
    f3(j.kendallTauB) + ci(j.kendallTauBCI, (x) => x.toFixed(3)),
    pct(j.consistencyTiesCounted) + ci(j.consistencyTiesCountedCI, p1),
    String(j.pairs),
    pct(j.consistencyTiesExcluded) + ci(j.consistencyTiesExcludedCI, p1),
    String(j.pairsTiesExcluded),
    pct(j.consistencyHumanDiffering) + ci(j.consistencyHumanDifferingCI, p1),
    String(j.pairsHumanDiffering),
  ]);
  lines.push(...grid(head, body));
  const notes = r.judges.filter((j) => Object.keys(j.intervalNotes).length);
  for (const j of notes)
    lines.push(
      `${j.judge}: ${Object.entries(j.intervalNotes)
        .map(([k, v]) => `${k} ${v}`)
        .join("; ")}`,
    );
  if (r.planner) lines.push("", ...plannerLines(r.planner, r.delta!));
  return lines.join("\n");
}

/** The planner as the judges page shows it. */
function plannerLines(rows: PlanRow[], d: number): string[] {
  return [
    `Sample-size planner (target ±${d}): "n needed" gives a 95% CI of about ±${d} on average (wider about half the time); "n for 80% assurance" gives ±${d} or narrower with probability 0.8`,
    ...grid(
      ["figure", "current", "n now", "CI half-width now", "n needed", "more", "n for 80% assurance", "more (80%)", "basis"],
      rows.map((p) => [
        p.target,
        p.current.toFixed(3),
        String(p.n),
        Number.isFinite(p.halfWidth) ? p.halfWidth.toFixed(3) : "n/a",
        String(p.needed),
        String(p.more),
        String(p.neededAssured),
        String(p.moreAssured),
        p.basis,
      ]),
    ),
  ];
}
