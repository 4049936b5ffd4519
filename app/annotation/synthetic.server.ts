/**
 * A synthetic benchmark dataset for tests and the annotation benchmark:
 * items with passages, checklists, references and responses from named
 * models over turns. Model names are distinctive so blinding tests can search
 * for them in HTML.
 */
import { getDb, schema, type Db } from "~/db.server";

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
        tx.insert(schema.checklistItems).values({ itemId: item.id, text: `Does the response mention fact ${c + 1} of problem ${i + 1}?`, position: c }).run();
      }
      tx.insert(schema.references).values({ itemId: item.id, text: `Reference answer for problem ${i + 1}.`, provenance: "import" }).run();
      for (const [m, model] of models.entries()) {
        for (let t = 1; t <= turns; t++) {
          tx.insert(schema.responses)
            .values({ itemId: item.id, model, turn: t, text: `Answer ${m + 1}.${t} to problem ${i + 1}: a careful argument.`, origin: "import", sourceKey: `${model}/${t}` })
            .run();
        }
      }
    }
    return { datasetId: dataset.id };
  });
}
