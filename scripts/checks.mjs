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
import { spawn } from "node:child_process";
import path from "node:path";

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

function run([name, args, env = {}]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => {
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(`\n${ok ? "ok  " : "FAIL"} ${name} (${secs} s)\n${ok && name === "build" ? "" : out}`);
      resolve(ok);
    });
  });
}

let next = 0;
let failed = 0;
async function lane() {
  while (next < CHECKS.length) if (!(await run(CHECKS[next++]))) failed++;
}
await Promise.all(Array.from({ length: AT_ONCE }, lane));
process.exit(failed ? 1 : 0);
