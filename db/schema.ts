/**
 * Concord's one data model. Every later feature (annotation, runs, reports,
 * curation) adds behaviour on these tables rather than a second model.
 *
 * Conventions: camelCase keys map to snake_case columns; timestamps are unix
 * seconds set by SQLite's `unixepoch()`; JSON columns hold free metadata.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { AnnotatableKind } from "../app/task-kinds/registry";

const createdAt = () =>
  integer("created_at", { mode: "number" })
    .notNull()
    .default(sql`(unixepoch())`);

export const ROLES = ["admin", "researcher", "annotator"] as const;
export type Role = (typeof ROLES)[number];

// ─── Accounts ────────────────────────────────────────────────────────────────

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    email: text("email").notNull(),
    name: text("name").notNull(),
    passwordHash: text("password_hash").notNull(),
    isSiteAdmin: integer("is_site_admin", { mode: "boolean" }).notNull().default(false),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    /** Random 256-bit token, hex. Only its SHA-256 is stored. */
    idHash: text("id_hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

/**
 * Failed sign-ins per submitted email, known account or not, so throttling
 * cannot be used to discover which accounts exist.
 */
/**
 * Sign-in attempts, counted before the password is checked. One row per
 * (email, client address) and one per email across all clients (client "*"),
 * so a stranger locks out only their own address (app/auth/accounts.server.ts).
 */
export const loginThrottle = sqliteTable(
  "login_throttle",
  {
    email: text("email").notNull(),
    client: text("client").notNull().default("*"),
    failures: integer("failures").notNull().default(0),
    lockedUntil: integer("locked_until"),
    updatedAt: integer("updated_at")
      .notNull()
      .default(sql`(unixepoch())`),
  },
  (t) => [primaryKey({ columns: [t.email, t.client] })],
);

export const projects = sqliteTable(
  "projects",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("projects_slug_unique").on(t.slug)],
);

export const memberships = sqliteTable(
  "memberships",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ROLES }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("memberships_project_user_unique").on(t.projectId, t.userId), index("memberships_user_idx").on(t.userId)],
);

export const API_TOKEN_SCOPES = ["read", "write"] as const;
export type ApiTokenScope = (typeof API_TOKEN_SCOPES)[number];

/**
 * Personal access tokens for the HTTP API (app/auth/tokens.server.ts). The token itself
 * (`ccd_` + 32 random bytes, base64url) is shown once; only its SHA-256 is stored. A token
 * never grants more than its user's current role: every request checks the membership again.
 */
export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** "read": GET only; "write": every method. */
    scope: text("scope", { enum: API_TOKEN_SCOPES }).notNull(),
    /** True: every project of the user, now and later; false: only those in api_token_projects. */
    allProjects: integer("all_projects", { mode: "boolean" }).notNull().default(true),
    /** The first characters after `ccd_`, to recognise the token in lists. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole token, hex. */
    tokenHash: text("token_hash").notNull(),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    /** The client address of the last use. */
    lastUsedFrom: text("last_used_from"),
  },
  (t) => [uniqueIndex("api_tokens_token_hash_unique").on(t.tokenHash), index("api_tokens_user_idx").on(t.userId)],
);

/** The projects a token with allProjects = false covers (a project deleted leaves the token covering fewer, never all). */
export const apiTokenProjects = sqliteTable(
  "api_token_projects",
  {
    tokenId: integer("token_id")
      .notNull()
      .references(() => apiTokens.id, { onDelete: "cascade" }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.projectId] }), index("api_token_projects_project_idx").on(t.projectId)],
);

/**
 * Idempotency keys of the HTTP API's POSTs (app/api/idempotency.server.ts): the first request with a key
 * stores its answer; a replay with the same key and the same request gets that answer again and writes
 * nothing; the same key with another request is refused (409). Scoped per user; kept 24 hours.
 */
