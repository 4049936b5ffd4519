-- The report-freshness counters (see task_data_versions and project_verdict_versions in db/schema.ts),
-- kept by triggers as on SQLite, so every writer (the app, the CLI import, the run worker, a hand-run
-- SQL fix) keeps them true. One trigger here for each SQLite trigger, same events, same conditions.
CREATE FUNCTION concord_task_version_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "task_data_versions" ("task_id", "version") VALUES (NEW."id", 0) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION concord_project_version_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "project_verdict_versions" ("project_id", "version") VALUES (NEW."id", 0) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "tasks_data_version_row" AFTER INSERT ON "tasks" FOR EACH ROW EXECUTE FUNCTION concord_task_version_row();--> statement-breakpoint
CREATE TRIGGER "projects_verdict_version_row" AFTER INSERT ON "projects" FOR EACH ROW EXECUTE FUNCTION concord_project_version_row();--> statement-breakpoint
-- Bumps the data version of the tasks of the given assignments / units / datasets.
CREATE FUNCTION concord_bump_tasks_of_assignments(ids bigint[]) RETURNS void LANGUAGE sql AS $$
  UPDATE "task_data_versions" SET "version" = "version" + 1
  WHERE "task_id" IN (SELECT u."task_id" FROM "assignments" a JOIN "units" u ON u."id" = a."unit_id" WHERE a."id" = ANY(ids));
$$;--> statement-breakpoint
CREATE FUNCTION concord_annotations_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN PERFORM concord_bump_tasks_of_assignments(ARRAY[NEW."assignment_id"]);
  ELSIF TG_OP = 'UPDATE' THEN PERFORM concord_bump_tasks_of_assignments(ARRAY[OLD."assignment_id", NEW."assignment_id"]);
  ELSE PERFORM concord_bump_tasks_of_assignments(ARRAY[OLD."assignment_id"]);
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "annotations_data_version_insert" AFTER INSERT ON "annotations" FOR EACH ROW
  WHEN (NEW."status" = 'submitted') EXECUTE FUNCTION concord_annotations_data_version();--> statement-breakpoint
CREATE TRIGGER "annotations_data_version_update" AFTER UPDATE ON "annotations" FOR EACH ROW
  WHEN (OLD."status" = 'submitted' OR NEW."status" = 'submitted') EXECUTE FUNCTION concord_annotations_data_version();--> statement-breakpoint
CREATE TRIGGER "annotations_data_version_delete" AFTER DELETE ON "annotations" FOR EACH ROW
  WHEN (OLD."status" = 'submitted') EXECUTE FUNCTION concord_annotations_data_version();--> statement-breakpoint
CREATE FUNCTION concord_assignments_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    UPDATE "task_data_versions" SET "version" = "version" + 1
    WHERE "task_id" IN (SELECT "task_id" FROM "units" WHERE "id" IN (OLD."unit_id", NEW."unit_id"));
  ELSE
    UPDATE "task_data_versions" SET "version" = "version" + 1 WHERE "task_id" = (SELECT "task_id" FROM "units" WHERE "id" = OLD."unit_id");
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "assignments_data_version_delete" AFTER DELETE ON "assignments" FOR EACH ROW EXECUTE FUNCTION concord_assignments_data_version();--> statement-breakpoint
CREATE TRIGGER "assignments_data_version_update" AFTER UPDATE OF "unit_id", "annotator_id" ON "assignments" FOR EACH ROW
  EXECUTE FUNCTION concord_assignments_data_version();--> statement-breakpoint
CREATE FUNCTION concord_units_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "task_data_versions" SET "version" = "version" + 1 WHERE "task_id" = OLD."task_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "units_data_version_delete" AFTER DELETE ON "units" FOR EACH ROW EXECUTE FUNCTION concord_units_data_version();--> statement-breakpoint
CREATE FUNCTION concord_items_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "task_data_versions" SET "version" = "version" + 1
  WHERE "task_id" IN (SELECT "id" FROM "tasks" WHERE "dataset_id" IN (OLD."dataset_id", NEW."dataset_id"));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "items_data_version_update" AFTER UPDATE OF "domain", "subject", "task_type" ON "items" FOR EACH ROW
  EXECUTE FUNCTION concord_items_data_version();--> statement-breakpoint
CREATE FUNCTION concord_responses_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "task_data_versions" SET "version" = "version" + 1
  WHERE "task_id" IN (SELECT "id" FROM "tasks" WHERE "dataset_id" IN (SELECT "dataset_id" FROM "items" WHERE "id" IN (OLD."item_id", NEW."item_id")));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "responses_data_version_update" AFTER UPDATE OF "model", "turn", "text" ON "responses" FOR EACH ROW
  EXECUTE FUNCTION concord_responses_data_version();--> statement-breakpoint
-- project_verdict_versions: the freshness key of memoised judge reports.
CREATE FUNCTION concord_verdicts_verdict_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "project_verdict_versions" SET "version" = "version" + 1 WHERE "project_id" = (SELECT "project_id" FROM "judges" WHERE "id" = NEW."judge_id");
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE "project_verdict_versions" SET "version" = "version" + 1
    WHERE "project_id" IN (SELECT "project_id" FROM "judges" WHERE "id" IN (OLD."judge_id", NEW."judge_id"));
  ELSE
    UPDATE "project_verdict_versions" SET "version" = "version" + 1 WHERE "project_id" = (SELECT "project_id" FROM "judges" WHERE "id" = OLD."judge_id");
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "verdicts_verdict_version_insert" AFTER INSERT ON "verdicts" FOR EACH ROW EXECUTE FUNCTION concord_verdicts_verdict_version();--> statement-breakpoint
CREATE TRIGGER "verdicts_verdict_version_update" AFTER UPDATE ON "verdicts" FOR EACH ROW EXECUTE FUNCTION concord_verdicts_verdict_version();--> statement-breakpoint
CREATE TRIGGER "verdicts_verdict_version_delete" AFTER DELETE ON "verdicts" FOR EACH ROW EXECUTE FUNCTION concord_verdicts_verdict_version();--> statement-breakpoint
CREATE FUNCTION concord_judges_verdict_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "project_verdict_versions" SET "version" = "version" + 1 WHERE "project_id" = NEW."project_id";
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE "project_verdict_versions" SET "version" = "version" + 1 WHERE "project_id" IN (OLD."project_id", NEW."project_id");
  ELSE
    UPDATE "project_verdict_versions" SET "version" = "version" + 1 WHERE "project_id" = OLD."project_id";
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "judges_verdict_version_insert" AFTER INSERT ON "judges" FOR EACH ROW EXECUTE FUNCTION concord_judges_verdict_version();--> statement-breakpoint
CREATE TRIGGER "judges_verdict_version_update" AFTER UPDATE ON "judges" FOR EACH ROW EXECUTE FUNCTION concord_judges_verdict_version();--> statement-breakpoint
CREATE TRIGGER "judges_verdict_version_delete" AFTER DELETE ON "judges" FOR EACH ROW EXECUTE FUNCTION concord_judges_verdict_version();
