/**
 * The report engine's entry points for routes, CSV and scripts:
 *
 *   taskReport(projectId, taskId, { rule, delta, slug })   → agreement page figures + tables
 *   judgeReportFor(projectId, taskId, { rule, delta })     → judge–human figures + tables
 *   disagreementsFor(projectId, taskId, filters)           → rows where judge and humans differ
 *
 * Results are memoised per (task, data version, options): the version changes
 * with every submitted or revised label and every adjudication, so a cached
 * figure is never stale.
 */
import {
  biasChecks,
  breakdowns,
  checklistAppropriateness,
  interAnnotatorAgreement,
  perAnnotator,
  planAccuracy,
  planKappa,
  type PlanRow,
} from "./agreement";
import { findKind } from "~/task-kinds/registry";
import { scorePlanRows } from "./agreement/planner";
import { finalLabels } from "./finalLabels";
import { disagrees, judgeReport, type JudgeRow } from "./judges";
import { findTask, loadJudges, loadTaskData, loadTexts, loadVerdicts, taskVersion, verdictVersion, type TaskRow } from "./load.server";
import {
  ablationTable,
  annotatorsTable,
  biasTable,
  breakdownTable,
  checklistTable,
  confusionTable,
  finalTable,
  iaaTable,
  inappropriateTable,
  judgeBreakdownTable,
  judgesTable,
  labelMetricsTable,
  matrixTable,
  orderingTable,
  pairsTable,
  planTable,
} from "./tables";
import { labelKindOf } from "./subjects";
import { JudgeAgreementError, policyLabel, type MissingPolicy, type Reference, type UnparsedPolicy } from "./judgeAgreement";
import { JUDGE_AGREEMENT_KINDS, judgeAgreementTables, taskJudgeAgreement, type TaskJudgeAgreement } from "./judgeAgreementReport";
import { loadPickCandidates } from "./judgeUnits.server";
import type { Estimate, FinalLabels, FinalRule, ReportTable, StaleMode, TaskData } from "./types";
import { FINAL_RULES } from "./types";

export { FINAL_RULES };

const CACHE_LIMIT = 32;
const cache = new Map<string, unknown>();
function memo<T>(key: string, make: () => T): T {
  if (cache.has(key)) {
    const v = cache.get(key) as T;
    cache.delete(key);
    cache.set(key, v);
    return v;
  }
  const v = make();
  cache.set(key, v);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return v;
}
/**
 * memo for what is read from the database: the promise is kept, so requests
 * that arrive while it is being made share it; one that fails is forgotten.
 */
function memoAsync<T>(key: string, make: () => Promise<T>): Promise<T> {
  return memo(key, () => {
    const p = make();
    p.catch(() => {
      if (cache.get(key) === p) cache.delete(key);
    });
    return p;
  });
}
/** For benchmarks and tests: forget every memoised report. */
export function clearReportCache() {
  cache.clear();
}

/** The rule named in the query, or null (then the task's default applies). */
export function parseRule(raw: string | null | undefined): FinalRule | null {
  return (FINAL_RULES as readonly string[]).includes(raw ?? "") ? (raw as FinalRule) : null;
}

/** Default rule: the mean for numeric scores (as RAVEL), majority otherwise. */
export function defaultRule(task: { kind: string; config: Record<string, unknown> }): FinalRule {
  const k = labelKindOf(task.kind, task.config);
  return k === "ordinal" || k === "interval" ? "mean" : "majority";
}
export function parseDelta(raw: string | null | undefined): number {
  const d = Number(raw);
  return Number.isFinite(d) && d > 0 && d < 1 ? d : 0.05;
}

/** `stale=exclude` in the query leaves stale labels and verdicts out; anything else counts them. */
export function parseStale(raw: string | null | undefined): StaleMode {
  return raw === "exclude" ? "exclude" : "include";
}

function taskData(task: TaskRow, version: string, stale: StaleMode): Promise<TaskData> {
  return memoAsync(`data:${task.id}:${version}:${stale}`, () => loadTaskData(task, { stale }));
}

