import { z } from "zod";
import { ImportRefusal } from "../problems";
import { readJson } from "../source.server";
import { optText, reqId, reqText } from "./fields";
import type { Preset } from "./types";

const refinebenchRecord = z.object({
  index: reqId,
  field: optText,
  subject: optText,
  question: reqText,
  reference_answer: z.union([z.string(), z.array(z.string())]).optional(),
  materials: z.array(z.unknown()).optional(),
  checklist: z.array(z.string().min(1), { error: "expected a list of yes/no questions" }),
  exam_type: optText,
});

export const refinebench: Preset = {
  name: "refinebench",
  summary: "RefineBench samples (refinebench_samples.json): a JSON object field → list of problems, unweighted checklists",
  kind: "benchmark",
  formats: ["json"],
  datasetName: () => "RefineBench",
  async run(ctx) {
    // Read whole: the file is a JSON object (field → list of problems), not an array of records.
    const doc = await readJson(ctx.file, ctx.onBytes);
    const records: [string, unknown][] = Array.isArray(doc)
      ? doc.map((r, i) => [`[${i}]`, r])
      : doc && typeof doc === "object"
        ? Object.entries(doc as Record<string, unknown>).flatMap(([k, list]) =>
            Array.isArray(list) ? list.map((r, i) => [`${k}[${i}]`, r] as [string, unknown]) : [],
          )
        : [];
    if (records.length === 0)
      throw new ImportRefusal("Expected RefineBench problems: a JSON object of field → list of problems, or a list.");
    records.forEach(([where, raw], i) => {
      const row = i + 1;
      const r = refinebenchRecord.safeParse(raw);
      if (!r.success) {
        for (const iss of r.error.issues) ctx.sink.error({ row, field: `${where}.${iss.path.join(".")}`, message: iss.message });
        return;
      }
      const d = r.data;
      const rec = raw as Record<string, unknown>;
      const materials = (d.materials ?? []).map((m) => (typeof m === "string" ? m : JSON.stringify(m))).filter((m) => m.trim());
      const known = new Set(["index", "field", "subject", "question", "reference_answer", "checklist", "exam_type"]);
      ctx.sink.item(
        {
          sourceId: d.index,
          query: d.question,
          passage: materials.length ? materials.join("\n\n") : null,
          domain: d.field ?? null,
          subject: d.subject ?? null,
          taskType: d.exam_type ? d.exam_type.toLowerCase().replace(/\s+/g, "-") : null,
          language: "en",
          metadata: Object.fromEntries(Object.entries(rec).filter(([k]) => !known.has(k))),
          references: d.reference_answer === undefined ? [] : Array.isArray(d.reference_answer) ? d.reference_answer : [d.reference_answer],
          checklist: d.checklist.map((text) => ({ text, weight: null })),
        },
        row,
      );
    });
  },
};
