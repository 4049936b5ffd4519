// `npm start` and `npm run demo`: the production server (scripts/server.ts) from its cached esbuild
// bundle (scripts/bundled-cli.mjs), our code compiled and the packages left to node_modules. It
// starts about a second sooner than through the tsx loader. `node --import tsx scripts/server.ts`
// runs the same code uncompiled (`npm run dev` does, under remix dev).
import { runBundled } from "./bundled-cli.mjs";

await runBundled("server", { externalPackages: true });
