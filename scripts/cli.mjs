// Every process Concord starts from TypeScript: `node scripts/cli.mjs NAME [options]` runs scripts/NAME.ts
// from its cached esbuild bundle (scripts/bundled-cli.mjs), our code compiled and the packages left to
// node_modules, which starts about a second sooner than the tsx loader. NAME is one of COMMANDS, never a
// path: the server (`npm start`, `npm run demo`), the web server's import job, and the operator's commands
// (`npm run import`, `export`, `runs`, `worker`, `providers`, `tokens`, `seed`, `db:migrate`, `db:copy`).
// `npx tsx scripts/NAME.ts` runs the same code uncompiled (`npm run dev` runs the server that way).
import { COMMANDS, runBundled } from "./bundled-cli.mjs";

const name = process.argv[2];
if (!COMMANDS.includes(name)) {
  console.error(`Usage: node scripts/cli.mjs <${COMMANDS.join("|")}> [options]`);
  process.exit(2);
}
// The command reads its own options from process.argv.slice(2), as when it runs uncompiled.
process.argv.splice(2, 1);
await runBundled(name, { externalPackages: true });
