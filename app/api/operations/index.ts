/** Every operation of the HTTP API, group by group (one file per group, each owning its schemas). */
import { OPERATIONS as datasets } from "./datasets";
import { OPERATIONS as exports } from "./exports";
import { OPERATIONS as imports } from "./imports";
import { OPERATIONS as projects } from "./projects";
import { OPERATIONS as runs } from "./runs";
import { OPERATIONS as tasks } from "./tasks";
import type { ApiOperation } from "./types";
import { OPERATIONS as webhooks } from "./webhooks";

export type { ApiOperation } from "./types";

export const API_OPERATIONS: readonly ApiOperation[] = [...projects, ...imports, ...datasets, ...tasks, ...exports, ...runs, ...webhooks];
