// Runs a TypeScript command line (scripts/NAME.ts) from a single-file bundle compiled by
// esbuild (the compiler tsx itself uses), kept in node_modules/.cache/concord/ and rebuilt
// whenever one of its source files is newer than the bundle. Loading one precompiled file
// instead of going through the tsx loader saves most of the start-up time of the command
// (see `npm run bench:agreement-cli`, `npm run bench:judge-agreement`).
// `npx tsx scripts/NAME.ts` runs the same code uncompiled. Used by scripts/agreement-cli.mjs
// (`npm run agreement`), scripts/judge-agreement-cli.mjs (`npm run judge-agreement`) and
// scripts/cli.mjs (the server, the import job and the operator's commands: COMMANDS).
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** What scripts/cli.mjs runs from a bundle whose packages stay in node_modules: scripts/NAME.ts for each NAME. */
export const COMMANDS = ["server", "import-job", "import", "export", "runs", "worker", "providers", "tokens", "seed", "migrate", "db-copy"];

// node_modules/.cache/concord, or a directory in the system's temporary folder when node_modules is read-only.
function pickCacheDir() {
  const preferred = join(root, "node_modules", ".cache", "concord");
  try {
    mkdirSync(preferred, { recursive: true });
    accessSync(preferred, constants.W_OK);
    return preferred;
  } catch {
    const fallback = join(tmpdir(), `concord-cache-${createHash("sha256").update(root).digest("hex").slice(0, 16)}`);
    mkdirSync(fallback, { recursive: true });
    return fallback;
  }
}

function fresh(bundle, inputsFile) {
  let built;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(inputsFile, "utf8"));
  } catch {
    return false;
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return false;
  for (const file of inputs) {
    try {
      if (statSync(join(root, file)).mtimeMs > built) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Compiles scripts/NAME.ts into the cache when its bundle is missing or stale; returns the bundle's path.
 * `externalPackages`: leave every package import (better-sqlite3's native addon, pg, drizzle…) to
 * node_modules and compile only our own code; such a bundle must sit inside the repository, so it is
 * only made in node_modules/.cache/concord: elsewhere this returns null (run the sources through tsx).
 */
export async function ensureBundle(name, { externalPackages = false } = {}) {
  const cacheDir = pickCacheDir();
  if (externalPackages && relative(root, cacheDir).startsWith("..")) return null;
  const entry = join(root, "scripts", `${name}.ts`);
  const bundle = join(cacheDir, `${name}.mjs`);
  const inputsFile = join(cacheDir, `${name}.inputs.json`);
  if (!fresh(bundle, inputsFile)) {
    const { build } = await import("esbuild");
    // Written under temporary names and renamed, so concurrent runs never read half a file.
    const tmp = `${bundle}.${process.pid}.tmp`;
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: tmp,
      metafile: true,
      ...(externalPackages ? { packages: "external" } : {}),
      // Stylesheets a page component imports (KaTeX's) mean nothing to a command: empty modules, as tsx loads them.
      plugins: [
        {
          name: "no-css",
          setup(b) {
            b.onResolve({ filter: /\.css$/ }, (a) => ({ path: a.path, namespace: "no-css" }));
            b.onLoad({ filter: /.*/, namespace: "no-css" }, () => ({ contents: "", loader: "js" }));
          },
        },
      ],
      logLevel: "error",
      absWorkingDir: root,
    });
    const inputs = Object.keys(result.metafile.inputs).map((f) => relative(root, join(root, f)));
    renameSync(tmp, bundle);
    const tmpInputs = `${inputsFile}.${process.pid}.tmp`;
    writeFileSync(tmpInputs, JSON.stringify(inputs));
    renameSync(tmpInputs, inputsFile);
  }
  return bundle;
}

/** Runs scripts/NAME.ts from its bundle (see ensureBundle), or from the sources through tsx when there can be none. */
export async function runBundled(name, opts = {}) {
  const bundle = await ensureBundle(name, opts);
  if (bundle === null) {
    const { register } = await import("tsx/esm/api");
    register();
    await import(pathToFileURL(join(root, "scripts", `${name}.ts`)).href);
    return;
  }
  await import(pathToFileURL(bundle).href);
}
