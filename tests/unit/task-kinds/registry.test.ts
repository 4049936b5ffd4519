/**
 * The task-kind registries agree with the folders: every folder of app/task-kinds with
 * an index.ts is a kind, listed once in each list a bundle needs (kinds.ts for the rules,
 * forms.ts for the annotate page, fields.ts for the task and adjudication pages), with
 * the same id in its form and fields; a kind that asks for settings of its own checks
 * them with its own schema (its config.server.ts, reached from its index.ts).
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { kindFields } from "~/task-kinds/fields-registry";
import { kindForm } from "~/task-kinds/form-registry";
import { TASK_KIND_LIST } from "~/task-kinds/registry";
import { kindSettings } from "~/task-kinds/registry.server";

const dir = path.join(process.cwd(), "app/task-kinds");
const folders = readdirSync(dir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "index.ts")))
  .map((d) => d.name)
  .sort();

describe("task-kind registries", () => {
  it("list every kind folder once, by its folder's name", () => {
    expect(folders.length).toBeGreaterThanOrEqual(5);
    expect(TASK_KIND_LIST.map((k) => k.id).sort()).toEqual(folders);
  });

  it("give every kind its annotate form and its gold and final-label fields, under its id", () => {
    for (const k of TASK_KIND_LIST) {
      expect(kindForm(k.id).id, k.id).toBe(k.id);
      expect(kindFields(k.id).id, k.id).toBe(k.id);
    }
  });

  it("check a kind's own settings with its schema, and take none for a kind without", () => {
    for (const k of TASK_KIND_LIST) {
      const texts = k.textSettings ?? [];
      const empty = kindSettings(k.id, Object.fromEntries(texts.map((t) => [t.name, ""])));
      if (texts.some((t) => t.required)) expect(empty.ok, k.id).toBe(false);
      else expect(empty, k.id).toEqual({ ok: true, settings: {} });
    }
  });
});
