/**
 * The task kinds Concord labels: one line per kind, in the order the new-task form
 * lists them. Adding a kind: its folder here (index.ts, form.tsx, fields.tsx, and
 * config.server.ts when it has settings of its own) and one line in this file, ./forms.ts,
 * ./fields.ts and ./kinds.server.ts.
 */
export { checklistAppropriateness } from "./checklist-appropriateness";
export { responseSatisfaction } from "./response-satisfaction";
export { writingQuality } from "./writing-quality";
export { bestOfN } from "./best-of-n";
export { likert7 } from "./likert-7";
