/**
 * The task kinds' gold and final-label fields (fields.tsx): one line per kind, as in ./kinds.ts.
 */
export { checklistAppropriatenessFields } from "./checklist-appropriateness/fields";
export { responseSatisfactionFields } from "./response-satisfaction/fields";
export { writingQualityFields } from "./writing-quality/fields";
export { bestOfNFields } from "./best-of-n/fields";
export { likert7Fields } from "./likert-7/fields";
