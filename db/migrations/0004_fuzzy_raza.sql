CREATE TABLE `workers` (
	`id` text PRIMARY KEY NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`lease_ms` integer NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `provider_calls` ADD `state` text DEFAULT 'done' NOT NULL;--> statement-breakpoint
ALTER TABLE `provider_calls` ADD `owner` text;--> statement-breakpoint
ALTER TABLE `provider_calls` ADD `started_at` integer;--> statement-breakpoint
CREATE INDEX `provider_calls_window_idx` ON `provider_calls` (`provider_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `provider_calls_state_idx` ON `provider_calls` (`provider_id`,`state`);