export interface TaskReport {
  task: { id: number; name: string; kind: string; datasetId: number; overlap: number };
  labelKind: TaskData["labelKind"];
  rule: FinalRule;
  delta: number;
  stale: StaleMode;
  counts: { subjects: number; rated: number; ratings: number; annotations: number; annotators: number };
  paradox: string | null;
  designNote: string;
  tables: Record<string, ReportTable>;
  charts: {
    matrix: { names: string[]; values: (number | null)[][] };
    domainBars: { label: string; value: number; ci: [number, number] | null; n: number }[];
    domainMeasure: string;
    /** How the domain bars' intervals were obtained, from their estimates (so the chart's title cannot name another method). */
    domainMethod: string;
    histogram: { label: string; n: number }[];
  };
}

/** The distinct methods of the estimates that have an interval, in order ("no interval" when none has one). */
export function intervalMethods(estimates: Estimate[]): string {
  const methods = [...new Set(estimates.filter((e) => e.ci).map((e) => e.method))];
  return methods.length ? methods.join("; ") : "no interval";
}

export async function taskReport(
  projectId: number,
  taskId: number,
  options: { rule: FinalRule | null; delta: number; slug: string; stale?: StaleMode },
): Promise<TaskReport | null> {
  const task = await findTask(projectId, taskId);
  if (!task) return null;
  const opts = { ...options, rule: options.rule ?? defaultRule(task), stale: options.stale ?? "include" };
  const version = taskVersion(task);
  return memoAsync(`task:${task.id}:${version}:${opts.stale}:${opts.rule}:${opts.delta}:${opts.slug}`, async () => {
    const data = await taskData(task, version, opts.stale);
    const final = finalLabels(data, opts.rule);
    const iaa = memo(`iaa:${task.id}:${version}:${opts.stale}`, () => interAnnotatorAgreement(data));
    const annotators = perAnnotator(data);
    const bd = breakdowns(data, final);
    const tables: Record<string, ReportTable> = {};
    const add = (t: ReportTable) => (tables[t.id] = t);
    add(iaaTable(iaa));
    add(pairsTable(iaa));
    add(matrixTable(iaa, data));
    add(annotatorsTable(annotators, data));
    add(finalTable(final, data));
    add(breakdownTable(bd, data));
    if (findKind(task.kind)?.reportExtras?.includes("checklist")) {
      const cl = checklistAppropriateness(data, final);
      add(checklistTable(cl));
      const texts = await loadTexts(
        cl.inappropriate.map((x) => x.itemId),
        cl.inappropriate.map((x) => x.checklistItemId),
        [],
      );
      add(inappropriateTable(cl, texts, opts.slug, task.datasetId));
    }
    add(biasTable(biasChecks(data)));
    const plans: PlanRow[] = [];
    for (const p of iaa.planner) plans.push(planKappa(p.label, p.value, p.se, p.n, opts.delta));
    add(planTable(plans));

    const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
    const matrix = tables.matrix;
    const names = data.annotators.map((a) => a.name);
    return {
      task: { id: task.id, name: task.name, kind: task.kind, datasetId: task.datasetId, overlap: task.overlap },
      labelKind: data.labelKind,
      rule: opts.rule,
      delta: opts.delta,
      stale: opts.stale,
      counts: {
        subjects: data.subjects.length,
        rated: iaa.subjectsRated,
        ratings: data.ratings.length,
        annotations: data.annotations.length,
        annotators: data.annotators.length,
      },
      paradox: iaa.paradox,
      designNote: iaa.designNote,
      tables,
      charts: {
        matrix: { names, values: matrix.rows.map((r) => names.map((n) => r[n] as number | null)) },
        domainBars: bd
          .filter((b) => b.dimension === "domain")
          .map((b) => ({ label: b.value, value: b.summary.value, ci: b.summary.ci ? [b.summary.ci[0], b.summary.ci[1]] : null, n: b.n })),
        domainMethod: intervalMethods(bd.filter((b) => b.dimension === "domain").map((b) => b.summary)),
        domainMeasure: numeric ? "Mean final score" : data.positive != null ? `Share “${String(data.positive)}”` : "Share of modal label",
        histogram: tables.final.rows.map((r) => ({ label: String(r.label), n: Number(r.n) })),
      },
    };
  });
}

