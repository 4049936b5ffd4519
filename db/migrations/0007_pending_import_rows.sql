ALTER TABLE `responses` ADD `pending_import_id` integer;--> statement-breakpoint
ALTER TABLE `verdicts` ADD `pending_import_id` integer;