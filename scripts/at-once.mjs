/**
 * For the scripts that run several Node processes two at a time on the 2-core machine
 * (scripts/checks.mjs, scripts/tests-alone.mjs): one process with its output kept, and
 * a pool of lanes that returns results in the order of the items.
 */
import { spawn } from "node:child_process";

/** Runs `node ARGS` in `cwd`; resolves with its exit code, its output and how long it took. */
export function runNode(args, { cwd, env = {} }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr, secs: ((Date.now() - started) / 1000).toFixed(1) }));
  });
}

/** `fn` over `items`, at most `atOnce` at a time, in the items' order; results in that order. */
export async function inLanes(items, atOnce, fn) {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  return results;
}
