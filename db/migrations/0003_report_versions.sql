CREATE TABLE `project_verdict_versions` (
	`project_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `task_data_versions` (
	`task_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `annotations_stale_idx` ON `annotations` (`stale_at`) WHERE stale_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `verdicts_stale_idx` ON `verdicts` (`stale_at`) WHERE stale_at IS NOT NULL;--> statement-breakpoint
-- One counter row per task and per project: existing ones now, new ones as they are created.
INSERT INTO `task_data_versions` (`task_id`, `version`) SELECT `id`, 0 FROM `tasks`;--> statement-breakpoint
INSERT INTO `project_verdict_versions` (`project_id`, `version`) SELECT `id`, 0 FROM `projects`;--> statement-breakpoint
CREATE TRIGGER `tasks_data_version_row` AFTER INSERT ON `tasks` BEGIN
  INSERT OR IGNORE INTO `task_data_versions` (`task_id`, `version`) VALUES (NEW.`id`, 0);
END;--> statement-breakpoint
CREATE TRIGGER `projects_verdict_version_row` AFTER INSERT ON `projects` BEGIN
  INSERT OR IGNORE INTO `project_verdict_versions` (`project_id`, `version`) VALUES (NEW.`id`, 0);
END;--> statement-breakpoint
-- task_data_versions: the freshness key of memoised reports (see db/schema.ts). Triggers, so
-- every writer (the app, the CLI import, the run worker, a hand-run SQL fix) keeps it true.
CREATE TRIGGER `annotations_data_version_insert` AFTER INSERT ON `annotations` WHEN NEW.`status` = 'submitted' BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1
  WHERE `task_id` = (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` = NEW.`assignment_id`);
END;--> statement-breakpoint
CREATE TRIGGER `annotations_data_version_update` AFTER UPDATE ON `annotations` WHEN OLD.`status` = 'submitted' OR NEW.`status` = 'submitted' BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1
  WHERE `task_id` IN (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` IN (OLD.`assignment_id`, NEW.`assignment_id`));
END;--> statement-breakpoint
CREATE TRIGGER `annotations_data_version_delete` AFTER DELETE ON `annotations` WHEN OLD.`status` = 'submitted' BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1
  WHERE `task_id` = (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` = OLD.`assignment_id`);
END;--> statement-breakpoint
CREATE TRIGGER `assignments_data_version_delete` AFTER DELETE ON `assignments` BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1 WHERE `task_id` = (SELECT `task_id` FROM `units` WHERE `id` = OLD.`unit_id`);
END;--> statement-breakpoint
CREATE TRIGGER `assignments_data_version_update` AFTER UPDATE OF `unit_id`, `annotator_id` ON `assignments` BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1 WHERE `task_id` IN (SELECT `task_id` FROM `units` WHERE `id` IN (OLD.`unit_id`, NEW.`unit_id`));
END;--> statement-breakpoint
CREATE TRIGGER `units_data_version_delete` AFTER DELETE ON `units` BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1 WHERE `task_id` = OLD.`task_id`;
END;--> statement-breakpoint
CREATE TRIGGER `items_data_version_update` AFTER UPDATE OF `domain`, `subject`, `task_type` ON `items` BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1 WHERE `task_id` IN (SELECT `id` FROM `tasks` WHERE `dataset_id` IN (OLD.`dataset_id`, NEW.`dataset_id`));
END;--> statement-breakpoint
CREATE TRIGGER `responses_data_version_update` AFTER UPDATE OF `model`, `turn`, `text` ON `responses` BEGIN
  UPDATE `task_data_versions` SET `version` = `version` + 1 WHERE `task_id` IN (SELECT `id` FROM `tasks` WHERE `dataset_id` IN (SELECT `dataset_id` FROM `items` WHERE `id` IN (OLD.`item_id`, NEW.`item_id`)));
END;--> statement-breakpoint
-- project_verdict_versions: the freshness key of memoised judge reports.
CREATE TRIGGER `verdicts_verdict_version_insert` AFTER INSERT ON `verdicts` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` = (SELECT `project_id` FROM `judges` WHERE `id` = NEW.`judge_id`);
END;--> statement-breakpoint
CREATE TRIGGER `verdicts_verdict_version_update` AFTER UPDATE ON `verdicts` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` IN (SELECT `project_id` FROM `judges` WHERE `id` IN (OLD.`judge_id`, NEW.`judge_id`));
END;--> statement-breakpoint
CREATE TRIGGER `verdicts_verdict_version_delete` AFTER DELETE ON `verdicts` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` = (SELECT `project_id` FROM `judges` WHERE `id` = OLD.`judge_id`);
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_insert` AFTER INSERT ON `judges` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` = NEW.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_update` AFTER UPDATE ON `judges` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` IN (OLD.`project_id`, NEW.`project_id`);
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_delete` AFTER DELETE ON `judges` BEGIN
  UPDATE `project_verdict_versions` SET `version` = `version` + 1 WHERE `project_id` = OLD.`project_id`;
END;
