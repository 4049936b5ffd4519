/**
 * Builds the Remix app once per test run, when the build is missing or older
 * than the sources, so browser tests drive the same production build users get;
 * and the cached bundles of the server, the import job and the commands (scripts/bundled-cli.mjs),
 * once here rather than by the first test files that start them, side by side;
 * and the folder of the demo database the browser tests copy (tests/support/demo.ts), and the folder of the
 * initdb'd PostgreSQL data directory the throw-away clusters copy (tests/support/pg.ts).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

const root = path.resolve(__dirname, "../..");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export default async function setup(project: TestProject) {
  // Where the demo database is seeded once for the whole run (tests/support/demo.ts), and removed afterwards.
  const demoDir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-demo-template-"));
  project.provide("demoDir", demoDir);
  // The test files' processes inherit the environment, so tests/support/pg.ts finds it there (it also runs
  // outside vitest, in the benchmarks, where nothing is provided).
  const pgTemplateDir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-pg-template-"));
  process.env.CONCORD_TEST_PG_TEMPLATE_DIR = pgTemplateDir;
  const teardown = () => {
    fs.rmSync(demoDir, { recursive: true, force: true });
    fs.rmSync(pgTemplateDir, { recursive: true, force: true });
  };

  const { COMMANDS, ensureBundle } = await import("../../scripts/bundled-cli.mjs");
  // The server and the commands the tests start as operators do (scripts/cli.mjs), all at once.
  await Promise.all(COMMANDS.map((name) => ensureBundle(name, { externalPackages: true })));
  // For quick unit/integration iterations while app code is mid-edit.
  if (process.env.CONCORD_SKIP_BUILD === "1") return teardown;
  const stamp = path.join(root, "build", "index.js");
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  const sources = Math.max(
    newestMtime(path.join(root, "app")),
    newestMtime(path.join(root, "db")),
    fs.statSync(path.join(root, "remix.config.js")).mtimeMs,
  );
  if (built > sources) return teardown;
  execFileSync(process.execPath, [path.join(root, "node_modules/@remix-run/dev/dist/cli.js"), "build"], {
    cwd: root,
    // vitest sets NODE_ENV=test; the server runs the production build.
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return teardown;
}
