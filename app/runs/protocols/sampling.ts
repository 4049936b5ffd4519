/**
 * Sampling settings of a protocol: each field defaults to the paper's value and
 * can be overridden one by one in the run's settings; the parsed values are
 * what the run stores (and the run page shows).
 */
import { z } from "zod";

export type Sampling = { temperature?: number; top_p?: number; max_tokens?: number };

export function sampling(defaults: Sampling) {
  return z
    .object({
      temperature: z.number().min(0).max(2).optional(),
      top_p: z.number().gt(0).max(1).optional(),
      max_tokens: z.number().int().positive().optional(),
    })
    .strict()
    .default({})
    .transform((v) => ({ ...defaults, ...v }) as Sampling);
}
