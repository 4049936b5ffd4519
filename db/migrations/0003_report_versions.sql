ALTER TABLE `projects` ADD `verdict_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `data_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- tasks.data_version: the freshness key of memoised reports (see db/schema.ts). Triggers, so
-- every writer (the app, the CLI import, the run worker, a hand-run SQL fix) keeps it true.
CREATE TRIGGER `annotations_data_version_insert` AFTER INSERT ON `annotations` WHEN NEW.`status` = 'submitted' BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1
  WHERE `id` = (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` = NEW.`assignment_id`);
END;--> statement-breakpoint
CREATE TRIGGER `annotations_data_version_update` AFTER UPDATE ON `annotations` WHEN OLD.`status` = 'submitted' OR NEW.`status` = 'submitted' BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1
  WHERE `id` IN (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` IN (OLD.`assignment_id`, NEW.`assignment_id`));
END;--> statement-breakpoint
CREATE TRIGGER `annotations_data_version_delete` AFTER DELETE ON `annotations` WHEN OLD.`status` = 'submitted' BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1
  WHERE `id` = (SELECT u.`task_id` FROM `assignments` a JOIN `units` u ON u.`id` = a.`unit_id` WHERE a.`id` = OLD.`assignment_id`);
END;--> statement-breakpoint
CREATE TRIGGER `assignments_data_version_delete` AFTER DELETE ON `assignments` BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1 WHERE `id` = (SELECT `task_id` FROM `units` WHERE `id` = OLD.`unit_id`);
END;--> statement-breakpoint
CREATE TRIGGER `assignments_data_version_update` AFTER UPDATE OF `unit_id`, `annotator_id` ON `assignments` BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1 WHERE `id` IN (SELECT `task_id` FROM `units` WHERE `id` IN (OLD.`unit_id`, NEW.`unit_id`));
END;--> statement-breakpoint
CREATE TRIGGER `units_data_version_delete` AFTER DELETE ON `units` BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1 WHERE `id` = OLD.`task_id`;
END;--> statement-breakpoint
CREATE TRIGGER `items_data_version_update` AFTER UPDATE OF `domain`, `subject`, `task_type` ON `items` BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1 WHERE `dataset_id` IN (OLD.`dataset_id`, NEW.`dataset_id`);
END;--> statement-breakpoint
CREATE TRIGGER `responses_data_version_update` AFTER UPDATE OF `model`, `turn`, `text` ON `responses` BEGIN
  UPDATE `tasks` SET `data_version` = `data_version` + 1 WHERE `dataset_id` IN (SELECT `dataset_id` FROM `items` WHERE `id` IN (OLD.`item_id`, NEW.`item_id`));
END;--> statement-breakpoint
-- projects.verdict_version: the freshness key of memoised judge reports.
CREATE TRIGGER `verdicts_verdict_version_insert` AFTER INSERT ON `verdicts` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` = (SELECT `project_id` FROM `judges` WHERE `id` = NEW.`judge_id`);
END;--> statement-breakpoint
CREATE TRIGGER `verdicts_verdict_version_update` AFTER UPDATE ON `verdicts` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` IN (SELECT `project_id` FROM `judges` WHERE `id` IN (OLD.`judge_id`, NEW.`judge_id`));
END;--> statement-breakpoint
CREATE TRIGGER `verdicts_verdict_version_delete` AFTER DELETE ON `verdicts` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` = (SELECT `project_id` FROM `judges` WHERE `id` = OLD.`judge_id`);
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_insert` AFTER INSERT ON `judges` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` = NEW.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_update` AFTER UPDATE ON `judges` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` IN (OLD.`project_id`, NEW.`project_id`);
END;--> statement-breakpoint
CREATE TRIGGER `judges_verdict_version_delete` AFTER DELETE ON `judges` BEGIN
  UPDATE `projects` SET `verdict_version` = `verdict_version` + 1 WHERE `id` = OLD.`project_id`;
END;
