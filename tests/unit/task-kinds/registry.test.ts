/**
 * The task-kind registry agrees with the folders: every folder of app/task-kinds with an
 * index.ts is a kind, listed once in kinds.ts, the one list (its index.ts names its annotate
 * form and its gold and final-label fields as dynamic imports, so no other list exists to
 * keep in step); each kind's form and fields load and carry its id; a kind that asks for
 * settings of its own checks them with its own schema (its config.server.ts, reached from
 * its index.ts).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { kindFields, loadKindFields } from "~/task-kinds/fields-registry";
import { kindForm, loadKindForm } from "~/task-kinds/form-registry";
import { loadKindParts } from "~/task-kinds/parts";
import { TASK_KIND_LIST } from "~/task-kinds/registry";
import { kindSettings } from "~/task-kinds/registry.server";

const dir = path.join(process.cwd(), "app/task-kinds");
const folders = readdirSync(dir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "index.ts")))
  .map((d) => d.name)
  .sort();

describe("task-kind registry", () => {
  it("lists every kind folder once, by its folder's name", () => {
    expect(folders.length).toBeGreaterThanOrEqual(5);
    expect(TASK_KIND_LIST.map((k) => k.id).sort()).toEqual(folders);
  });

  it("is one list: a kind is added with its folder and one line in kinds.ts", () => {
    for (const gone of ["forms.ts", "fields.ts", "forms.tsx", "fields.tsx"]) expect(existsSync(path.join(dir, gone)), gone).toBe(false);
    // kinds.ts has one export line per kind and nothing else that names a kind.
    const lines = readFileLines(path.join(dir, "kinds.ts")).filter((l) => l.startsWith("export"));
    expect(lines).toHaveLength(TASK_KIND_LIST.length);
  });

  it("loads every kind's own annotate form and gold and final-label fields, under its id", async () => {
    for (const k of TASK_KIND_LIST) {
      expect((await k.form()).id, k.id).toBe(k.id);
      expect((await k.fields()).id, k.id).toBe(k.id);
      expect((await loadKindForm(k.id)).id, k.id).toBe(k.id);
      expect((await loadKindFields(k.id)).id, k.id).toBe(k.id);
    }
  });

  it("refuses a kind not labelled in Concord", async () => {
    await expect(loadKindForm("imported-labels")).rejects.toThrow(/not labelled in Concord/);
    await expect(loadKindFields("imported-labels")).rejects.toThrow(/not labelled in Concord/);
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

describe("task-kind parts, as the server loads them", () => {
  beforeAll(() => loadKindParts());

  it("look up every kind of kinds.ts synchronously once loaded", () => {
    for (const k of TASK_KIND_LIST) {
      expect(kindForm(k.id).id, k.id).toBe(k.id);
      expect(typeof kindForm(k.id).annotate, k.id).toBe("object");
      expect(kindFields(k.id).id, k.id).toBe(k.id);
      expect(typeof kindFields(k.id).Gold, k.id).toBe("function");
    }
  });
});

function readFileLines(file: string): string[] {
  return readFileSync(file, "utf8").split("\n");
}
