/**
 * Coverage of the corrected run-score interval (issue 36, item 9), by simulation.
 *
 * A finite population of N = 1,000 judged units of one model × turn stratum, with a human truth Y and a
 * judge verdict f per unit, in two kinds:
 *   - skewed: Y ~ Bernoulli(0.80); the judge says Yes to every true Yes and to 90% of the true No
 *     (Yes 98%; every error is a lenient one);
 *   - balanced: Y ~ Bernoulli(0.52); the judge agrees with Y with probability 0.85 (errors both ways).
 * Each replicate draws a simple random sample of n units (the stratified plan with n per stratum: π = n/N),
 * labels them with Y, and computes the corrected share of Yes (in %) with the run page's own estimator,
 * `differenceEstimate` (app/runs/protocols/calibration.ts), whose interval is rectifierCI's. The target is
 * the population's true share 100·mean(Y).
 *
 * The other methods are the candidates measured against it, computed from the same samples:
 *   - "± 1.96·SE": the interval shown before (the estimator's own design SE, clipped to 0–100);
 *   - "t(n−1), +1 error": the t quantile with n − 1 degrees of freedom and the SE with one pseudo-error
 *     added to Σ(y − f)² (a variance floor, after Agresti & Min 2005's pseudo-counts);
 *   - "Jeffreys MOVER": the Jeffreys interval (Beta(k + ½, n − k + ½) quantiles; Brown, Cai & DasGupta
 *     2001) for each direction's error share, combined by MOVER as the chosen method does;
 *   - "bootstrap": the percentile bootstrap of the labelled errors (400 resamples each; it has zero width
 *     whenever every labelled unit agrees with the judge, so its resample count does not change that).
 */
import { moverDifference, quantileSorted, seededRandom } from "../../app/stats/index.js";
import { differenceEstimate, type Draw, PERCENT, type Term } from "../../app/runs/protocols/calibration.js";

const N = 1000;
const SIZES = [10, 20, 40, 80];
/** Below the plan's default minimum of 10 per model: shown to size the per-stratum warning. */
const SMALL = [2, 5];
const CHOSEN = "Wilson MOVER (shown)";
const METHODS = [CHOSEN, "± 1.96·SE (before)", "t(n−1), +1 error", "Jeffreys MOVER", "bootstrap"] as const;
type Method = (typeof METHODS)[number];

type Judge = { kind: "skewed" | "balanced"; y: Uint8Array; f: Uint8Array };

function population(kind: Judge["kind"], seed: number): Judge {
  const rand = seededRandom(seed);
  const y = new Uint8Array(N);
  const f = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    if (kind === "skewed") {
      y[i] = rand() < 0.8 ? 1 : 0;
      f[i] = y[i] === 1 || rand() < 0.9 ? 1 : 0;
    } else {
      y[i] = rand() < 0.52 ? 1 : 0;
      f[i] = rand() < 0.85 ? y[i] : 1 - y[i];
    }
  }
  return { kind, y, f };
}

// Student t quantiles at 97.5% (df = n − 1 for the sizes simulated), from standard tables.
const T975: Record<number, number> = { 1: 12.706205, 4: 2.776445, 9: 2.262157, 19: 2.093024, 39: 2.022691, 79: 1.990063 };

/** ln Γ(x), Lanczos approximation (g = 7, n = 9), for x > 0. */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const xx = x - 1;
  let s = c[0];
  for (let i = 1; i < 9; i++) s += c[i] / (xx + i);
  const t = xx + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (xx + 0.5) * Math.log(t) - t + Math.log(s);
}

/** Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz), using the symmetry for x > (a+1)/(a+b+2). */
function betaCdf(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - betaCdf(1 - x, b, a);
  const front = Math.exp(a * Math.log(x) + b * Math.log(1 - x) - (lnGamma(a) + lnGamma(b) - lnGamma(a + b))) / a;
  const tiny = 1e-300;
  let f = 1;
  let c = 1;
  let d = 0;
  for (let m = 0; m <= 300; m++) {
    for (const odd of [false, true]) {
      let num: number;
      if (m === 0 && !odd) num = 1;
      else if (!odd) num = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
      else num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = Math.abs(d) < tiny ? tiny : d;
      c = 1 + num / c;
      c = Math.abs(c) < tiny ? tiny : c;
      d = 1 / d;
      f *= c * d;
    }
    if (Math.abs(c * d - 1) < 1e-14) break;
  }
  return front * (f - 1);
}