export const apiIdempotencyKeys = sqliteTable(
  "api_idempotency_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** SHA-256 (hex) of the method, the path with its query, and the body. */
    requestHash: text("request_hash").notNull(),
    /** Null while the first request is still being answered. */
    status: integer("status"),
    responseBody: text("response_body"),
    /** JSON object of the headers worth replaying (Content-Type, Location). */
    responseHeaders: text("response_headers"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("api_idempotency_user_key_unique").on(t.userId, t.key), index("api_idempotency_created_idx").on(t.createdAt)],
);

export const API_IMPORT_STATUSES = ["queued", "running", "succeeded", "failed"] as const;
export type ApiImportStatus = (typeof API_IMPORT_STATUSES)[number];

/**
 * Imports sent to the HTTP API (POST /api/v1/projects/{slug}/imports): one row each, so that
 * GET .../imports/{id} answers its status, progress, summary and problems, also after a restart.
 */
export const apiImports = sqliteTable(
  "api_imports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    preset: text("preset").notNull(),
    /** The import's options as given (level, annotators, categories, map, dry_run …), JSON. */
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    format: text("format").notNull(),
    size: integer("size").notNull().default(0),
    dryRun: integer("dry_run", { mode: "boolean" }).notNull().default(false),
    status: text("status", { enum: API_IMPORT_STATUSES }).notNull().default("queued"),
    /** {phase, bytes, totalBytes} while running. */
    progress: text("progress", { mode: "json" }).$type<Record<string, unknown>>(),
    summary: text("summary", { mode: "json" }).$type<Record<string, unknown>>(),
    /** [{row, field, message}] of a refused file. */
    problems: text("problems", { mode: "json" }).$type<Array<Record<string, unknown>>>(),
    error: text("error"),
    createdAt: createdAt(),
    finishedAt: integer("finished_at"),
  },
  (t) => [index("api_imports_project_idx").on(t.projectId, t.id)],
);

export const WEBHOOK_EVENTS = ["run.finished", "task.completed", "import.finished"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A project's webhook: a URL that receives a signed POST (HMAC-SHA256 of the body with `secret`) on its events. */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** The signing secret (shown once at creation; kept to sign each delivery). */
    secret: text("secret").notNull(),
    /** JSON array of WEBHOOK_EVENTS. */
    events: text("events", { mode: "json" }).$type<WebhookEvent[]>().notNull(),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    disabledAt: integer("disabled_at"),
  },
  (t) => [index("webhooks_project_idx").on(t.projectId)],
);

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** One event sent (or to be sent) to one webhook: the exact body signed, its attempts and their outcome. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    webhookId: integer("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** Unix seconds of the next attempt (pending deliveries). */
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** "host:pid" of the process sending it now, until lockedUntil. */
    lockedBy: text("locked_by"),
    lockedUntil: integer("locked_until"),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [index("webhook_deliveries_webhook_idx").on(t.webhookId, t.id), index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt)],
);

// ─── Benchmark data ──────────────────────────────────────────────────────────

export const datasets = sqliteTable(
  "datasets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    version: integer("version").notNull().default(1),
    source: text("source").notNull().default(""),
    licenseNote: text("license_note").notNull().default(""),
    /** Hash of the imported content, so re-importing the same file changes nothing. */
    contentHash: text("content_hash"),
    /** Set when a version is frozen as a release; frozen versions are read-only. */
    frozenAt: integer("frozen_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("datasets_project_name_version_unique").on(t.projectId, t.name, t.version)],
);

export const items = sqliteTable(
  "items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasets.id, { onDelete: "cascade" }),
    /** The item's identifier in its source file; stable across re-imports. */
    sourceId: text("source_id").notNull(),
    query: text("query").notNull(),
    /** Optional passage or grounding (context, outline, draft). */
    passage: text("passage"),
    domain: text("domain"),
    subject: text("subject"),
    taskType: text("task_type"),
    language: text("language"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    version: integer("version").notNull().default(1),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("items_dataset_source_unique").on(t.datasetId, t.sourceId), index("items_domain_idx").on(t.datasetId, t.domain)],
);

export const checklistItems = sqliteTable(
  "checklist_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => items.id, { onDelete: "cascade" }),
    text: text("text").notNull(),
    /** Optional weight (FB-Bench style weighted checklists); weights of an item sum to 1. */
    weight: real("weight"),
    position: integer("position").notNull(),
    version: integer("version").notNull().default(1),
    /** The version this one replaces, when edited in curation. */
    previousId: integer("previous_id").references((): AnySQLiteColumn => checklistItems.id),
    retiredAt: integer("retired_at"),
    createdAt: createdAt(),
  },
  (t) => [index("checklist_items_item_idx").on(t.itemId, t.position)],
);

