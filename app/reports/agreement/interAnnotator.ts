/** The inter-annotator agreement table: kappa, alpha, AC1, percent agreement, correlations, pairwise rows, each with its interval. */
import {
  cohenKappaClusteredSE,
  cohenKappaFromTable,
  type CountsBootstrapResult,
  fleissKappaSE,
  gwetSE,
  type Interval,
  krippendorffAlpha,
  krippendorffAlphaSE,
  type Label,
  linearizedSE,
  pabakFromTable,
  pearson,
  pearsonFromTable,
  percentAgreement,
  ROUGH_INTERVAL_UNITS,
  spearman,
  spearmanFromTable,
  wilsonCI,
} from "~/stats";
import { constantRaterReason } from "../honest";
import type { Estimate, TaskData } from "../types";
import { finite, honestEstimate, MISSING_LIKE, proportionEstimate, WILSON, Z95 } from "./intervals";
import { countedMatrix, equallySpaced, pairTables, perUnitAgreement, pooledPairs, pooledTable, reliabilityMatrix } from "./matrix";
import {
  analyticInterval,
  bootstrapGroup,
  type ClusterTables,
  clusterTables,
  defaultEstimate,
  pairClusterTables,
  pooledPairCodes,
  unitSummaryTables,
} from "./resampling";

export interface PairRow {
  a: number;
  b: number;
  aName: string;
  bName: string;
  n: number;
  percentAgreement: number;
  kappa: Estimate;
  pabak: number | null;
  pearson: Estimate | null;
  /** Pearson r with a percentile bootstrap interval over the shared units (beside Fisher's z). */
  pearsonBootstrap: Estimate | null;
}

export interface IaaReport {
  labelKind: TaskData["labelKind"];
  subjectsRated: number;
  subjectsMultiplyRated: number;
  ratings: number;
  annotators: number;
  /** The main table: statistic name → estimate. */
  statistics: { key: string; label: string; estimate: Estimate; note?: string }[];
  pairs: PairRow[];
  /** "pooled" when there are more than two annotators (k-of-pool rotation), "two" otherwise. */
  design: "two" | "pooled";
  designNote: string;
  /** The kappa paradox warning, when raw agreement is high but kappa low because one label dominates. */
  paradox: string | null;
  dominantShare: number;
  dominantLabel: Label | null;
  /** Kappa's standard error (for the planner): [estimate, se, n]. */
  kappaForPlanner: { label: string; value: number; se: number; n: number } | null;
  /**
   * Every statistic the sample-size planner can extrapolate: its SE (analytic, or a
   * bootstrap's — clustered where the labels are), and n in units (not pairs), the
   * quantity that grows when more units are labelled.
   */
  planner: { label: string; value: number; se: number; n: number }[];
  /**
   * What a methods reviewer would want flagged: fewer than ROUGH_INTERVAL_UNITS (60) units with two labels, an
   * annotator who gave one label to every unit, two annotators identical on every shared
   * unit, and labels such as "NA" or "null" that usually mean "no label".
   */
  warnings: string[];
}

type ConstantSide = "a" | "b" | "both" | null;

/**
 * Kappa when one side used one category on every pair (app/stats cohenKappaFromTable
 * constantRater): 0 by construction (p_e = p_o), in every resample too, so its interval is
 * not estimable — said with the reason, found from the margins rather than from a rounded
 * zero-width interval. Null when no side is constant.
 */
function constantKappa(
  k: { kappa: number; n: number; constantRater: ConstantSide },
  who: (side: "a" | "b" | "both") => string,
): Estimate | null {
  if (k.constantRater === null || !finite(k.kappa)) return null;
  return { value: k.kappa, ci: null, n: k.n, se: null, method: `not estimable: ${constantRaterReason(who(k.constantRater))}` };
}

