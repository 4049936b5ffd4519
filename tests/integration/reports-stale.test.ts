/**
 * Labels and verdicts made stale by a curation edit: counted by default (with a
 * note), or left out of every figure with ?stale=exclude — on the pages and in the
 * CSV, with exactly the figures app/stats computes on the labels that remain.
 */
import Papa from "papaparse";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accuracy, fleissKappa, percentAgreement, type Label, type Rating } from "../../app/stats";
import { editChecklistItem } from "../../app/curation/versions.server";
import { getDb, schema } from "../../db/client";
import { labelledProject, SAT_UNITS, type seedLabelled } from "../fixtures/reports/labelled";
import { useTempDatabase } from "../support/db";
import { args, get, run } from "../support/http";
import * as taskPage from "../../app/routes/p.$slug.reports.$taskId._index";
import * as judgesPage from "../../app/routes/p.$slug.reports.$taskId.judges";
import * as csvRoute from "../../app/routes/p.$slug.reports.$taskId.csv";

useTempDatabase();

type Row = Record<string, unknown>;
const CATS = ["Yes", "No"];
/** Units whose checklist item is edited below: their labels and verdicts become stale. */
const EDITED = [2, 3];
let slug: string;
let cookie: string;
let fx: ReturnType<typeof seedLabelled>;

const M: Rating[][] = SAT_UNITS.map(([, , labels]) => labels.map((l) => l));
const fresh = M.filter((_, i) => !EDITED.includes(i));

async function page(mod: { loader: Parameters<typeof run>[0] }, path: string) {
  const res = await run(mod.loader, args(get(path, cookie), { slug, taskId: String(fx.satTaskId) }));
  expect(res.status, path).toBe(200);
  return res.json();
}
const stat = (rows: Row[], label: string) => rows.find((r) => r.statistic === label)!;

beforeAll(async () => {
  const setup = await labelledProject("stale-reports");
  ({ cookie, fx } = setup);
  slug = setup.project.slug;
  const researcher = setup.researcher;
  for (const i of EDITED) {
    const unit = getDb().select({ ck: schema.units.checklistItemId }).from(schema.units).where(eq(schema.units.id, fx.unitIds[i])).get()!;
    const r = await editChecklistItem(
      unit.ck!,
      { text: `Does the response fully answer question ${i}?` },
      { userId: researcher.id, reason: "sharper wording" },
    );
    expect(r.stale).toEqual({ annotations: 2, verdicts: 2 }); // two labels, one verdict per judge
  }
});

describe("stale labels and verdicts", () => {
  it("are counted by default, and the page says how many there are", async () => {
    const data = await page(taskPage, `/p/${slug}/reports/${fx.satTaskId}`);
    expect(data.stale).toEqual({ labels: 4, verdicts: 4 });
    expect(data.report.stale).toBe("include");
    expect(stat(data.report.tables.iaa.rows, "Percent agreement").value).toBe(percentAgreement(M, { categories: CATS }));
    expect(stat(data.report.tables.iaa.rows, "Fleiss' kappa").value).toBe(fleissKappa(M).kappa);
  });

  it("?stale=exclude leaves them out of the agreement figures and the CSV", async () => {
    const data = await page(taskPage, `/p/${slug}/reports/${fx.satTaskId}?stale=exclude`);
    expect(data.report.stale).toBe("exclude");
    const iaa: Row[] = data.report.tables.iaa.rows;
    expect(stat(iaa, "Percent agreement")).toMatchObject({ value: percentAgreement(fresh, { categories: CATS }), n: fresh.length });
    expect(stat(iaa, "Fleiss' kappa").value).toBe(fleissKappa(fresh).kappa);
    const labels = M.flat().filter((x) => x != null).length;
    // The current labels less the 4 stale ones of the 2 edited units.
    expect(data.report.counts.annotations).toBe(labels - 4);
    const res = await run(
      csvRoute.loader,
      args(get(`/p/${slug}/reports/${fx.satTaskId}/csv?table=iaa&stale=exclude`, cookie), { slug, taskId: String(fx.satTaskId) }),
    );
    const csv = Papa.parse<Record<string, string>>(await res.text(), { header: true, skipEmptyLines: true }).data;
    expect(Number(csv.find((r) => r.Statistic === "Fleiss' kappa")!.Value)).toBe(fleissKappa(fresh).kappa);
  });

  it("?stale=exclude leaves stale verdicts out of the judge figures", async () => {
    const majority = (xs: Rating[]): Label | null => {
      const yes = xs.filter((x) => x === "Yes").length;
      const no = xs.filter((x) => x === "No").length;
      return yes > no ? "Yes" : no > yes ? "No" : null;
    };
    const expected = (keep: (i: number) => boolean) => {
      const h: Label[] = [];
      const j: Label[] = [];
      SAT_UNITS.forEach(([, , labels, ja], i) => {
        const f = majority(labels);
        if (f !== null && keep(i)) {
          h.push(f);
          j.push(ja);
        }
      });
      return { n: h.length, accuracy: accuracy(h, j) };
    };
    // One more verdict goes stale on its own (its labels stay fresh): judge-a's on unit 5.
    const unit5 = getDb()
      .select({ responseId: schema.units.responseId })
      .from(schema.units)
      .where(eq(schema.units.id, fx.unitIds[5]))
      .get()!;
    getDb().update(schema.verdicts).set({ staleAt: 1 }).where(eq(schema.verdicts.responseId, unit5.responseId!)).run();
    const all = (await page(judgesPage, `/p/${slug}/reports/${fx.satTaskId}/judges`)).report.tables.judges.rows as Row[];
    expect(all.find((r) => r.judge === "judge-a")).toMatchObject(expected(() => true));
    const data = await page(judgesPage, `/p/${slug}/reports/${fx.satTaskId}/judges?stale=exclude`);
    expect(data.stale).toEqual({ labels: 4, verdicts: 6 });
    const rows: Row[] = data.report.tables.judges.rows;
    expect(rows.find((r) => r.judge === "judge-a")).toMatchObject(expected((i) => !EDITED.includes(i) && i !== 5));
  });
});
