// `npm run judge-agreement`: runs scripts/judge-agreement.ts from its cached esbuild bundle
// (scripts/bundled-cli.mjs). `npx tsx scripts/judge-agreement.ts` runs the same code uncompiled.
import { runBundled } from "./bundled-cli.mjs";

await runBundled("judge-agreement");
