/**
 * Agreement and judge meta-evaluation statistics: inter-annotator coefficients
 * (Cohen 1960, Fleiss 1971, Krippendorff 2011, Gwet 2008) and judge–human agreement.
 * One function per file, after simple-statistics; import from "~/stats".
 */
export type * from "./types";
export { seededRandom } from "./seededRandom";
export { normalQuantile } from "./normalQuantile";
export { quantileSorted } from "./quantileSorted";
export { encodeLabels, type EncodedLabels } from "./encodeLabels";
export { isUnitCategoryCounts, unitCategoryCounts, type UnitCategoryCounts } from "./unitCategoryCounts";
export { unitAgreementTerms, type UnitAgreementTerms } from "./unitAgreementTerms";
export { agreementWeights } from "./agreementWeights";
export { pairedNumbers } from "./pairedNumbers";
export { rankAverage } from "./rankAverage";

export { percentAgreement } from "./percentAgreement";
export { cohenKappaFromTable, type CohenKappaResult } from "./cohenKappaFromTable";
export { cohenKappa, type CohenKappaOptions } from "./cohenKappa";
export { fleissKappa, type FleissKappaResult } from "./fleissKappa";
export { krippendorffAlpha, type KrippendorffAlphaResult, type MeasurementLevel } from "./krippendorffAlpha";
export { coincidenceMatrix, krippendorffAlphaFromCoincidences } from "./krippendorffAlphaFromCoincidences";
export { gwetCoefficient, type GwetResult } from "./gwetCoefficient";
export { gwetAC1 } from "./gwetAC1";
export { gwetAC2 } from "./gwetAC2";
export { pabak } from "./pabak";
export { pabakFromTable } from "./pabakFromTable";

export { pearson } from "./pearson";
export { spearman } from "./spearman";
export { spearmanFromTable } from "./spearmanFromTable";
export { kendallTauB } from "./kendallTauB";

export { accuracy } from "./accuracy";
export { confusionMatrix, type ConfusionMatrixResult } from "./confusionMatrix";
export { perLabelMetrics, type LabelMetrics } from "./perLabelMetrics";
export { macroPrecisionRecallF1, type MacroLabelRow, type MacroPRFResult } from "./macroPrecisionRecallF1";
export { rates, type RatesResult } from "./rates";
export { yesRateDifference, type YesRateDifferenceResult } from "./yesRateDifference";
export { pairwiseOrderingConsistency, type PairwiseOrderingResult, type ScoredResponse } from "./pairwiseOrderingConsistency";

export { meanCI, type MeanCIResult } from "./meanCI";
export { orderFreeSum, orderFreeMean } from "./orderFreeSum";
export { blindSpot, type BlindSpotInput, type BlindSpotResult } from "./blindSpot";
export { bootstrapCI, type BootstrapOptions, type BootstrapResult } from "./bootstrapCI";
export { ppiMean, type PpiMeanInput, type PpiMeanResult } from "./ppiMean";

export { normalCDF } from "./normalCDF";
export { wilsonCI, wilsonEffectiveCI } from "./wilsonCI";
export { moverSum, type MoverPart } from "./moverSum";
export { moverDifference } from "./moverDifference";
export { moverRatio } from "./moverRatio";
export { rectifierCI, type RectifierStratum, type RectifierCIResult } from "./rectifierCI";
export { holmAdjust } from "./holmAdjust";
export { linearizedSE, type AgreementSEResult } from "./linearizedSE";
export { fleissKappaSE } from "./fleissKappaSE";
export { gwetSE } from "./gwetSE";
export { krippendorffAlphaSE } from "./krippendorffAlphaSE";
export { binomialSample, multinomialSample } from "./binomialSample";
export { countsBootstrapCI, countsBootstrapCIs, type CountsBootstrapOptions, type CountsBootstrapResult } from "./countsBootstrapCI";
export { ratingPatterns, patternStatistics, type RatingPatterns, type PatternStatistics } from "./ratingPatterns";
export { pearsonFromTable } from "./pearsonFromTable";
export { kendallTauBFromTable } from "./kendallTauBFromTable";
export { cohenKappaClusteredSE } from "./cohenKappaClusteredSE";
export { pooledKappa } from "./pooledKappa";
export {
  agreementInterval,
  defaultIntervalMethod,
  SMALL_SAMPLE_UNITS,
  ROUGH_INTERVAL_UNITS,
  AGREEMENT_RESAMPLES,
  type AgreementInterval,
  type AgreementIntervalMethod,
} from "./agreementInterval";
export { studentTQuantile } from "./studentTQuantile";
export { expandedLevel } from "./expandedLevel";
export { type CorrectedUnit, type CorrectedOptions, type CorrectedResult, type EstimatorName } from "./correctedCore";
export { classicalMean } from "./classicalMean";
export { ppiEstimate } from "./ppiEstimate";
export { stratifiedPpi } from "./stratifiedPpi";
export { activePpi } from "./activePpi";
