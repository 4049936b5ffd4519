/**
 * A project with many annotations, written straight into a SQLite file (one transaction of prepared
 * statements, about a second per 100,000 rows), for the export pagination test and `npm run bench:api`:
 * one Yes/No task of ceil(n / 3) units over as many items, three annotators taking each unit in turn
 * (the last unit gets what is left), one submitted annotation per assignment. Some labels, notes and item
 * ids start with "=" or "+" so that a CSV of them must escape formula cells.
 */
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { openDatabase } from "../../db/client";

export type BigProject = { projectId: number; taskId: number; researcherId: number; annotatorIds: number[]; annotations: number };

export async function writeBigAnnotationProject(
  file: string,
  n: number,
  opts: { slug?: string; researcher?: { email: string; name: string; password: string } } = {},
): Promise<BigProject> {
  const db = openDatabase(file);
  try {
    const slug = opts.slug ?? "big";
    const researcherInput = opts.researcher ?? {
      email: `${slug}-researcher@lab.test`,
      name: "Big Researcher",
      password: "big password 123",
    };
    const researcher = await createUser(researcherInput, db);
    const sqlite = db.$client;
    const projectId = Number(sqlite.prepare("INSERT INTO projects (slug, name) VALUES (?, ?)").run(slug, `Big ${slug}`).lastInsertRowid);
    await setMembership(projectId, researcher.id, "researcher", db);
    const annotatorIds: number[] = [];
    for (let a = 0; a < 3; a++) {
      const u = await createUser({ email: `${slug}-ann${a}@lab.test`, name: `Annotator ${a}`, password: "big password 123" }, db);
      await setMembership(projectId, u.id, "annotator", db);
      annotatorIds.push(u.id);
    }
    let taskId = 0;
    sqlite.transaction(() => {
      const datasetId = Number(
        sqlite.prepare("INSERT INTO datasets (project_id, name) VALUES (?, ?)").run(projectId, "Big set").lastInsertRowid,
      );
      taskId = Number(
        sqlite
          .prepare(
            "INSERT INTO tasks (project_id, dataset_id, kind, name, overlap, config) VALUES (?, ?, 'response-satisfaction', ?, 3, '{}')",
          )
          .run(projectId, datasetId, "Big task").lastInsertRowid,
      );
      const item = sqlite.prepare("INSERT INTO items (dataset_id, source_id, query) VALUES (?, ?, ?)");
      const unit = sqlite.prepare("INSERT INTO units (task_id, item_id, position) VALUES (?, ?, ?)");
      const assignment = sqlite.prepare(
        "INSERT INTO assignments (unit_id, annotator_id, status, started_at, submitted_at) VALUES (?, ?, 'submitted', ?, ?)",
      );
      const annotation = sqlite.prepare(
        "INSERT INTO annotations (assignment_id, revision, label, notes, status, duration_ms, created_at) VALUES (?, 1, ?, ?, 'submitted', ?, ?)",
      );
      const t0 = 1_780_000_000;
      for (let u = 0, written = 0; written < n; u++) {
        const itemId = Number(item.run(datasetId, u % 97 === 0 ? `=item-${u}` : `item-${u}`, `Question ${u}`).lastInsertRowid);
        const unitId = Number(unit.run(taskId, itemId, u).lastInsertRowid);
        for (let a = 0; a < 3 && written < n; a++, written++) {
          const asg = Number(assignment.run(unitId, annotatorIds[(u + a) % 3], t0 + u, t0 + u + 30).lastInsertRowid);
          const label = JSON.stringify((u + a) % 2 === 0 ? "Yes" : "No");
          const notes = u % 101 === 0 ? JSON.stringify(`+SUM(A1:A${a + 2})`) : null;
          annotation.run(asg, label, notes, 1000 + ((u * 7 + a) % 5000), t0 + u + 30);
        }
      }
    })();
    return { projectId, taskId, researcherId: researcher.id, annotatorIds, annotations: n };
  } finally {
    db.$client.close();
  }
}
