// The web server's import job (app/formats/import-jobs.server.ts): scripts/import-job.ts from its
// cached esbuild bundle (scripts/bundled-cli.mjs), our code compiled and the packages left to
// node_modules. It starts in about a quarter of the time the tsx loader takes, before every import
// a user starts from the page. `node --import tsx scripts/import-job.ts` runs the same code uncompiled.
import { runBundled } from "./bundled-cli.mjs";

await runBundled("import-job", { externalPackages: true });
