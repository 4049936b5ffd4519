/** Column mapping and row reading shared by the column-mapped presets (CSV, JSONL, a JSON array of records). */
import path from "node:path";
import { ImportRefusal } from "../problems";
import { readCsv, readJsonArray, readJsonl, type SourceRecord } from "../source.server";
import type { FieldSpec, PresetContext } from "./types";

/** Whether a fast path may be used (tests turn it off to compare it with the schema path). */
export const tuning = { fastPaths: true };

/** Which source column each canonical field reads, from the mapping or the aliases. */
export function resolveColumns(fields: FieldSpec[], header: string[], mapping: Record<string, string>): Record<string, string | undefined> {
  const have = new Set(header);
  const lower = new Map(header.map((h) => [h.toLowerCase(), h]));
  const out: Record<string, string | undefined> = {};
  for (const f of fields) {
    const mapped = mapping[f.name];
    if (mapped) {
      if (!have.has(mapped)) {
        throw new ImportRefusal(`Mapped column "${mapped}" (for ${f.name}) is not in the file; the header has: ${header.join(", ")}.`, {
          row: 1,
          field: mapped,
          message: `mapped column "${mapped}" for ${f.name} is not in the header (${header.join(", ")})`,
        });
      }
      out[f.name] = mapped;
      continue;
    }
    out[f.name] = [f.name, ...f.aliases].map((a) => lower.get(a.toLowerCase())).find(Boolean);
    if (!out[f.name] && f.required) {
      throw new ImportRefusal(`Missing column "${f.name}": the header has ${header.join(", ")}.`, {
        row: 1,
        field: f.name,
        message: `missing column "${f.name}" (also looked for ${f.aliases.join(", ") || "no other name"}; the header has: ${header.join(", ")}); map it with --map ${f.name}=COLUMN`,
      });
    }
  }
  return out;
}

export function pick(record: SourceRecord, columns: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, col] of Object.entries(columns)) if (col) out[k] = record[col];
  return out;
}

/** Runs rows of a CSV or JSONL file through `each`, resolving columns from the header / each record's keys. */
export async function eachRow(
  ctx: PresetContext,
  fields: FieldSpec[],
  each: (mapped: Record<string, unknown>, row: number, record: SourceRecord, columns: Record<string, string | undefined>) => void,
  /** CSV only: tries a row first; returns false to hand it to `each`. */
  fastCsv?: (record: SourceRecord, row: number, columns: Record<string, string | undefined>) => boolean,
): Promise<void> {
  let columns: Record<string, string | undefined> | undefined;
  let rows: number;
  if (ctx.format === "csv") {
    rows = await readCsv(ctx.file, {
      header: (h) => {
        columns = resolveColumns(fields, h, ctx.mapping);
      },
      row:
        fastCsv && tuning.fastPaths
          ? (rec, row) => {
              if (!fastCsv(rec, row, columns!)) each(pick(rec, columns!), row, rec, columns!);
            }
          : (rec, row) => each(pick(rec, columns!), row, rec, columns!),
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
  } else if (ctx.format === "json") {
    // A JSON array of records, streamed one record at a time, read as JSONL would read one record per line.
    rows = await readJsonArray(
      ctx.file,
      {
        element: (rec, row) => {
          if (rec === null || typeof rec !== "object" || Array.isArray(rec)) {
            ctx.sink.error({ row, message: "each record must be a JSON object ({...})" });
            return;
          }
          const cols = resolveJsonColumns(fields, rec as SourceRecord, ctx.mapping);
          each(pick(rec as SourceRecord, cols), row, rec as SourceRecord, cols);
        },
        problem: (p) => ctx.sink.error(p),
        bytes: ctx.onBytes,
      },
      "Expected a JSON array of records ([{...}, {...}]).",
    );
  } else {
    rows = await readJsonl(ctx.file, {
      row: (rec, row) => {
        const cols = resolveJsonColumns(fields, rec, ctx.mapping);
        each(pick(rec, cols), row, rec, cols);
      },
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
  }
  if (rows === 0 && ctx.sink.errorCount === 0) {
    throw new ImportRefusal(
      ctx.format === "csv"
        ? "The file has a header row but no data rows."
        : ctx.format === "json"
          ? "The file's JSON array is empty."
          : "The file has no JSON lines.",
    );
  }
}

/**
 * Each record of a JSONL file or of a JSON array of records (by ctx.format), for the presets that
 * read a record with their own schema (c3ebench, fb-bench-judgments): a JSON array is read as JSONL
 * would be, one record per element, numbered from 1. Refuses a file with no records.
 */
export async function eachRecord(ctx: PresetContext, record: (raw: SourceRecord, row: number) => void, notArray: string): Promise<void> {
  let n = 0;
  const each = (raw: SourceRecord, row: number) => {
    n++;
    record(raw, row);
  };
  if (ctx.format === "json") {
    await readJsonArray(
      ctx.file,
      {
        element: (rec, row) => {
          if (rec === null || typeof rec !== "object" || Array.isArray(rec)) {
            n++;
            ctx.sink.error({ row, message: "each record must be a JSON object ({...})" });
            return;
          }
          each(rec as SourceRecord, row);
        },
        problem: (p) => ctx.sink.error(p),
        bytes: ctx.onBytes,
      },
      notArray,
    );
  } else await readJsonl(ctx.file, { row: each, problem: (p) => ctx.sink.error(p), bytes: ctx.onBytes });
  if (n === 0 && ctx.sink.errorCount === 0)
    throw new ImportRefusal(ctx.format === "json" ? "The file's JSON array is empty." : "The file has no JSON lines.");
}

function resolveJsonColumns(fields: FieldSpec[], rec: SourceRecord, mapping: Record<string, string>) {
  const out: Record<string, string | undefined> = {};
  for (const f of fields) out[f.name] = mapping[f.name] ?? [f.name, ...f.aliases].find((a) => a in rec) ?? f.name;
  return out;
}

export const baseName = (fileName: string) => path.basename(fileName).replace(/\.(jsonl|ndjson|json|csv|tsv|txt)$/i, "");
