// The operator's commands (`npm run import`, `export`, `runs`, `worker`, `providers`, `seed`,
// `db:migrate`, `db:copy`): `node scripts/cli.mjs NAME [options]` runs scripts/NAME.ts from its
// cached esbuild bundle (scripts/bundled-cli.mjs), our code compiled and the packages left to
// node_modules, which starts about a second sooner than the tsx loader. `npx tsx scripts/NAME.ts`
// runs the same code uncompiled. NAME is one of the commands below, never a path.
import { runBundled } from "./bundled-cli.mjs";

const COMMANDS = ["import", "export", "runs", "worker", "providers", "seed", "migrate", "db-copy"];

const name = process.argv[2];
if (!COMMANDS.includes(name)) {
  console.error(`Usage: node scripts/cli.mjs <${COMMANDS.join("|")}> [options]`);
  process.exit(2);
}
// The command reads its own options from process.argv.slice(2), as when it runs uncompiled.
process.argv.splice(2, 1);
await runBundled(name, { externalPackages: true });
