/**
 * Inter-annotator agreement, per-annotator figures, breakdowns, checklist
 * appropriateness, annotator bias checks and the sample-size planner.
 * Pure: every statistic comes from app/stats.
 */
import { finalLabels } from "./finalLabels";
import type { FinalLabels, FinalRule, TaskData } from "./types";

export {
  Z95,
  SMALL_N,
  resamplesFor,
  meanEstimate,
  WILSON,
  proportionEstimate,
  proportionOf,
  honestEstimate,
  scaleMeanEstimate,
} from "./agreement/intervals";
export { reliabilityMatrix, pooledPairs, countedMatrix, perUnitAgreement } from "./agreement/matrix";
export type { Matrix } from "./agreement/matrix";
export { analyticMethod } from "./agreement/resampling";
export { interAnnotatorAgreement } from "./agreement/interAnnotator";
export type { PairRow, IaaReport } from "./agreement/interAnnotator";
export { perAnnotator } from "./agreement/perAnnotator";
export type { AnnotatorRow } from "./agreement/perAnnotator";
export { DIMENSIONS, DIMENSION_LABELS, breakdowns } from "./agreement/breakdowns";
export type { Dimension, BreakdownRow } from "./agreement/breakdowns";
export { checklistAppropriateness, paperShare } from "./agreement/checklist";
export type { ChecklistReport } from "./agreement/checklist";
export { biasChecks } from "./agreement/bias";
export type { BiasRow } from "./agreement/bias";
export { planKappa, planAccuracy } from "./agreement/planner";
export type { PlanRow } from "./agreement/planner";

export function computeFinal(data: TaskData, rule: FinalRule): FinalLabels {
  return finalLabels(data, rule);
}
