/**
 * Task names and guidelines are shown to annotators: renaming a task works, and a
 * text that names one of the project's models (from its responses), judges or
 * providers is refused with a warning until the researcher saves it anyway.
 * Names of another project never count. Also the queue's blind snippets.
 */
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
const { db } = useTempDatabase();

import { myQueue } from "../../app/annotation/annotate.server";
import { queueRows, snippetOf } from "../../app/annotation/queue.server";
import { seedAnnotationScenario, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { annotatorTextsOf, blindingNamesIn, blindingWarning, renameTask } from "../../app/annotation/task-names.server";
import { findTask } from "../../app/annotation/tasks.server";
import { schema } from "../../db/client";

describe("task names and guidelines", async () => {
  const s = await seedAnnotationScenario(db(), {
    annotators: 1,
    items: 3,
    overlap: 1,
    password: "task-names-2026",
    kinds: ["checklist-appropriateness"],
  });
  const taskId = s.tasks["checklist-appropriateness"];
  db()
    .insert(schema.judges)
    .values({ projectId: s.projectId, name: "Sentinel judge", provider: "sentinel-endpoint", model: "acme/Sentinel-34B" })
    .run();
  const other = db().insert(schema.projects).values({ slug: "elsewhere", name: "Elsewhere" }).returning({ id: schema.projects.id }).get();
  db().insert(schema.providers).values({ projectId: other.id, name: "Faraway", kind: "replay", model: "Faraway-1T" }).run();

  it("renames a task with a neutral name", async () => {
    expect(await renameTask(s.projectId, taskId, { name: "  Round 2  ", guidelines: "Be careful.", confirmed: false })).toEqual({
      ok: true,
      message: 'Task renamed to "Round 2".',
    });
    expect((await findTask(s.projectId, taskId, db()))!.name).toBe("Round 2");
    expect((await findTask(s.projectId, taskId, db()))!.guidelines).toBe("Be careful.");
  });

  it("finds models of the responses, judge names, judge models (also without their org prefix) and providers, case-insensitively", async () => {
    expect(await blindingNamesIn(s.projectId, [`compare ${SYNTHETIC_MODELS[1].toLowerCase()} answers`])).toEqual([SYNTHETIC_MODELS[1]]);
    expect(await blindingNamesIn(s.projectId, ["Judged by Sentinel-34B"])).toEqual(["Sentinel-34B"]);
    expect(await blindingNamesIn(s.projectId, ["via sentinel-endpoint", "the Sentinel judge"])).toEqual([
      "Sentinel judge",
      "sentinel-endpoint",
    ]);
    // Another project's names are not this project's business.
    expect(await blindingNamesIn(s.projectId, ["Faraway-1T is fine"])).toEqual([]);
    expect(await blindingNamesIn(s.projectId, ["Judge whether the response is correct."])).toEqual([]);
  });

  it("holds back a name or guidelines naming a model until confirmed, saying which field and which name", async () => {
    const name = `Calibrate ${SYNTHETIC_MODELS[0]} vs ${SYNTHETIC_MODELS[2]}`;
    const r = await renameTask(s.projectId, taskId, { name, guidelines: "Be careful.", confirmed: false });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.warning?.names).toEqual([SYNTHETIC_MODELS[2], SYNTHETIC_MODELS[0]].sort((a, b) => a.localeCompare(b)));
    expect(Object.keys(r.fieldErrors)).toEqual(["name"]);
    expect(r.fieldErrors.name).toContain(`"${SYNTHETIC_MODELS[0]}"`);
    expect((await findTask(s.projectId, taskId, db()))!.name).toBe("Round 2");
    expect((await renameTask(s.projectId, taskId, { name, guidelines: "Be careful.", confirmed: true })).ok).toBe(true);
    expect((await findTask(s.projectId, taskId, db()))!.name).toBe(name);
  });

  it("refuses an empty or overlong name, and overlong guidelines, with the field named", async () => {
    const empty = await renameTask(s.projectId, taskId, { name: "   ", guidelines: "", confirmed: true });
    expect(empty).toEqual({ ok: false, fieldErrors: { name: "Give the task a name." } });
    const long = await renameTask(s.projectId, taskId, { name: "x".repeat(201), guidelines: "g".repeat(20_001), confirmed: true });
    expect(long.ok).toBe(false);
    if (!long.ok) expect(Object.keys(long.fieldErrors).sort()).toEqual(["guidelines", "name"]);
    expect((await renameTask(s.projectId, 999_999, { name: "x", guidelines: "", confirmed: true })).ok).toBe(false);
  });

  it("asks each kind for the texts of its settings that annotators read, and warns beside the field that names a model", async () => {
    const model = SYNTHETIC_MODELS[1];
    const likert = annotatorTextsOf("likert-7", { question: `Is ${model} right?`, lowAnchor: "No", highAnchor: "Yes" });
    expect(likert).toEqual({ "settings.question": `Is ${model} right?`, "settings.lowAnchor": "No", "settings.highAnchor": "Yes" });
    const held = await blindingWarning(s.projectId, { name: "Round 3", guidelines: "", ...likert });
    expect(Object.keys(held!.fieldErrors)).toEqual(["settings.question"]);
    expect(held!.fieldErrors["settings.question"]).toContain(`"${model}"`);
    const anchor = await blindingWarning(s.projectId, {
      ...annotatorTextsOf("likert-7", { question: "Is it right?", lowAnchor: "No", highAnchor: `As good as sentinel-34b` }),
    });
    expect(Object.keys(anchor!.fieldErrors)).toEqual(["settings.highAnchor"]);
    // Writing quality: the penalty reasons annotators choose from (the defaults when none are typed).
    expect(annotatorTextsOf("writing-quality", { penaltyReasons: ["too long", `sounds like ${model}`] })).toEqual({
      penaltyReasons: `too long, sounds like ${model}`,
    });
    expect(
      (await blindingWarning(s.projectId, annotatorTextsOf("writing-quality", { penaltyReasons: [`sounds like ${model}`] })))?.fieldErrors,
    ).toHaveProperty("penaltyReasons");
    expect(await blindingWarning(s.projectId, annotatorTextsOf("writing-quality", {}))).toBeNull();
    // Kinds whose settings hold no text annotators read.
    expect(annotatorTextsOf("best-of-n", { n: 2 })).toEqual({});
    expect(annotatorTextsOf("checklist-appropriateness", {})).toEqual({});
    expect(annotatorTextsOf("no-such-kind", {})).toEqual({});
  });

  it("queue snippets are plain text of the problem and checklist item, never a model name", async () => {
    const rows = await queueRows(taskId, s.annotators[0].id);
    expect(rows.map((r) => r.unitId)).toEqual((await myQueue(taskId, s.annotators[0].id)).map((q) => q.unitId));
    expect(rows[0].snippet).toBe("Problem 1: explain step 1 of the proof. [code]");
    expect(rows[0].checklistItem).toBe("Does the response mention fact 1 of problem 1?");
    for (const r of rows) for (const m of SYNTHETIC_MODELS) expect(JSON.stringify(r)).not.toContain(m);
    expect(snippetOf("a".repeat(300)).length).toBe(110);
    expect(snippetOf("**Bold** [link](http://x) `code`\n\nnext")).toBe("Bold link code next");
  });
});
