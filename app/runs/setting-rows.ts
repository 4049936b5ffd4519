/**
 * A run's settings as readable rows: "maxTurns" → "max turns"; a nested object's
 * keys become "target sampling · temperature"; lists are joined with commas.
 * Shared by the run page and its results page, in label order on both: PostgreSQL's jsonb keeps an object's keys
 * in an order of its own (shorter keys first), not as written, so the stored order is not the definition's.
 */
export function settingRows(settings: Record<string, unknown> | null | undefined): [string, string][] {
  return rowsOf(settings, "").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function rowsOf(settings: Record<string, unknown> | null | undefined, prefix: string): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(settings ?? {})) {
    const label = `${prefix}${k
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .replace(/_/g, " ")
      .toLowerCase()}`;
    if (v && typeof v === "object" && !Array.isArray(v)) out.push(...rowsOf(v as Record<string, unknown>, `${label} · `));
    else out.push([label, Array.isArray(v) ? v.join(", ") : String(v)]);
  }
  return out;
}
