/**
 * A file or folder of the repository (db/migrations, scripts/import-job.ts,
 * seeds/recorded), found from the running module whichever copy of it runs:
 * the sources, the server build (build/) or a command's cached bundle
 * (node_modules/.cache/concord/; scripts/bundled-cli.mjs) — in the first
 * ancestor folder that holds it; else relative to the working directory.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export function repoPath(rel: string, moduleUrl: string): string {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const candidate = path.join(dir, rel);
    if (fs.existsSync(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) return path.resolve(rel);
    dir = up;
  }
}
