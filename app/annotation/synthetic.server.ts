/**
 * A synthetic benchmark dataset for tests and the annotation benchmark:
 * items with passages, checklists, references and responses from named
 * models over turns. Model names are distinctive so blinding tests can search
 * for them in HTML.
 */
import { getDb, schema, type Db } from "~/db.server";
import { taskKind, type AnnotatableKind } from "~/task-kinds/registry";

export const SYNTHETIC_MODELS = ["Zephyrion-70B", "Quasarix-9B", "Borealis-Mini", "Nimbulon-3"];

export function makeSyntheticDataset(
  projectId: number,
  opts: { items?: number; checklist?: number; models?: string[]; turns?: number; name?: string } = {},
  db: Db = getDb(),
) {
  const n = opts.items ?? 12;
  const models = opts.models ?? SYNTHETIC_MODELS;
  const turns = opts.turns ?? 1;
  return db.transaction((tx) => {
    const dataset = tx
      .insert(schema.datasets)
      .values({ projectId, name: opts.name ?? `Synthetic ${Date.now()}-${Math.random().toString(36).slice(2, 7)}`, source: "synthetic" })
      .returning({ id: schema.datasets.id })
      .get();
    for (let i = 0; i < n; i++) {
      const item = tx
        .insert(schema.items)
        .values({
          datasetId: dataset.id,
          sourceId: `syn-${i + 1}`,
          query: `Problem ${i + 1}: explain **step ${i + 1}** of the proof.\n\n\`\`\`python\nprint(${i})\n\`\`\``,
          passage: i % 2 === 0 ? `Passage for problem ${i + 1}. <script>alert("x")</script>` : null,
          domain: ["Math", "Law", "Chemistry"][i % 3],
          taskType: "free-form",
        })
        .returning({ id: schema.items.id })
        .get();
      for (let c = 0; c < (opts.checklist ?? 3); c++) {
        tx.insert(schema.checklistItems)
          .values({ itemId: item.id, text: `Does the response mention fact ${c + 1} of problem ${i + 1}?`, position: c })
          .run();
      }
      tx.insert(schema.references)
        .values({ itemId: item.id, text: `Reference answer for problem ${i + 1}.`, provenance: "import" })
        .run();
      for (const [m, model] of models.entries()) {
        for (let t = 1; t <= turns; t++) {
          tx.insert(schema.responses)
            .values({
              itemId: item.id,
              model,
              turn: t,
              text: `Answer ${m + 1}.${t} to problem ${i + 1}: a careful argument.`,
              origin: "import",
              sourceKey: `${model}/${t}`,
            })
            .run();
        }
      }
    }
    return { datasetId: dataset.id };
  });
}

/**
 * A ready-to-label scenario on a given database: a project, annotators,
 * a researcher, a synthetic dataset and one task per kind (k = overlap).
 * Used by the browser tests and the annotation benchmark.
 */
export async function seedAnnotationScenario(
  db: Db,
  opts: {
    annotators: number;
    items: number;
    overlap?: number;
    password: string;
    kinds?: AnnotatableKind[];
  },
) {
  const { createUser } = await import("~/auth/accounts.server");
  const { createTask } = await import("./tasks.server");
  const project = db.insert(schema.projects).values({ slug: "lab", name: "Annotation Lab" }).returning({ id: schema.projects.id }).get();
  const researcher = await createUser({ email: "researcher@lab.test", name: "Rae Researcher", password: opts.password }, db);
  db.insert(schema.memberships).values({ projectId: project.id, userId: researcher.id, role: "researcher" }).run();
  const annotators: { id: number; email: string }[] = [];
  for (let i = 0; i < opts.annotators; i++) {
    const email = `annotator${i + 1}@lab.test`;
    const u = await createUser({ email, name: `Annotator ${i + 1}`, password: opts.password }, db);
    db.insert(schema.memberships).values({ projectId: project.id, userId: u.id, role: "annotator" }).run();
    annotators.push({ id: u.id, email });
  }
  const { datasetId } = makeSyntheticDataset(project.id, { items: opts.items, checklist: 1 }, db);
  // The scenario's tasks: the four kinds of the benchmarks unless asked for others.
  const kinds: AnnotatableKind[] = opts.kinds ?? ["checklist-appropriateness", "response-satisfaction", "writing-quality", "best-of-n"];
  const tasks: Record<string, number> = {};
  for (const kind of kinds) {
    // Kinds that compare several responses get four, the reference unmarked among them, ties allowed.
    const compares = taskKind(kind).settings.includes("includeReference");
    tasks[kind] = createTask(
      project.id,
      researcher.id,
      {
        name: `${kind} task`,
        datasetId,
        kind,
        overlap: opts.overlap ?? 2,
        pool: annotators.map((a) => a.id),
        showReference: true,
        guidelines: `# Guidelines for ${kind}\n\nBe **careful**. Score against the reference.`,
        allowTies: compares,
        includeReference: compares,
        n: compares ? 4 : undefined,
      },
      db,
    ).taskId;
  }
  return { projectId: project.id, slug: "lab", researcher, annotators, tasks };
}
