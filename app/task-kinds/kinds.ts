/**
 * The task kinds Concord labels: one line per kind, in the order the new-task form
 * lists them. Adding a kind: its folder here (index.ts, form.tsx, fields.tsx, and
 * config.server.ts when it has settings of its own, imported by its index.ts) and one
 * line in this file, ./forms.ts and ./fields.ts. Three lists because the kind's code goes
 * to three places — the rules to the server and the tests, the annotate form to the
 * annotate page, the gold and final-label fields to the task and adjudication pages —
 * and the bundler takes a module wherever a list imports it (one list would put the
 * annotate form's Markdown on the task page). tests/unit/task-kinds/registry.test.ts
 * checks the three agree with the folders.
 */
export { checklistAppropriateness } from "./checklist-appropriateness";
export { responseSatisfaction } from "./response-satisfaction";
export { writingQuality } from "./writing-quality";
export { bestOfN } from "./best-of-n";
export { likert7 } from "./likert-7";
