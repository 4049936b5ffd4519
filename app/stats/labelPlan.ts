import { seededRandom } from "./seededRandom";

/**
 * Which units to label next, and the probability π_i with which each was chosen (the corrected-score estimators
 * need it: app/stats/activePpi.ts, classicalMean.ts). Every plan draws exactly `budget` units (fixed size), so the
 * π sum to the budget:
 *
 *   - uniform: simple random sampling, π = B/N.
 *   - proportional: stratified simple random sampling with n_h ∝ N_h (largest remainders), π = n_h/N_h.
 *   - neyman: stratified with n_h ∝ N_h·S_h (Neyman 1934; Cochran 1977, eq. 5.26), S_h the spread of the judge's
 *     error Y − f in stratum h estimated from the burn-in labels, with a pseudo-count so that a stratum where no
 *     error was seen yet still gets labels (S_h² ≥ p̃(1 − p̃), p̃ = (errors + ½)/(labels + 1), after Agresti &
 *     Coull 1998); n_h ≤ N_h, at least 1 per stratum while the budget allows.
 *   - active: π_i ∝ a mix of the uniform share and the unit's uncertainty score u_i (Zrnic & Candès 2024,
 *     "Active Statistical Inference", §4: sampling by uncertainty, mixed with uniform so that no π is tiny and the
 *     inverse-probability weights stay bounded): π_i = B·(γ/N + (1 − γ)·u_i/Σu), γ = `mix` (default ½), capped at 1
 *     with the excess given to the rest; drawn by randomised systematic πps sampling (Goodman & Kish 1950; Tillé
 *     2006, §7.2), which takes exactly B units with these π.
 *   - auto: from the burn-in labels, the variance each plan would give (the Poisson-design variance
 *     (1/N²)·Σ_i (1 − π_i)/π_i·E[(Y_i − f_i)²], E estimated per stratum or per uncertainty band) and the plan with
 *     the smallest, but a plan other than uniform (proportional with strata) only when its estimated variance is
 *     below 0.9 × uniform's and the burn-in has at least 20 labels: uncertainty sampling with a score weakly tied to
 *     the judge's errors makes the weights explode, and the guard keeps auto within noise of uniform then.
 *     Without burn-in labels auto is uniform (proportional with strata), and says so.
 */

export const SAMPLERS = ["uniform", "proportional", "neyman", "active", "auto"] as const;
export type Sampler = (typeof SAMPLERS)[number];

export interface PlanUnit {
  /** The judge's score on [0, 1] (Yes = 1); used with burn-in labels. */
  f?: number;
  /** The unit's stratum (proportional, neyman). */
  stratum?: string;
  /** The judge's uncertainty about the unit (active): ≥ 0, larger = less sure. */
  uncertainty?: number;
  /** A burn-in label already given (0–1), if any. */
  y?: number | null;
}

export interface LabelPlan {
  sampler: Exclude<Sampler, "auto">;
  /** π_i for every unit, in input order. */
  pi: number[];
  /** Whether unit i is drawn. */
  selected: boolean[];
  /** The number drawn is exactly the budget (every plan here is of fixed size). */
  exactSize: true;
  notes: string[];
  /** auto: each candidate's estimated variance of the corrected mean (relative units), when burn-in allowed it. */
  variances?: Partial<Record<Exclude<Sampler, "auto">, number>>;
}

/** The guard of auto: another plan must promise at most this share of uniform's variance. */
export const AUTO_MARGIN = 0.9;
/** auto needs this many burn-in labels before it trusts a variance estimate. */
export const AUTO_MIN_BURN_IN = 20;

