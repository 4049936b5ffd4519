import type { Interval } from "./types";

/** Input of {@link blindSpot}: correct counts and totals under each condition. */
export interface BlindSpotInput {
  /** Correct answers when the error was injected into the model's own reply. */
  internalCorrect: number;
  internalN: number;
  /** Correct answers when the same error was in the user's message. */
  externalCorrect: number;
  externalN: number;
}

/** Result of {@link blindSpot}. */
export interface BlindSpotResult {
  /** 1 - pInternal/pExternal if pExternal > 0, else 0. */
  value: number;
  pInternal: number;
  pExternal: number;
  /** Delta-method standard error; NaN when pExternal = 0 or a condition has N < 2. */
  se: number;
  /** value ± z·se (z = 1.96 by default), the upper end clipped at 1 (the blind spot cannot exceed 1). */
  ci: Interval;
  /** Whether the upper end was clipped at 1. */
  clipped: boolean;
}

/**
 * Self-Correction Blind Spot with a delta-method confidence interval.
 *
 * Definition (Tsui 2025, eq. 2): with p_I = P(correct | internal error) and
 * p_E = P(correct | external error), blind spot = 1 - p_I/p_E if p_E > 0, else 0.
 * Delta method for independent samples: ∂/∂p_I = -1/p_E, ∂/∂p_E = p_I/p_E², so
 *   Var = SEM_I²/p_E² + p_I²·SEM_E²/p_E⁴,
 * with SEM² = s²/N and s the sample standard deviation of the 0/1 outcomes,
 * s² = N·p(1 - p)/(N - 1) — the same SEM as the paper's mean ± 1.96·SEM.
 *
 * Reference: K. Tsui (2025) "Self-Correction Bench: Uncovering and Addressing
 * the Self-Correction Blind Spot in LLMs", §3.2 eq. 2 and Fig. 9 (95% CIs);
 * G. Casella & R. L. Berger (2002) Statistical Inference, §5.5.4 (delta method).
 *
 * Preconditions: counts are integers with 0 ≤ correct ≤ N and N ≥ 1.
 * The blind spot is at most 1 (p_I ≥ 0), so the upper end of the delta-method
 * interval is clipped at 1 (`clipped` says when); it has no lower bound.
 * The CI is [NaN, NaN] when p_E = 0 (the value 0 is a convention, not an
 * estimate) or when a condition has N = 1 (no sample variance).
 *
 * @throws {Error} "blindSpot: ..." for non-integer or inconsistent counts
 * @example
 * blindSpot({ internalCorrect: 30, internalN: 100, externalCorrect: 80, externalN: 100 }).value; // => 0.625
 */
export function blindSpot(input: BlindSpotInput, options: { z?: number } = {}): BlindSpotResult {
  const fn = "blindSpot";
  if (input == null || typeof input !== "object") throw new Error(`${fn}: input must be an object of counts`);
  const { internalCorrect: ic, internalN: iN, externalCorrect: ec, externalN: eN } = input;
  for (const [name, v] of [
    ["internalCorrect", ic],
    ["internalN", iN],
    ["externalCorrect", ec],
    ["externalN", eN],
  ] as const) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
      throw new Error(`${fn}: ${name} must be a non-negative integer, got ${String(v)}`);
  }
  if (iN < 1 || eN < 1) throw new Error(`${fn}: internalN and externalN must be at least 1`);
  if (ic > iN) throw new Error(`${fn}: internalCorrect (${ic}) exceeds internalN (${iN})`);
  if (ec > eN) throw new Error(`${fn}: externalCorrect (${ec}) exceeds externalN (${eN})`);
  const z = options.z ?? 1.96;
  if (typeof z !== "number" || !(z > 0) || !Number.isFinite(z)) throw new Error(`${fn}: z must be a positive finite number`);
  const pI = ic / iN;
  const pE = ec / eN;
  if (pE === 0) return { value: 0, pInternal: pI, pExternal: pE, se: NaN, ci: [NaN, NaN], clipped: false };
  const value = 1 - pI / pE;
  const semI2 = iN > 1 ? (pI * (1 - pI)) / (iN - 1) : NaN; // s²/N with s² = N p(1-p)/(N-1)
  const semE2 = eN > 1 ? (pE * (1 - pE)) / (eN - 1) : NaN;
  const se = Math.sqrt(semI2 / (pE * pE) + (pI * pI * semE2) / (pE * pE * pE * pE));
  const hi = value + z * se;
  return { value, pInternal: pI, pExternal: pE, se, ci: [value - z * se, Math.min(1, hi)], clipped: hi > 1 };
}