export const references = sqliteTable(
  "references",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => items.id, { onDelete: "cascade" }),
    text: text("text").notNull(),
    version: integer("version").notNull().default(1),
    isCurrent: integer("is_current", { mode: "boolean" }).notNull().default(true),
    /** Where this reference came from: "import", "seed", "promoted", "edited". */
    provenance: text("provenance").notNull().default("import"),
    /** Free-text why (curation); the response it was promoted from, if any. */
    reason: text("reason"),
    promotedFromResponseId: integer("promoted_from_response_id").references((): AnySQLiteColumn => responses.id),
    /** Annotation ids whose labels justified this version (reference optimisation). */
    justification: text("justification", { mode: "json" }).$type<number[]>(),
    createdBy: integer("created_by").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index("references_item_idx").on(t.itemId, t.version)],
);

/**
 * "completed-with-errors": every job ran, some failed (the run page lists them, with retry);
 * "failed": every job ran and none succeeded.
 */
export const RUN_STATUSES = ["draft", "queued", "running", "paused", "cancelled", "completed", "completed-with-errors", "failed"] as const;

export const providers = sqliteTable(
  "providers",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** "openai-compatible" or "replay" (recorded outputs, used by the demo). */
    kind: text("kind", { enum: ["openai-compatible", "replay"] }).notNull(),
    baseUrl: text("base_url"),
    /** Secret. Never rendered, logged or exported. */
    apiKey: text("api_key"),
    model: text("model").notNull(),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    concurrency: integer("concurrency").notNull().default(4),
    requestsPerMinute: integer("requests_per_minute"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("providers_project_name_unique").on(t.projectId, t.name)],
);

export const runs = sqliteTable(
  "runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    datasetId: integer("dataset_id").references(() => datasets.id),
    name: text("name").notNull(),
    /** "refinebench", "self-correction", "fb-bench", "c3ebench", or "import". */
    protocol: text("protocol").notNull(),
    protocolVersion: text("protocol_version").notNull().default("1"),
    config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    status: text("status", { enum: RUN_STATUSES }).notNull().default("draft"),
    createdBy: integer("created_by").references(() => users.id),
    createdAt: createdAt(),
    finishedAt: integer("finished_at"),
  },
  (t) => [index("runs_project_idx").on(t.projectId)],
);

export const responses = sqliteTable(
  "responses",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => items.id, { onDelete: "cascade" }),
    /** The model that wrote it. Never shown to annotators. */
    model: text("model").notNull(),
    turn: integer("turn").notNull().default(1),
    text: text("text").notNull(),
    /** "import", "run" or "seed". */
    origin: text("origin", { enum: ["import", "run", "seed"] }).notNull(),
    runId: integer("run_id").references(() => runs.id, { onDelete: "set null" }),
    /** Identifier from the source file or run, stable across re-imports. */
    sourceKey: text("source_key").notNull(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    /**
     * The import that wrote it, while that import is still being copied in (its pending_imports row exists): such a row
     * is hidden from every reader (db/visibility.ts). Left as it was once the import commits.
     */
    pendingImportId: integer("pending_import_id"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("responses_item_source_unique").on(t.itemId, t.sourceKey),
    index("responses_item_model_turn_idx").on(t.itemId, t.model, t.turn),
  ],
);

export const judges = sqliteTable(
  "judges",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    promptVersion: text("prompt_version").notNull().default("1"),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("judges_project_name_unique").on(t.projectId, t.name)],
);

/** "unparsed": an imported verdict that is empty or outside the task's label set (kept, counted as unparsed). */
export const PARSE_STATUSES = ["ok", "partial", "failed", "unparsed"] as const;

