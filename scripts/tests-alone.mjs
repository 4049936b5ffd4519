#!/usr/bin/env node
/**
 * Runs tests one at a time, each alone (`vitest run FILE -t NAME`), to check that
 * every test sets up its own state and does not lean on a test before it.
 *
 *   node scripts/tests-alone.mjs                      # the fixed sample below (CI)
 *   node scripts/tests-alone.mjs "FILE::TEST NAME" …  # these tests instead
 *
 * NAME is the test's own name (the text of its `it`, without its describe). Each
 * run must pass exactly one test: a name that matches nothing, or several, fails
 * too, so a renamed test cannot silently drop out of the sample.
 *
 * Two runs go at a time (each is its own vitest process with its own temp
 * databases, folders and ports), which halves the wall time on 2 cores; the
 * results print in the sample's order.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inLanes, runNode } from "./at-once.mjs";

/** A fixed sample across tests/integration, tests/security and tests/e2e, leaning to tests late in their files. */
export const SAMPLE = [
  [
    "tests/e2e/annotate-keyboard.test.ts",
    "a changed answer on a submitted unit is saved as a revision, or knowingly discarded, before leaving",
  ],
  ["tests/e2e/researcher-tasks.test.ts", "refuses to delete a labelled task and archives it instead"],
  ["tests/e2e/import-page.test.ts", "the same file again: the preview says it is already imported, and offers no Confirm"],
  ["tests/integration/import-conflicts.test.ts", "a dry run of an identical file says it would change nothing"],
  ["tests/integration/runs-providers-cli.test.ts", "remove deletes the provider"],
  [
    "tests/integration/runs-calibration.test.ts",
    "majority rule with splits excluded or adjudicated, design weights, every RefineBench metric, clipped intervals, neutral name, min-label warning",
  ],
  ["tests/integration/reports.test.ts", "uses the chosen final-label rule, including the adjudication store"],
  ["tests/integration/report-freshness.test.ts", "a memoised agreement report shows a revised label on the next request"],
  ["tests/integration/accounts-domain.test.ts", "disabling an account ends its sessions; an admin cannot disable themselves"],
  [
    "tests/security/import-conflicts-http.test.ts",
    "verdicts: the same file is a no-op; a changed value is refused naming each conflicting row",
  ],
  ["tests/security/admins-and-confirmation.test.ts", "disabling a user asks first"],
  [
    "tests/integration/curation-versions.test.ts",
    "the release JSONL has the current checklist and reference; the changelog says what changed and why",
  ],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function pairs() {
  const args = process.argv.slice(2);
  if (args.length === 0) return SAMPLE;
  return args.map((a) => {
    const i = a.indexOf("::");
    if (i < 0) {
      console.error(`tests-alone: "${a}" is not FILE::TEST NAME`);
      process.exit(2);
    }
    return [a.slice(0, i), a.slice(i + 2)];
  });
}

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
const out = fs.mkdtempSync(path.join(os.tmpdir(), "concord-alone-"));
const list = pairs();
/** At most this many vitest processes at once. */
const AT_ONCE = 2;

/** Runs one test alone: its line, and vitest's output for a failure. */
async function runAlone([file, name], i) {
  const json = path.join(out, `${i}.json`);
  const r = await runNode(
    [vitest, "run", file, "-t", `${escape(name)}$`, "--reporter=default", "--reporter=json", `--outputFile.json=${json}`],
    { cwd: root },
  );
  let passed = 0;
  let total = 0;
  try {
    const report = JSON.parse(fs.readFileSync(json, "utf8"));
    passed = report.numPassedTests;
    total = report.numPassedTests + report.numFailedTests;
  } catch {
    // no report: counted as a failure below, with vitest's output
  }
  const ok = r.code === 0 && passed === 1 && total === 1;
  const line = `${ok ? "ok  " : "FAIL"} ${r.secs.padStart(5)} s  ${file} › ${name}${ok ? "" : ` (passed ${passed} of ${total} run)`}`;
  return { ok, line, stdout: r.stdout, stderr: r.stderr };
}

const results = await inLanes(list, AT_ONCE, runAlone);
let failed = 0;
for (const r of results) {
  console.log(r.line);
  if (!r.ok) {
    failed++;
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
  }
}
fs.rmSync(out, { recursive: true, force: true });
console.log(`${list.length - failed} of ${list.length} tests pass alone.`);
process.exit(failed ? 1 : 0);
