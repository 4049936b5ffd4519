/**
 * Client bundle size per route (not a test): what the browser downloads.
 *
 *   npm run bench:bundle              # builds with `remix build`, then measures
 *   npm run bench:bundle -- --no-build  # measures the build already in public/build
 *   npm run bench:bundle -- --json      # one JSON object instead of the table
 *   npm run bench:bundle -- --compare before.json  # beside each route, its change in bytes from a saved --json run
 *
 * Reads the Remix manifest (public/build/manifest-*.js) and, for every route,
 * sums the bytes of its chunk and the shared chunks it imports, raw and gzip
 * (zlib, default level, as a server with compression sends them). "page" adds
 * the entry and root chunks (deduplicated): the JavaScript a first visit to
 * that route loads. A route is flagged when any of its own files contains zod
 * (its class names are kept in the minified output), since nothing validates
 * on the client and zod belongs in `.server.ts` modules only.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

interface ManifestRoute {
  id: string;
  module: string;
  imports?: string[];
}
interface Manifest {
  entry: { module: string; imports: string[] };
  routes: Record<string, ManifestRoute>;
}

const argv = process.argv.slice(2);
const args = new Set(argv);
/** A saved `--json` run to compare with (`--compare FILE`). */
const compareFile = argv.includes("--compare") ? argv[argv.indexOf("--compare") + 1] : undefined;
if (argv.includes("--compare") && !compareFile) throw new Error("--compare needs the file of a saved `--json` run.");
const root = process.cwd();
const publicDir = path.join(root, "public");
const buildDir = path.join(publicDir, "build");

if (!args.has("--no-build")) {
  execFileSync("npx", ["remix", "build"], { stdio: ["ignore", "ignore", "inherit"] });
}

const manifestFile = readdirSync(buildDir).find((f) => /^manifest-[A-Z0-9]+\.js$/.test(f));
if (!manifestFile) throw new Error(`No manifest-*.js in ${buildDir}: run \`npx remix build\` first.`);
const text = readFileSync(path.join(buildDir, manifestFile), "utf8");
const manifest = JSON.parse(text.slice(text.indexOf("=") + 1).replace(/;\s*$/, "")) as Manifest;

/** A zod signature in minified output: its error and schema class names survive minification. */
const ZOD_SIGNATURE = /\$ZodType|ZodError|\$ZodCheck/;

const cache = new Map<string, { raw: number; gzip: number; zod: boolean }>();
function measure(url: string) {
  let m = cache.get(url);
  if (!m) {
    const buf = readFileSync(path.join(publicDir, url.replace(/^\//, "")));
    m = { raw: buf.length, gzip: gzipSync(buf).length, zod: ZOD_SIGNATURE.test(buf.toString("utf8")) };
    cache.set(url, m);
  }
  return m;
}
function sum(urls: Iterable<string>) {
  let raw = 0;
  let gzip = 0;
  let zod = false;
  for (const u of new Set(urls)) {
    const m = measure(u);
    raw += m.raw;
    gzip += m.gzip;
    zod ||= m.zod;
  }
  return { raw, gzip, zod };
}

const filesOf = (r: ManifestRoute) => [r.module, ...(r.imports ?? [])];
const entryFiles = [manifest.entry.module, ...manifest.entry.imports];
const rootFiles = filesOf(manifest.routes.root!);
const base = sum([...entryFiles, ...rootFiles]);

const rows = Object.values(manifest.routes)
  .filter((r) => r.id !== "root")
  .map((r) => {
    const own = sum(filesOf(r));
    const page = sum([...entryFiles, ...rootFiles, ...filesOf(r)]);
    return { route: r.id.replace(/^routes\//, ""), raw: own.raw, gzip: own.gzip, pageRaw: page.raw, pageGzip: page.gzip, zod: own.zod };
  })
  .sort((a, b) => b.gzip - a.gzip);

const zodRoutes = rows.filter((r) => r.zod).map((r) => r.route);
const summary = {
  entryAndRoot: { raw: base.raw, gzip: base.gzip, zod: base.zod },
  routes: rows,
  zodRoutes,
  largestRoute: rows[0] ?? null,
};

if (args.has("--json")) {
  console.log(JSON.stringify(summary, null, 2));
} else {
  const kb = (n: number) => (n / 1024).toFixed(1);
  const before = compareFile ? (JSON.parse(readFileSync(compareFile, "utf8")) as typeof summary) : null;
  const was = new Map((before?.routes ?? []).map((r) => [r.route, r]));
  /** A change in bytes: "+312", "−1,204", "0"; "new" for a route the saved run lacks. */
  const delta = (now: number, then: number | undefined) =>
    then === undefined ? "new" : now === then ? "0" : `${now > then ? "+" : "−"}${Math.abs(now - then).toLocaleString("en")}`;
  console.log(`entry + root: ${kb(base.raw)} KB raw, ${kb(base.gzip)} KB gzip${base.zod ? "  (contains zod!)" : ""}`);
  if (before)
    console.log(
      `  against ${compareFile}: ${delta(base.raw, before.entryAndRoot.raw)} B raw, ${delta(base.gzip, before.entryAndRoot.gzip)} B gzip`,
    );
  console.log("");
  const extra = before ? " Δ raw B | Δ gzip B |" : "";
  console.log(`| route | chunk + imports raw KB | gzip KB | page (with entry + root) gzip KB | zod |${extra}`);
  console.log(`| --- | ---: | ---: | ---: | --- |${before ? " ---: | ---: |" : ""}`);
  for (const r of rows) {
    const d = before ? ` ${delta(r.raw, was.get(r.route)?.raw)} | ${delta(r.gzip, was.get(r.route)?.gzip)} |` : "";
    console.log(`| ${r.route} | ${kb(r.raw)} | ${kb(r.gzip)} | ${kb(r.pageGzip)} | ${r.zod ? "**zod**" : ""} |${d}`);
  }
  console.log(
    `\n${zodRoutes.length} of ${rows.length} routes ship zod to the browser${zodRoutes.length ? ": " + zodRoutes.join(", ") : "."}`,
  );
}
