/**
 * A folder of the repository (db/migrations, db/migrations-pg), found from the
 * running module whichever copy of it runs: the sources (db/), the server
 * build (build/) or a command's cached bundle (node_modules/.cache/concord/;
 * scripts/bundled-cli.mjs) — the first ancestor folder that holds it.
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
    // Not found above: the path beside the module's parent, as before (the error then names it).
    if (up === dir) return fileURLToPath(new URL(`../${rel}`, moduleUrl));
    dir = up;
  }
}
