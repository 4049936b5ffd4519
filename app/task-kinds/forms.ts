/**
 * The task kinds' client parts (form.tsx): one line per kind, as in ./kinds.ts.
 */
export { checklistAppropriatenessForm } from "./checklist-appropriateness/form";
export { responseSatisfactionForm } from "./response-satisfaction/form";
export { writingQualityForm } from "./writing-quality/form";
export { bestOfNForm } from "./best-of-n/form";
export { likert7Form } from "./likert-7/form";
