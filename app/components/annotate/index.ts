/** The annotate form's shared pieces; each task kind's controls live in app/task-kinds/<kind>/form.tsx. */
export type { BlindUnitProps, KindContext, KindModule, Rules } from "./types";
