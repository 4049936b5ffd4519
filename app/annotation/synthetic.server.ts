/**
 * A synthetic benchmark dataset for tests and the annotation benchmark:
 * items with passages, checklists, references and responses from named
 * models over turns. Model names are distinctive so blinding tests can search
 * for them in HTML.
 */
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { taskKind, type AnnotatableKind } from "~/task-kinds/registry";

export const SYNTHETIC_MODELS = ["Zephyrion-70B", "Quasarix-9B", "Borealis-Mini", "Nimbulon-3"];

export async function makeSyntheticDataset(
  projectId: number,
  opts: { items?: number; checklist?: number; models?: string[]; turns?: number; name?: string } = {},
  db: DalLike = getDal(),
): Promise<{ datasetId: number }> {
  const d = dalOf(db);
  const { datasets, items, checklistItems, references, responses } = d.t;
  const n = opts.items ?? 12;
  const models = opts.models ?? SYNTHETIC_MODELS;
  const turns = opts.turns ?? 1;
  const name = opts.name ?? `Synthetic ${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;
  return d.tx(async (tx) => {
    const [dataset] = await tx.insert(datasets).values({ projectId, name, source: "synthetic" }).returning({ id: datasets.id });
    for (let i = 0; i < n; i++) {
      const [item] = await tx
        .insert(items)
        .values({
          datasetId: dataset.id,
          sourceId: `syn-${i + 1}`,
          query: `Problem ${i + 1}: explain **step ${i + 1}** of the proof.\n\n\`\`\`python\nprint(${i})\n\`\`\``,
          passage: i % 2 === 0 ? `Passage for problem ${i + 1}. <script>alert("x")</script>` : null,
          domain: ["Math", "Law", "Chemistry"][i % 3],
          taskType: "free-form",
        })
        .returning({ id: items.id });
      // One insert per table and item, rows in the order (and so with the ids) one insert each would give.
      const checklist = Array.from({ length: opts.checklist ?? 3 }, (_, c) => ({
        itemId: item.id,
        text: `Does the response mention fact ${c + 1} of problem ${i + 1}?`,
        position: c,
      }));
      if (checklist.length) await tx.insert(checklistItems).values(checklist);
      await tx.insert(references).values({ itemId: item.id, text: `Reference answer for problem ${i + 1}.`, provenance: "import" });
      const answers = [...models.entries()].flatMap(([m, model]) =>
        Array.from({ length: turns }, (_, k) => ({
          itemId: item.id,
          model,
          turn: k + 1,
          text: `Answer ${m + 1}.${k + 1} to problem ${i + 1}: a careful argument.`,
          origin: "import" as const,
          sourceKey: `${model}/${k + 1}`,
        })),
      );
      if (answers.length) await tx.insert(responses).values(answers);
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
  db: DalLike,
  opts: {
    annotators: number;
    items: number;
    overlap?: number;
    password: string;
    kinds?: AnnotatableKind[];
  },
) {
  const d = dalOf(db);
  const { projects, memberships } = d.t;
  const { createUser } = await import("~/auth/accounts.server");
  const { createTask } = await import("./tasks.server");
  const [project] = await d.tx((tx) => tx.insert(projects).values({ slug: "lab", name: "Annotation Lab" }).returning({ id: projects.id }));
  const researcher = await createUser({ email: "researcher@lab.test", name: "Rae Researcher", password: opts.password }, d);
  await d.tx((tx) => tx.insert(memberships).values({ projectId: project.id, userId: researcher.id, role: "researcher" }));
  const annotators: { id: number; email: string }[] = [];
  for (let i = 0; i < opts.annotators; i++) {
    const email = `annotator${i + 1}@lab.test`;
    const u = await createUser({ email, name: `Annotator ${i + 1}`, password: opts.password }, d);
    await d.tx((tx) => tx.insert(memberships).values({ projectId: project.id, userId: u.id, role: "annotator" }));
    annotators.push({ id: u.id, email });
  }
  const { datasetId } = await makeSyntheticDataset(project.id, { items: opts.items, checklist: 1 }, d);
  // The scenario's tasks: the four kinds of the benchmarks unless asked for others.
  const kinds: AnnotatableKind[] = opts.kinds ?? ["checklist-appropriateness", "response-satisfaction", "writing-quality", "best-of-n"];
  const tasks: Record<string, number> = {};
  for (const kind of kinds) {
    // Kinds that compare several responses get four, the reference unmarked among them, ties allowed.
    const compares = taskKind(kind).settings.includes("includeReference");
    tasks[kind] = (
      await createTask(
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
        d,
      )
    ).taskId;
  }
  return { projectId: project.id, slug: "lab", researcher, annotators, tasks };
}
