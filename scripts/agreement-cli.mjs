// `npm run agreement`: runs scripts/agreement.ts from a single-file bundle compiled by
// esbuild (the compiler tsx itself uses), kept in node_modules/.cache/concord/ and
// rebuilt whenever one of its source files is newer than the bundle. Loading one
// precompiled file instead of going through the tsx loader saves most of the start-up
// time of the command (see `npm run bench:agreement-cli`). `npx tsx scripts/agreement.ts`
// runs the same code uncompiled.
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "scripts", "agreement.ts");
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
const cacheDir = pickCacheDir();
const bundle = join(cacheDir, "agreement.mjs");
const inputsFile = join(cacheDir, "agreement.inputs.json");

function fresh() {
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

if (!fresh()) {
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
    logLevel: "error",
    absWorkingDir: root,
  });
  const inputs = Object.keys(result.metafile.inputs).map((f) => relative(root, join(root, f)));
  renameSync(tmp, bundle);
  const tmpInputs = `${inputsFile}.${process.pid}.tmp`;
  writeFileSync(tmpInputs, JSON.stringify(inputs));
  renameSync(tmpInputs, inputsFile);
}

await import(pathToFileURL(bundle).href);