export const verdicts = sqliteTable(
  "verdicts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    judgeId: integer("judge_id")
      .notNull()
      .references(() => judges.id, { onDelete: "cascade" }),
    responseId: integer("response_id")
      .notNull()
      .references(() => responses.id, { onDelete: "cascade" }),
    /** Null when the verdict is on the whole response (a 1–10 score, a pairwise pick). */
    checklistItemId: integer("checklist_item_id").references(() => checklistItems.id, {
      onDelete: "cascade",
    }),
    /** Normalised value: "Yes"/"No" for checklist items, a number as text for scores. */
    value: text("value"),
    score: real("score"),
    rawOutput: text("raw_output"),
    parseStatus: text("parse_status", { enum: PARSE_STATUSES }).notNull().default("ok"),
    runId: integer("run_id").references(() => runs.id, { onDelete: "set null" }),
    /** Set when what it judged (item, checklist item, reference) got a newer version. */
    staleAt: integer("stale_at"),
    /** As responses.pendingImportId: hidden from readers while its import is being copied in. */
    pendingImportId: integer("pending_import_id"),
    createdAt: createdAt(),
  },
  (t) => [
    index("verdicts_response_idx").on(t.responseId),
    index("verdicts_judge_idx").on(t.judgeId),
    uniqueIndex("verdicts_judge_response_item_unique").on(t.judgeId, t.responseId, t.checklistItemId),
    // Partial: stale rows are rare, so "is anything stale?" (every report page) is one index probe.
    index("verdicts_stale_idx")
      .on(t.staleAt)
      .where(sql`stale_at IS NOT NULL`),
  ],
);

// ─── Annotation ──────────────────────────────────────────────────────────────

/**
 * A task's kind: one the app labels (its registry, app/task-kinds/kinds.ts, names them), or
 * "imported-labels" for labels imported from another tool (labels-long / labels-wide presets).
 * A type only: tasks.kind is TEXT without a CHECK constraint, so a new kind needs no migration,
 * and the import is type-only so that drizzle-kit, which loads this file, loads no app code.
 */
export type TaskKind = "imported-labels" | AnnotatableKind;

export const tasks = sqliteTable(
  "tasks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasets.id),
    kind: text("kind").$type<TaskKind>().notNull(),
    name: text("name").notNull(),
    guidelines: text("guidelines").notNull().default(""),
    /** k: how many distinct annotators label each unit. */
    overlap: integer("overlap").notNull().default(2),
    seed: integer("seed").notNull().default(1),
    /** Kind-specific settings: sampling plan, models, show reference, penalty reasons, ties, gold rate. */
    config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    /** "archived": kept with its labels and reports, hidden from annotators (a task with labels is archived, not deleted). */
    status: text("status", { enum: ["open", "closed", "archived"] })
      .notNull()
      .default("open"),
    createdBy: integer("created_by").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index("tasks_project_idx").on(t.projectId)],
);

/**
 * Freshness counters of the memoised reports, bumped by SQLite triggers (migration 0003)
 * so that every writer — the app, the CLI import, the run worker, a hand-run SQL fix —
 * keeps them true. Their own small rows, so a bump never rewrites a task's config.
 *
 * task_data_versions: a report input of the task changed — a submitted label (new,
 * revised, marked stale, deleted), an assignment or unit removed, an item's
 * domain/subject/task type, a response's model/turn/text. Drafts do not count.
 * Reports are memoised per (version, config): reading it is the whole freshness check.
 */
export const taskDataVersions = sqliteTable("task_data_versions", {
  taskId: integer("task_id")
    .primaryKey()
    .references(() => tasks.id, { onDelete: "cascade" }),
  version: integer("version").notNull().default(0),
});

/**
 * task_data_bumps: increments of a task's data version not yet folded into task_data_versions; a task's version is
 * its row's version plus its bumps here (app/reports/load.server.ts). On PostgreSQL a submitted label adds a row here
 * instead of updating the task's counter row, so concurrent submits to one task never write the same row (updating
 * it made each submit wait for the one before it to commit, holding the row's lock); readers fold the rows into the
 * counter now and then. SQLite has one writer: its triggers update the counter row and this table stays empty.
 */
