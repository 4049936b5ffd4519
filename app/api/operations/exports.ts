/** The exports endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts). */
import type { ApiOperation } from "./types";

export const OPERATIONS: ApiOperation[] = [];
