/**
 * Each protocol's results view, by protocol id (one line per protocol; the
 * protocol itself is registered in ../index.ts). Client code: the results
 * page imports this, so nothing here may import a protocol's runtime code.
 */
import type { ComponentType } from "react";
import { C3eBenchResults } from "../c3ebench/results-view";
import { FbBenchResults } from "../fb-bench/results-view";
import { RefineBenchResults } from "../refinebench/results-view";
import { SelfCorrectionResults } from "../self-correction/results-view";
import type { ProtocolResults } from "../index";
import type { ResultsFigure } from "../types";
import type { ResultsViewProps } from "./tables";

type Views = { [P in ProtocolResults["protocol"]]: ComponentType<ResultsViewProps<P>> };

export const RESULT_VIEWS: Views = {
  refinebench: RefineBenchResults,
  "self-correction": SelfCorrectionResults,
  "fb-bench": FbBenchResults,
  c3ebench: C3eBenchResults,
};

/** One judge's results shown by its protocol's view ("No tables" for a protocol without one). */
export function ResultsView({ r, figure }: { r: { protocol: string; metrics: unknown }; figure: ResultsFigure | null }) {
  const View = (RESULT_VIEWS as Record<string, ComponentType<{ r: never; figure: ResultsFigure | null }> | undefined>)[r.protocol];
  return View ? <View r={r as never} figure={figure} /> : <p className="muted">No tables for this protocol.</p>;
}