export const taskDataBumps = sqliteTable(
  "task_data_bumps",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
  },
  (t) => [index("task_data_bumps_task_idx").on(t.taskId)],
);

/** project_verdict_versions: a verdict or judge of the project was written (judge reports). */
export const projectVerdictVersions = sqliteTable("project_verdict_versions", {
  projectId: integer("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  version: integer("version").notNull().default(0),
});

export const units = sqliteTable(
  "units",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    itemId: integer("item_id")
      .notNull()
      .references(() => items.id),
    checklistItemId: integer("checklist_item_id").references(() => checklistItems.id),
    /** The single response judged (response satisfaction). */
    responseId: integer("response_id").references(() => responses.id),
    /** Several responses compared or scored (writing quality, best-of-N); may include "reference". */
    responseIds: text("response_ids", { mode: "json" }).$type<(number | "reference")[]>(),
    position: integer("position").notNull().default(0),
    isGold: integer("is_gold", { mode: "boolean" }).notNull().default(false),
    /** The known answer of a gold unit. Never sent to annotators. */
    goldLabel: text("gold_label"),
    createdAt: createdAt(),
  },
  (t) => [index("units_task_idx").on(t.taskId, t.position)],
);

export const ASSIGNMENT_STATUSES = ["pending", "draft", "submitted", "skipped"] as const;

export const assignments = sqliteTable(
  "assignments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    unitId: integer("unit_id")
      .notNull()
      .references(() => units.id, { onDelete: "cascade" }),
    annotatorId: integer("annotator_id")
      .notNull()
      .references(() => users.id),
    status: text("status", { enum: ASSIGNMENT_STATUSES }).notNull().default("pending"),
    /** Shuffled display order of compared responses, seeded per assignment. */
    shownOrder: text("shown_order", { mode: "json" }).$type<(number | "reference")[]>(),
    skipReason: text("skip_reason"),
    startedAt: integer("started_at"),
    submittedAt: integer("submitted_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("assignments_unit_annotator_unique").on(t.unitId, t.annotatorId),
    index("assignments_annotator_idx").on(t.annotatorId, t.status),
  ],
);

export const annotations = sqliteTable(
  "annotations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    assignmentId: integer("assignment_id")
      .notNull()
      .references(() => assignments.id, { onDelete: "cascade" }),
    /** Revision number; every revision is kept, the highest is current. */
    revision: integer("revision").notNull().default(1),
    /**
     * The label. Yes/No tasks: "Yes" | "No". Writing quality: {scores: {responseId: 1..5}}.
     * Best-of-N: {best: responseId | "tie"}. Stored as JSON.
     */
    label: text("label", { mode: "json" }).$type<unknown>().notNull(),
    penaltyReasons: text("penalty_reasons", { mode: "json" }).$type<Record<string, string[]>>(),
    notes: text("notes", { mode: "json" }).$type<Record<string, string> | string>(),
    shownOrder: text("shown_order", { mode: "json" }).$type<(number | "reference")[]>(),
    status: text("status", { enum: ["draft", "submitted"] }).notNull(),
    /** Idempotency key from the form, so a retry or a double click stores one annotation. */
    clientToken: text("client_token"),
    /** Milliseconds the annotator spent on the unit before saving. */
    durationMs: integer("duration_ms"),
    /** Set when the labelled content (item, checklist item, reference) got a newer version. */
    staleAt: integer("stale_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("annotations_assignment_revision_unique").on(t.assignmentId, t.revision),
    uniqueIndex("annotations_client_token_unique").on(t.clientToken),
    // Partial: stale rows are rare, so "is anything stale?" (every report page) is one index probe.
    index("annotations_stale_idx")
      .on(t.staleAt)
      .where(sql`stale_at IS NOT NULL`),
  ],
);

// ─── Runs: durable jobs and the log of every provider call ───────────────────

