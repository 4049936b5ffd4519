import type { Role } from "../../../db/schema";

/** "api": an /api/v1/ route, opened by a bearer token only (tests/api/ test the tokens; here, no session opens it). */
export type Access = "public" | "user" | "site-admin" | "api" | Role;
export type Entry = {
  access: Access;
  path: (ids: Ids) => string;
  params: (ids: Ids) => Record<string, string>;
  /** A harmless, valid form for the action, if the route has one. */
  form?: (ids: Ids) => Record<string, string>;
  /** Where an annotator allowed in is sent instead of the page (their own home in the project). */
  annotatorRedirect?: (ids: Ids) => string;
};
/**
 * Fixture ids: the base ones made by access.test.ts, plus whatever each area's
 * optional `setup(base)` export returns (a task id, a run id, ...).
 */
export type Ids = {
  slug: string;
  projectId: number;
  datasetId: number;
  itemId: number;
  checklistItemId: number;
  responseId: number;
  /** An annotator member of the project, safe to act on in forms. */
  userId: number;
  [extra: string]: string | number;
};

/** Optional per-area fixture: runs once after the base fixtures exist. */
export type Setup = (base: Ids) => Promise<Record<string, string | number>> | Record<string, string | number>;
