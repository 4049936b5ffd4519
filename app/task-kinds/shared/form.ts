/** Helpers the kinds share: reading form fields, per-response notes, the sampling filter. */
import type { TaskConfig } from "~/annotation/config.server";
import { letter } from "~/annotation/random";
import type { Candidate, FieldErrors, FormLike, ResponseKey } from "../types";

export const MAX_NOTE = 20_000;

export const str = (form: FormLike, name: string) => {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
};

/** A gold label stored as JSON text, or the text itself. */
export function parseStored(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The unit's responses a task uses: its models and turn, by id. */
export function filterResponses(c: Candidate, config: TaskConfig) {
  return c.responses
    .filter((r) => !config.models?.length || config.models.includes(r.model))
    .filter((r) => config.turn == null || r.turn === config.turn)
    .sort((a, b) => a.id - b.id);
}

/** The per-response notes of a multi-response form (`note.A`, `note.B`, ...), keyed by response id. */
export function readNotes(order: ResponseKey[], form: FormLike, errors: FieldErrors): Record<string, string> {
  const notes: Record<string, string> = {};
  order.forEach((key, i) => {
    const note = str(form, `note.${letter(i)}`).trim();
    if (note.length > MAX_NOTE) errors[`note.${letter(i)}`] = `Keep notes under ${MAX_NOTE} characters.`;
    else if (note) notes[String(key)] = note;
  });
  return notes;
}

/** Per-response notes back to their form fields. */
export function notesToForm(notes: unknown, order: ResponseKey[], out: Record<string, string>) {
  const n = notes && typeof notes === "object" ? (notes as Record<string, string>) : {};
  order.forEach((key, i) => {
    if (n[String(key)]) out[`note.${letter(i)}`] = n[String(key)];
  });
}

/** Notes in words for adjudication: a comment as it is, per-response notes named. */
export function noteLines(notes: unknown, nameOf: (key: unknown) => string): string[] {
  if (typeof notes === "string") return [notes];
  if (notes && typeof notes === "object") return Object.entries(notes as Record<string, string>).map(([k, v]) => `${nameOf(k)}: ${v}`);
  return [];
}