export const jobs = sqliteTable(
  "jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    /** Deterministic key (item, model, turn, step) so a resumed run never redoes a finished job. */
    key: text("key").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    status: text("status", { enum: ["queued", "leased", "done", "failed"] })
      .notNull()
      .default("queued"),
    attempts: integer("attempts").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
    result: text("result", { mode: "json" }).$type<unknown>(),
    error: text("error"),
    createdAt: createdAt(),
    finishedAt: integer("finished_at"),
  },
  (t) => [uniqueIndex("jobs_run_key_unique").on(t.runId, t.key), index("jobs_status_idx").on(t.runId, t.status)],
);

export const providerCalls = sqliteTable(
  "provider_calls",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    providerId: integer("provider_id").references(() => providers.id, { onDelete: "set null" }),
    jobId: integer("job_id").references(() => jobs.id, { onDelete: "set null" }),
    request: text("request", { mode: "json" }).$type<unknown>().notNull(),
    reply: text("reply", { mode: "json" }).$type<unknown>(),
    status: integer("status"),
    latencyMs: integer("latency_ms"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    error: text("error"),
    /**
     * "sent": logged before the request left and not answered yet (it holds
     * one of the provider's concurrency slots); "done": answered or failed;
     * "interrupted": its worker died mid-call (tokens are the prompt estimate).
     */
    state: text("state", { enum: ["sent", "done", "interrupted"] })
      .notNull()
      .default("done"),
    /** The worker (or CLI) that made the call. */
    owner: text("owner"),
    /** When the call was admitted, epoch ms (the requests-per-minute window counts these). */
    startedAt: integer("started_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("provider_calls_job_idx").on(t.jobId),
    index("provider_calls_window_idx").on(t.providerId, t.startedAt),
    index("provider_calls_state_idx").on(t.providerId, t.state),
  ],
);

/**
 * Live worker processes (the web server's in-process worker included): a
 * heartbeat renewed while alive, so a restarted worker reclaims a dead one's
 * jobs and provider slots at once when the process is known to be gone
 * (same host, pid not running) and after its lease otherwise.
 */
export const workers = sqliteTable("workers", {
  id: text("id").primaryKey(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  /** Epoch ms of the last heartbeat. */
  heartbeatAt: integer("heartbeat_at").notNull(),
  /** A worker silent for this long is gone even if its host cannot be checked. */
  leaseMs: integer("lease_ms").notNull(),
  startedAt: integer("started_at").notNull(),
});

/**
 * Imports being written (app/formats/stage.server.ts): the ID ranges an import
 * reserved and fills in chunks before one short transaction makes the rows
 * visible and deletes this row. A row left behind by an import that died
 * (its owner process is gone) names exactly the rows to delete: nothing else
 * ever gets IDs in those ranges. Read by the import only.
 */
export const pendingImports = sqliteTable("pending_imports", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  /** "host:pid" of the process writing the import. */
  owner: text("owner").notNull(),
  /** Reserved IDs per table: {"items": [first, last], …}. */
  ranges: text("ranges", { mode: "json" }).$type<Record<string, [number, number]>>().notNull(),
  createdAt: createdAt(),
});

// ─── Curation: the changelog of every benchmark edit ─────────────────────────

export const CURATION_ENTITIES = ["item", "checklist-item", "reference", "dataset"] as const;

/**
 * One row per curation change: what changed (before/after), who, when and why.
 * A dataset release's changelog is built from these rows.
 */
export const curationEvents = sqliteTable(
  "curation_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasets.id, { onDelete: "cascade" }),
    itemId: integer("item_id").references(() => items.id, { onDelete: "cascade" }),
    entity: text("entity", { enum: CURATION_ENTITIES }).notNull(),
    /** The row changed (for checklist items and references: the new version's id). */
    entityId: integer("entity_id"),
    /** "edit", "reorder", "reweight", "retire", "restore", "add", "promote", "freeze", "new-version". */
    action: text("action").notNull(),
    before: text("before", { mode: "json" }).$type<unknown>(),
    after: text("after", { mode: "json" }).$type<unknown>(),
    reason: text("reason").notNull().default(""),
    userId: integer("user_id").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index("curation_events_dataset_idx").on(t.datasetId, t.createdAt)],
);