export function labelPlan(units: readonly PlanUnit[], o: { budget: number; sampler: Sampler; seed: number; mix?: number }): LabelPlan {
  const fn = "labelPlan";
  const N = units.length;
  const B = o.budget;
  if (!Number.isInteger(B) || B < 1) throw new Error(`${fn}: the budget must be a whole number of at least 1`);
  if (B > N) throw new Error(`${fn}: the budget ${B} is larger than the ${N} units`);
  const mix = o.mix ?? 0.5;
  if (!(mix > 0 && mix <= 1)) throw new Error(`${fn}: the mix with uniform must be in (0, 1]`);
  const rand = seededRandom(o.seed);
  const hasStrata = units.some((u) => u.stratum !== undefined);
  const notes: string[] = [];

  const build = (sampler: Exclude<Sampler, "auto">): number[] => {
    if (sampler === "uniform") return units.map(() => B / N);
    if (sampler === "active") {
      const u = units.map((x, i) => {
        const v = x.uncertainty;
        if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
          throw new Error(`${fn}: unit ${i} has no uncertainty score (a number ≥ 0)`);
        return v;
      });
      const su = u.reduce((t, x) => t + x, 0);
      const shares = u.map((x) => mix / N + (su > 0 ? ((1 - mix) * x) / su : (1 - mix) / N));
      return capAtOne(shares, B);
    }
    const alloc = allocate(sampler);
    return units.map((x) => {
      const h = strataOf().get(x.stratum ?? "")!;
      return alloc.get(x.stratum ?? "")! / h.N;
    });
  };

  let cachedStrata: Map<string, { N: number; labels: number; errors: number; sq: number }> | null = null;
  function strataOf() {
    if (cachedStrata) return cachedStrata;
    cachedStrata = new Map();
    for (const u of units) {
      const h = cachedStrata.get(u.stratum ?? "") ?? { N: 0, labels: 0, errors: 0, sq: 0 };
      h.N++;
      if (u.y !== null && u.y !== undefined && typeof u.f === "number") {
        h.labels++;
        const d = u.y - u.f;
        h.sq += d * d;
        if (Math.abs(d) > 1e-9) h.errors++;
      }
      cachedStrata.set(u.stratum ?? "", h);
    }
    return cachedStrata;
  }
  /** Neyman's S_h with the pseudo-count floor. */
  const spread = (h: { labels: number; errors: number; sq: number }) => {
    const p = (h.errors + 0.5) / (h.labels + 1);
    const floor = p * (1 - p);
    return Math.sqrt(Math.max(floor, h.labels > 1 ? h.sq / h.labels : floor));
  };
  function allocate(sampler: "proportional" | "neyman"): Map<string, number> {
    const strata = strataOf();
    const weight = new Map<string, number>();
    for (const [k, h] of strata) weight.set(k, sampler === "neyman" ? h.N * spread(h) : h.N);
    return largestRemainder(weight, strata, B);
  }

  const draw = (sampler: Exclude<Sampler, "auto">, pi: number[]): boolean[] =>
    sampler === "uniform" ? srs(N, B, rand) : sampler === "active" ? systematicPps(pi, rand) : stratifiedSrs(units, pi, rand);

  let sampler: Exclude<Sampler, "auto">;
  let variances: LabelPlan["variances"];
  if (o.sampler !== "auto") {
    sampler = o.sampler;
    if ((sampler === "proportional" || sampler === "neyman") && !hasStrata) throw new Error(`${fn}: the ${sampler} plan needs strata`);
    if (sampler === "neyman") {
      const without = [...strataOf().values()].filter((h) => h.labels < 2).length;
      if (without)
        notes.push(`${without} stratum(s) with fewer than 2 burn-in labels: their spread is the pseudo-count's (p̃ = ½ error in 1 label)`);
    }
  } else {
    const base: Exclude<Sampler, "auto"> = hasStrata ? "proportional" : "uniform";
    const burnIn = units.filter((u) => u.y !== null && u.y !== undefined && typeof u.f === "number");
    if (burnIn.length < AUTO_MIN_BURN_IN) {
      sampler = base;
      notes.push(
        burnIn.length === 0
          ? `auto: no burn-in labels, so ${base} (give --labels, the labels so far, to let it choose)`
          : `auto: ${burnIn.length} burn-in labels are fewer than ${AUTO_MIN_BURN_IN}, so ${base}`,
      );
    } else {
      const candidates: Exclude<Sampler, "auto">[] = [base];
      if (hasStrata) candidates.push("neyman");
      if (units.every((u) => typeof u.uncertainty === "number" && Number.isFinite(u.uncertainty) && u.uncertainty >= 0))
        candidates.push("active");
      variances = {};
      for (const c of candidates) variances[c] = planVariance(units, build(c));
      sampler = base;
      for (const c of candidates)
        if (c !== base && variances[c]! < AUTO_MARGIN * variances[base]! && variances[c]! < variances[sampler]!) sampler = c;
      notes.push(
        `auto chose ${sampler}: estimated variance ${candidates.map((c) => `${c} ${variances![c]!.toPrecision(3)}`).join(", ")} (another plan than ${base} only below ${AUTO_MARGIN} × its variance)`,
      );
    }
  }
  const pi = build(sampler);
  return { sampler, pi, selected: draw(sampler, pi), exactSize: true, notes, ...(variances ? { variances } : {}) };

  /**
   * The Poisson-design variance (1/N²)·Σ (1 − π_i)/π_i·m_i of a plan, m_i = E[(Y − f)²] estimated from the burn-in:
   * per stratum with strata, and per band of the uncertainty score (its quartiles) when there is one, each with
   * the pseudo-count of `spread` so that an unseen error is not taken as impossible.
   */
  function planVariance(us: readonly PlanUnit[], pi: number[]): number {
    const key = bandsOf(us);
    const cells = new Map<string, { labels: number; errors: number; sq: number }>();
    us.forEach((u, i) => {
      const k = key(i);
      const c = cells.get(k) ?? { labels: 0, errors: 0, sq: 0 };
      if (u.y !== null && u.y !== undefined && typeof u.f === "number") {
        const d = u.y - u.f;
        c.labels++;
        c.sq += d * d;
        if (Math.abs(d) > 1e-9) c.errors++;
      }
      cells.set(k, c);
    });
    let v = 0;
    us.forEach((_, i) => {
      const s = spread(cells.get(key(i))!);
      v += ((1 - pi[i]) / pi[i]) * s * s;
    });
    return v / (N * N);
  }
}

