/** Shared fixtures for run tests: a project, a RefineBench-shaped dataset, and providers on a fake server. */
import { schema, type Db } from "../../../db/client";

export function makeRunsFixture(
  db: Db,
  opts: {
    slug?: string;
    items?: number;
    checklist?: number;
    baseUrl: string;
    concurrency?: number;
    providerSettings?: Record<string, unknown>;
  },
) {
  const project = db
    .insert(schema.projects)
    .values({ slug: opts.slug ?? `runs-${Math.random().toString(36).slice(2, 8)}`, name: "Runs" })
    .returning()
    .get();
  const dataset = db.insert(schema.datasets).values({ projectId: project.id, name: "RB mini", source: "test" }).returning().get();
  const nItems = opts.items ?? 3;
  const nCheck = opts.checklist ?? 2;
  const items = [];
  for (let i = 0; i < nItems; i++) {
    const item = db
      .insert(schema.items)
      .values({ datasetId: dataset.id, sourceId: `rb-${i}`, query: `Problem ${i}?`, domain: i % 2 ? "Math" : "Law", taskType: "free-form" })
      .returning()
      .get();
    for (let k = 0; k < nCheck; k++)
      db.insert(schema.checklistItems)
        .values({ itemId: item.id, text: `Does the response mention point ${k + 1}?`, position: k })
        .run();
    db.insert(schema.references)
      .values({ itemId: item.id, text: `Reference ${i}` })
      .run();
    items.push(item);
  }
  const settings = {
    timeoutMs: 2_000,
    maxRetries: 3,
    backoffBaseMs: 5,
    backoffMaxMs: 20,
    pricePerMillionInput: 1,
    pricePerMillionOutput: 2,
    ...(opts.providerSettings ?? {}),
  };
  const target = db
    .insert(schema.providers)
    .values({
      projectId: project.id,
      name: "target",
      kind: "openai-compatible",
      baseUrl: opts.baseUrl,
      apiKey: "sk-target-SECRET",
      model: "tiny-model",
      settings,
      concurrency: opts.concurrency ?? 8,
    })
    .returning()
    .get();
  const judge = db
    .insert(schema.providers)
    .values({
      projectId: project.id,
      name: "judge",
      kind: "openai-compatible",
      baseUrl: opts.baseUrl,
      apiKey: "sk-judge-SECRET",
      model: "judge-model",
      settings,
      concurrency: opts.concurrency ?? 8,
    })
    .returning()
    .get();
  return { project, dataset, items, target, judge };
}

/** A fake-server script: the judge answers every checklist line Yes unless `judge` says otherwise; the target writes "answer". */
export function refineScript(judge?: (prompt: string, n: number) => string) {
  return (req: { body: Record<string, unknown>; n: number }) => {
    const messages = (req.body.messages ?? []) as { role: string; content: string }[];
    const last = messages[messages.length - 1]?.content ?? "";
    if (last.includes("### Checklist (Evaluation Items)")) {
      const ids = [...last.split("### Checklist (Evaluation Items)")[1].matchAll(/^(Q\d+):/gm)].map((m) => m[1]);
      return judge ? judge(last, req.n) : ids.map((id) => `${id}: Yes`).join("\n");
    }
    return `answer after ${messages.filter((m) => m.role === "user").length} user turns`;
  };
}
