/**
 * npm run import -- --preset NAME --project SLUG [--dry-run] [--format json]
 *                   [--dataset NAME] [--map field=column ...] [--level nominal|ordinal|interval]
 *                   [--annotators COL,COL,...|all] [--categories C1,C2,...]
 *                   [--variant-of JUDGE=BASE ...] FILE
 *
 * Verdict presets (verdicts, unit-verdicts): a judge is marked a variant (ablation) of a base judge
 * by a `variant_of` column or `--variant-of JUDGE=BASE`; the judges page's variant table pairs them.
 *
 * labels-wide needs --annotators: the columns that hold annotators' labels
 * (other columns are ignored and listed); without it the import is refused
 * (exit 2) naming the columns found. `--annotators all` takes every column
 * but the unit, on purpose. `--categories` declares the scale of a labels
 * import, its categories in order (used or not; Gwet's AC1 counts them):
 * stored with the task, and a label outside it is refused by row and column.
 *
 * With --server URL --token TOKEN (or CONCORD_URL and CONCORD_TOKEN) the file goes to a remote server's
 * HTTP API instead (scripts/remote.ts): the same checks and summary; the project must exist there.
 *
 * Imports FILE into the database DATABASE_URL names (the project is created
 * if it does not exist), all or nothing. Exit codes: 0 imported (or a valid
 * dry run), 1 the file has problems (nothing written), 2 bad command line.
 * A file whose rows conflict with what is already imported under the same key
 * (responses: item, model, turn; verdicts: judge, item, response, checklist
 * item) is refused with those rows listed (exit 1); the same content again
 * changes nothing (exit 0). The file is checked before the database's write
 * lock is taken; the write itself is one short transaction.
 */
import { parseArgs } from "node:util";
import { databasePathFromEnv, DatabaseOpenError } from "../db/client";
import { ImportUsageError, runImport } from "../app/formats/import.server";
import type { LabelLevel } from "../app/formats/labels";
import { PRESETS } from "../app/formats/presets/index.server";
import { printImportSummary } from "./import-summary";
import { remoteImport, remoteTarget } from "./remote";

const USAGE =
  "usage: npm run import -- --preset NAME --project SLUG [--dry-run] [--format json] [--dataset NAME] [--map field=column] [--level LEVEL] [--annotators COL,COL|all] [--categories C1,C2,...] [--variant-of JUDGE=BASE ...] [--server URL --token TOKEN] FILE";

function fail(message: string, code = 2): never {
  console.error(`import: ${message}`);
  process.exit(code);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      preset: { type: "string" },
      project: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      format: { type: "string", default: "text" },
      dataset: { type: "string" },
      map: { type: "string", multiple: true, default: [] },
      level: { type: "string" },
      annotators: { type: "string" },
      categories: { type: "string" },
      "variant-of": { type: "string", multiple: true, default: [] },
      server: { type: "string" },
      token: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  console.log("\npresets:");
  for (const p of Object.values(PRESETS)) console.log(`  ${p.name.padEnd(20)} ${p.summary}`);
  process.exit(0);
}
if (!values.preset) fail(`--preset is required (one of ${Object.keys(PRESETS).join(", ")}).\n${USAGE}`);
if (!values.project) fail(`--project is required.\n${USAGE}`);
if (positionals.length !== 1) fail(positionals.length ? `give exactly one FILE (got ${positionals.length}).` : `no FILE given.\n${USAGE}`);
if (values.format !== "text" && values.format !== "json") fail(`--format must be "json" or "text", not "${values.format}".`);
const mapping: Record<string, string> = {};
for (const m of values.map ?? []) {
  const eq = m.indexOf("=");
  if (eq <= 0 || eq === m.length - 1) fail(`--map takes field=column, not "${m}".`);
  mapping[m.slice(0, eq).trim()] = m.slice(eq + 1).trim();
}

/** --variant-of JUDGE=BASE (verdict presets): the judge is a variant (ablation) of BASE; the judges page's variant table pairs them. */
const variantOf: Record<string, string> = {};
for (const m of values["variant-of"] ?? []) {
  const eq = m.indexOf("=");
  if (eq <= 0 || eq === m.length - 1) fail(`--variant-of takes JUDGE=BASE, not "${m}".`);
  const judge = m.slice(0, eq).trim();
  if (judge in variantOf) fail(`--variant-of names judge "${judge}" twice.`);
  variantOf[judge] = m.slice(eq + 1).trim();
}

// --server URL --token TOKEN (or CONCORD_URL, CONCORD_TOKEN): the same import through a remote server's HTTP API.
const remote = remoteTarget(values, fail);
if (remote) process.exit(await remoteImport(remote, { ...values, file: positionals[0], format: values.format, mapping, variantOf }, fail));

try {
  const summary = await runImport({
    databaseFile: databasePathFromEnv(),
    projectSlug: values.project,
    preset: values.preset,
    file: positionals[0],
    dryRun: values["dry-run"],
    mapping,
    datasetName: values.dataset,
    level: values.level as LabelLevel | undefined,
    annotators: values.annotators
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    categories: values.categories?.split(","),
    variantOf,
  });
  process.exit(printImportSummary(summary, values.format as "text" | "json"));
} catch (err) {
  if (err instanceof ImportUsageError || err instanceof DatabaseOpenError) fail(err.message);
  throw err;
}
