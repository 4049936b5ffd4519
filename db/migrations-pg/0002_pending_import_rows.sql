ALTER TABLE "responses" ADD COLUMN "pending_import_id" bigint;--> statement-breakpoint
ALTER TABLE "verdicts" ADD COLUMN "pending_import_id" bigint;