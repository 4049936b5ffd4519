/**
 * A run's settings as readable rows: "maxTurns" → "max turns"; a nested object's
 * keys become "target sampling · temperature"; lists are joined with commas.
 * Shared by the run page and its results page.
 */
export function settingRows(settings: Record<string, unknown> | null | undefined, prefix = ""): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(settings ?? {})) {
    const label = `${prefix}${k
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .replace(/_/g, " ")
      .toLowerCase()}`;
    if (v && typeof v === "object" && !Array.isArray(v)) out.push(...settingRows(v as Record<string, unknown>, `${label} · `));
    else out.push([label, Array.isArray(v) ? v.join(", ") : String(v)]);
  }
  return out;
}
