// `npm run agreement`: runs scripts/agreement.ts from its cached esbuild bundle
// (scripts/bundled-cli.mjs). `npx tsx scripts/agreement.ts` runs the same code uncompiled.
import { runBundled } from "./bundled-cli.mjs";

await runBundled("agreement");
