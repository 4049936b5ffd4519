/** Small builders for test data, going through the same modules the app uses. */
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { eq } from "drizzle-orm";
import { getDb, schema, type Db } from "../../db/client";
import type { Role } from "../../db/schema";

let counter = 0;
export const TEST_PASSWORD = "correct horse battery";

export async function makeUser(opts: { isSiteAdmin?: boolean; name?: string; password?: string } = {}) {
  counter++;
  const email = `user${counter}-${Date.now()}@example.test`;
  const { id } = await createUser({
    email,
    name: opts.name ?? `User ${counter}`,
    password: opts.password ?? TEST_PASSWORD,
    isSiteAdmin: opts.isSiteAdmin,
  });
  return { id, email, password: opts.password ?? TEST_PASSWORD };
}

export function makeProject(slug = `proj-${++counter}`) {
  return getDb()
    .insert(schema.projects)
    .values({ slug, name: `Project ${slug}` })
    .returning()
    .get();
}

export async function addMember(projectId: number, userId: number, role: Role): Promise<void> {
  await setMembership(projectId, userId, role);
}

export function makeDataset(projectId: number) {
  const db = getDb();
  const dataset = db.insert(schema.datasets).values({ projectId, name: "Fixture set", source: "test fixture" }).returning().get();
  const item = db
    .insert(schema.items)
    .values({ datasetId: dataset.id, sourceId: "fx-1", query: "What is 2 + 2?", domain: "Math", taskType: "exact-match" })
    .returning()
    .get();
  const checklistItem = db
    .insert(schema.checklistItems)
    .values({ itemId: item.id, text: "Does the response say 4?", position: 0 })
    .returning()
    .get();
  db.insert(schema.references).values({ itemId: item.id, text: "4", provenance: "import" }).run();
  const response = db
    .insert(schema.responses)
    .values({ itemId: item.id, model: "Model-X", turn: 1, text: "It is 4.", origin: "import", sourceKey: "x/1" })
    .returning()
    .get();
  return { dataset, item, checklistItem, response };
}

/** A model (name of 3+ characters) whose responses are in the project: a name annotators must never read. */
export function modelOfProject(db: Db, projectId: number): string {
  return db
    .selectDistinct({ model: schema.responses.model })
    .from(schema.responses)
    .innerJoin(schema.items, eq(schema.items.id, schema.responses.itemId))
    .innerJoin(schema.datasets, eq(schema.datasets.id, schema.items.datasetId))
    .where(eq(schema.datasets.projectId, projectId))
    .all()
    .map((r) => r.model)
    .filter((m) => m.length >= 3)[0];
}
