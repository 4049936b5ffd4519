/**
 * The task kinds Concord labels: one line per kind, in the order the new-task form
 * lists them. Adding a kind: its folder here (index.ts, form.tsx, fields.tsx, and
 * config.server.ts when it has settings of its own, imported by its index.ts) and one
 * line in this file. Its index.ts names its client parts as literal dynamic imports
 * (`form: () => import("./form")…`, likewise `fields`), which the browser build puts in
 * chunks of their own, fetched only by the page that renders them: the rules go to the
 * server, the tests and the pages' shared code, the annotate form only to the annotate
 * page, the gold and final-label fields only to the task and adjudication pages.
 * tests/unit/task-kinds/registry.test.ts checks this list against the folders.
 */
export { checklistAppropriateness } from "./checklist-appropriateness";
export { responseSatisfaction } from "./response-satisfaction";
export { writingQuality } from "./writing-quality";
export { bestOfN } from "./best-of-n";
export { likert7 } from "./likert-7";
