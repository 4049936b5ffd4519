/**
 * Production server: checks the environment and the database (one-line error,
 * exit 1), applies migrations, then serves the Remix build with Express.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequestHandler } from "@remix-run/express";
import { broadcastDevReady, type ServerBuild } from "@remix-run/node";
import compression from "compression";
import express from "express";
import { databasePathFromEnv, openDatabase } from "../db/client";

const root = path.resolve(import.meta.dirname, "..");
const port = (() => {
  const raw = process.env.PORT ?? "3000";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`Concord: PORT must be a number between 0 and 65535, got "${raw}".`);
    process.exit(1);
  }
  return n;
})();

const dbFile = databasePathFromEnv();
try {
  openDatabase(dbFile).$client.close();
} catch (err) {
  console.error(`Concord: ${(err as Error).message}`);
  process.exit(1);
}

const buildPath = path.join(root, "build", "index.js");
let build: ServerBuild;
try {
  build = (await import(pathToFileURL(buildPath).href)) as ServerBuild;
} catch {
  console.error(`Concord: no server build at ${buildPath}; run "npm run build" first.`);
  process.exit(1);
}

const app = express();
app.disable("x-powered-by");
app.use(compression());
app.use("/build", express.static(path.join(root, "public", "build"), { immutable: true, maxAge: "1y" }));
app.use(express.static(path.join(root, "public"), { maxAge: "1h" }));
app.all("*", createRequestHandler({ build, mode: build.mode }));

const server = app.listen(port, () => {
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  console.log(`Concord is running at http://localhost:${actual} (database: ${dbFile})`);
  if (build.mode === "development") void broadcastDevReady(build);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