export function interAnnotatorAgreement(data: TaskData): IaaReport {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const m = reliabilityMatrix(data, numeric);
  const seed = data.task.seed;
  const categories = m.categories;
  const q = categories.length;
  const names = new Map(data.annotators.map((a) => [a.id, a.name]));
  const stats: IaaReport["statistics"] = [];

  // The rows counted by unit and category once, shared by the multi-rater coefficients below.
  const counted = countedMatrix(m);
  const design: IaaReport["design"] = m.annotators.length > 2 ? "pooled" : "two";
  // Units are independent draws only when two annotators label units that are each their own item;
  // otherwise (a pool's pairs within a unit, several units of one item) intervals account for the clusters.
  const clusterCount = new Set(m.clusterOf).size;
  const independent = design === "two" && clusterCount === m.rows.length;

  // Every interval below is the default of app/stats agreementInterval — the rule npm run agreement
  // applies too: below SMALL_SAMPLE_UNITS units with two or more labels (counted as their item clusters)
  // the expanded BCa bootstrap over item clusters, from that size the analytic interval (or, for a
  // statistic without an analytic SE, the percentile bootstrap). Percent agreement and PABAK of two
  // annotators on independent units keep the Wilson interval, Pearson's r Fisher's z (both cover at 30 units).
  const perUnitPA = perUnitAgreement(counted);
  const perRowPA = perUnitPA.filter(finite);
  const pa = percentAgreement(counted);
  const unitsWithPairs = perRowPA.length;
  const pairClusters = new Set<number>();
  for (let u = 0; u < perUnitPA.length; u++) if (finite(perUnitPA[u])) pairClusters.add(m.clusterOf[u]);
  const units = pairClusters.size;
  // Bootstraps run only when an interval needs one, each statistic's on the same draws as the others of its
  // tables: the units' additive summaries per item cluster (percent agreement, Fleiss, alpha, AC1) and the
  // pooled pairs' tables per item cluster (the kappas, PABAK, the correlations).
  const summaries = unitSummaryTables(m, counted);
  const pc = pooledPairCodes(m);
  const pairKeys = Array.from(pc.rowOf, (u) => m.clusterOf[u]);
  const values = numeric ? (categories as number[]) : [];
  const kappaOfTable = (weights: "none" | "linear" | "quadratic") => (t: Float64Array) =>
    cohenKappaFromTable({ counts: t, q }, { weights }).kappa;
  const pearsonStat = (t: Float64Array) => pearsonFromTable({ counts: t, q }, values).r;
  const unitStats: Record<string, (t: Float64Array) => number> = numeric
    ? {
        pa: summaries.percentAgreement,
        ordinal: (t) => summaries.krippendorffAlpha(t, "ordinal"),
        interval: (t) => summaries.krippendorffAlpha(t, "interval"),
      }
    : {
        pa: summaries.percentAgreement,
        fleiss: summaries.fleissKappa,
        alpha: (t) => summaries.krippendorffAlpha(t, "nominal"),
        ac1: summaries.gwetAC1,
      };
  const pairStats: Record<string, (t: Float64Array) => number> = numeric
    ? {
        quadratic: kappaOfTable("quadratic"),
        linear: kappaOfTable("linear"),
        pearson: pearsonStat,
        spearman: (t) => spearmanFromTable({ counts: t, q }).rho,
      }
    : q <= 2
      ? { none: kappaOfTable("none"), pabak: (t) => pabakFromTable({ counts: t, q }) }
      : { none: kappaOfTable("none") };
  const grouped = (build: () => ClusterTables, named: Record<string, (t: Float64Array) => number>) => {
    const keys = Object.keys(named);
    const group = bootstrapGroup(build, Object.values(named), seed);
    return (name: string) => group(keys.indexOf(name));
  };
  const unitBoot = grouped(summaries.build, unitStats);
  const pairBoot = grouped(() => pairClusterTables(m, pc, q), pairStats);
  const est = (
    value: number,
    n: number,
    analytic: { se: number; ci: Interval; method: string } | null,
    boot: (method: "percentile" | "bca", level: number) => CountsBootstrapResult,
    extra: { note?: string; range?: [number, number]; zeroReason?: string; over?: "units" } = {},
  ) => defaultEstimate({ value, n, units, analytic, boot, seed, ...extra });

  // Percent agreement is the mean of per-unit agreement (a share in [0, 1]). Two annotators on independent
  // units: the Wilson score interval over the units. Otherwise Gwet's (2014, eq. 5.7) SE of the mean
  // per-unit agreement, clustered by item — a Wilson interval over per-unit shares treats each share as a
  // 0/1 outcome, which overstates its variance with three or more annotators (1.3–1.7× too wide on real data).
  {
    let estimate: Estimate = { ...proportionEstimate(perRowPA), value: pa, method: `${WILSON} (n = units with 2+ labels)` };
    if (!independent && perRowPA.length >= 2) {
      const keys: number[] = [];
      for (let u = 0; u < perUnitPA.length; u++) if (finite(perUnitPA[u])) keys.push(m.clusterOf[u]);
      const se = linearizedSE(perRowPA, pa, { cluster: keys });
      if (finite(se) && se > 0)
        estimate = est(
          pa,
          perRowPA.length,
          {
            se,
            ci: [pa - Z95 * se, pa + Z95 * se],
            method: `analytic SE of the mean per-unit agreement (Gwet 2014), clustered by item (${new Set(keys).size} items); ±1.96·SE`,
          },
          unitBoot("pa"),
          { range: [0, 1] },
        );
      else estimate = { ...estimate, method: `${WILSON} (n = units with 2+ labels; every unit agrees to the same degree, so the SE is 0)` };
    }
    stats.push({ key: "percentAgreement", label: "Percent agreement", estimate });
  }

  const designNote =
    design === "pooled"
      ? `${m.annotators.length} annotators share the units (k = ${data.task.overlap} per unit, rotating across the pool), so Cohen's kappa is reported per annotator pair below; the pooled-pairs kappa treats every two labels of a unit as one pair, ordered by annotator id. Fleiss' kappa, Krippendorff's alpha and Gwet's AC1 handle the pool directly.`
      : "Two annotators labelled the units; Cohen's kappa compares them directly.";
  let kappaForPlanner: IaaReport["kappaForPlanner"] = null;

  // Who a constant side of the pooled-pairs table is (rows: the annotator with the lower id).
  const byId = [...m.annotators].sort((x, y) => x - y).map((id) => names.get(id) ?? String(id));
  const whoPooled = (side: "a" | "b" | "both") =>
    design === "two"
      ? side === "both"
        ? `${byId[0]} and ${byId[1]}`
        : (byId[side === "a" ? 0 : 1] ?? "an annotator")
      : `the annotators on the ${side === "b" ? "second" : "first"} side of the pooled pairs`;
  const pre = design === "pooled" ? " (pooled pairs)" : "";
  /**
   * Cohen's kappa (plain or weighted) of the pooled pairs with its default interval: the analytic one is the
   * Fleiss-Cohen-Everitt SE for two annotators on independent units, else the cluster-robust SE with a unit's
   * (item's) pairs as one cluster (app/stats cohenKappaClusteredSE; npm run agreement's pooledKappa).
   */
  const kappaOf = (weights: "none" | "linear" | "quadratic"): Estimate => {
    const k = cohenKappaFromTable({ counts: pooledTable(m), q }, { weights });
    const constant = constantKappa(k, whoPooled);
    if (constant) return constant;
    let analytic: { se: number; ci: Interval; method: string };
    if (independent) analytic = { se: k.se, ci: k.ci, method: "asymptotic SE (Fleiss, Cohen & Everitt 1969)" };
    else {
      const c = cohenKappaClusteredSE(pc.a, pc.b, pairKeys, q, { weights });
      analytic = {
        se: c.se,
        ci: c.ci,
        method: `cluster-robust SE (a unit's pairs as one cluster, ${c.clusters} items; Fleiss-Cohen-Everitt influence values), ±1.96·SE`,
      };
    }
    return est(k.kappa, k.n, analytic, pairBoot(weights), { note: independent ? undefined : "a unit's pairs move together" });
  };
  if (!numeric) {
    const pooled = pooledTable(m);
    const kappaEst = kappaOf("none");
    stats.push({ key: "cohenKappa", label: `Cohen's kappa${pre}`, estimate: kappaEst });
    // The planner scales the SE with the number of units (items resampled), not of pairs.
    if (finite(kappaEst.value) && kappaEst.se != null && finite(kappaEst.se))
      kappaForPlanner = { label: stats[stats.length - 1].label, value: kappaEst.value, se: kappaEst.se, n: unitsWithPairs };
    // fleissKappaSE and gwetSE compute the coefficient with the same arithmetic as fleissKappa and gwetAC1
    // (bit-identical values, checked in tests), so each is computed once.
    const fkr = fleissKappaSE(counted, { cluster: m.clusterOf });
    stats.push({
      key: "fleissKappa",
      label: "Fleiss' kappa",
      estimate: est(fkr.value, fkr.n, analyticInterval(fkr.value, fkr), unitBoot("fleiss")),
    });
    const ka = krippendorffAlpha(counted, { level: "nominal" }).alpha;
    const kar = krippendorffAlphaSE(counted, { cluster: m.clusterOf });
    stats.push({
      key: "krippendorffAlpha",
      label: "Krippendorff's alpha (nominal)",
      estimate: est(ka, kar.n, analyticInterval(ka, kar), unitBoot("alpha")),
    });
    const ac1r = gwetSE(counted, { cluster: m.clusterOf });
    stats.push({
      key: "gwetAC1",
      label: "Gwet's AC1",
      estimate: est(ac1r.value, ac1r.n, analyticInterval(ac1r.value, ac1r), unitBoot("ac1")),
    });
    const pairsN = pc.a.length;
    if (q <= 2 && pairsN > 0) {
      // PABAK = 2·po − 1 on the pooled pairs; two annotators on independent units: its CI follows from the
      // Wilson interval of po (agreeing pairs of all pairs). Pooled pairs: a bootstrap over item clusters.
      const value = pabakFromTable({ counts: pooled, q });
      let agree = 0;
      for (let k = 0; k < q; k++) agree += pooled[k * q + k];
      const po = wilsonCI(agree, pairsN);
      stats.push({
        key: "pabak",
        label: `PABAK${pre}`,
        estimate: independent
          ? { value, ci: [2 * po[0] - 1, 2 * po[1] - 1], n: pairsN, method: `2·po − 1, po by ${WILSON}` }
          : est(value, pairsN, null, pairBoot("pabak"), { note: "a unit's pairs move together" }),
      });
    }
  } else {
    const quadEst = kappaOf("quadratic");
    stats.push({ key: "weightedKappaQuadratic", label: `Weighted kappa, quadratic${pre}`, estimate: quadEst });
    stats.push({ key: "weightedKappaLinear", label: `Weighted kappa, linear${pre}`, estimate: kappaOf("linear") });
    if (finite(quadEst.value) && quadEst.se != null && finite(quadEst.se))
      kappaForPlanner = { label: stats[stats.length - 2].label, value: quadEst.value, se: quadEst.se, n: unitsWithPairs };
    // Ordinal alpha has no analytic SE: a bootstrap of item clusters, each resample's alpha from the sum of
    // its clusters' coincidence matrices (app/stats coincidenceMatrix, krippendorffAlphaFromCoincidences).
    const ord = krippendorffAlpha(counted, { level: "ordinal" }).alpha;
    stats.push({
      key: "krippendorffAlphaOrdinal",
      label: "Krippendorff's alpha (ordinal)",
      estimate: est(ord, m.rows.length, null, unitBoot("ordinal")),
    });
    // On an equally spaced scale (1–5 scores) interval alpha is irrCAC's quadratic-weighted alpha, which has
    // an analytic SE; on another scale, the bootstrap alone.
    const kiv = krippendorffAlpha(m.rows, { level: "interval" }).alpha;
    const kivr = equallySpaced(categories) ? krippendorffAlphaSE(counted, { weights: "quadratic", cluster: m.clusterOf }) : null;
    stats.push({
      key: "krippendorffAlphaInterval",
      label: "Krippendorff's alpha (interval)",
      estimate: est(kiv, kivr ? kivr.n : m.rows.length, kivr ? analyticInterval(kiv, kivr) : null, unitBoot("interval")),
    });
    const pp = pooledPairs(m);
    const xa = pp.a as number[];
    const xb = pp.b as number[];
    if (xa.length >= 3) {
      const r = pearson(xa, xb);
      // Fisher's z assumes independent bivariate-normal pairs; pooled pairs (and skewed Likert scores) get the cluster bootstrap.
      stats.push({
        key: "pearson",
        label: `Pearson r${pre}`,
        estimate: independent
          ? honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" })
          : est(r.r, r.n, null, pairBoot("pearson"), { note: "a unit's pairs move together" }),
      });
      if (independent && finite(r.r))
        // Beside Fisher's z, the unit bootstrap (Fisher's z is too narrow on skewed Likert scores).
        stats.push({
          key: "pearsonBootstrap",
          label: "Pearson r (unit bootstrap)",
          estimate: est(r.r, r.n, null, pairBoot("pearson"), { over: "units" }),
        });
      // Each resample's rho from the sum of its item clusters' q × q tables of score pairs
      // (app/stats spearmanFromTable: spearman's figure for the pairs the table counts).
      const rho = spearman(xa, xb).rho;
      stats.push({
        key: "spearman",
        label: `Spearman rho${pre}`,
        estimate: est(rho, xa.length, null, pairBoot("spearman"), { note: independent ? undefined : "a unit's pairs move together" }),
      });
    }
  }

  // No interval leaves its statistic's range, and none is zero-width.
  for (const st of stats) st.estimate = honestEstimate(st.estimate, st.key === "percentAgreement" ? [0, 1] : [-1, 1]);

  // Pairwise table: per pair of annotators, the units both rated, as a contingency table; kappa and the
  // Pearson bootstrap with the default interval over the pair's shared units (each unit drawn alone).
  const pairs: PairRow[] = [];
  for (let i = 0; i < m.annotators.length; i++)
    for (let j = i + 1; j < m.annotators.length; j++) {
      const t = pairTables(m, i, j);
      if (t.a.length === 0) continue;
      const weights = numeric ? "quadratic" : "none";
      const k = cohenKappaFromTable({ counts: t.table, q }, { weights });
      const shared = grouped(
        () =>
          clusterTables({
            rows: t.a.length,
            clusterOf: (u) => u,
            size: q * q,
            table: (us) => {
              const tt = new Float64Array(q * q);
              for (const u of us) tt[t.a[u] * q + t.b[u]]++;
              return tt;
            },
          }),
        numeric ? { kappa: kappaOfTable(weights), pearson: pearsonStat } : { kappa: kappaOfTable(weights) },
      );
      const value = (codes: number[]) => codes.map((c) => categories[c] as number);
      const r = numeric && t.a.length >= 3 ? pearson(value(t.a), value(t.b)) : null;
      const aName = names.get(m.annotators[i]) ?? String(m.annotators[i]);
      const bName = names.get(m.annotators[j]) ?? String(m.annotators[j]);
      const pairEstimate = (v: number, analytic: { se: number; ci: Interval; method: string } | null, name: string) =>
        defaultEstimate({ value: v, n: t.a.length, units: t.a.length, analytic, boot: shared(name), seed, over: "units" });
      pairs.push({
        a: m.annotators[i],
        b: m.annotators[j],
        aName,
        bName,
        n: t.a.length,
        percentAgreement: percentAgreement(t.counted),
        kappa:
          constantKappa(k, (side) => (side === "both" ? `${aName} and ${bName}` : side === "a" ? aName : bName)) ??
          pairEstimate(k.kappa, { se: k.se, ci: k.ci, method: "asymptotic SE (Fleiss, Cohen & Everitt 1969)" }, "kappa"),
        pabak: !numeric && q <= 2 ? pabakFromTable({ counts: t.table, q }) : null,
        pearson: r ? honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" }) : null,
        // Beside Fisher's z, a bootstrap over the shared units (their q × q tables of score pairs).
        pearsonBootstrap: r && finite(r.r) ? pairEstimate(r.r, null, "pearson") : null,
      });
    }

  // Kappa paradox: one label dominates, raw agreement high, kappa low.
  const counts = new Map<Label, number>();
  for (const v of data.ratings.value) counts.set(v, (counts.get(v) ?? 0) + 1);
  let dominantLabel: Label | null = null;
  let dominantN = 0;
  for (const [v, n] of counts)
    if (n > dominantN) {
      dominantLabel = v;
      dominantN = n;
    }
  const dominantShare = data.ratings.length ? dominantN / data.ratings.length : NaN;
  const kappaStat = stats.find((s) => s.key === "fleissKappa" || s.key === "weightedKappaQuadratic");
  let paradox: string | null = null;
  if (!numeric && kappaStat && pa >= 0.8 && dominantShare >= 0.8 && finite(kappaStat.estimate.value) && kappaStat.estimate.value < 0.6) {
    const ac1 = stats.find((s) => s.key === "gwetAC1")?.estimate.value;
    const pb = stats.find((s) => s.key === "pabak")?.estimate.value;
    paradox =
      `Raw agreement is high (${(pa * 100).toFixed(1)}%) but kappa is low (${kappaStat.estimate.value.toFixed(3)}) because one label dominates ` +
      `("${String(dominantLabel)}" is ${(dominantShare * 100).toFixed(1)}% of all labels), so chance agreement is high — the kappa paradox. ` +
      `Gwet's AC1 (${ac1 !== undefined ? ac1.toFixed(3) : "n/a"})${pb !== undefined ? ` and PABAK (${pb.toFixed(3)})` : ""} do not collapse under skewed prevalence; report them beside kappa.`;
  }

  const warnings: string[] = [];
  // Below ROUGH_INTERVAL_UNITS even the default intervals covered less than 0.93 in a simulated design (npm run bench:coverage).
  if (perRowPA.length < ROUGH_INTERVAL_UNITS)
    warnings.push(
      `Only ${perRowPA.length} unit${perRowPA.length === 1 ? " has" : "s have"} two or more labels (fewer than ${ROUGH_INTERVAL_UNITS}): every interval is rough. ` +
        "In simulations where one category had 7–10% prevalence, even the default intervals of kappa and alpha held the true value only 85–93% of the time at 30–50 units (npm run bench:coverage).",
    );
  m.codes.forEach((column, g) => {
    let only = -2;
    let rated = 0;
    for (let u = 0; u < column.length; u++) {
      const k = column[u];
      if (k < 0) continue;
      rated++;
      only = only === -2 || only === k ? k : -1;
    }
    if (rated > 1 && only >= 0)
      warnings.push(
        `${names.get(m.annotators[g]) ?? m.annotators[g]} gave the same label (${String(categories[only])}) to all ${rated} units they labelled.`,
      );
  });
  for (const p of pairs)
    if (p.n > 1 && p.percentAgreement === 1)
      warnings.push(`${p.aName} and ${p.bName} gave identical labels on all ${p.n} units both labelled.`);
  for (const c of categories) {
    if (typeof c === "string" && MISSING_LIKE.has(c.trim()))
      warnings.push(`The label "${c}" is counted as a category; if it means "no label", remove those labels before computing agreement.`);
  }

  const planner: IaaReport["planner"] = [];
  for (const st of stats) {
    const e = st.estimate;
    if (e.se == null || !finite(e.se) || !finite(e.value) || !e.ci) continue;
    if (!/^(analytic SE|asymptotic SE|cluster-robust SE|percentile bootstrap|BCa bootstrap)/.test(e.method)) continue;
    if (st.key === "pearsonBootstrap") continue; // Pearson r is planned once (from its first interval)
    const pooledPairsStat = ["cohenKappa", "weightedKappaQuadratic", "weightedKappaLinear", "pabak", "pearson", "spearman"].includes(
      st.key,
    );
    planner.push({ label: st.label, value: e.value, se: e.se, n: pooledPairsStat ? unitsWithPairs : e.n });
  }

  return {
    planner,
    warnings,
    labelKind: data.labelKind,
    subjectsRated: m.rows.length,
    subjectsMultiplyRated: perRowPA.length,
    ratings: data.ratings.length,
    annotators: m.annotators.length,
    statistics: stats,
    pairs,
    design,
    designNote,
    paradox,
    dominantShare,
    dominantLabel,
    kappaForPlanner,
  };
}