export interface JudgePageReport {
  task: { id: number; name: string; kind: string };
  labelKind: TaskData["labelKind"];
  rule: FinalRule;
  stale: StaleMode;
  judges: { id: number; name: string; model: string }[];
  tables: Record<string, ReportTable>;
  confusions: { judgeId: number; judge: string; labels: string[]; matrix: number[][] }[];
  domainBars: { judge: string; bars: { label: string; value: number; ci: [number, number] | null; n: number }[] }[];
  histograms: { title: string; bins: { label: string; n: number }[] }[];
}

/** The verdicts on a task's responses, read once per (task data version, verdict version): the judge tables share them. */
function taskVerdicts(projectId: number, task: TaskRow, version: string, verdictsVersion: number, stale: StaleMode) {
  return memoAsync(`verdicts:${task.id}:${version}:${verdictsVersion}:${stale}`, () => loadVerdicts(projectId, task.id, { stale }));
}

function judgeRows(
  task: TaskRow,
  version: string,
  rule: FinalRule,
  projectId: number,
  verdictsVersion: number,
  stale: StaleMode,
): Promise<{ data: TaskData; rows: JudgeRow[]; final: FinalLabels }> {
  return memoAsync(`judgerows:${task.id}:${version}:${verdictsVersion}:${stale}:${rule}`, async () => {
    const data = await taskData(task, version, stale);
    const final = finalLabels(data, rule);
    const judges = await loadJudges(projectId);
    const verdicts = await taskVerdicts(projectId, task, version, verdictsVersion, stale);
    return { data, final, rows: judgeReport(data, final, judges, verdicts) };
  });
}

export async function judgeReportFor(
  projectId: number,
  taskId: number,
  options: { rule: FinalRule | null; delta: number; stale?: StaleMode },
): Promise<JudgePageReport | null> {
  const task = await findTask(projectId, taskId);
  if (!task) return null;
  const opts = { ...options, rule: options.rule ?? defaultRule(task), stale: options.stale ?? "include" };
  const version = taskVersion(task);
  const vv = await verdictVersion(projectId);
  return memoAsync(`judges:${task.id}:${version}:${vv}:${opts.stale}:${opts.rule}:${opts.delta}`, async () => {
    const { data, rows } = await judgeRows(task, version, opts.rule, projectId, vv, opts.stale);
    const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
    const tables: Record<string, ReportTable> = {};
    const add = (t: ReportTable) => (tables[t.id] = t);
    add(judgesTable(rows, data));
    for (const r of rows) {
      const t = confusionTable(r);
      if (t) add(t);
    }
    if (!numeric) add(labelMetricsTable(rows));
    add(judgeBreakdownTable(rows, data));
    if (numeric) add(orderingTable(rows));
    add(ablationTable(rows, data));
    // The planner: accuracy and kappa (labels); Pearson and the three consistencies (scores, as `npm run judge-agreement --delta`).
    add(
      planTable(
        numeric
          ? rows.flatMap((r) => (r.scores ? scorePlanRows(r.scores, opts.delta) : []))
          : rows.flatMap((r) => [
              ...(r.accuracy && r.n > 0 ? [planAccuracy(`${r.judge.name} accuracy`, r.accuracy.value, r.n, opts.delta)] : []),
              ...(r.kappa && r.kappa.se != null && r.kappa.se > 0 && r.n > 1
                ? [planKappa(`${r.judge.name} Cohen's kappa`, r.kappa.value, r.kappa.se, r.n, opts.delta)]
                : []),
            ]),
      ),
    );
    const histograms: JudgePageReport["histograms"] = [];
    if (numeric) {
      const bin = (xs: number[]) => {
        const m = new Map<number, number>();
        for (const x of xs) m.set(Math.round(x), (m.get(Math.round(x)) ?? 0) + 1);
        return [...m].sort((a, b) => a[0] - b[0]).map(([k, n]) => ({ label: String(k), n }));
      };
      if (rows[0]) histograms.push({ title: "Final human scores", bins: bin(rows[0].human.map(Number)) });
      for (const r of rows) histograms.push({ title: `${r.judge.name} scores`, bins: bin(r.verdict.map(Number)) });
      for (const h of histograms) {
        const id = `histogram-${histograms.indexOf(h)}`;
        add({
          id,
          title: `Score histogram: ${h.title}`,
          columns: [
            { key: "score", label: "Score", kind: "text" },
            { key: "n", label: "n", kind: "int" },
          ],
          rows: h.bins.map((b) => ({ score: b.label, n: b.n })),
        });
      }
    }
    return {
      task: { id: task.id, name: task.name, kind: task.kind },
      labelKind: data.labelKind,
      rule: opts.rule,
      stale: opts.stale,
      judges: rows.map((r) => ({ id: r.judge.id, name: r.judge.name, model: r.judge.model })),
      tables,
      confusions: rows
        .filter((r) => r.confusion)
        .map((r) => ({ judgeId: r.judge.id, judge: r.judge.name, labels: r.confusion!.labels.map(String), matrix: r.confusion!.matrix })),
      domainBars: rows.map((r) => ({
        judge: r.judge.name,
        bars: r.breakdowns
          .filter((b) => b.dimension === "domain")
          .map((b) => {
            const e = numeric ? b.pearson : b.accuracy;
            return { label: b.value, value: e?.value ?? NaN, ci: e?.ci ? ([e.ci[0], e.ci[1]] as [number, number]) : null, n: b.n };
          }),
      })),
      histograms,
    };
  });
}

