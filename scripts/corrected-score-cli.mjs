// `npm run corrected-score`: runs scripts/corrected-score.ts from its cached esbuild bundle
// (scripts/bundled-cli.mjs). `npx tsx scripts/corrected-score.ts` runs the same code uncompiled.
import { runBundled } from "./bundled-cli.mjs";

await runBundled("corrected-score");
