// `npm run label-plan`: runs scripts/label-plan.ts from its cached esbuild bundle
// (scripts/bundled-cli.mjs). `npx tsx scripts/label-plan.ts` runs the same code uncompiled.
import { runBundled } from "./bundled-cli.mjs";

await runBundled("label-plan");