export interface DisagreementFilters {
  rule: FinalRule | null;
  /** Stale labels and verdicts: counted (default) or left out. */
  stale?: StaleMode;
  judgeId: number | null;
  domain: string | null;
  model: string | null;
  /** "disagree" (default) or "unparsed". */
  show: "disagree" | "unparsed";
  page: number;
  pageSize: number;
  /** Scores: judge·scale compared with the human score on its scale; disagreement when |diff| ≥ threshold. */
  scale: number;
  threshold: number;
}

export interface DisagreementRow {
  unitId: number;
  itemId: number;
  itemSourceId: string;
  domain: string | null;
  model: string | null;
  turn: number | null;
  judge: string;
  human: string;
  verdict: string;
  query: string;
  checklistItem: string | null;
  response: string | null;
}

export async function disagreementsFor(projectId: number, taskId: number, f: DisagreementFilters, opts: { fullText?: boolean } = {}) {
  const task = await findTask(projectId, taskId);
  if (!task) return null;
  const version = taskVersion(task);
  const vv = await verdictVersion(projectId);
  const { data, rows, final } = await judgeRows(task, version, f.rule ?? defaultRule(task), projectId, vv, f.stale ?? "include");
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const selected = rows.filter((r) => f.judgeId == null || r.judge.id === f.judgeId);
  const hits: { s: number; judge: string; human: string; verdict: string }[] = [];
  const humanText = (v: unknown) => (numeric ? Number(v).toFixed(2) : String(v));
  for (const r of selected) {
    if (f.show === "unparsed") {
      // Verdicts the judge's reply could not be parsed into: left out of every figure, listed here to inspect.
      for (const s of r.unparsedSubjects) {
        const sub = data.subjects[s];
        if (f.domain && sub.domain !== f.domain) continue;
        if (f.model && sub.model !== f.model) continue;
        hits.push({ s, judge: r.judge.name, human: humanText(final.values[s]), verdict: "(unparsed)" });
      }
      continue;
    }
    r.subjects.forEach((s, i) => {
      const sub = data.subjects[s];
      if (f.domain && sub.domain !== f.domain) return;
      if (f.model && sub.model !== f.model) return;
      if (disagrees(r.human[i], r.verdict[i], numeric, f.scale, f.threshold))
        hits.push({
          s,
          judge: r.judge.name,
          human: numeric ? Number(r.human[i]).toFixed(2) : String(r.human[i]),
          verdict: String(r.verdict[i]),
        });
    });
  }
  const total = hits.length;
  const pageRows = opts.fullText ? hits : hits.slice((f.page - 1) * f.pageSize, f.page * f.pageSize);
  const subs = pageRows.map((h) => data.subjects[h.s]);
  const texts = await loadTexts(
    subs.map((s) => s.itemId),
    subs.map((s) => s.checklistItemId).filter((x): x is number => x != null),
    subs.map((s) => s.responseId).filter((x): x is number => x != null),
  );
  const cut = (t: string | null | undefined, n: number) => (t == null ? null : opts.fullText || t.length <= n ? t : `${t.slice(0, n)}…`);
  const out: DisagreementRow[] = pageRows.map((h) => {
    const s = data.subjects[h.s];
    return {
      unitId: s.unitId,
      itemId: s.itemId,
      itemSourceId: texts.items.get(s.itemId)?.sourceId ?? String(s.itemId),
      domain: s.domain,
      model: s.model,
      turn: s.turn,
      judge: h.judge,
      human: h.human,
      verdict: h.verdict,
      query: cut(texts.items.get(s.itemId)?.query, 400) ?? "",
      checklistItem: s.checklistItemId != null ? (texts.checklist.get(s.checklistItemId) ?? null) : null,
      response: cut(s.responseId != null ? texts.responses.get(s.responseId) : null, 800),
    };
  });
  const domains = [...new Set(data.subjects.map((s) => s.domain).filter((x): x is string => !!x))].sort();
  const models = [...new Set(data.subjects.map((s) => s.model).filter((x): x is string => !!x))].sort();
  return {
    task: { id: task.id, name: task.name, kind: task.kind, datasetId: task.datasetId },
    numeric,
    judges: rows.map((r) => ({ id: r.judge.id, name: r.judge.name, unparsed: r.unparsed, n: r.n })),
    domains,
    models,
    total,
    rows: out,
  };
}

