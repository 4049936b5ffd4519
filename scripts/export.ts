/**
 * npm run export -- --project SLUG --what annotations|agreement|judge-agreement|runs|judge-confusion|run-results
 *                   [--format csv|jsonl] [--out FILE] [--task ID] [--run ID (run-results)]
 *                   [--reference majority|each|adjudicated] [--unparsed count-as-wrong|exclude|as:LABEL]
 *                   [--missing-as missing|unparsed]
 *
 * With --server URL --token TOKEN (or CONCORD_URL and CONCORD_TOKEN) the export comes from a remote
 * server's HTTP API instead of DATABASE_URL (scripts/remote.ts): the same bytes.
 *
 * Writes the export to FILE (or stdout). Columns are documented in
 * app/formats/export.server.ts. Exit codes: 0 written, 2 bad command line or
 * unknown project.
 */
import { once } from "node:events";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import { closeDal, first, initDal, type Dal } from "../app/dal.server";
import { closeDb, databasePathFromEnv, DatabaseOpenError } from "../db/client";
import { parseMissingPolicy, parseReference, parseUnparsedPolicy } from "../app/reports/judgeAgreement";
import {
  ALL_EXPORT_KINDS,
  checkExport,
  EXPORT_FORMATS,
  exportChunks,
  exportOptionsFrom,
  type ExportFormat,
  type ExportKind,
} from "../app/formats/export.server";
import { DomainError } from "../app/errors";
import { isDatabaseFile } from "../app/files.server";
import { remoteExport, remoteTarget } from "./remote";

const USAGE = `usage: npm run export -- --project SLUG --what ${ALL_EXPORT_KINDS.join("|")} [--format csv|jsonl] [--out FILE] [--task ID] [--run ID] [--reference majority|each|adjudicated] [--unparsed count-as-wrong|exclude|as:LABEL] [--missing-as missing|unparsed] [--server URL --token TOKEN]`;

function fail(message: string): never {
  console.error(`export: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      project: { type: "string" },
      what: { type: "string" },
      format: { type: "string", default: "csv" },
      out: { type: "string" },
      reference: { type: "string", default: "majority" },
      unparsed: { type: "string", default: "count-as-wrong" },
      "missing-as": { type: "string", default: "missing" },
      task: { type: "string" },
      run: { type: "string" },
      server: { type: "string" },
      token: { type: "string" },
      help: { type: "boolean", default: false },
    },
  }));
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.project) fail(`--project is required.\n${USAGE}`);
if (!values.what || !ALL_EXPORT_KINDS.includes(values.what as ExportKind)) fail(`--what must be one of ${ALL_EXPORT_KINDS.join(", ")}.`);
const ids = exportOptionsFrom({ task: values.task, run: values.run });
if (ids.errors.length) fail(ids.errors.map((e) => `--${e.message}`).join(" "));
if (values.what === "run-results" && ids.opts.run === undefined)
  fail("--what run-results needs --run ID (the run's id, as in its page's address).");
if (!EXPORT_FORMATS.includes(values.format as ExportFormat)) fail(`--format must be csv or jsonl, not "${values.format}".`);
const reference = parseReference(values.reference);
if (!reference) fail(`--reference must be majority, each or adjudicated, not "${values.reference}".`);
const unparsed = parseUnparsedPolicy(values.unparsed);
if (!unparsed) fail(`--unparsed must be count-as-wrong, exclude or as:LABEL, not "${values.unparsed}".`);
const missing = parseMissingPolicy(values["missing-as"]);
if (!missing) fail(`--missing-as must be "missing" or "unparsed", not "${values["missing-as"]}".`);

// --server URL --token TOKEN (or CONCORD_URL, CONCORD_TOKEN): the same export from a remote server's HTTP API.
const remote = remoteTarget(values, fail);
if (remote) {
  const { project, what, format, out, server: _s, token: _t, help: _h, ...options } = values;
  process.exit(await remoteExport(remote, { project, what, format, out, options: options as Record<string, string | undefined> }, fail));
}

let d: Dal;
try {
  d = await initDal();
} catch (err) {
  if (err instanceof DatabaseOpenError) fail(err.message);
  throw err;
}
const p = d.t.projects;
const project = first(await d.q.select({ id: p.id }).from(p).where(eq(p.slug, values.project)).limit(1));
if (!project) fail(`no project "${values.project}" in ${d.dialect === "postgres" ? "the PostgreSQL database" : databasePathFromEnv()}.`);
const opts = { reference, unparsed, missing, ...ids.opts };
try {
  // No such run or task: refused before a file is opened.
  await checkExport(d, project.id, values.what as ExportKind, opts);
} catch (err) {
  if (err instanceof DomainError) fail(`${err.message.replace(/^(run|task): /, "--$1: ")} (project "${values.project}")`);
  throw err;
}
// The export streams a window of rows at a time (memory holds one window, not the file).
let rows = 0;
const chunks = exportChunks(d, project.id, values.what as ExportKind, values.format as ExportFormat, opts, (n) => (rows += n));
if (values.out) {
  // Opening the database file for writing would truncate it (and drop this process's locks).
  if (isDatabaseFile(values.out)) fail(`--out ${values.out} is a database file; choose another output file.`);
  const fd = fs.openSync(values.out, "w");
  for await (const c of chunks) fs.writeSync(fd, c);
  fs.closeSync(fd);
  console.error(`export: wrote ${rows} rows to ${values.out}`);
} else {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => process.exit(err.code === "EPIPE" ? 0 : 1));
  // A pipe that is full (a slow reader) is waited for, so the next window is read only when it drains.
  for await (const c of chunks) if (!process.stdout.write(c)) await once(process.stdout, "drain");
}
closeDb();
await closeDal();
