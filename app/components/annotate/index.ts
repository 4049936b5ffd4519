/** The annotation kinds as modules: each brings its controls, keys and shortcut lines. */
import { BestOfNKind } from "./BestOfNKind";
import type { AnnotatableKindName, KindModule } from "./types";
import { WritingQualityKind } from "./WritingQualityKind";
import { YesNoKind } from "./YesNoKind";

export const KIND_MODULES: Record<AnnotatableKindName, KindModule> = {
  "checklist-appropriateness": YesNoKind,
  "response-satisfaction": YesNoKind,
  "writing-quality": WritingQualityKind,
  "best-of-n": BestOfNKind,
};

export type { BlindUnitProps, KindContext, KindModule, Rules } from "./types";
