CREATE TABLE `annotations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`assignment_id` integer NOT NULL,
	`revision` integer DEFAULT 1 NOT NULL,
	`label` text NOT NULL,
	`penalty_reasons` text,
	`notes` text,
	`shown_order` text,
	`status` text NOT NULL,
	`client_token` text,
	`duration_ms` integer,
	`stale_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`assignment_id`) REFERENCES `assignments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `annotations_assignment_revision_unique` ON `annotations` (`assignment_id`,`revision`);--> statement-breakpoint
CREATE UNIQUE INDEX `annotations_client_token_unique` ON `annotations` (`client_token`);--> statement-breakpoint
CREATE TABLE `assignments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`unit_id` integer NOT NULL,
	`annotator_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`shown_order` text,
	`skip_reason` text,
	`started_at` integer,
	`submitted_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`unit_id`) REFERENCES `units`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`annotator_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `assignments_unit_annotator_unique` ON `assignments` (`unit_id`,`annotator_id`);--> statement-breakpoint
CREATE INDEX `assignments_annotator_idx` ON `assignments` (`annotator_id`,`status`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`key` text NOT NULL,
	`payload` text DEFAULT '{}' NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`result` text,
	`error` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_run_key_unique` ON `jobs` (`run_id`,`key`);--> statement-breakpoint
CREATE INDEX `jobs_status_idx` ON `jobs` (`run_id`,`status`);--> statement-breakpoint
CREATE TABLE `provider_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`provider_id` integer,
	`job_id` integer,
	`request` text NOT NULL,
	`reply` text,
	`status` integer,
	`latency_ms` integer,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`error` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`provider_id`) REFERENCES `providers`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `provider_calls_job_idx` ON `provider_calls` (`job_id`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`guidelines` text DEFAULT '' NOT NULL,
	`overlap` integer DEFAULT 2 NOT NULL,
	`seed` integer DEFAULT 1 NOT NULL,
	`config` text DEFAULT '{}' NOT NULL,
	`status` text DEFAULT 'open' NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tasks_project_idx` ON `tasks` (`project_id`);--> statement-breakpoint
CREATE TABLE `units` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`task_id` integer NOT NULL,
	`item_id` integer NOT NULL,
	`checklist_item_id` integer,
	`response_id` integer,
	`response_ids` text,
	`position` integer DEFAULT 0 NOT NULL,
	`is_gold` integer DEFAULT false NOT NULL,
	`gold_label` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`checklist_item_id`) REFERENCES `checklist_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `units_task_idx` ON `units` (`task_id`,`position`);