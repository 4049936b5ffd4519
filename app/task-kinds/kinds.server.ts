/**
 * The server parts of the task kinds that have settings of their own: one line per
 * such kind (its config.server.ts, a zod schema of those settings). Server-only, so
 * zod stays out of the browser.
 */
export { likert7Server } from "./likert-7/config.server";