export interface JudgeAgreementPage {
  task: { id: number; name: string; kind: string };
  /** False for kinds whose labels are not one scalar per unit (writing quality, best-of-N). */
  applicable: boolean;
  result: TaskJudgeAgreement | null;
  tables: Record<string, ReportTable>;
  /** Why the chosen unparsed policy could not be applied, if it could not. */
  note: string | null;
}

/**
 * The any-label-set judge–human table of a task (app/reports/judgeAgreement): the same
 * figures as `npm run judge-agreement` on the same labels and verdicts.
 */
export async function judgeAgreementFor(
  projectId: number,
  taskId: number,
  options: { reference: Reference; unparsed: UnparsedPolicy; missing?: MissingPolicy; stale?: StaleMode },
): Promise<JudgeAgreementPage | null> {
  const task = await findTask(projectId, taskId);
  if (!task) return null;
  const stale = options.stale ?? "include";
  const version = taskVersion(task);
  const vv = await verdictVersion(projectId);
  return memoAsync(
    `jagree:${task.id}:${version}:${vv}:${stale}:${options.reference}:${options.unparsed}:${options.missing ?? "missing"}`,
    async (): Promise<JudgeAgreementPage> => {
      const info = { id: task.id, name: task.name, kind: task.kind };
      if (!JUDGE_AGREEMENT_KINDS.includes(task.kind)) return { task: info, applicable: false, result: null, tables: {}, note: null };
      const data = await taskData(task, version, stale);
      const judges = await loadJudges(projectId);
      const verdicts = await taskVerdicts(projectId, task, version, vv, stale);
      let result: TaskJudgeAgreement;
      let note: string | null = null;
      // Best-of-N units show several responses: a judge's pick is matched by the responses it names.
      const picks = findKind(task.kind)?.coding.pick ? await loadPickCandidates(task.id) : undefined;
      try {
        result = taskJudgeAgreement(data, judges, verdicts, options, picks);
      } catch (err) {
        // as:LABEL naming a label this task does not have: say so, and count unparsed verdicts as wrong.
        if (!(err instanceof JudgeAgreementError)) throw err;
        note = `${err.message.replace(/^--unparsed /, "")} Unparsed verdicts are ${policyLabel("count-as-wrong")} instead.`;
        result = taskJudgeAgreement(data, judges, verdicts, { ...options, unparsed: "count-as-wrong" }, picks);
      }
      const tables: Record<string, ReportTable> = {};
      for (const t of judgeAgreementTables(result)) tables[t.id] = t;
      return { task: info, applicable: true, result, tables, note };
    },
  );
}
