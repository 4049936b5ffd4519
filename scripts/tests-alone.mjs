#!/usr/bin/env node
/**
 * Runs a sample of tests each alone, to check that every test sets up its own
 * state and does not lean on a test before it in its file.
 *
 *   node scripts/tests-alone.mjs                      # the fixed sample below (CI)
 *   node scripts/tests-alone.mjs "FILE::TEST NAME" …  # these tests instead
 *
 * NAME is the test's own name (the text of its `it`, without its describe).
 *
 * One vitest process runs them all: every file of the sample runs in its own
 * worker process (vitest isolates files), and `-t` selects, in each file, only
 * its sampled test; every other test of the file is skipped, so the sampled one
 * runs without the tests before it, as `vitest run FILE -t NAME` would run it.
 * A file appears at most once per vitest process (two sampled tests of one
 * file go in separate processes, one after the other), so no sampled test
 * runs after another. Each file must pass exactly its one test and run
 * nothing else: a name that matches nothing, or also a test elsewhere in the
 * sample's files, fails, so a renamed test cannot silently drop out.
 *
 * One process instead of one per test: vitest's start and global setup once,
 * not twelve times (about 53 s → 30 s for the sample on 2 cores).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runNode } from "./at-once.mjs";

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

/** The sample in rounds: each round holds a file at most once. */
function rounds(items) {
  const result = [];
  for (const item of items) {
    const round = result.find((r) => !r.some(([file]) => file === item[0]));
    if (round) round.push(item);
    else result.push([item]);
  }
  return result;
}

/** Runs one round in one vitest process; a line per sampled test, and vitest's output when one failed. */
async function runRound(round, k) {
  const json = path.join(out, `${k}.json`);
  const pattern = `(?:${round.map(([, name]) => escape(name)).join("|")})$`;
  const r = await runNode(
    [vitest, "run", ...round.map(([file]) => file), "-t", pattern, "--reporter=default", "--reporter=json", `--outputFile.json=${json}`],
    { cwd: root },
  );
  let report = null;
  try {
    report = JSON.parse(fs.readFileSync(json, "utf8"));
  } catch {
    // no report: every test of the round is counted as failed below, with vitest's output
  }
  const lines = round.map(([file, name]) => {
    const result = report?.testResults.find((t) => path.relative(root, t.name) === path.normalize(file));
    const ran = (result?.assertionResults ?? []).filter((a) => a.status === "passed" || a.status === "failed");
    const ok = r.code === 0 && ran.length === 1 && ran[0].status === "passed" && ran[0].title === name;
    const secs = ran.length === 1 && ran[0].duration != null ? (ran[0].duration / 1000).toFixed(1) : "-";
    const why = ok
      ? ""
      : ran.length === 0
        ? " (no test of that name ran)"
        : ` (ran ${ran.map((a) => `${JSON.stringify(a.title)}: ${a.status}`).join(", ")})`;
    return { ok, line: `${ok ? "ok  " : "FAIL"} ${secs.padStart(5)} s  ${file} › ${name}${why}` };
  });
  return { lines, ok: r.code === 0 && lines.every((l) => l.ok), stdout: r.stdout, stderr: r.stderr, secs: r.secs };
}

let failed = 0;
const started = Date.now();
for (const [k, round] of rounds(list).entries()) {
  const res = await runRound(round, k);
  for (const l of res.lines) {
    console.log(l.line);
    if (!l.ok) failed++;
  }
  if (!res.ok) {
    if (res.lines.every((l) => l.ok)) failed++; // vitest failed outside the sampled tests (a hook, an unhandled error)
    process.stdout.write(res.stdout);
    process.stderr.write(res.stderr);
  }
}
fs.rmSync(out, { recursive: true, force: true });
console.log(`${list.length - failed} of ${list.length} tests pass alone (${((Date.now() - started) / 1000).toFixed(1)} s).`);
process.exit(failed ? 1 : 0);