/** Quantile of Beta(a, b) by bisection on its CDF. */
function betaQuantile(p: number, a: number, b: number): number {
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (betaCdf(mid, a, b) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Jeffreys interval for k of n (the limit is 0 at k = 0 and 1 at k = n, Brown, Cai & DasGupta 2001, §4.1.2). */
function jeffreys(k: number, n: number): [number, number] {
  return [k === 0 ? 0 : betaQuantile(0.025, k + 0.5, n - k + 0.5), k === n ? 1 : betaQuantile(0.975, k + 0.5, n - k + 0.5)];
}

type Tally = { covered: number; widths: number[]; zero: number };

/**
 * Runs the simulation and returns a markdown table: judge kind × labelled n × method, with the share of
 * replicates whose interval holds the true share, the median width (points of %) and the share of zero-width
 * intervals.
 */
export async function runScoreCoverage(opts: { replicates: number; seed: number }): Promise<string> {
  const reps = opts.replicates;
  const lines = [
    `Corrected run-score interval (share of Yes, %), ${reps} replicates, N = ${N}, simple random sample of n (π = n/N); seed ${opts.seed}.`,
    "Skewed judge: truth Bernoulli(0.80), the judge says Yes to every true Yes and 90% of true No (Yes 98%). Balanced judge: truth Bernoulli(0.52), judge 85% right.",
    `n = 2 and 5 are below the plan's default minimum of 10 per model (shown to size the per-stratum warning). "${CHOSEN}" is what the run pages show.`,
    "",
    "| judge | labelled n | method | coverage | median width | zero width |",
    "| --- | ---: | --- | ---: | ---: | ---: |",
  ];
  const worst = { coverage: 1, at: "" };
  for (const [j, kind] of (["skewed", "balanced"] as const).entries()) {
    const pop = population(kind, opts.seed * 2 + j + 1);
    const truth = (100 * pop.y.reduce((s, v) => s + v, 0)) / N;
    const judgeYes = (100 * pop.f.reduce((s, v) => s + v, 0)) / N;
    const stratum = "model\u00001\u0000";
    const terms: Term[] = Array.from({ length: N }, (_, i) => ({ key: `${i}/-`, a: 100 / N, f: pop.f[i], stratum }));
    lines.push(`| ${kind} (truth ${truth.toFixed(1)}%, judge Yes ${judgeYes.toFixed(1)}%) | | | | | |`);
    for (const n of [...SMALL, ...SIZES]) {
      const rand = seededRandom(opts.seed * 1000 + j * 100 + n);
      const boot = seededRandom(opts.seed * 1000 + j * 100 + n + 50);
      const tally = new Map<Method, Tally>(METHODS.map((m) => [m, { covered: 0, widths: [], zero: 0 }]));
      const record = (m: Method, lo: number, hi: number) => {
        const t = tally.get(m)!;
        if (lo - 1e-9 <= truth && truth <= hi + 1e-9) t.covered++;
        t.widths.push(hi - lo);
        if (hi - lo < 1e-9) t.zero++;
      };
      const idx = Int32Array.from({ length: N }, (_, i) => i);
      const pi = n / N;
      const clip = (x: number) => Math.min(100, Math.max(0, x));
      for (let rep = 0; rep < reps; rep++) {
        // Partial Fisher–Yates: the first n of idx are the sample.
        for (let i = 0; i < n; i++) {
          const k = i + Math.floor(rand() * (N - i));
          const t = idx[i];
          idx[i] = idx[k];
          idx[k] = t;
        }
        const draws = new Map<string, Draw>();
        const e: number[] = [];
        for (let i = 0; i < n; i++) {
          const u = idx[i];
          draws.set(`${u}/-`, { pi, stratum, y: pop.y[u], cluster: `u${u}` });
          e.push(pop.y[u] - pop.f[u]);
        }
        const r = differenceEstimate(terms, draws, PERCENT).corrected!;
        record(CHOSEN, r.ci[0], r.ci[1]);
        record("± 1.96·SE (before)", clip(r.unclipped - 1.96 * r.se), clip(r.unclipped + 1.96 * r.se));
        // The same SE with one pseudo-error of one unit: Σ(1 − π)·(a·e/π)² + (1 − π)·(a/π)².
        const ss = e.reduce((s, x) => s + x * x, 0) + 1;
        const seFloor = Math.sqrt((1 - pi) * ss) * (100 / N / pi);
        const tq = T975[n - 1];
        record("t(n−1), +1 error", clip(r.unclipped - tq * seFloor), clip(r.unclipped + tq * seFloor));
        const kp = e.filter((x) => x > 0).length;
        const km = e.filter((x) => x < 0).length;
        // The two shares of one multinomial sample: correlation −√(p⁺p⁻/((1 − p⁺)(1 − p⁻))).
        const [pp, pm] = [kp / n, km / n];
        const rho = pp > 0 && pm > 0 && pp < 1 && pm < 1 ? -Math.sqrt((pp * pm) / ((1 - pp) * (1 - pm))) : 0;
        const [jl, ju] = moverDifference(pp, jeffreys(kp, n), pm, jeffreys(km, n), rho);
        const raw = r.unclipped - (100 * (kp - km)) / n;
        record("Jeffreys MOVER", clip(raw + 100 * jl), clip(raw + 100 * ju));
        const means: number[] = [];
        for (let b = 0; b < 400; b++) {
          let s = 0;
          for (let i = 0; i < n; i++) s += e[Math.floor(boot() * n)];
          means.push(s / n);
        }
        means.sort((a, b) => a - b);
        record("bootstrap", clip(raw + 100 * quantileSorted(means, 0.025)), clip(raw + 100 * quantileSorted(means, 0.975)));
      }
      for (const m of METHODS) {
        const t = tally.get(m)!;
        const cov = t.covered / reps;
        if (m === CHOSEN && SIZES.includes(n) && cov < worst.coverage) {
          worst.coverage = cov;
          worst.at = `${kind}, n = ${n}`;
        }
        const w = Float64Array.from(t.widths).sort();
        lines.push(
          `| ${kind} | ${n} | ${m} | ${cov.toFixed(3)} | ${quantileSorted(w, 0.5).toFixed(1)} | ${(t.zero / reps).toFixed(3)} |`,
        );
      }
    }
  }
  lines.push("", `Lowest coverage of "${CHOSEN}" at n = 10–80: ${worst.coverage.toFixed(3)} (${worst.at}); goal ≥ 0.94.`);
  return lines.join("\n");
}