/** Cells for planVariance: stratum × uncertainty quartile. */
function bandsOf(us: readonly PlanUnit[]): (i: number) => string {
  const scores = us.map((u) => u.uncertainty);
  const known = scores.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  const cuts =
    known.length === us.length
      ? (() => {
          const s = [...known].sort((a, b) => a - b);
          return [0.25, 0.5, 0.75].map((q) => s[Math.floor(q * (s.length - 1))]);
        })()
      : null;
  return (i) => `${us[i].stratum ?? ""}\u0000${cuts ? cuts.filter((c) => (scores[i] as number) > c).length : 0}`;
}

/** π_i = B·share_i, with any π above 1 set to 1 and its excess spread over the others in proportion (repeated). */
function capAtOne(shares: number[], B: number): number[] {
  const pi = new Array<number>(shares.length).fill(0);
  const capped = new Array<boolean>(shares.length).fill(false);
  let left = B;
  for (;;) {
    const free = shares.reduce((t, s, i) => (capped[i] ? t : t + s), 0);
    let changed = false;
    shares.forEach((s, i) => {
      if (capped[i]) return;
      pi[i] = (left * s) / free;
      if (pi[i] >= 1) {
        pi[i] = 1;
        capped[i] = true;
        left--;
        changed = true;
      }
    });
    if (!changed) return pi;
  }
}

/** Largest-remainder allocation of B over strata by weight, each n_h ≤ N_h, at least 1 per stratum while B allows. */
function largestRemainder(weight: Map<string, number>, strata: Map<string, { N: number }>, B: number): Map<string, number> {
  const keys = [...strata.keys()];
  const n = new Map<string, number>(keys.map((k) => [k, 0]));
  let left = B;
  // One each first (a stratum never left without labels), the largest strata first.
  for (const k of [...keys].sort((a, b) => weight.get(b)! - weight.get(a)!)) {
    if (left === 0) break;
    n.set(k, 1);
    left--;
  }
  while (left > 0) {
    const open = keys.filter((k) => n.get(k)! < strata.get(k)!.N);
    const total = open.reduce((t, k) => t + weight.get(k)!, 0);
    const want = open.map((k) => ({ k, ideal: total > 0 ? (left * weight.get(k)!) / total : left / open.length }));
    let given = 0;
    for (const w of want) {
      const add = Math.min(Math.floor(w.ideal), strata.get(w.k)!.N - n.get(w.k)!);
      n.set(w.k, n.get(w.k)! + add);
      given += add;
    }
    left -= given;
    if (left > 0 && given === 0) {
      // Hand out the rest one by one, largest remainder first.
      want.sort((a, b) => b.ideal - Math.floor(b.ideal) - (a.ideal - Math.floor(a.ideal)) || weight.get(b.k)! - weight.get(a.k)!);
      for (const w of want) {
        if (left === 0) break;
        if (n.get(w.k)! < strata.get(w.k)!.N) {
          n.set(w.k, n.get(w.k)! + 1);
          left--;
        }
      }
    }
  }
  return n;
}

function srs(N: number, B: number, rand: () => number): boolean[] {
  const idx = Array.from({ length: N }, (_, i) => i);
  for (let i = 0; i < B; i++) {
    const j = i + Math.floor(rand() * (N - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const out = new Array<boolean>(N).fill(false);
  for (let i = 0; i < B; i++) out[idx[i]] = true;
  return out;
}

function stratifiedSrs(units: readonly PlanUnit[], pi: number[], rand: () => number): boolean[] {
  const out = new Array<boolean>(units.length).fill(false);
  const groups = new Map<string, number[]>();
  units.forEach((u, i) => groups.set(u.stratum ?? "", [...(groups.get(u.stratum ?? "") ?? []), i]));
  for (const idx of groups.values()) {
    const k = Math.round(pi[idx[0]] * idx.length);
    const pick = srs(idx.length, k, rand);
    idx.forEach((i, j) => (out[i] = pick[j]));
  }
  return out;
}

/** Randomised systematic πps: a random order, then one random start and steps of 1 along the cumulated π. */
function systematicPps(pi: number[], rand: () => number): boolean[] {
  const N = pi.length;
  const order = srsOrder(N, rand);
  const out = new Array<boolean>(N).fill(false);
  let cum = 0;
  let next = rand();
  for (const i of order) {
    const before = cum;
    cum += pi[i];
    // Rounding: a unit whose π is 1 is always taken.
    if (pi[i] >= 1 - 1e-12 || (next >= before && next < cum)) {
      out[i] = true;
      while (next < cum) next += 1;
    }
  }
  return out;
}

function srsOrder(N: number, rand: () => number): number[] {
  const idx = Array.from({ length: N }, (_, i) => i);
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx;
}
