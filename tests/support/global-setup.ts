/**
 * Builds the Remix app once per test run, when the build is missing or older
 * than the sources, so browser tests drive the same production build users get;
 * and the cached bundles of the server, the import job and the commands (scripts/bundled-cli.mjs),
 * once here rather than by the first test files that start them, side by side;
 * and the folder of what the run makes once and the test files copy (tests/support/run-templates.ts).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(__dirname, "../..");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export default async function setup() {
  // What the run makes once and every file copies (tests/support/run-templates.ts), removed afterwards. The test
  // files' processes inherit the environment.
  const templates = fs.mkdtempSync(path.join(os.tmpdir(), "concord-run-templates-"));
  process.env.CONCORD_TEST_TEMPLATES = templates;
  const teardown = () => fs.rmSync(templates, { recursive: true, force: true });

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
