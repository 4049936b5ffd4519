#!/usr/bin/env node
/**
 * The checks `npm test` runs before vitest, two at a time: the type check, the
 * linter (type-aware), Prettier, and the production build the browser tests
 * drive (tests/support/global-setup.ts then finds it fresh and builds nothing).
 * Each is single-threaded for most of its run, so on 2 cores two at a time take
 * about half the wall time of one after another.
 *
 * Each check's output is printed whole when it ends, in a block of its own;
 * the script exits 1 if any check failed (every check still runs to the end,
 * so one run shows every problem).
 */
import path from "node:path";
import { inLanes, runNode } from "./at-once.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const bin = (pkg, file) => path.join(root, "node_modules", pkg, file);

/** Longest first, so the two lanes end close together. */
const CHECKS = [
  ["lint", [bin("eslint", "bin/eslint.js"), "."]],
  ["typecheck", [bin("typescript", "bin/tsc"), "--noEmit"]],
  ["format:check", [bin("prettier", "bin/prettier.cjs"), "--check", "."]],
  // As the global setup builds: NODE_ENV=production, what the server runs.
  ["build", [bin("@remix-run/dev", "dist/cli.js"), "build"], { NODE_ENV: "production" }],
];
const AT_ONCE = 2;

const results = await inLanes(CHECKS, AT_ONCE, async ([name, args, env]) => {
  const r = await runNode(args, { cwd: root, env });
  const ok = r.code === 0;
  process.stdout.write(`\n${ok ? "ok  " : "FAIL"} ${name} (${r.secs} s)\n${ok && name === "build" ? "" : r.stdout + r.stderr}`);
  return ok;
});
process.exit(results.every(Boolean) ? 0 : 1);
